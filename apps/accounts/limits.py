"""How often Relevo sends mail on request: password resets and invitations.

Without a limit, anyone could make Relevo mail a stranger again and again (password
reset needs no login), and a lead's account in the wrong hands could mail the world.
The rates are settings.THROTTLE_RATES (env THROTTLE_*, docs/security.md), counted by
apps.core.ratelimit.
"""

import logging

from apps.core.errors import RateLimited
from apps.core.ratelimit import describe_wait, hit

from .models import Team, User

logger = logging.getLogger(__name__)


def password_reset_allowed(*, email: str, address: str) -> bool:
    """Count a password reset asked for `email` by the client at `address`; whether its
    mail may go out. Limited per target address (one inbox is not flooded) and per
    client address (one client does not mail many inboxes).

    The page answers the same either way: saying "too many" would tell the client that
    the address has an account (it is only counted when asked for)."""
    by_email = hit("password_reset_email", email.strip().lower())
    by_address = hit("password_reset_address", address)
    if by_email.allowed and by_address.allowed:
        return True
    logger.warning(
        "Password reset mail not sent: too many asked %s (client %s).",
        "for one address" if not by_email.allowed else "by one client",
        address,
    )
    return False


def invitation_count(*, team: Team, invited_by: User | None) -> None:
    """Count one invitation mail; RateLimited when the team, or the person inviting, has
    sent too many lately (THROTTLE_INVITATIONS_PER_TEAM, _PER_INVITER)."""
    verdicts = [hit("invitations_team", str(team.pk))]
    if invited_by is not None:
        verdicts.append(hit("invitations_inviter", str(invited_by.pk)))
    refused = [verdict for verdict in verdicts if not verdict.allowed]
    if refused:
        wait = max(verdict.retry_after for verdict in refused)
        raise RateLimited(
            f"Too many invitations were sent lately: try again in {describe_wait(wait)}.",
            retry_after=wait,
        )
