"""With DEBUG off (as `make run` and production serve), an unknown page, another team's
object, a refused role and a failure inside Relevo answer with Relevo's own pages, never
Django's debug page."""

import pytest
from django.template.loader import render_to_string
from django.test import override_settings

from tests.factories import client_for, make_evaluation

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("debug_off")]

BRAND = '<a class="brand" href="/">Relevo</a>'
NOT_FOUND = "<h1>Not found</h1>"


@pytest.fixture
def debug_off():
    with override_settings(DEBUG=False):
        yield


def page(response) -> str:
    return response.content.decode()


def assert_relevo_page(response, status: int, heading: str) -> None:
    body = page(response)
    assert response.status_code == status
    assert response["Content-Type"].startswith("text/html")
    assert BRAND in body and heading in body
    assert "Traceback" not in body and "technical_500" not in body


def test_an_unknown_evaluation_answers_relevo_s_not_found_page(owner, team_a):
    response = client_for(owner).get("/evaluations/999999/")

    assert_relevo_page(response, 404, NOT_FOUND)
    assert "Back to the dashboard" in page(response)
    assert ">Dashboard</a>" in page(response)  # the menu of the person logged in


def test_another_team_s_evaluation_answers_not_found_as_if_it_did_not_exist(outsider, team_a):
    evaluation = make_evaluation(team=team_a, keywords={}, start=False)

    response = client_for(outsider).get(f"/evaluations/{evaluation.id}/")

    assert_relevo_page(response, 404, NOT_FOUND)
    assert evaluation.name not in page(response)


@pytest.mark.parametrize("evaluation", ["999999", "not-a-number"])
def test_feedback_on_an_unknown_evaluation_answers_not_found(owner, team_a, evaluation):
    response = client_for(owner).get(f"/feedback/?evaluation={evaluation}")

    assert_relevo_page(response, 404, NOT_FOUND)


def test_feedback_on_another_team_s_evaluation_answers_not_found(outsider, team_a):
    evaluation = make_evaluation(team=team_a, keywords={}, start=False)

    response = client_for(outsider).get(f"/feedback/?evaluation={evaluation.id}")

    assert_relevo_page(response, 404, NOT_FOUND)


def test_an_unknown_path_answers_not_found_to_someone_not_logged_in():
    response = client_for(None).get("/no/such/page/")

    assert_relevo_page(response, 404, NOT_FOUND)
    assert ">Dashboard</a>" not in page(response)


def test_an_unknown_api_path_still_answers_json(owner):
    response = client_for(owner).get("/api/v1/no-such-thing/")

    assert response.status_code == 404
    assert response.json()["detail"] == "No API endpoint at /api/v1/no-such-thing/."


def test_a_role_that_may_not_answers_relevo_s_not_allowed_page_saying_why(evaluator):
    response = client_for(evaluator).get("/endpoints/")

    assert_relevo_page(response, 403, "<h1>Not allowed</h1>")
    assert "Only the team&#x27;s owner and admins can do this." in page(response)


@override_settings(ROOT_URLCONF="config.tests.urls_with_a_failing_view")
def test_a_failure_inside_relevo_answers_relevo_s_error_page(owner, caplog):
    response = client_for(owner, raise_request_exception=False).get("/failing/")

    assert_relevo_page(response, 500, "<h1>Something went wrong on our side</h1>")
    assert "a bug in a view" not in page(response)  # the error is logged, not shown
    logged = [r for r in caplog.records if r.name == "django.request"]
    assert logged and "a bug in a view" in str(logged[0].exc_info[1])


def test_the_error_page_reads_nothing_from_the_database(django_assert_num_queries):
    # Django renders it without the request: no session, no person, no team to read,
    # since what failed may be the database.
    with django_assert_num_queries(0):
        body = render_to_string("500.html")

    assert BRAND in body and 'href="/static/css/relevo.css"' in body


def test_a_host_relevo_does_not_serve_answers_relevo_s_bad_request_page(settings):
    settings.ALLOWED_HOSTS = ["relevo.example.com"]

    response = client_for(None).get("/accounts/login/", HTTP_HOST="evil.example.net")

    assert_relevo_page(response, 400, "<h1>Relevo cannot read this request</h1>")


def test_a_form_sent_without_its_csrf_token_answers_that_it_expired(owner):
    client = client_for(owner, enforce_csrf_checks=True)

    response = client.post("/endpoints/new/", {"name": "Shop"})

    assert_relevo_page(response, 403, "<h1>This form has expired</h1>")
