"""Settings read from the environment: strict helpers, and start-up that stops on a bad
value with a message naming the variable."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_list, env_str

PROJECT = Path(__file__).resolve().parents[2]
SETUP = "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings'; django.setup()"


# --- env_bool -------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["1", "true", "TRUE", "yes", "Yes", "on", " on "])
def test_env_bool_reads_true_words(monkeypatch, raw):
    monkeypatch.setenv("RELEVO_FLAG", raw)

    assert env_bool("RELEVO_FLAG", default=False) is True


@pytest.mark.parametrize("raw", ["0", "false", "False", "no", "NO", "off", ""])
def test_env_bool_reads_false_words(monkeypatch, raw):
    monkeypatch.setenv("RELEVO_FLAG", raw)

    assert env_bool("RELEVO_FLAG", default=True) is False


@pytest.mark.parametrize("default", [True, False])
def test_env_bool_falls_back_to_the_default_when_unset(monkeypatch, default):
    monkeypatch.delenv("RELEVO_FLAG", raising=False)

    assert env_bool("RELEVO_FLAG", default=default) is default


@pytest.mark.parametrize("raw", ["maybe", "2", "y"])
def test_env_bool_rejects_other_words_naming_the_variable(monkeypatch, raw):
    monkeypatch.setenv("RELEVO_FLAG", raw)

    with pytest.raises(ImproperlyConfigured, match=f"RELEVO_FLAG='{raw}' is not a boolean"):
        env_bool("RELEVO_FLAG")


# --- env_int --------------------------------------------------------------------------


def test_env_int_reads_a_whole_number(monkeypatch):
    monkeypatch.setenv("RELEVO_COUNT", " 42 ")

    assert env_int("RELEVO_COUNT", 7) == 42


@pytest.mark.parametrize("raw", [None, "", "   "])
def test_env_int_falls_back_to_the_default_when_unset_or_empty(monkeypatch, raw):
    if raw is None:
        monkeypatch.delenv("RELEVO_COUNT", raising=False)
    else:
        monkeypatch.setenv("RELEVO_COUNT", raw)

    assert env_int("RELEVO_COUNT", 7) == 7


@pytest.mark.parametrize("raw", ["ten", "1.5", "10s"])
def test_env_int_rejects_what_is_not_a_whole_number_naming_the_variable(monkeypatch, raw):
    monkeypatch.setenv("RELEVO_COUNT", raw)

    with pytest.raises(ImproperlyConfigured, match=f"RELEVO_COUNT='{raw}' is not a whole number"):
        env_int("RELEVO_COUNT", 7)


def test_env_int_rejects_a_value_below_the_minimum_naming_the_variable(monkeypatch):
    monkeypatch.setenv("RELEVO_COUNT", "9")

    with pytest.raises(ImproperlyConfigured, match="RELEVO_COUNT=9 must be at least 10"):
        env_int("RELEVO_COUNT", 300, minimum=10)


def test_env_int_accepts_the_minimum_itself(monkeypatch):
    monkeypatch.setenv("RELEVO_COUNT", "10")

    assert env_int("RELEVO_COUNT", 300, minimum=10) == 10


# --- env_list and env_str -------------------------------------------------------------


def test_env_list_splits_on_commas_and_trims(monkeypatch):
    monkeypatch.setenv("RELEVO_HOSTS", " relevo.test , www.relevo.test,,  ")

    assert env_list("RELEVO_HOSTS", ["localhost"]) == ["relevo.test", "www.relevo.test"]


def test_env_list_falls_back_to_the_default_when_unset(monkeypatch):
    monkeypatch.delenv("RELEVO_HOSTS", raising=False)

    assert env_list("RELEVO_HOSTS", ["localhost"]) == ["localhost"]


def test_env_list_set_but_empty_is_an_empty_list(monkeypatch):
    monkeypatch.setenv("RELEVO_HOSTS", "")

    assert env_list("RELEVO_HOSTS", ["localhost"]) == []


def test_env_str_trims_and_falls_back_to_the_default(monkeypatch):
    monkeypatch.setenv("RELEVO_NAME", "  relevo  ")
    monkeypatch.delenv("RELEVO_MISSING", raising=False)

    assert env_str("RELEVO_NAME") == "relevo"
    assert env_str("RELEVO_MISSING", "fallback") == "fallback"


# --- start-up -------------------------------------------------------------------------


def start_django(**environment: str) -> subprocess.CompletedProcess[str]:
    """Set Django up in a fresh interpreter that sees only the given variables."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **environment}
    return subprocess.run(
        [sys.executable, "-c", SETUP],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_settings_load_with_debug_off_when_a_secret_key_is_given():
    result = start_django(DEBUG="0", SECRET_KEY="a-long-random-production-key")

    assert result.returncode == 0, result.stderr


def test_settings_load_on_a_bare_machine():
    result = start_django()

    assert result.returncode == 0, result.stderr


def test_start_up_stops_when_debug_is_off_and_no_secret_key_is_set():
    result = start_django(DEBUG="0")

    assert result.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY must be set when DEBUG is off." in result.stderr


def test_start_up_stops_when_debug_is_off_and_the_secret_key_is_blank():
    result = start_django(DEBUG="0", SECRET_KEY="   ")

    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_start_up_stops_on_a_database_url_it_does_not_understand():
    result = start_django(DATABASE_URL="nonsense://x")

    assert result.returncode != 0
    assert "ImproperlyConfigured: DATABASE_URL='nonsense://x' is not understood" in result.stderr


def test_start_up_stops_on_a_debug_value_that_is_not_a_boolean():
    result = start_django(DEBUG="maybe")

    assert result.returncode != 0
    assert "ImproperlyConfigured: DEBUG='maybe' is not a boolean" in result.stderr


def test_start_up_stops_on_a_slot_lock_below_its_minimum():
    result = start_django(SLOT_LOCK_SECONDS="5")

    assert result.returncode != 0
    assert "ImproperlyConfigured: SLOT_LOCK_SECONDS=5 must be at least 10." in result.stderr


def test_start_up_stops_when_the_live_stream_has_no_redis_to_hear_changes_on():
    result = start_django(LIVE_STREAM_URL="http://127.0.0.1:8001/live/stream/")

    assert result.returncode != 0
    assert "LIVE_STREAM_URL needs Redis" in result.stderr


def test_start_up_stops_on_a_live_stream_url_that_is_not_http():
    result = start_django(
        LIVE_STREAM_URL="ftp://127.0.0.1/live/", CACHE_URL="redis://127.0.0.1:6379/3"
    )

    assert result.returncode != 0
    assert "LIVE_STREAM_URL='ftp://127.0.0.1/live/' is not an http(s) URL" in result.stderr


def test_the_live_stream_may_be_reached_by_pages_and_hears_its_own_channel():
    shown = (
        "from django.conf import settings as s; "
        "print(s.LIVE_CHANNEL, s.CONTENT_SECURITY_POLICY['DIRECTIVES']['connect-src'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", f"{SETUP}; {shown}"],
        cwd=PROJECT,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LIVE_STREAM_URL": "https://live.example.test:8443/live/stream/",
            "CACHE_URL": "redis://127.0.0.1:6379/3",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.split(" ", 1) == [
        "relevo-live:3",
        "[\"'self'\", 'https://live.example.test:8443']\n",
    ]
