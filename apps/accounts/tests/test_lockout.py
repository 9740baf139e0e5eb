"""Log-in lock-out after too many wrong passwords: an account from one address,
and an address whatever the accounts; the page a locked-out person sees; unlocking by
waiting, by the admin, by the command line and by a password reset."""

import re
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import SESSION_KEY, authenticate
from django.core import mail
from django.core.management import call_command
from django.test import Client

from apps.accounts import services
from apps.accounts.models import User
from tests.factories import client_for

pytestmark = pytest.mark.django_db

PASSWORD = "Correct-horse-battery-42"
LIMIT = 10  # LOGIN_FAILURE_LIMIT's default


@pytest.fixture
def person(team_a, owner) -> User:
    owner.set_password(PASSWORD)
    owner.save(update_fields=["password"])
    return owner


def log_in(client: Client, password: str, email: str = "owner@a.test"):
    return client.post("/accounts/login/", {"username": email, "password": password})


def logged_in(client: Client) -> bool:
    return SESSION_KEY in client.session


def text(response) -> str:
    return response.content.decode()


def assert_locked_out_page(response) -> None:
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    page = text(response)
    assert "Too many wrong passwords" in page
    assert "Try again in 15 minutes" in page
    assert 'class="topbar"' in page  # the app's own layout (base.html), not a bare answer


def fail_until_locked(client: Client, email: str = "owner@a.test") -> None:
    for attempt in range(1, LIMIT):
        response = log_in(client, f"wrong-{attempt}", email)
        assert response.status_code == 200, attempt
        assert "correct email address and password" in text(response)
    assert_locked_out_page(log_in(client, f"wrong-{LIMIT}", email))


# --- Locked out --------------------------------------------------------------------------


def test_250_wrong_passwords_are_stopped_at_the_limit_and_then_even_the_right_one_is_refused(
    person,
):
    client = Client()

    answers = [log_in(client, f"guess-{n}").status_code for n in range(250)]

    assert answers[: LIMIT - 1] == [200] * (LIMIT - 1)
    assert answers[LIMIT - 1 :] == [429] * (250 - LIMIT + 1)
    right = log_in(client, PASSWORD)
    assert_locked_out_page(right)
    assert not logged_in(client)
    # Trying while locked counts nothing more: the lock ends 15 minutes after the 10th.
    assert AccessAttempt.objects.get().failures_since_start == LIMIT


def test_the_locked_out_page_says_what_happened_and_what_to_do(person):
    client = Client()
    fail_until_locked(client)

    page = text(log_in(client, PASSWORD))

    assert "Logging in as owner@a.test from here is paused" in page
    assert "even the right password is refused" in page
    assert 'href="/accounts/password-reset/"' in page
    assert "administrator" in page


def test_the_account_is_locked_whatever_the_case_of_the_address_typed(person):
    client = Client()
    for attempt in range(LIMIT - 1):
        log_in(client, f"wrong-{attempt}", email="Owner@A.test" if attempt % 2 else "owner@a.test")

    assert_locked_out_page(log_in(client, "wrong-again", email=" OWNER@a.test "))


def test_the_owner_still_logs_in_from_another_address_while_a_guesser_is_locked_out(person):
    guesser = Client(REMOTE_ADDR="203.0.113.9")
    fail_until_locked(guesser)

    owner = Client(REMOTE_ADDR="198.51.100.20")
    response = log_in(owner, PASSWORD)

    assert response.status_code == 302 and logged_in(owner)
    assert log_in(guesser, PASSWORD).status_code == 429


def test_behind_a_proxy_the_lock_out_counts_the_address_the_proxy_forwards(settings, person):
    settings.TRUSTED_PROXY_COUNT = 1
    guesser = Client(REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.9")
    fail_until_locked(guesser)

    owner = Client(REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.20")

    assert log_in(owner, PASSWORD).status_code == 302 and logged_in(owner)


def test_an_address_guessing_at_many_accounts_is_locked_out_too(settings, team_a):
    settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS = 12
    client = Client(REMOTE_ADDR="203.0.113.9")
    for account in range(4):  # 3 each: under the limit of any one account
        for attempt in range(3):
            log_in(client, f"wrong-{attempt}", email=f"someone{account}@a.test")

    response = log_in(client, "anything", email="someone-else@a.test")

    assert response.status_code == 429
    assert "Logging in from your network address is paused" in text(response)
    assert log_in(Client(REMOTE_ADDR="198.51.100.20"), "x", "a@a.test").status_code == 200


def test_a_successful_log_in_forgets_the_failures_before_it(person):
    client = Client()
    for attempt in range(LIMIT - 1):
        log_in(client, f"wrong-{attempt}")
    assert log_in(client, PASSWORD).status_code == 302
    client.post("/accounts/logout/")

    for attempt in range(LIMIT - 1):
        assert log_in(client, f"wrong-again-{attempt}").status_code == 200


def test_the_invitation_page_password_check_counts_towards_the_lock_out(team_a, team_b, outsider):
    outsider.set_password(PASSWORD)
    outsider.save(update_fields=["password"])
    _invitation, token = services.invitation_create(
        team=team_a, email="outsider@b.test", role="evaluator", invited_by=None
    )
    client = Client()
    for attempt in range(LIMIT - 1):
        client.post(f"/invitations/{token}/", {"password": f"wrong-{attempt}"})

    response = client.post(f"/invitations/{token}/", {"password": "wrong-again"})

    assert response.status_code == 429
    assert log_in(client, PASSWORD, email="outsider@b.test").status_code == 429


def test_checking_a_password_without_a_request_is_not_locked_out(person):
    """Management commands and the shell check passwords with no client behind them."""
    fail_until_locked(Client())

    assert authenticate(username="owner@a.test", password=PASSWORD) == person


# --- Unlocked ----------------------------------------------------------------------------


def test_the_lock_lifts_after_the_cool_off(person):
    client = Client()
    fail_until_locked(client)

    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.get().attempt_time - timedelta(minutes=16)
    )

    assert log_in(client, PASSWORD).status_code == 302 and logged_in(client)


def test_an_admin_unlocks_the_account_in_the_admin_and_the_person_logs_in(person):
    client = Client()
    fail_until_locked(client)
    admin = client_for(User.objects.create_superuser("root@relevo.test", "Root-password-99"))

    changelist = admin.get("/admin/accounts/user/")
    done = admin.post(
        "/admin/accounts/user/",
        {"action": "unlock_login", "_selected_action": [person.pk]},
        follow=True,
    )

    assert "Unlock log-in" in text(changelist)
    assert "Unlocked 1 account(s)" in text(done)
    assert log_in(client, PASSWORD).status_code == 302 and logged_in(client)


def test_the_admin_lists_locked_out_attempts_under_axes(person):
    fail_until_locked(Client())
    admin = client_for(User.objects.create_superuser("root@relevo.test", "Root-password-99"))

    page = admin.get("/admin/axes/accessattempt/")

    assert page.status_code == 200
    assert "owner@a.test" in text(page) and "Locked Out" in text(page)


def test_the_command_line_unlocks_the_account(person, capsys):
    client = Client()
    fail_until_locked(client)

    call_command("axes_reset_username", "owner@a.test")

    assert "1 attempts removed" in capsys.readouterr().out
    assert log_in(client, PASSWORD).status_code == 302 and logged_in(client)


def test_a_password_reset_from_the_emailed_link_unlocks_the_account(person):
    client = Client()
    fail_until_locked(client)

    client.post("/accounts/password-reset/", {"email": "owner@a.test"})
    link = re.search(r"http://testserver(/accounts/reset/\S+/)", mail.outbox[0].body).group(1)
    form_url = client.get(link, follow=True).redirect_chain[-1][0]
    saved = client.post(
        form_url, {"new_password1": "Brand-new-secret-77", "new_password2": "Brand-new-secret-77"}
    )

    assert saved.status_code == 302
    assert log_in(client, "Brand-new-secret-77").status_code == 302 and logged_in(client)
