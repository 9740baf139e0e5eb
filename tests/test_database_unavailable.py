"""While the database is unavailable, requests answer 503 with Retry-After (never 500):
the app's own page, the API's JSON error, or a fragment the grading page acts on.

The outage is simulated where it happens: the database connection refuses to be used,
as it does while PostgreSQL restarts. Every query from then on fails, including any the
503 answer might make (it must make none).
"""

from contextlib import contextmanager
from unittest import mock

import pytest
from django.conf import settings
from django.contrib.sessions.middleware import SessionMiddleware
from django.db import InterfaceError, OperationalError, connection
from django.test import Client, RequestFactory

from apps.accounts.api_tokens import api_token_create
from apps.core import unavailable
from apps.evaluations.models import FeedbackSlot
from tests.factories import assign, client_for, make_evaluation, slots_of

pytestmark = pytest.mark.django_db

REFUSED = OperationalError(
    'connection to server at "127.0.0.1", port 5432 failed: Connection refused'
)


@contextmanager
def database_down(error: Exception = REFUSED):
    """Every use of the database connection raises, as when the server is gone."""
    with mock.patch.object(connection, "ensure_connection", side_effect=error):
        yield


def assert_retry_later(response) -> None:
    assert response.status_code == 503
    assert response["Retry-After"] == str(unavailable.RETRY_AFTER_SECONDS)


def test_kept_connections_are_checked_before_use():
    assert settings.DATABASES["default"]["CONN_HEALTH_CHECKS"] is True


def test_a_page_answers_503_with_the_apps_page_that_says_to_retry(evaluator):
    client = client_for(evaluator)

    with database_down():
        response = client.get("/feedback/")

    assert_retry_later(response)
    page = response.content.decode()
    assert "Relevo is briefly unavailable" in page
    assert "loads again by itself in 5 seconds" in page
    assert '<meta http-equiv="refresh" content="5">' in page
    assert evaluator.email not in page  # nobody was looked up


def test_a_form_sent_without_htmx_is_told_to_send_it_again(team_a, evaluator):
    slot = assign(slots_of(make_evaluation(team=team_a))[0], evaluator)
    client = client_for(evaluator)

    with database_down(InterfaceError("connection already closed")):
        response = client.post(f"/feedback/slots/{slot.id}/grade/", {"grade": "3"})

    assert_retry_later(response)
    page = response.content.decode()
    assert "may not have been saved" in page
    assert "http-equiv" not in page  # a reload would not send the form again


def test_a_grade_posted_by_htmx_answers_503_and_swaps_nothing(team_a, evaluator):
    slot = assign(slots_of(make_evaluation(team=team_a))[0], evaluator)
    client = client_for(evaluator)

    with database_down():
        response = client.post(
            f"/feedback/slots/{slot.id}/grade/", {"grade": "3"}, headers={"HX-Request": "true"}
        )

    assert_retry_later(response)
    assert response["HX-Reswap"] == "none"
    assert unavailable.MESSAGE in response.content.decode()
    assert FeedbackSlot.objects.get(id=slot.id).grade is None


def test_the_api_answers_503_in_its_error_shape(team_a):
    _token, text = api_token_create(team=team_a, name="ci")
    api = Client(headers={"Authorization": f"Bearer {text}"})

    with database_down():
        response = api.get("/api/v1/evaluations/")

    assert_retry_later(response)
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": unavailable.MESSAGE, "errors": []}


def test_an_error_raised_in_a_middleware_answers_503_too(evaluator):
    """A session saved as the response leaves is outside any view: handler500 answers."""
    client = client_for(evaluator, raise_request_exception=False)

    with mock.patch.object(SessionMiddleware, "process_response", side_effect=REFUSED):
        response = client.get("/feedback/")

    assert_retry_later(response)
    assert "Relevo is briefly unavailable" in response.content.decode()


def test_any_other_error_is_still_a_500():
    request = RequestFactory().get("/feedback/")
    try:
        raise ValueError("a bug")
    except ValueError:
        response = unavailable.server_error(request)
    assert response.status_code == 500
