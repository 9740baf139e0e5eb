"""Team API tokens: made, checked and revoked by the service, on the page /team/api-tokens/
(a lead of team A, an evaluator of team A, a lead of team B and someone not logged in) and
by `manage.py create_api_token`. Only a token's hash is ever stored."""

import re
from io import StringIO
from unittest import mock

import pytest
from django.apps import apps
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from apps.accounts.api_tokens import api_token_check, api_token_create, api_token_revoke
from apps.accounts.models import ApiToken, Session
from apps.core.errors import InvalidInput
from tests.factories import client_for, make_evaluation

pytestmark = pytest.mark.django_db

PAGE = "/team/api-tokens/"
TOKEN_TEXT = re.compile(r"rlv_[0-9a-f]{12}_[A-Za-z0-9_-]{43}")


def revoke_url(token: ApiToken) -> str:
    return f"/team/api-tokens/{token.id}/revoke/"


def api_works(text: str) -> bool:
    response = Client(headers={"Authorization": f"Bearer {text}"}).get("/api/v1/evaluations/")
    assert response.status_code in (200, 401)
    return response.status_code == 200


def stored_anywhere(secret: str) -> list[str]:
    """Every table (and every session's decoded data) that holds the text."""
    found = []
    for model in apps.get_models():
        for row in model.objects.values_list():
            if secret in repr(row):
                found.append(model.__name__)
    for session in Session.objects.all():
        if secret in repr(session.get_decoded()):
            found.append("session data")
    return found


def shown_token(response) -> str:
    [text] = re.findall(r'<code data-testid="new-token">([^<]*)</code>', response.content.decode())
    return text


# --- The cast ---------------------------------------------------------------------------


# --- The service ------------------------------------------------------------------------


def test_a_new_token_reads_rlv_prefix_secret_and_checks_back_to_its_row(team_a):
    token, text = api_token_create(team=team_a, name="nightly import")

    assert TOKEN_TEXT.fullmatch(text)
    assert text.split("_", 2)[1] == token.prefix
    assert api_token_check(text) == token
    assert token.name == "nightly import"


def test_only_the_hash_is_stored_never_the_secret(team_a):
    token, text = api_token_create(team=team_a, name="ci")
    secret = text.split("_", 2)[2]

    assert stored_anywhere(secret) == []
    assert stored_anywhere(text) == []
    token.refresh_from_db()
    assert len(token.secret_hash) == 64
    assert secret not in token.secret_hash


def test_a_team_has_several_named_tokens_each_its_own(team_a):
    made = [api_token_create(team=team_a, name=name) for name in ("import", "dashboard", "ci")]

    assert len({text for _token, text in made}) == 3
    assert len({token.prefix for token, _text in made}) == 3
    for token, text in made:
        assert api_token_check(text) == token


def test_two_live_tokens_of_a_team_cannot_share_a_name(team_a, team_b):
    api_token_create(team=team_a, name="ci")

    with pytest.raises(InvalidInput) as refused:
        api_token_create(team=team_a, name=" ci ")

    assert refused.value.field == "name"
    assert "already has a token named 'ci'" in refused.value.message
    api_token_create(team=team_b, name="ci")  # another team may


def test_a_name_taken_between_the_check_and_the_insert_is_refused_not_a_crash(team_a):
    api_token_create(team=team_a, name="ci")
    # Another lead's request wins the race: the early check sees nothing, the database's
    # unique constraint catches it.
    with (
        mock.patch("apps.accounts.api_tokens._name_taken", side_effect=[False, True]),
        pytest.raises(InvalidInput) as refused,
    ):
        api_token_create(team=team_a, name="ci")

    assert refused.value.field == "name"
    assert "already has a token named 'ci'" in refused.value.message
    assert ApiToken.objects.filter(team=team_a).count() == 1


def test_a_revoked_tokens_name_can_be_used_again(team_a):
    old, old_text = api_token_create(team=team_a, name="ci")
    api_token_revoke(token=old)

    _new, new_text = api_token_create(team=team_a, name="ci")

    assert api_token_check(old_text) is None
    assert api_token_check(new_text) is not None


@pytest.mark.parametrize(("name", "reason"), [("   ", "required"), ("x" * 101, "at most 100")])
def test_a_token_needs_a_name_that_fits(name, reason, team_a):
    with pytest.raises(InvalidInput) as refused:
        api_token_create(team=team_a, name=name)

    assert reason in refused.value.message
    assert not ApiToken.objects.exists()


def test_revoking_twice_keeps_the_first_revocation_time(team_a):
    token, _text = api_token_create(team=team_a, name="ci")
    api_token_revoke(token=token)
    token.refresh_from_db()
    first = token.revoked_at

    api_token_revoke(token=token)

    token.refresh_from_db()
    assert token.revoked_at == first


# --- The page: a lead -------------------------------------------------------------------


@pytest.mark.parametrize("lead", ["owner", "admin"])
def test_a_lead_creates_a_token_and_sees_it_once(lead, request, team_a):
    client = client_for(request.getfixturevalue(lead))

    created = client.post(PAGE, {"name": "nightly import"})

    assert created.status_code == 200
    text = shown_token(created)
    assert TOKEN_TEXT.fullmatch(text)
    token = ApiToken.objects.get(team=team_a)
    assert token.name == "nightly import"
    assert token.created_by == request.getfixturevalue(lead)
    assert api_works(text)
    # Never again: not on the next visit, nowhere in the database.
    again = client.get(PAGE).content.decode()
    assert text not in again
    assert text.split("_", 2)[2] not in again
    assert f"rlv_{token.prefix}_" in again
    assert "nightly import" in again
    assert stored_anywhere(text.split("_", 2)[2]) == []


def test_the_page_lists_the_teams_tokens_with_their_state(owner, team_a, team_b):
    live, live_text = api_token_create(team=team_a, name="dashboard")
    gone, _ = api_token_create(team=team_a, name="old import")
    api_token_revoke(token=gone)
    api_token_create(team=team_b, name="their secret job")
    api_works(live_text)

    page = client_for(owner).get(PAGE).content.decode()

    assert "dashboard" in page
    assert "old import" in page
    assert "revoked" in page
    assert "never" not in page.split("dashboard")[1].split("</tr>")[0]  # used just now
    assert "their secret job" not in page
    assert revoke_url(live) in page
    assert revoke_url(gone) not in page  # nothing left to revoke


def test_a_lead_creating_a_second_token_of_the_same_name_gets_the_reason(owner, team_a):
    api_token_create(team=team_a, name="ci")

    response = client_for(owner).post(PAGE, {"name": "ci"})

    assert response.status_code == 200
    assert "already has a token named" in response.content.decode()
    assert 'data-testid="new-token"' not in response.content.decode()
    assert ApiToken.objects.filter(team=team_a).count() == 1


@pytest.mark.parametrize("name", ["", "   ", "x" * 101])
def test_a_lead_creating_a_token_without_a_fitting_name_is_refused(name, owner):
    response = client_for(owner).post(PAGE, {"name": name})

    assert response.status_code == 200
    assert 'data-testid="new-token"' not in response.content.decode()
    assert "errorlist" in response.content.decode()
    assert not ApiToken.objects.exists()


def test_a_lead_revokes_a_token_and_it_stops_working_at_once(owner, team_a):
    token, text = api_token_create(team=team_a, name="ci")
    _other, other_text = api_token_create(team=team_a, name="dashboard")
    assert api_works(text)

    response = client_for(owner).post(revoke_url(token))

    assert response.status_code == 302
    assert response["Location"] == PAGE
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert not api_works(text)
    assert api_works(other_text)


def test_revoking_needs_a_post(owner, team_a):
    token, text = api_token_create(team=team_a, name="ci")

    assert client_for(owner).get(revoke_url(token)).status_code == 405
    assert api_works(text)


# --- The page: everyone else ------------------------------------------------------------


def test_an_evaluator_may_not_see_create_or_revoke_tokens(evaluator, team_a):
    token, text = api_token_create(team=team_a, name="ci")
    client = client_for(evaluator)

    assert client.get(PAGE).status_code == 403
    assert client.post(PAGE, {"name": "mine"}).status_code == 403
    assert client.post(revoke_url(token)).status_code == 403
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["ci"]
    assert api_works(text)


def test_a_lead_of_another_team_cannot_revoke_this_teams_token(outsider, team_a):
    token, text = api_token_create(team=team_a, name="ci")

    response = client_for(outsider).post(revoke_url(token))

    assert response.status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None
    assert api_works(text)


def test_a_lead_of_another_team_does_not_see_this_teams_tokens(outsider, team_a):
    api_token_create(team=team_a, name="team a nightly")

    page = client_for(outsider).get(PAGE).content.decode()

    assert "team a nightly" not in page


def test_a_token_made_on_another_teams_page_belongs_to_that_team(outsider, team_a, team_b):
    make_evaluation(team=team_a, start=False)
    theirs = make_evaluation(team=team_b, start=False)

    text = shown_token(client_for(outsider).post(PAGE, {"name": "ci"}))

    response = Client(headers={"Authorization": f"Bearer {text}"}).get("/api/v1/evaluations/")
    assert [e["id"] for e in response.json()["results"]] == [theirs.id]


def test_someone_not_logged_in_is_sent_to_log_in(team_a):
    token, text = api_token_create(team=team_a, name="ci")

    for response in (
        Client().get(PAGE),
        Client().post(PAGE, {"name": "x"}),
        Client().post(revoke_url(token)),
    ):
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
    assert ApiToken.objects.count() == 1
    assert api_works(text)


# Measured on SQLite and PostgreSQL: session, user, memberships, then the tokens with
# their creators in one query. The same for 1 and 20 tokens.
PAGE_QUERIES = 5


@pytest.mark.parametrize("size", [1, 20])
def test_the_page_reads_a_fixed_number_of_queries(
    size, owner, admin, team_a, django_assert_max_num_queries
):
    for number in range(size):
        api_token_create(team=team_a, name=f"job {number}", created_by=(owner, admin)[number % 2])
    client = client_for(owner)

    with django_assert_max_num_queries(PAGE_QUERIES):
        response = client.get(PAGE)

    assert response.content.decode().count("/revoke/") == size


# --- The command ------------------------------------------------------------------------


def test_create_api_token_prints_a_token_that_works(team_a):
    evaluation = make_evaluation(team=team_a, start=False)
    out, err = StringIO(), StringIO()

    call_command("create_api_token", "Team A", "nightly import", stdout=out, stderr=err)

    text = out.getvalue().strip()
    assert TOKEN_TEXT.fullmatch(text)
    assert "nightly import" in err.getvalue()
    assert ApiToken.objects.get(team=team_a).name == "nightly import"
    response = Client(headers={"Authorization": f"Bearer {text}"}).get("/api/v1/evaluations/")
    assert [e["id"] for e in response.json()["results"]] == [evaluation.id]
    assert stored_anywhere(text.split("_", 2)[2]) == []


def test_create_api_token_for_an_unknown_team_fails_clearly(team_a):
    with pytest.raises(CommandError, match="no team named 'Team Z'"):
        call_command("create_api_token", "Team Z", "ci", stdout=StringIO(), stderr=StringIO())
    assert not ApiToken.objects.exists()


def test_create_api_token_with_a_name_already_in_use_fails_clearly(team_a):
    api_token_create(team=team_a, name="ci")

    with pytest.raises(CommandError, match="already has a token named 'ci'"):
        call_command("create_api_token", "Team A", "ci", stdout=StringIO(), stderr=StringIO())
    assert ApiToken.objects.count() == 1
