"""HTTPS settings: the production configuration README.md documents passes Django's
`check --deploy` without a single warning, and an insecure one is reported."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.settings import proxy_ssl_header

PROJECT = Path(__file__).resolve().parents[2]
# A key as `check --deploy` wants one: 50 characters or more, many different ones.
SECRET_KEY = "k3y-for-tests-only-7f9c2e1a4b8d6e0f3a5c7e9b1d3f5a7c9e1b3d5f"
# README.md, "HTTPS and production": behind a proxy that terminates TLS.
PRODUCTION = {
    "DEBUG": "0",
    "ALLOWED_HOSTS": "relevo.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://relevo.example.com",
    "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
    # Not about HTTPS, but asked for by check --deploy too (apps/core/ratelimit.py).
    "TRUSTED_PROXY_COUNT": "1",
    "THROTTLE_REDIS_URL": "redis://127.0.0.1:6379/2",
}


def check_deploy(environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`manage.py check --deploy` in a fresh process that sees only the given variables.

    --fail-level WARNING makes a warning fail the command, as an error would.
    """
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **environment}
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_documented_production_configuration_passes_check_deploy_without_a_warning():
    result = check_deploy({**PRODUCTION, "SECRET_KEY": SECRET_KEY})

    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout
    assert "WARNING" not in result.stderr


def test_the_readme_documents_that_configuration():
    readme = (PROJECT / "README.md").read_text()

    for name, value in PRODUCTION.items():
        assert f"{name}={value}" in readme, name


def test_https_switched_off_is_reported():
    # What Django itself defaults to: no redirect, cookies over http, no HSTS.
    insecure = {
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "SECURE_HSTS_SECONDS": "0",
    }

    result = check_deploy({**PRODUCTION, **insecure, "SECRET_KEY": SECRET_KEY})

    assert result.returncode != 0
    for warning in ("W004", "W008", "W012", "W016"):
        assert f"(security.{warning})" in result.stderr, warning


def test_with_debug_off_the_redirect_and_secure_cookies_are_on_by_default():
    # Nothing about HTTPS set: only HSTS, which must be asked for, is missing.
    result = check_deploy({"DEBUG": "0", "SECRET_KEY": SECRET_KEY})

    assert result.returncode != 0
    assert "(security.W004)" in result.stderr
    for warning in ("W008", "W012", "W016"):
        assert f"(security.{warning})" not in result.stderr, warning


def test_hsts_without_subdomains_and_preload_is_reported():
    partial = {"SECURE_HSTS_INCLUDE_SUBDOMAINS": "0", "SECURE_HSTS_PRELOAD": "0"}

    result = check_deploy({**PRODUCTION, **partial, "SECRET_KEY": SECRET_KEY})

    assert "(security.W005)" in result.stderr
    assert "(security.W021)" in result.stderr


# --- SECURE_PROXY_SSL_HEADER ------------------------------------------------------------


def test_the_proxys_header_is_named_as_the_proxy_sends_it():
    assert proxy_ssl_header("X-Forwarded-Proto") == ("HTTP_X_FORWARDED_PROTO", "https")
    assert proxy_ssl_header("x-forwarded-proto") == ("HTTP_X_FORWARDED_PROTO", "https")


def test_no_proxy_header_by_default():
    assert proxy_ssl_header("") is None


@pytest.mark.parametrize("header", ["HTTP_X_FORWARDED_PROTO", "X-Forwarded-Proto: https", "X--"])
def test_a_proxy_header_that_is_not_a_header_name_stops_start_up(header):
    with pytest.raises(ImproperlyConfigured, match="SECURE_PROXY_SSL_HEADER=.* is not a header"):
        proxy_ssl_header(header)
