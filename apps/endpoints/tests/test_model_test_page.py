"""The Test model page against a real search system on 127.0.0.1: with htmx the result is
a fragment swapped in place, without JavaScript the whole page comes back."""

import time

import pytest

from tests.factories import client_for
from tests.search_server import MAPPER

from .factories import make_endpoint, make_model

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def text(response) -> str:
    return response.content.decode()


def model_on(team, server, path="/search", **endpoint_fields):
    endpoint = make_endpoint(team, url=server.url(path), name="Shop search", **endpoint_fields)
    return make_model(team, endpoint, default_keywords="red shoes\nblue shirt")


def test_the_page_offers_the_first_default_keyword_and_runs_nothing_yet(
    owner, team_a, search_server
):
    model = model_on(team_a, search_server)

    page = text(client_for(owner).get(f"/models/{model.id}/test/"))

    assert 'name="keyword" value="red shoes"' in page
    assert 'data-testid="test-outcome"' not in page
    assert search_server.calls.total() == 0


def test_without_javascript_the_whole_page_comes_back_with_the_documents(
    owner, team_a, search_server
):
    model = model_on(team_a, search_server)

    response = client_for(owner).post(f"/models/{model.id}/test/", {"keyword": "red shoes"})

    page = text(response)
    assert response.status_code == 200 and page.startswith("<!doctype html>")
    assert '<dd data-testid="test-status">200</dd>' in page
    assert 'data-testid="test-time">' in page and " ms</dd>" in page
    assert '<dd data-testid="test-count">5</dd>' in page
    assert "red shoes result 5" in page
    assert '<img class="test-thumb" src="https://img.example.com/' in page
    assert "<dt>price</dt><dd>50</dd>" in page
    assert 'data-testid="test-raw">{\n  &quot;hits&quot;: {' in page
    assert 'name="keyword" value="red shoes"' in page  # the keyword stays in the box


def test_with_htmx_only_the_test_section_comes_back(owner, team_a, search_server):
    model = model_on(team_a, search_server)

    response = client_for(owner).post(f"/models/{model.id}/test/", {"keyword": "hat"}, **HTMX)

    fragment = text(response)
    assert fragment.lstrip().startswith('<section id="model-test"')
    assert "<html" not in fragment
    assert "hat result 1" in fragment


def test_what_the_search_system_sends_is_escaped_everywhere(owner, team_a, search_server):
    model = model_on(team_a, search_server)

    page = text(
        client_for(owner).post(f"/models/{model.id}/test/", {"keyword": "<b>bold</b>"}, **HTMX)
    )

    assert "<b>bold</b>" not in page
    assert "&lt;b&gt;bold&lt;/b&gt; result 1" in page


def test_a_server_error_shows_its_status_and_the_body(owner, team_a, search_server):
    model = model_on(team_a, search_server, "/error500")

    page = text(client_for(owner).post(f"/models/{model.id}/test/", {"keyword": "x"}, **HTMX))

    assert '<dd data-testid="test-status">500</dd>' in page
    assert 'data-kind="http_status"' in page
    assert "The search system answered with an error" in page
    assert "HTTP 500 Internal Server Error" in page
    assert "index unavailable" in page


def test_a_mapper_that_does_not_fit_shows_the_path_at_fault(owner, team_a, search_server):
    model = model_on(team_a, search_server, mapper=dict(MAPPER, name="_source.label"))

    page = text(client_for(owner).post(f"/models/{model.id}/test/", {"keyword": "x"}, **HTMX))

    assert "The mapper does not fit this response" in page
    assert '<code data-testid="test-error-path">_source.label</code> (result 1)' in page


def test_no_results_are_said_plainly(owner, team_a, search_server):
    model = model_on(team_a, search_server, "/empty")

    page = text(client_for(owner).post(f"/models/{model.id}/test/", {"keyword": "zzz"}, **HTMX))

    assert 'data-testid="test-empty"' in page and "no results for “zzz”" in page


def test_a_refused_address_is_shown_and_nothing_is_called(owner, team_a, search_server, settings):
    model = model_on(team_a, search_server)
    settings.SEARCH_ALLOW_PRIVATE_ADDRESSES = False

    page = text(client_for(owner).post(f"/models/{model.id}/test/", {"keyword": "x"}, **HTMX))

    assert "The address was refused" in page
    assert "127.0.0.1 is a loopback address" in page
    assert '<dd data-testid="test-status">none (no answer)</dd>' in page
    assert search_server.calls.total() == 0


def test_a_blank_keyword_is_refused_naming_the_field(owner, team_a, search_server):
    model = model_on(team_a, search_server)

    response = client_for(owner).post(f"/models/{model.id}/test/", {"keyword": "  "}, **HTMX)

    assert response.context["test_form"].errors == {"keyword": ["Required."]}
    assert 'data-testid="test-outcome"' not in text(response)
    assert search_server.calls.total() == 0


def test_running_a_keyword_takes_a_bounded_number_of_queries(
    owner, team_a, search_server, django_assert_max_num_queries
):
    model = model_on(team_a, search_server)
    client = client_for(owner)

    with django_assert_max_num_queries(4):
        response = client.post(f"/models/{model.id}/test/", {"keyword": "x"}, **HTMX)
    assert response.status_code == 200


def test_a_slow_search_system_answers_within_the_test_bound_and_the_page_says_why(
    owner, team_a, search_server, settings
):
    # Test model holds a web worker while it waits; the endpoint would allow 100 s.
    settings.SEARCH_TEST_TIMEOUT_SECONDS = 0.5
    search_server.slow_seconds = 3
    model = model_on(team_a, search_server, "/slow", timeout_seconds=100)

    started = time.monotonic()
    response = client_for(owner).post(f"/models/{model.id}/test/", {"keyword": "hat"}, **HTMX)
    took = time.monotonic() - started

    page = text(response)
    assert response.status_code == 200
    assert took < 2, f"the page took {took:.1f} s"
    assert 'data-kind="timeout"' in page and "No answer in time" in page
    assert "The endpoint did not answer within 0.5 s, the longest Test model waits" in page
    assert "an evaluation&#x27;s start waits up to the endpoint&#x27;s 100 s" in page
    assert "waiting at most 0.5 s" in page  # said while it runs, too


def test_the_page_says_how_long_the_test_will_wait_at_most(owner, team_a, search_server):
    quick = model_on(team_a, search_server, timeout_seconds=2.5)
    slow_endpoint = make_endpoint(
        team_a, url=search_server.url("/search"), name="Slow", timeout_seconds=120
    )
    patient = make_model(team_a, slow_endpoint, name="Patient")

    assert "waiting at most 2.5 s" in text(client_for(owner).get(f"/models/{quick.id}/test/"))
    assert "waiting at most 10 s" in text(client_for(owner).get(f"/models/{patient.id}/test/"))
