"""Test model against a real search system on 127.0.0.1 (tests/search_server.py): what
the lead sees for results, errors, slow answers, broken JSON, no results, a mapper that
does not fit, and a loopback address when private addresses are not allowed."""

import socket

import pytest

from apps.core.errors import InvalidInput
from apps.endpoints.model_test_report import RAW_SHOWN_CHARS
from apps.endpoints.models import SearchEndpoint
from apps.endpoints.services import model_test
from tests.search_server import MAPPER, documents_for

from .factories import make_endpoint, make_model

pytestmark = pytest.mark.django_db


def model_on(team, server, path: str = "/search", **endpoint_fields):
    endpoint = make_endpoint(team, url=server.url(path), **endpoint_fields)
    return make_model(team, endpoint)


def test_a_keyword_comes_back_as_mapped_documents_with_status_time_and_raw_json(
    team_a, search_server
):
    model = model_on(team_a, search_server)

    outcome = model_test(model=model, keyword="  red shoes ")

    assert outcome.ok and outcome.error is None
    assert (outcome.keyword, outcome.status, outcome.method) == ("red shoes", 200, "GET")
    assert outcome.url == search_server.url("/search?q=red%20shoes")
    assert outcome.elapsed_ms >= 0
    expected = documents_for("red shoes", 5)
    assert [d.doc_id for d in outcome.documents] == [doc["_id"] for doc in expected]
    first = outcome.documents[0]
    assert (first.name, first.image) == ("red shoes result 1", expected[0]["_source"]["img"])
    assert first.attributes == {"price": 10}
    assert [show for _document, show in outcome.rows] == [True] * 5
    # Pretty-printed JSON, whole, as the search system sent it.
    assert outcome.raw.startswith('{\n  "hits": {\n    "total": 5,')
    assert not outcome.raw_truncated
    assert search_server.keyword_calls["red shoes"] == 1


def test_a_post_model_sends_the_keyword_escaped_in_its_json_body(team_a, search_server):
    endpoint = make_endpoint(team_a, url=search_server.url("/search"), method="POST")
    model = make_model(team_a, endpoint, params="", body='{"query": "#query#"}')

    outcome = model_test(model=model, keyword='say "hi" \\ now')

    assert outcome.ok
    assert outcome.documents[0].name == 'say "hi" \\ now result 1'


def test_a_server_error_shows_the_status_and_the_body_it_sent(team_a, search_server):
    outcome = model_test(model=model_on(team_a, search_server, "/error500"), keyword="shoes")

    assert not outcome.ok
    assert (outcome.status, outcome.error_kind) == (500, "http_status")
    assert outcome.error == "HTTP 500 Internal Server Error"
    assert outcome.error_title == "The search system answered with an error"
    assert '"error": "index unavailable"' in outcome.raw
    assert outcome.documents == []


def test_an_answer_slower_than_the_endpoint_timeout_is_reported_as_no_answer(team_a, search_server):
    search_server.slow_seconds = 1.5
    model = model_on(team_a, search_server, "/slow", timeout_seconds=0.3)

    outcome = model_test(model=model, keyword="shoes")

    assert (outcome.status, outcome.error_kind) == (None, "timeout")
    assert outcome.error == "no complete answer within 0.3 s"
    assert outcome.elapsed_ms < 1500


def test_the_test_waits_less_than_a_long_endpoint_timeout_and_says_so(
    team_a, search_server, settings
):
    # A web process is killed after 60 s; an endpoint may allow its search system 120 s.
    settings.SEARCH_TEST_TIMEOUT_SECONDS = 0.3
    search_server.slow_seconds = 1.5
    model = model_on(team_a, search_server, "/slow", timeout_seconds=100)

    outcome = model_test(model=model, keyword="shoes")

    assert (outcome.status, outcome.error_kind) == (None, "timeout")
    assert outcome.error == (
        "The endpoint did not answer within 0.3 s, the longest Test model waits; "
        "an evaluation's start waits up to the endpoint's 100 s."
    )
    assert outcome.elapsed_ms < 1500


def test_a_quick_answer_under_a_long_endpoint_timeout_is_shown_as_usual(
    team_a, search_server, settings
):
    settings.SEARCH_TEST_TIMEOUT_SECONDS = 5
    model = model_on(team_a, search_server, "/search", timeout_seconds=100)

    outcome = model_test(model=model, keyword="shoes")

    assert outcome.ok and len(outcome.documents) == 5


def test_malformed_json_is_reported_with_the_body_shown_as_sent(team_a, search_server):
    outcome = model_test(model=model_on(team_a, search_server, "/malformed"), keyword="shoes")

    assert (outcome.status, outcome.error_kind) == (200, "invalid_json")
    assert outcome.error.startswith(
        "the response is not valid JSON (Expecting property name enclosed in double quotes "
        "at line 1, column 30)"
    )
    assert outcome.raw == '{"hits": {"hits": [{"_id": 1,, }]}}'


def test_an_empty_result_list_is_a_success_with_no_documents(team_a, search_server):
    outcome = model_test(model=model_on(team_a, search_server, "/empty"), keyword="shoes")

    assert outcome.ok
    assert (outcome.status, outcome.documents) == (200, [])


def test_a_mapper_that_does_not_fit_names_its_path_and_the_result(team_a, search_server):
    mapper = dict(MAPPER, id="_source.sku")
    model = model_on(team_a, search_server, mapper=mapper)

    outcome = model_test(model=model, keyword="shoes")

    assert (outcome.status, outcome.error_kind) == (200, "mapping")
    assert (outcome.error_path, outcome.error_result) == ("_source.sku", 1)
    assert outcome.error.startswith(
        "mapping failed: result 1 (hits.hits[0]): id path '_source.sku' found nothing "
        "('_source.sku' is missing (keys of '_source': title, img, price))"
    )
    assert outcome.raw.startswith("{")  # the response is there to compare with


def test_a_results_path_that_finds_nothing_lists_the_keys_that_are_there(team_a, search_server):
    model = model_on(team_a, search_server, mapper=dict(MAPPER, results="data.items[*]"))

    outcome = model_test(model=model, keyword="shoes")

    assert outcome.error_path == "data.items[*]"
    assert "'data' is missing (top-level keys: hits)" in outcome.error


def test_a_port_where_nothing_listens_is_a_transport_failure(team_a, search_server):
    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = make_model(team_a, make_endpoint(team_a, url=f"http://127.0.0.1:{port}/search"))

    outcome = model_test(model=model, keyword="shoes")

    assert (outcome.status, outcome.error_kind) == (None, "transport")
    assert outcome.error.startswith("could not connect:")
    assert outcome.error_title == "The call failed"
    assert (outcome.raw, outcome.documents) == ("", [])


def test_loopback_is_refused_when_private_addresses_are_not_allowed(
    team_a, search_server, settings
):
    model = model_on(team_a, search_server)
    settings.SEARCH_ALLOW_PRIVATE_ADDRESSES = False

    outcome = model_test(model=model, keyword="shoes")

    assert (outcome.status, outcome.error_kind) == (None, "refused")
    assert outcome.error == (
        "refused: 127.0.0.1 is a loopback address; calls to private addresses are not allowed"
    )
    assert search_server.calls.total() == 0


def test_a_long_response_is_cut_for_display_and_says_how_long_it_was(team_a, search_server):
    search_server.results = 400
    model = model_on(team_a, search_server)

    outcome = model_test(model=model, keyword="shoes")

    assert outcome.ok and len(outcome.documents) == 400
    assert len(outcome.raw) == RAW_SHOWN_CHARS
    assert outcome.raw_truncated and outcome.raw_chars > RAW_SHOWN_CHARS


def test_an_image_that_is_not_a_web_address_is_not_shown_as_a_picture(team_a, search_server):
    mapper = dict(MAPPER, image="javascript:{_source.title}")
    model = model_on(team_a, search_server, mapper=mapper)

    outcome = model_test(model=model, keyword="shoes")

    assert outcome.documents[0].image == "javascript:shoes result 1"
    assert [show for _document, show in outcome.rows] == [False] * 5


def test_a_mapper_broken_in_the_database_is_reported_without_calling(team_a, search_server):
    model = model_on(team_a, search_server)
    SearchEndpoint.objects.filter(pk=model.endpoint_id).update(mapper={"results": "x"})
    model.refresh_from_db()

    outcome = model_test(model=model, keyword="shoes")

    assert outcome.error_kind == "mapper"
    assert outcome.error.startswith("the endpoint's mapper is not valid: mapper.results:")
    assert search_server.calls.total() == 0


@pytest.mark.parametrize(
    ("keyword", "problem"),
    [("   ", "keyword: required"), ("k" * 501, "keyword: at most 500 characters (got 501)")],
)
def test_a_blank_or_overlong_keyword_is_refused_before_any_call(
    team_a, search_server, keyword, problem
):
    model = model_on(team_a, search_server)

    with pytest.raises(InvalidInput) as refused:
        model_test(model=model, keyword=keyword)

    assert refused.value.problems == [problem]
    assert search_server.calls.total() == 0
