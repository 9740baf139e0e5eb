"""Draw docs/screenshots/: every key page of the demo, as a lead sees it today.

Run: .venv/bin/python scripts/screenshots.py   (or `make screenshots`)

It seeds the demo into a scratch SQLite database of its own, serves it on a free port
of 127.0.0.1, logs in as the demo's lead in headless Chromium (/usr/bin/chromium, or
RELEVO_CHROMIUM) and saves each page of apps/demo/tour.py at 1280 x 1000, and the ones
marked `phone` at 390 x 844 too, as JPEG. Then it writes docs/screenshots/README.md with
the list. Nothing outside the scratch folder and docs/screenshots/ is touched.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "screenshots"
DESKTOP = {"width": 1280, "height": 1000}
PHONE = {"width": 390, "height": 844}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(port: int, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise SystemExit(f"the demo server did not answer on port {port} within {seconds} s")


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="relevo-screenshots-"))
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{scratch / 'demo.sqlite3'}",
        "CELERY_BROKER_URL": "",  # tasks in-process, as `make run` without Redis
        "CACHE_URL": "",
        "DEBUG": "1",
        "SEARCH_ALLOW_PRIVATE_ADDRESSES": "1",
        "AI_JUDGES_ALLOW_PRIVATE_ADDRESSES": "1",
        # The demo's search model and judge call the server started below, on its port.
        "DEMO_SEARCH_URL": f"http://127.0.0.1:{port}/demo/search",
        "DEMO_JUDGE_URL": f"http://127.0.0.1:{port}/demo/llm/v1",
    }
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput", "-v0"], env=env, check=True)
    subprocess.run([*manage, "seed_demo"], env=env, check=True, stdout=subprocess.DEVNULL)
    server = subprocess.Popen(
        [*manage, "runserver", f"127.0.0.1:{port}", "--noreload"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(port)
        os.environ.update(env)
        shoot(f"http://127.0.0.1:{port}")
    finally:
        server.terminate()
        server.wait(timeout=10)


def shoot(base_url: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from playwright.sync_api import sync_playwright

    from apps.demo.seed import LEAD, PASSWORD
    from apps.demo.tour import demo_tour
    from tests.browser.chromium import CHROMIUM_FLAGS

    stops = demo_tour()
    OUT.mkdir(parents=True, exist_ok=True)
    chromium = os.environ.get("RELEVO_CHROMIUM", "/usr/bin/chromium")
    lines = [
        "# Screenshots",
        "",
        "The demo's key pages as a lead sees them, drawn by `scripts/screenshots.py`",
        "(`make screenshots`); run it again after changing a page.",
        "",
    ]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
            context = browser.new_context(viewport=size)
            page = context.new_page()
            page.goto(f"{base_url}/accounts/login/")
            page.get_by_label("Email").fill(LEAD)
            page.get_by_label("Password").fill(PASSWORD)
            page.get_by_role("button", name="Log in").click()
            page.wait_for_url(f"{base_url}/")
            for stop in stops:
                if suffix and not stop.phone:
                    continue
                page.goto(base_url + stop.path)
                page.wait_for_load_state("networkidle")
                name = f"{stop.name}{suffix}.jpg"
                page.screenshot(path=str(OUT / name), type="jpeg", quality=70)
                where = f"`{stop.path}`" + (" (phone)" if suffix else "")
                lines.append(f"- {where}: ![{stop.name}]({name})")
            context.close()
        browser.close()
    (OUT / "README.md").write_text("\n".join(lines) + "\n")
    print(f"{len(lines) - 5} screenshots in {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
