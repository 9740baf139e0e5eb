"""Secrets at rest: the API keys Relevo keeps for a team (an AI judge's provider key).

A secret is stored encrypted (Fernet: AES-128-CBC with an HMAC-SHA256, from the
`cryptography` package) under a key from the environment, `SECRETS_ENCRYPTION_KEYS`:
Fernet keys separated by commas, the first encrypting, every one decrypting, so a key
is rotated by putting the new one first and re-saving the secrets. Without it the key is
derived from SECRET_KEY (fine for `make run`; a deployment sets its own, so that
rotating SECRET_KEY does not make the stored secrets unreadable).

A secret is decrypted only where it is used (the call to the provider) and is never
shown again: pages and the API show `secret_hint` (its last four characters).
"""

import base64
import hashlib
from functools import cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


class SecretUnreadable(Exception):
    """No configured key decrypts the stored secret (the keys changed)."""


def new_key() -> str:
    """A fresh key for SECRETS_ENCRYPTION_KEYS."""
    return Fernet.generate_key().decode("ascii")


def encrypt_secret(plain: str) -> str:
    return _fernet().encrypt(plain.encode("utf-8")).decode("ascii")


def decrypt_secret(stored: str) -> str:
    try:
        return _fernet().decrypt(stored.encode("ascii")).decode("utf-8")
    except (InvalidToken, ValueError):
        raise SecretUnreadable(
            "a stored secret cannot be decrypted with SECRETS_ENCRYPTION_KEYS; enter it again"
        ) from None


def secret_hint(plain: str) -> str:
    """What pages show of a secret: its last four characters, when it is long enough
    that they say nothing useful about the rest."""
    if len(plain) < 12:
        return "set"
    return f"…{plain[-4:]}"


def _fernet() -> MultiFernet:
    return _fernet_for(tuple(settings.SECRETS_ENCRYPTION_KEYS), settings.SECRET_KEY)


@cache
def _fernet_for(keys: tuple[str, ...], secret_key: str) -> MultiFernet:
    if not keys:
        derived = hashlib.sha256(b"relevo secrets at rest\0" + secret_key.encode()).digest()
        keys = (base64.urlsafe_b64encode(derived).decode("ascii"),)
    return MultiFernet([Fernet(key.encode("ascii")) for key in keys])
