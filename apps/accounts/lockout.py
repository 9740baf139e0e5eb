"""Log-in lock-out after too many wrong passwords (django-axes; settings in config/settings.py).

What is locked, and why (AXES_LOCKOUT_PARAMETERS and LOGIN_FAILURE_LIMIT_PER_ADDRESS):

- An account *from one address*: LOGIN_FAILURE_LIMIT wrong passwords for one account from
  one address lock that pair for LOGIN_COOLOFF_MINUTES. Someone guessing at one account
  stops after 10 tries instead of 250. Its owner, at their own address, still logs in:
  locking the account itself would let anybody lock anybody out, from anywhere, just by
  typing wrong passwords for them.
- An address, at a higher count (LOGIN_FAILURE_LIMIT_PER_ADDRESS): one address trying a
  few passwords on each of many accounts is stopped too, while an office behind one
  address keeps room for its people's typos, which locking addresses at the low count
  would not leave it.

What it leaves open: guessing spread over many addresses, each under both limits; the
password rules (AUTH_PASSWORD_VALIDATORS) are the defence there.

The failures are counted in the database, by axes' own tables: the lock holds across
every worker, survives restarts, and log-in never depends on Redis. An admin unlocks in
the admin (Users: "Unlock log-in", or Axes: Access attempts, delete) or with
`manage.py axes_reset_username <email>` / `axes_reset_ip <address>` (docs/security.md).
A password reset, which proves the mailbox, unlocks its account too.
"""

import math
from datetime import datetime
from typing import Any

from axes.backends import AxesStandaloneBackend
from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_cool_off
from axes.models import AccessAttempt
from axes.utils import reset
from django.conf import settings
from django.db.models import Max, Q, Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

ADDRESS_MAX = 254  # an email address's longest (RFC 5321), User.email's max_length


def login_name(request: HttpRequest, credentials: dict[str, Any] | None) -> str | None:
    """The account a log-in names, as the lock-out counts it (AXES_USERNAME_CALLABLE).

    In lower case: addresses are stored so and log-in ignores case, so "Ann@x.test" and
    "ann@x.test" are one account, counted once, not two ways around the limit. At most
    an address's 254 characters: axes' column holds 255, and a longer name is no one's."""
    field = settings.AXES_USERNAME_FORM_FIELD
    raw = credentials.get(field) if credentials else getattr(request, "POST", {}).get(field)
    return str(raw).strip().lower()[:ADDRESS_MAX] if raw else None


class AxesRequest(HttpRequest):
    """A log-in request as axes hands it to the handler and the lock-out page: axes has
    set the client's address on it (None when it cannot tell). Only a type."""

    axes_ip_address: str | None


class LoginGuard(AxesStandaloneBackend):
    """First of AUTHENTICATION_BACKENDS: refuses any log-in while it is locked out.

    It logs nobody in; the next backend checks the password."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> None:
        if request is None:
            # Code on the server checks a password (a management command, the shell, a
            # test): no client is behind it, so there is nobody to lock out.
            return None
        return super().authenticate(request, username, password, **kwargs)


class LockoutHandler(AxesDatabaseHandler):
    """Axes' database handler, which locks the (account, address) pair, also locking an
    address that failed LOGIN_FAILURE_LIMIT_PER_ADDRESS times, whatever the accounts."""

    def is_locked(self, request: AxesRequest, credentials: dict[str, Any] | None = None) -> bool:
        return bool(super().is_locked(request, credentials)) or self.address_is_locked(request)

    def address_is_locked(self, request: AxesRequest) -> bool:
        address = request.axes_ip_address
        if not address:
            return False
        failures = _recent_attempts(request, Q(ip_address=address)).aggregate(
            total=Sum("failures_since_start")
        )["total"]
        return (failures or 0) >= settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS


def lockout_response(
    request: AxesRequest, original_response: HttpResponse | None, credentials: dict[str, Any]
) -> HttpResponse:
    """The page a locked-out person sees instead of the log-in form (AXES_LOCKOUT_CALLABLE):
    429, what happened, when to try again, and what else they can do."""
    handler = AxesProxyHandler.get_implementation()
    account = login_name(request, credentials)
    address = request.axes_ip_address
    by_account = handler.get_failures(request, credentials) >= settings.AXES_FAILURE_LIMIT
    which = Q(username=account, ip_address=address) if by_account else Q(ip_address=address)
    seconds = _seconds_until_unlocked(request, which)
    response = render(
        request,
        "accounts/locked_out.html",
        {"by_account": by_account, "account": account, "minutes": math.ceil(seconds / 60)},
        status=429,
    )
    response["Retry-After"] = str(seconds)
    return response


def unlock(email: str) -> int:
    """Forget the failed log-ins of this account, from every address; how many were kept."""
    return int(reset(username=email.strip().lower()))


def _recent_attempts(request: HttpRequest, which: Q) -> Any:
    """Attempts that still count: those whose last failure is within the cool-off."""
    since: datetime = timezone.now() - get_cool_off(request)
    return AccessAttempt.objects.filter(which, attempt_time__gte=since)


def _seconds_until_unlocked(request: HttpRequest, which: Q) -> int:
    """The cool-off counts from the last failure that still counts (a lock is not made
    longer by trying again while locked: AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT)."""
    cool_off = get_cool_off(request)
    last = _recent_attempts(request, which).aggregate(last=Max("attempt_time"))["last"]
    if last is None:
        return max(1, int(cool_off.total_seconds()))
    return max(1, math.ceil((last + cool_off - timezone.now()).total_seconds()))
