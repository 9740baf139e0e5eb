"""Headless Chromium driven by Playwright, against Django's live test server.

Chromium comes from the system (/usr/bin/chromium, or RELEVO_CHROMIUM); Playwright's own
browser downloads are never used. Without Chromium these tests skip (fail in CI).
"""

import os
import shutil
from pathlib import Path

import pytest

from conftest import service_missing
from tests.browser.chromium import CHROMIUM_FLAGS

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


def chromium_path() -> str | None:
    candidate = os.environ.get("RELEVO_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    return candidate if candidate and Path(candidate).exists() else None


@pytest.fixture(scope="session")
def browser():
    executable = chromium_path()
    if executable is None:
        service_missing("Chromium (apt-get install chromium, or set RELEVO_CHROMIUM)")
    # Playwright's sync API runs an event loop in this thread; Django's ORM refuses to be
    # called from a thread with a running loop unless told it is safe, which it is here
    # (the test itself is synchronous).
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture
def screenshot(page, request):
    """Save a screenshot a person can look at (test-artifacts/ is git-ignored)."""

    def take(name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{request.node.name}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
