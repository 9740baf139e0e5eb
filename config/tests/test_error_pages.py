"""With DEBUG off (as `make run` and production serve), an unknown page, another team's
object, a refused role and a failure inside Relevo answer with Relevo's own pages, never
Django's debug page."""

import pytest
from django.contrib.staticfiles import finders
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
    # The roles as the README names them: owner, lead, grader.
    assert "Only the team&#x27;s owner and its leads can do this." in page(response)
    assert "admin" not in page(response).lower()


def test_a_refused_role_is_logged_in_one_line_without_a_traceback(evaluator, caplog):
    client_for(evaluator).get("/endpoints/")

    refusals = [r for r in caplog.records if r.name == "django.request"]
    assert [r.levelname for r in refusals] == ["WARNING"]
    assert refusals[0].getMessage() == "Forbidden (Permission denied): /endpoints/"
    assert refusals[0].exc_info is None and "Traceback" not in caplog.text


def test_the_error_pages_name_the_roles_as_the_readme_does():
    for template in ("403.html", "500.html"):
        body = render_to_string(template)
        assert "admin" not in body.lower(), template
    assert "your team's owner or a lead" in render_to_string("500.html")


def test_the_browser_s_favicon_address_answers_with_relevo_s_icon():
    response = client_for(None).get("/favicon.ico")

    assert response.status_code == 302
    assert response["Location"] == "/static/favicon.svg"  # the icon the pages link
    with open(finders.find("favicon.svg"), "rb") as icon:
        assert icon.read().startswith(b"<svg")


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
