"""Who may call /api/v1/: only a live team token, and only about its own team.

Every endpoint is tried without a token and with malformed, unknown and revoked ones; a
logged-in person's session is not enough either."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.accounts.api_tokens import api_token_create, api_token_revoke
from apps.accounts.models import ApiToken, User
from apps.evaluations.models import Evaluation
from tests.factories import make_evaluation, make_team

pytestmark = pytest.mark.django_db

# Every operation of v1, as (method, path) with {id} for an evaluation of the caller.
ENDPOINTS = [
    ("get", "/api/v1/evaluations/"),
    ("post", "/api/v1/evaluations/"),
    ("post", "/api/v1/evaluations/import/"),
    ("get", "/api/v1/evaluations/{id}/"),
    ("delete", "/api/v1/evaluations/{id}/"),
    ("post", "/api/v1/evaluations/{id}/start/"),
    ("post", "/api/v1/evaluations/{id}/stop/"),
    ("post", "/api/v1/evaluations/{id}/finish/"),
    ("get", "/api/v1/evaluations/{id}/export/"),
    ("get", "/api/v1/evaluations/{id}/keywords/"),
    ("get", "/api/v1/evaluations/{id}/judgements/"),
]


def call(client: Client, method: str, path: str, evaluation: Evaluation):
    url = path.format(id=evaluation.id)
    if method == "post":
        return client.post(url, {}, content_type="application/json")
    return getattr(client, method)(url)


def bearer(text: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {text}"})


@pytest.fixture
def evaluation(team_a):
    return make_evaluation(team=team_a, start=False)


@pytest.fixture
def token(team_a) -> tuple[ApiToken, str]:
    return api_token_create(team=team_a, name="ci")


def assert_refused_as_unauthenticated(response) -> None:
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["errors"] == []
    assert body["detail"]


# --- Refused ----------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_every_endpoint_without_a_token_is_401_with_www_authenticate(method, path, evaluation):
    before = Evaluation.objects.filter(id=evaluation.id).values().get()

    response = call(Client(), method, path, evaluation)

    assert_refused_as_unauthenticated(response)
    assert "credentials were not provided" in response.json()["detail"]
    assert Evaluation.objects.filter(id=evaluation.id).values().get() == before


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_every_endpoint_with_a_revoked_token_is_401(method, path, evaluation, token):
    row, text = token
    api_token_revoke(token=row)

    response = call(bearer(text), method, path, evaluation)

    assert_refused_as_unauthenticated(response)
    assert response.json()["detail"] == "This token is not valid or was revoked."
    assert Evaluation.objects.filter(id=evaluation.id).exists()


@pytest.mark.parametrize(
    "header",
    [
        "Token {text}",  # another scheme
        "Bearer",
        "Bearer    ",
        "Basic dXNlcjpwYXNz",
    ],
)
def test_a_malformed_authorization_header_is_401(header, evaluation, token):
    _row, text = token

    response = Client(headers={"Authorization": header.format(text=text)}).get(
        "/api/v1/evaluations/"
    )

    assert_refused_as_unauthenticated(response)
    assert "Authorization: Bearer <token>" in response.json()["detail"]


@pytest.mark.parametrize(
    "text",
    [
        "not-a-token",
        "rlv_",
        "rlv__",
        "rlv_abc",
        "xyz_0123456789ab_secret",
        "rlv_0123456789ab_secret",  # well formed, but no such token
        "rlv_{prefix}_wrong-secret",  # a real prefix with the wrong secret
        "rlv_{prefix}_{secret}x",
        "rlv_{prefix}",
        "rlv_{prefix}\x00_{secret}",
        "rlv_%_{secret}",
        "rlv_{prefix}é_{secret}",
        "rlv_" + "f" * 300 + "_{secret}",
    ],
)
def test_an_unknown_or_malformed_token_is_401(text, evaluation, token):
    _row, real = token
    _rlv, prefix, secret = real.split("_", 2)

    response = bearer(text.format(prefix=prefix, secret=secret)).get("/api/v1/evaluations/")

    assert_refused_as_unauthenticated(response)
    assert response.json()["detail"] == "This token is not valid or was revoked."


@pytest.mark.parametrize("scheme", ["bearer", "BEARER"])
def test_the_scheme_is_case_insensitive(scheme, token):
    _row, text = token

    response = Client(headers={"Authorization": f"{scheme} {text}"}).get("/api/v1/evaluations/")

    assert response.status_code == 200


def test_an_integration_needs_no_csrf_token(token):
    _row, text = token
    client = Client(enforce_csrf_checks=True, headers={"Authorization": f"Bearer {text}"})

    response = client.post(
        "/api/v1/evaluations/",
        {"name": "From CI", "metrics": [{"metric": "ndcg", "k": 10}]},
        content_type="application/json",
    )

    assert response.status_code == 201


def test_a_token_sent_with_spaces_around_it_still_works(token):
    _row, text = token

    response = Client(headers={"Authorization": f"Bearer   {text}  "}).get("/api/v1/evaluations/")

    assert response.status_code == 200


def test_a_logged_in_person_without_a_token_is_401(team_a, evaluation):
    client = Client()
    client.force_login(User.objects.get(email="owner@a.test"))

    assert_refused_as_unauthenticated(client.get("/api/v1/evaluations/"))
    assert_refused_as_unauthenticated(client.post(f"/api/v1/evaluations/{evaluation.id}/start/"))
    evaluation.refresh_from_db()
    assert evaluation.status == "pending"


def test_a_token_of_a_deleted_team_is_401(team_a, token):
    _row, text = token
    team_a.delete()

    assert_refused_as_unauthenticated(bearer(text).get("/api/v1/evaluations/"))


# --- Works, for its own team only -------------------------------------------------------


def test_a_live_token_lists_its_teams_evaluations(evaluation, token):
    _row, text = token

    response = bearer(text).get("/api/v1/evaluations/")

    assert response.status_code == 200
    assert [e["id"] for e in response.json()["results"]] == [evaluation.id]


def test_a_token_only_ever_sees_its_own_team(team_a, evaluation):
    team_b = make_team("Team B", owner="owner@b.test")
    theirs = make_evaluation(team=team_b, start=False)
    _row, text_b = api_token_create(team=team_b, name="ci")  # same name, other team
    client_b = bearer(text_b)

    listed = client_b.get("/api/v1/evaluations/").json()
    assert [e["id"] for e in listed["results"]] == [theirs.id]
    for method, path in ENDPOINTS:
        if "{id}" in path:
            response = call(client_b, method, path, evaluation)
            assert response.status_code == 404, (method, path)
    evaluation.refresh_from_db()
    assert evaluation.status == "pending"


def test_several_tokens_of_one_team_each_work_and_revoking_one_leaves_the_others(team_a):
    first, first_text = api_token_create(team=team_a, name="nightly import")
    _second, second_text = api_token_create(team=team_a, name="dashboard")

    api_token_revoke(token=first)

    assert bearer(first_text).get("/api/v1/evaluations/").status_code == 401
    assert bearer(second_text).get("/api/v1/evaluations/").status_code == 200


# --- last_used_at -----------------------------------------------------------------------


def test_first_use_sets_last_used_at(token):
    row, text = token
    assert row.last_used_at is None

    bearer(text).get("/api/v1/evaluations/")

    row.refresh_from_db()
    assert timezone.now() - row.last_used_at < timedelta(seconds=10)


def test_a_failed_attempt_does_not_mark_the_token_used(token):
    row, text = token

    bearer(text + "x").get("/api/v1/evaluations/")

    row.refresh_from_db()
    assert row.last_used_at is None


def test_last_used_at_is_not_rewritten_on_every_request_within_a_minute(token):
    row, text = token
    client = bearer(text)
    client.get("/api/v1/evaluations/")
    recently = timezone.now() - timedelta(seconds=30)
    ApiToken.objects.filter(id=row.id).update(last_used_at=recently)

    with CaptureQueriesContext(connection) as queries:
        client.get("/api/v1/evaluations/")
        client.get("/api/v1/evaluations/")

    row.refresh_from_db()
    assert row.last_used_at == recently
    assert not [q for q in queries.captured_queries if q["sql"].startswith("UPDATE")]


def test_last_used_at_moves_on_once_a_minute_has_passed(token):
    row, text = token
    long_ago = timezone.now() - timedelta(minutes=2)
    ApiToken.objects.filter(id=row.id).update(last_used_at=long_ago)

    bearer(text).get("/api/v1/evaluations/")

    row.refresh_from_db()
    assert row.last_used_at > long_ago + timedelta(minutes=1)
