"""One keyword end to end, and the package staying free of Django."""

import subprocess
import sys

import pytest

from apps.search import (
    Document,
    ErrorKind,
    InvalidMapper,
    Mapper,
    SearchTemplate,
    run_keyword,
)

SPEC = {
    "results": "hits.hits[*]",
    "id": "_id",
    "name": "_source.title",
    "image": "_source.img",
    "attributes": {"brand": "_source.brand"},
}
LIMITS = {"timeout_s": 2.0, "max_bytes": 100_000, "allow_private": True}


def template_for(server, path="/search"):
    return SearchTemplate("GET", server.url(path), params=[("q", "#query#")])


def test_a_keyword_runs_and_maps_to_documents(search_server):
    run = run_keyword(template_for(search_server), "red shoes", SPEC, **LIMITS)
    assert not run.failed and run.message is None
    assert run.result.status == 200
    assert run.documents == [
        Document("101", "red shoes one", "", {"brand": "Acme"}),
        Document("b-2", "red shoes two", "/two.png", {}),
    ]


def test_a_mapper_that_does_not_fit_is_a_failed_keyword_with_the_response_kept(search_server):
    spec = {**SPEC, "results": "data.items[*]"}
    run = run_keyword(template_for(search_server), "hat", Mapper.compile(spec), **LIMITS)
    assert run.failed and not run.retryable
    assert run.documents == []
    assert run.message == (
        "mapping failed: results path 'data.items[*]': 'data' is missing "
        "(top-level keys: took, timed_out, hits)"
    )
    assert run.result.json["hits"]["total"] == 2  # still there to show the lead


def test_a_server_error_is_retryable_and_not_mapped(search_server):
    run = run_keyword(template_for(search_server, "/error500"), "hat", SPEC, **LIMITS)
    assert run.failed and run.retryable
    assert run.mapping_error is None
    assert run.message == "HTTP 500 Internal Server Error"


def test_a_keyword_that_breaks_the_template_fails_without_a_call(search_server):
    template = SearchTemplate("GET", search_server.url("/search"), headers=[("X-Q", "#query#")])
    run = run_keyword(template, "two\nlines", SPEC, **LIMITS)
    assert run.result.error_kind is ErrorKind.INVALID_REQUEST
    assert not run.retryable
    assert run.message == (
        "the request could not be built: "
        "headers[0].value: the keyword puts a line break or control character in it"
    )
    assert search_server.requests == []


def test_a_refused_address_fails_the_keyword(search_server):
    run = run_keyword(
        template_for(search_server), "hat", SPEC, **{**LIMITS, "allow_private": False}
    )
    assert run.result.error_kind is ErrorKind.REFUSED
    assert search_server.requests == []


def test_a_broken_mapper_spec_raises_before_any_call(search_server):
    with pytest.raises(InvalidMapper, match="mapper.id: required"):
        run_keyword(template_for(search_server), "hat", {"results": "[*]", "name": "n"}, **LIMITS)
    assert search_server.requests == []


def test_the_package_imports_nothing_from_django():
    code = (
        "import sys, apps.search; print(sorted(m for m in sys.modules if m.startswith('django')))"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert output.strip() == "[]"
