"""Team API tokens: create, check, revoke.

A token reads `rlv_<prefix>_<secret>`. The prefix finds the row; the secret is compared
by its SHA-256 in constant time. Only the hash is stored, so the token is shown once.
"""

import hashlib
import hmac
import re
import secrets
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.core.errors import InvalidInput

from .models import ApiToken, Team, User

TOKEN_PREFIX = "rlv"
# last_used_at is written at most this often per token, so reads stay reads.
LAST_USED_RESOLUTION = timedelta(minutes=1)


_PREFIX_SHAPE = re.compile(r"[0-9a-f]{12}")


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@transaction.atomic
def api_token_create(
    *, team: Team, name: str, created_by: User | None = None
) -> tuple[ApiToken, str]:
    """A new token; returns the row and the full token text (shown once, never stored)."""
    name = name.strip()
    limit = ApiToken._meta.get_field("name").max_length or 100
    if not name:
        raise InvalidInput({"name": "required"}, field="name")
    if len(name) > limit:
        raise InvalidInput({"name": f"at most {limit} characters"}, field="name")
    taken = InvalidInput({"name": f"the team already has a token named {name!r}"}, field="name")
    if _name_taken(team, name):
        raise taken
    prefix = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    try:
        with transaction.atomic():
            token = ApiToken.objects.create(
                team=team,
                name=name,
                prefix=prefix,
                secret_hash=_hash(secret),
                created_by=created_by,
            )
    except IntegrityError:
        # Someone took the name between the check and the insert (two leads at once).
        if _name_taken(team, name):
            raise taken from None
        raise
    return token, f"{TOKEN_PREFIX}_{prefix}_{secret}"


def _name_taken(team: Team, name: str) -> bool:
    return ApiToken.objects.filter(team=team, name=name, revoked_at__isnull=True).exists()


def api_token_check(text: str) -> ApiToken | None:
    """The live token this text is, or None. Marks it used (at most once a minute)."""
    parts = text.strip().split("_", 2)
    if len(parts) != 3 or parts[0] != TOKEN_PREFIX:
        return None
    _, prefix, secret = parts
    # Anything but a prefix we could have made is refused before the database sees it:
    # PostgreSQL refuses text with a NUL byte, which answered 500 instead of 401.
    if not _PREFIX_SHAPE.fullmatch(prefix):
        return None
    token = (
        ApiToken.objects.select_related("team")
        .filter(prefix=prefix, revoked_at__isnull=True)
        .first()
    )
    if token is None or not hmac.compare_digest(token.secret_hash, _hash(secret)):
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(id=token.id).update(last_used_at=now)
        token.last_used_at = now
    return token


def api_token_revoke(*, token: ApiToken) -> None:
    ApiToken.objects.filter(id=token.id, revoked_at__isnull=True).update(revoked_at=timezone.now())
