"""Headless Chromium as this machine may run it: the system's browser (no downloads), with
the flags the brief asks for. Shared by the browser tests and scripts/screenshots.py."""

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
