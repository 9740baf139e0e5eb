"""Signing a webhook's body, so its receiver can tell Relevo sent it, unchanged.

The signature is HMAC-SHA256 over the exact bytes of the body with the webhook's
secret, sent as `X-Relevo-Signature: sha256=<hex>`. A receiver computes the same over
the bytes it read (before parsing them) and compares in constant time. The body holds
the delivery's id and time, so a receiver can also refuse one it has seen. Pure: no
Django.
"""

import hashlib
import hmac

SIGNATURE_HEADER = "X-Relevo-Signature"
PREFIX = "sha256="


def signature(secret: str, body: bytes) -> str:
    """The header's value for `body` signed with `secret`."""
    digest = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return PREFIX + digest


def signature_matches(secret: str, body: bytes, header: str) -> bool:
    """What a receiver checks; constant time, whatever the header holds."""
    return hmac.compare_digest(signature(secret, body), header.strip())
