"""Static files with DEBUG off: collectstatic writes hashed, compressed copies and a
manifest, and pages link the hashed names (settings: STORAGES)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

PROJECT = Path(__file__).resolve().parents[2]
MANIFEST_STORAGE = "whitenoise.storage.CompressedManifestStaticFilesStorage"
# relevo.css becomes relevo.<12 hex digits of its content's hash>.css
HASHED_CSS = re.compile(r"css/relevo\.[0-9a-f]{12}\.css")


def collectstatic(static_root: Path, **environment: str) -> subprocess.CompletedProcess[str]:
    """`manage.py collectstatic` into static_root, with DEBUG off, in a fresh process."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DEBUG": "0",
        "SECRET_KEY": "collectstatic-in-a-test",
        "STATIC_ROOT": str(static_root),
        **environment,
    }
    return subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput"],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> Path:
    static_root = tmp_path_factory.mktemp("static")
    result = collectstatic(static_root)
    assert result.returncode == 0, result.stderr
    return static_root


def test_collectstatic_with_debug_off_writes_a_manifest_of_hashed_names(collected):
    manifest = json.loads((collected / "staticfiles.json").read_text())

    hashed = manifest["paths"]["css/relevo.css"]
    assert HASHED_CSS.fullmatch(hashed)
    assert (collected / hashed).is_file()
    # Compressed copies for WhiteNoise to serve to browsers that accept them.
    assert (collected / f"{hashed}.gz").is_file()
    assert manifest["paths"]["js/form-actions.js"] != "js/form-actions.js"


def test_collectstatic_with_static_manifest_off_writes_plain_names_only(tmp_path):
    result = collectstatic(tmp_path, STATIC_MANIFEST="0")

    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "staticfiles.json").exists()
    assert (tmp_path / "css" / "relevo.css").is_file()


def test_tests_and_debug_use_plain_static_names():
    # No collectstatic is needed to run the tests or the development server.
    assert settings.STORAGES["staticfiles"]["BACKEND"] != MANIFEST_STORAGE


@pytest.mark.django_db
def test_a_page_rendered_with_the_manifest_links_the_hashed_name(collected, settings):
    settings.STATIC_ROOT = collected
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": MANIFEST_STORAGE},
    }

    html = Client().get("/accounts/login/").content.decode()

    stylesheet = re.search(r'<link rel="stylesheet" href="/static/([^"]+)"', html)
    assert stylesheet, html
    assert HASHED_CSS.fullmatch(stylesheet.group(1))
    assert '/static/js/form-actions.js"' not in html
