"""Building a request: the keyword escaped for each place it goes, and located errors."""

import json
from urllib.parse import parse_qs, parse_qsl, unquote, urlsplit

import pytest

from apps.search import PreparedSearch, RequestError, SearchTemplate, build_request
from apps.search.request import fill_json_template

NASTY_KEYWORDS = [
    'say "hi"\\',
    "two\nlines\r\n",
    "tab\tand\x01control",
    "café ☕ 日本語 𝄞",
    "a&b=c",
    "#hash #query#",
    "100% off %20 %zz",
    "+plus /slash ?q",
    "it's <b>",
    "line\u2028separator",
    "   spaced   ",
]


def build(
    keyword,
    *,
    method="POST",
    url="https://search.example/api",
    params=(),
    headers=(),
    body=None,
    body_type="json",
):
    return build_request(method, url, list(params), list(headers), body, body_type, keyword)


def test_the_json_body_example_gives_valid_escaped_json():
    prepared = build('say "hi"\\', body='{"q": "#query#"}')
    assert prepared.body == b'{"q": "say \\"hi\\"\\\\"}'
    assert json.loads(prepared.body) == {"q": 'say "hi"\\'}


@pytest.mark.parametrize("keyword", NASTY_KEYWORDS)
def test_a_json_body_always_carries_the_keyword_exactly(keyword):
    template = '{"query": {"match": {"title": "#query#"}}, "size": 10, "tags": ["#query# x"]}'
    prepared = build(keyword, body=template)
    payload = json.loads(prepared.body)
    assert payload["query"]["match"]["title"] == keyword
    assert payload["tags"] == [f"{keyword} x"]
    assert payload["size"] == 10
    assert prepared.body.isascii()  # unicode and control characters are \u escapes


@pytest.mark.parametrize("keyword", NASTY_KEYWORDS)
def test_a_placeholder_outside_a_json_string_becomes_a_whole_string(keyword):
    prepared = build(keyword, body='{"q": #query#, "n": 5}')
    assert json.loads(prepared.body) == {"q": keyword, "n": 5}


def test_escaped_quotes_in_the_template_do_not_confuse_where_strings_end():
    template = r'{"a": "x\"#query#", "b": "\\", "c": #query#}'
    assert json.loads(fill_json_template(template, 'k"')) == {"a": 'x"k"', "b": "\\", "c": 'k"'}


@pytest.mark.parametrize("keyword", NASTY_KEYWORDS)
def test_a_form_body_carries_the_keyword_as_one_value(keyword):
    prepared = build(keyword, body="q=#query#&size=10&exact=#query#", body_type="form")
    pairs = parse_qsl(prepared.body.decode("ascii"), keep_blank_values=True)
    assert pairs == [("q", keyword), ("size", "10"), ("exact", keyword)]


def test_a_form_body_encodes_spaces_as_plus():
    assert build("a b", body="q=#query#", body_type="form").body == b"q=a+b"


@pytest.mark.parametrize("keyword", NASTY_KEYWORDS)
def test_a_text_body_carries_the_keyword_verbatim(keyword):
    prepared = build(keyword, body="find: #query#!", body_type="text")
    assert prepared.body == f"find: {keyword}!".encode()


@pytest.mark.parametrize("keyword", NASTY_KEYWORDS)
def test_params_are_url_encoded_and_survive_a_round_trip(keyword):
    prepared = build(keyword, method="GET", params=[("q", "#query#"), ("lang", "en")])
    query = urlsplit(prepared.url).query
    assert parse_qsl(query, keep_blank_values=True) == [("q", keyword), ("lang", "en")]
    assert "+" not in query  # spaces are %20, so strict RFC 3986 servers read them too


@pytest.mark.parametrize("keyword", NASTY_KEYWORDS)
def test_the_placeholder_in_the_url_query_and_path_is_percent_encoded(keyword):
    prepared = build(keyword, method="GET", url="https://s.example/find/#query#?q=#query#&x=1")
    parts = urlsplit(prepared.url)
    assert parse_qs(parts.query, keep_blank_values=True) == {"q": [keyword], "x": ["1"]}
    assert unquote(parts.path) == f"/find/{keyword}"
    assert parts.fragment == ""


def test_params_are_added_to_a_query_the_url_already_has():
    prepared = build("k", method="GET", url="https://s.example/?api=1", params=[("q", "#query#")])
    assert prepared.url == "https://s.example/?api=1&q=k"


def test_header_values_get_the_keyword_verbatim_and_may_contain_colons():
    prepared = build(
        "café: au lait",
        headers=[
            ("Authorization", "Basic dXNlcjpwYXNz"),
            ("X-Trace", "a:b:c"),
            ("X-Query", "#query#"),
        ],
    )
    assert prepared.headers[:3] == (
        ("Authorization", "Basic dXNlcjpwYXNz"),
        ("X-Trace", "a:b:c"),
        ("X-Query", "café: au lait"),
    )


def test_a_keyword_that_would_break_a_header_line_is_refused_not_smuggled():
    with pytest.raises(RequestError) as caught:
        build("x\r\nX-Admin: yes", headers=[("X-Query", "#query#")])
    assert caught.value.problems == [
        "headers[0].value: the keyword puts a line break or control character in it"
    ]


@pytest.mark.parametrize(
    ("body_type", "content_type"),
    [
        ("json", "application/json"),
        ("form", "application/x-www-form-urlencoded"),
        ("text", "text/plain; charset=utf-8"),
    ],
)
def test_a_body_gets_a_content_type_for_its_type(body_type, content_type):
    body = {"json": '{"q": "#query#"}', "form": "q=#query#", "text": "#query#"}[body_type]
    prepared = build("k", body=body, body_type=body_type)
    assert prepared.headers == (("Content-Type", content_type),)


def test_a_content_type_from_the_template_is_kept():
    prepared = build(
        "k", body='{"q": "#query#"}', headers=[("content-type", "application/vnd.search+json")]
    )
    assert prepared.headers == (("content-type", "application/vnd.search+json"),)


def test_no_body_means_no_content_type_and_the_method_is_normalized():
    assert build("k", method="get") == PreparedSearch("GET", "https://search.example/api", (), None)


def test_every_problem_is_reported_with_its_location():
    with pytest.raises(RequestError) as caught:
        build_request(
            "DELETE",
            "ftp://files.example/#query#",
            [("", "x"), ("q", "#query#")],
            [("Bad Name", "v"), ("Content-Length", "5")],
            "{}",
            "xml",
            "k",
        )
    assert caught.value.problems == [
        "method: must be one of GET, POST, PUT (got 'DELETE')",
        "body_type: must be one of json, form, text (got 'xml')",
        "url: must start with http:// or https:// (got 'ftp')",
        "headers[0].name: 'Bad Name' is not a valid header name",
        "headers[1].name: Content-Length is set by Relevo itself",
    ]


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("", "url: required"),
        ("search.example/api", "url: must start with http:// or https://"),
        ("https:///path", "url: has no host"),
        ("https://#query#.example/", "url: #query# may only be in the path or the query"),
        ("https://s.example:99999/", "url: the port is not a number between 0 and 65535"),
    ],
)
def test_bad_urls_are_refused(url, problem):
    with pytest.raises(RequestError) as caught:
        build("k", url=url)
    assert caught.value.problems == [problem]


def test_a_json_body_that_is_not_json_after_substitution_is_refused():
    with pytest.raises(RequestError) as caught:
        build("k", body='{"q": "#query#",}')
    [problem] = caught.value.problems
    # The parser's own wording varies between Python versions; the location does not.
    assert problem.startswith("body: not valid JSON after putting in the keyword: ")
    assert problem.endswith("(line 1, column 11)")


def test_an_empty_param_name_and_an_empty_keyword_are_refused():
    with pytest.raises(RequestError) as caught:
        build("", params=[(" ", "v")])
    assert caught.value.problems == ["keyword: required", "params[0].name: required"]


def test_a_template_is_checked_with_a_nasty_sample_keyword():
    good = SearchTemplate("POST", "https://s.example/", body_template='{"q": "#query#"}')
    assert good.problems() == []
    # `'#query#'` in single quotes is not JSON at all, whatever the keyword.
    bad = SearchTemplate("POST", "https://s.example/", body_template="{'q': '#query#'}")
    assert bad.problems()[0].startswith("body: not valid JSON after putting in the keyword")


def test_a_template_that_never_uses_the_keyword_is_flagged():
    template = SearchTemplate("GET", "https://s.example/search?q=shoes")
    assert template.problems() == [
        "url: #query# appears nowhere (URL, parameters, headers or body), "
        "so every keyword would get the same results"
    ]


def test_a_template_builds_one_request_per_keyword():
    template = SearchTemplate("GET", "https://s.example/search", params=[("q", "#query#")])
    assert template.build("red shoes").url == "https://s.example/search?q=red%20shoes"
