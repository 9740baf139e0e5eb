"""Secrets at rest: encrypted under the environment's keys, readable after a rotation,
unreadable (with a clear error) once their key is gone, never stored as they were."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from apps.core.secrets import (
    SecretUnreadable,
    decrypt_secret,
    encrypt_secret,
    new_key,
    secret_hint,
)

API_KEY = "not-a-real-key-test-WXYZ"


def test_a_secret_is_stored_encrypted_and_reads_back(settings):
    settings.SECRETS_ENCRYPTION_KEYS = [new_key()]
    stored = encrypt_secret(API_KEY)
    assert API_KEY not in stored and "real-key" not in stored
    assert decrypt_secret(stored) == API_KEY
    assert encrypt_secret(API_KEY) != stored  # a fresh nonce each time


def test_a_rotated_key_still_reads_what_the_old_key_wrote(settings):
    old, new = new_key(), new_key()
    settings.SECRETS_ENCRYPTION_KEYS = [old]
    stored = encrypt_secret(API_KEY)
    settings.SECRETS_ENCRYPTION_KEYS = [new, old]
    assert decrypt_secret(stored) == API_KEY


def test_a_secret_whose_key_is_gone_says_so(settings):
    settings.SECRETS_ENCRYPTION_KEYS = [new_key()]
    stored = encrypt_secret(API_KEY)
    settings.SECRETS_ENCRYPTION_KEYS = [new_key()]
    with pytest.raises(SecretUnreadable, match="SECRETS_ENCRYPTION_KEYS"):
        decrypt_secret(stored)


def test_without_keys_one_is_derived_from_the_secret_key(settings):
    settings.SECRETS_ENCRYPTION_KEYS = []
    stored = encrypt_secret(API_KEY)
    assert decrypt_secret(stored) == API_KEY
    settings.SECRET_KEY = "another secret key for this test, long enough to be one"
    with pytest.raises(SecretUnreadable):
        decrypt_secret(stored)


def test_pages_show_only_the_last_four_characters():
    assert secret_hint(API_KEY) == "…WXYZ"
    assert secret_hint("short") == "set"


def test_a_malformed_key_in_the_environment_stops_the_settings(monkeypatch):
    import importlib

    import config.settings

    monkeypatch.setenv("SECRETS_ENCRYPTION_KEYS", "not-a-key")
    with pytest.raises(ImproperlyConfigured, match="SECRETS_ENCRYPTION_KEYS"):
        importlib.reload(config.settings)
    monkeypatch.delenv("SECRETS_ENCRYPTION_KEYS")
    importlib.reload(config.settings)
