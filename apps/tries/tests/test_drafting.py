"""A draft overrides a model's request settings by name and fills its knobs; what it
cannot take is named field by field. Pure: no database."""

from apps.tries.drafting import (
    MAX_KNOBS,
    Draft,
    ModelSettings,
    draft_parse,
    draft_template,
    settings_diff,
    unused_knobs,
)

MODEL = ModelSettings(
    method="POST",
    url="https://search.example/#index#/_search",
    params=[("q", "#query#"), ("size", "10"), ("size", "20")],
    headers=[("Authorization", "Bearer secret"), ("X-Trace", "on")],
    body='{"query": "#query#", "boost": 1}',
    body_type="json",
)


def test_a_param_named_in_the_draft_replaces_every_one_of_that_name():
    draft, problems = draft_parse(params=[["size", "5"], ["fuzzy", "2"]])
    template = draft_template(MODEL, draft)
    assert problems == []
    assert list(template.params) == [("q", "#query#"), ("size", "5"), ("fuzzy", "2")]


def test_a_null_value_drops_the_models_param_and_headers_match_in_any_case():
    draft, _ = draft_parse(params={"size": None}, headers=[["x-trace", "off"]])
    template = draft_template(MODEL, draft)
    assert list(template.params) == [("q", "#query#")]
    assert list(template.headers) == [("Authorization", "Bearer secret"), ("x-trace", "off")]


def test_knobs_fill_the_url_params_headers_and_body_before_the_query():
    draft, _ = draft_parse(
        body='{"query": "#query#", "boost": #boost#}', knobs={"boost": 2.5, "index": "books"}
    )
    template = draft_template(MODEL, draft)
    assert template.url == "https://search.example/books/_search"
    prepared = template.build("red shoes")
    assert prepared.body == b'{"query": "red shoes", "boost": 2.5}'


def test_a_knob_used_nowhere_is_named():
    draft, _ = draft_parse(knobs={"boost": 2, "index": "x"})
    assert unused_knobs(MODEL, draft) == ["boost"]


def test_each_bad_part_is_named_by_its_field():
    _draft, problems = draft_parse(
        params=[["q"], ["", "x"], ["ok", True]],
        headers="Authorization: x",
        body=5,
        knobs={"query": 1, "Bad": 1, "deep": {"a": 1}, "hash": "a#b"},
    )
    assert problems == [
        "params[0]: a [name, value] pair",
        "params[1]: the name is a text of 1 to 200 characters",
        "params[2]: the value is a text, a number or null (to drop it)",
        "headers: a list of [name, value] pairs or an object",
        "body: a text (the body template), or null to keep the model's",
        "knobs.query: a name of lower-case letters, digits and _ (up to 40, not 'query')",
        "knobs.Bad: a name of lower-case letters, digits and _ (up to 40, not 'query')",
        "knobs.deep: a text or a number",
        "knobs.hash: at most 200 characters, without '#'",
    ]


def test_too_many_knobs_is_refused_whole():
    _draft, problems = draft_parse(knobs={f"k{n}": n for n in range(MAX_KNOBS + 1)})
    assert problems == [f"knobs: at most {MAX_KNOBS}"]


def test_the_diff_of_two_drafts_reads_as_the_changes_and_hides_header_values():
    before = Draft(params=[("size", "5")], headers=[("X-Key", "old")], knobs={"boost": "1"})
    after = Draft(
        params=[("fuzzy", "2")], headers=[("X-Key", "new")], body="{}", knobs={"boost": "2"}
    )
    assert settings_diff(before, after) == [
        "param fuzzy: 2",
        "param size: 5 -> the model's",
        "header X-Key: (hidden) -> (hidden)",
        "body: changed",
        "knob boost: 1 -> 2",
    ]
