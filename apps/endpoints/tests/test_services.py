"""Creating, changing and deleting search endpoints and models: every rule, every problem
located where the lead typed it, and nothing written when anything is wrong."""

import json

import pytest

from apps.accounts.models import Tag
from apps.core.errors import InvalidInput, InvalidState
from apps.endpoints import services
from apps.endpoints.models import SearchEndpoint, SearchModel
from tests.factories import make_evaluation
from tests.search_server import MAPPER

from .factories import make_endpoint, make_model

pytestmark = pytest.mark.django_db


def problems_of(call, **kwargs) -> list[str]:
    with pytest.raises(InvalidInput) as raised:
        call(**kwargs)
    return raised.value.problems


def endpoint_fields(**overrides) -> dict:
    fields = {
        "name": "Catalogue",
        "method": "GET",
        "url": "https://search.example.com/search",
        "headers": "",
        "timeout_seconds": 10.0,
        "mapper": MAPPER,
    }
    fields.update(overrides)
    return fields


def model_fields(endpoint, **overrides) -> dict:
    fields = {
        "endpoint": endpoint,
        "name": "Catalogue, default ranking",
        "params": "q=#query#",
    }
    fields.update(overrides)
    return fields


# --- Endpoints: what is stored ----------------------------------------------------------


def test_an_endpoint_is_stored_with_its_headers_as_pairs_split_at_the_first_colon(team_a, owner):
    endpoint = services.endpoint_create(
        team=team_a,
        created_by=owner,
        description="  the shop's search  ",
        **endpoint_fields(
            name="  Catalogue  ",
            method="post",
            headers="Authorization: Basic user:secret\n\nAccept: application/json",
            timeout_seconds=2.5,
        ),
    )

    endpoint.refresh_from_db()
    assert (endpoint.name, endpoint.method, endpoint.description) == (
        "Catalogue",
        "POST",
        "the shop's search",
    )
    assert endpoint.headers == [
        ["Authorization", "Basic user:secret"],
        ["Accept", "application/json"],
    ]
    assert endpoint.timeout_seconds == 2.5
    assert endpoint.mapper == MAPPER
    assert endpoint.created_by == owner


def test_the_mapper_may_come_as_json_text_as_a_form_sends_it(team_a):
    endpoint = services.endpoint_create(
        team=team_a, **endpoint_fields(mapper=json.dumps(MAPPER, indent=2))
    )

    assert endpoint.mapper == MAPPER


def test_a_url_may_carry_the_query_placeholder_itself(team_a):
    endpoint = services.endpoint_create(
        team=team_a, **endpoint_fields(url="https://search.example.com/s?q=#query#&lang=en")
    )

    assert endpoint.url == "https://search.example.com/s?q=#query#&lang=en"


# --- Endpoints: every rule --------------------------------------------------------------


def test_every_problem_of_an_endpoint_is_reported_at_once_and_located(team_a):
    problems = problems_of(
        services.endpoint_create,
        team=team_a,
        **endpoint_fields(
            name=" ",
            method="DELETE",
            url="ftp://files.example.com/",
            headers="Accept: application/json\nno colon here",
            timeout_seconds=0,
            mapper={"results": "hits.hits[*]", "name": "title"},
        ),
    )

    assert problems == [
        "name: required",
        "headers line 2: no ':' (write Name: value)",
        "timeout_seconds: must be more than 0 and at most 120 seconds",
        "mapper.id: required",
        "method: must be one of GET, POST, PUT (got 'DELETE')",
        "url: must start with http:// or https:// (got 'ftp')",
    ]
    assert not SearchEndpoint.objects.exists()


def test_an_endpoint_name_is_unique_within_the_team_but_not_across_teams(team_a, team_b):
    services.endpoint_create(team=team_a, **endpoint_fields(name="Catalogue"))

    problems = problems_of(
        services.endpoint_create, team=team_a, **endpoint_fields(name=" Catalogue ")
    )
    services.endpoint_create(team=team_b, **endpoint_fields(name="Catalogue"))

    assert problems == ["name: the team already has an endpoint named 'Catalogue'"]
    assert SearchEndpoint.objects.filter(name="Catalogue").count() == 2


def test_an_endpoint_name_longer_than_the_column_is_refused(team_a):
    problems = problems_of(services.endpoint_create, team=team_a, **endpoint_fields(name="n" * 201))

    assert problems == ["name: at most 200 characters (got 201)"]


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("", "url: required"),
        ("search.example.com/search", "url: must start with http:// or https://"),
        ("https:///search", "url: has no host"),
        ("https://search.example.com:99999/", "url: the port is not a number between 0 and 65535"),
        ("https://#query#.example.com/", "url: #query# may only be in the path or the query"),
        ("https://example.com/" + "a" * 2000, "url: at most 2000 characters (got 2020)"),
    ],
)
def test_an_endpoint_url_must_be_http_or_https_with_a_host(team_a, url, problem):
    assert problems_of(services.endpoint_create, team=team_a, **endpoint_fields(url=url)) == [
        problem
    ]


@pytest.mark.parametrize("timeout", [0, -1, 120.01, float("nan"), float("inf")])
def test_an_endpoint_timeout_must_be_above_zero_and_at_most_two_minutes(team_a, timeout):
    problems = problems_of(
        services.endpoint_create, team=team_a, **endpoint_fields(timeout_seconds=timeout)
    )

    assert problems == ["timeout_seconds: must be more than 0 and at most 120 seconds"]


@pytest.mark.parametrize("timeout", [0.1, 120])
def test_an_endpoint_timeout_at_the_edges_is_accepted(team_a, timeout):
    endpoint = services.endpoint_create(team=team_a, **endpoint_fields(timeout_seconds=timeout))

    assert endpoint.timeout_seconds == timeout


def test_header_problems_name_the_line_the_lead_typed(team_a):
    problems = problems_of(
        services.endpoint_create,
        team=team_a,
        **endpoint_fields(headers="Accept: application/json\n\nBad Header: x\nHost: example.com"),
    )

    assert problems == [
        "headers line 3: 'Bad Header' is not a valid header name",
        "headers line 4: Host is set by Relevo itself",
    ]


def test_a_mapper_that_is_not_json_names_the_line_and_column(team_a):
    problems = problems_of(
        services.endpoint_create,
        team=team_a,
        **endpoint_fields(mapper='{\n  "results": "hits[*]",\n  "id": _id\n}'),
    )

    assert problems == ["mapper: not valid JSON: Expecting value (line 3, column 9)"]


@pytest.mark.parametrize(
    ("mapper", "expected"),
    [
        ("", ["mapper: required"]),
        ([], ["mapper: must be an object, not a list"]),
        (
            {"results": "hits.hits", "id": "_id", "name": "title", "colour": "c"},
            [
                "mapper.colour: unknown field (expected results, id, name, image, attributes)",
                "mapper.results: needs exactly one [*] (found 0)",
            ],
        ),
        (
            {"results": "hits[*]", "id": "_id", "name": "{title", "attributes": {"p": ""}},
            ["mapper.name: unclosed {", "mapper.attributes.p: empty path"],
        ),
    ],
)
def test_mapper_problems_are_located_inside_the_mapper(team_a, mapper, expected):
    assert (
        problems_of(services.endpoint_create, team=team_a, **endpoint_fields(mapper=mapper))
        == expected
    )


# --- Endpoints: update and delete -------------------------------------------------------


def test_an_endpoint_update_keeps_its_own_name_and_changes_the_rest(team_a):
    endpoint = make_endpoint(team_a, name="Catalogue")

    updated = services.endpoint_update(
        endpoint=endpoint,
        **endpoint_fields(name="Catalogue", url="https://other.example.com/s", headers="A: b"),
    )

    endpoint.refresh_from_db()
    assert updated.pk == endpoint.pk
    assert (endpoint.url, endpoint.headers) == ("https://other.example.com/s", [["A", "b"]])


def test_an_endpoint_cannot_take_the_name_of_another_endpoint_of_the_team(team_a):
    make_endpoint(team_a, name="First")
    second = make_endpoint(team_a, name="Second")

    problems = problems_of(
        services.endpoint_update, endpoint=second, **endpoint_fields(name="First")
    )

    assert problems == ["name: the team already has an endpoint named 'First'"]
    second.refresh_from_db()
    assert second.name == "Second"


def test_an_endpoint_change_that_would_break_a_model_using_it_is_refused_naming_it(team_a):
    endpoint = make_endpoint(team_a, url="https://search.example.com/s?q=#query#")
    make_model(team_a, endpoint, name="Relies on the URL", params="")

    problems = problems_of(
        services.endpoint_update,
        endpoint=endpoint,
        **endpoint_fields(url="https://search.example.com/s"),
    )

    assert len(problems) == 1
    assert problems[0].startswith("model 'Relies on the URL': url: #query# appears nowhere")
    endpoint.refresh_from_db()
    assert endpoint.url == "https://search.example.com/s?q=#query#"


def test_an_endpoint_used_by_models_is_not_deleted_and_the_refusal_names_them(team_a):
    endpoint = make_endpoint(team_a, name="Catalogue")
    make_model(team_a, endpoint, name="Beta ranking")
    make_model(team_a, endpoint, name="Alpha ranking")

    with pytest.raises(InvalidState) as refused:
        services.endpoint_delete(endpoint=endpoint)

    assert refused.value.message == (
        "The endpoint Catalogue is used by the models Alpha ranking, Beta ranking; "
        "delete those models or move them to another endpoint first."
    )
    assert SearchEndpoint.objects.filter(pk=endpoint.pk).exists()


def test_a_refusal_lists_five_names_and_counts_the_rest(team_a):
    endpoint = make_endpoint(team_a)
    for number in range(1, 8):
        make_model(team_a, endpoint, name=f"Model {number}")

    with pytest.raises(InvalidState) as refused:
        services.endpoint_delete(endpoint=endpoint)

    assert "the models Model 1, Model 2, Model 3, Model 4, Model 5 and 2 more;" in (
        refused.value.message
    )


def test_an_unused_endpoint_is_deleted(team_a):
    endpoint = make_endpoint(team_a)

    services.endpoint_delete(endpoint=endpoint)

    assert not SearchEndpoint.objects.exists()


# --- Models: what is stored -------------------------------------------------------------


def test_a_model_is_stored_with_its_request_template_keywords_and_tags(team_a, owner):
    endpoint = make_endpoint(team_a, method="POST", headers="Accept: application/json")
    shoes = Tag.objects.create(team=team_a, name="shoes")

    model = services.model_create(
        team=team_a,
        created_by=owner,
        tags=[shoes],
        body='{"query": "#query#", "size": 20}',
        body_type="json",
        headers="X-Api-Key: abc:123",
        default_keywords=" red shoes \n\nblue shirt\nred shoes",
        description="default ranking",
        **model_fields(endpoint, params="lang=en\nfq=type:shoe"),
    )

    model.refresh_from_db()
    assert model.endpoint == endpoint and model.team == team_a
    assert model.params == [["lang", "en"], ["fq", "type:shoe"]]
    assert model.headers == [["X-Api-Key", "abc:123"]]
    assert model.body == '{"query": "#query#", "size": 20}'
    assert model.default_keywords == "red shoes\nblue shirt"
    assert list(model.tags.all()) == [shoes]
    assert model.created_by == owner


def test_the_query_may_sit_in_a_header_only(team_a):
    model = services.model_create(
        team=team_a, **model_fields(make_endpoint(team_a), params="", headers="X-Query: #query#")
    )

    assert model.headers == [["X-Query", "#query#"]]


# --- Models: every rule -----------------------------------------------------------------


def test_every_problem_of_a_model_is_reported_at_once_and_located(team_a, team_b):
    endpoint = make_endpoint(team_a, method="POST")
    make_model(team_a, endpoint, name="Taken")
    their_tag = Tag.objects.create(team=team_b, name="theirs")

    problems = problems_of(
        services.model_create,
        team=team_a,
        tags=[their_tag],
        body_type="yaml",
        default_keywords="fine\n" + "k" * 501,
        **model_fields(endpoint, name="Taken", params="q=#query#\nsize 20"),
    )

    assert problems == [
        "name: the team already has a model named 'Taken'",
        "params line 2: no '=' (write name=value)",
        "body_type: must be one of json, form, text",
        "tags: every tag must belong to the team",
        "default_keywords line 2: at most 500 characters (got 501)",
    ]
    assert SearchModel.objects.count() == 1


@pytest.mark.parametrize("which", ["none", "other team"])
def test_a_model_needs_an_endpoint_of_its_own_team(team_a, team_b, which):
    endpoint = None if which == "none" else make_endpoint(team_b)

    problems = problems_of(services.model_create, team=team_a, **model_fields(endpoint))

    assert problems == ["endpoint: choose one of the team's search endpoints"]


def test_a_model_without_the_query_placeholder_anywhere_is_refused(team_a):
    problems = problems_of(
        services.model_create, team=team_a, **model_fields(make_endpoint(team_a), params="size=5")
    )

    assert problems == [
        "url: #query# appears nowhere (URL, parameters, headers or body), "
        "so every keyword would get the same results"
    ]


def test_a_json_body_that_is_not_json_is_refused_naming_the_body(team_a):
    problems = problems_of(
        services.model_create,
        team=team_a,
        body='{"query": #query#, }',
        **model_fields(make_endpoint(team_a, method="POST"), params=""),
    )

    [problem] = problems
    assert problem.startswith(
        "body: not valid JSON after putting in the keyword: Expecting property name enclosed "
        "in double quotes (line 1, column "
    )


def test_a_form_or_text_body_is_not_read_as_json(team_a):
    endpoint = make_endpoint(team_a, method="POST")

    form = services.model_create(
        team=team_a, body="q=#query#&size=5", body_type="form", **model_fields(endpoint, params="")
    )
    text = services.model_create(
        team=team_a,
        body="find {#query#}",
        body_type="text",
        **model_fields(endpoint, name="Text", params=""),
    )

    assert (form.body_type, text.body_type) == ("form", "text")


def test_model_header_problems_name_the_model_lines_after_the_endpoint_headers(team_a):
    endpoint = make_endpoint(team_a, headers="Accept: application/json\nX-Team: a")

    problems = problems_of(
        services.model_create,
        team=team_a,
        headers="X-Team: b\n\nBad Header: 1\nContent-Length: 5",
        **model_fields(endpoint),
    )

    assert problems == [
        "headers line 3: 'Bad Header' is not a valid header name",
        "headers line 4: Content-Length is set by Relevo itself",
    ]


def test_a_default_keyword_that_cannot_go_into_a_header_is_refused_by_line(team_a):
    problems = problems_of(
        services.model_create,
        team=team_a,
        headers="X-Query: #query#",
        default_keywords="red shoes\nbell\x07",
        **model_fields(make_endpoint(team_a), params=""),
    )

    assert problems == [
        "default_keywords line 2: headers line 1: the keyword puts a line break or control "
        "character in it"
    ]


def test_nothing_is_written_when_a_model_is_refused(team_a):
    endpoint = make_endpoint(team_a)
    tag = Tag.objects.create(team=team_a, name="shoes")

    problems_of(services.model_create, team=team_a, tags=[tag], **model_fields(endpoint, params=""))

    assert not SearchModel.objects.exists()
    assert not tag.search_models.exists()


# --- Models: update and delete ----------------------------------------------------------


def test_a_model_update_changes_its_template_tags_and_endpoint(team_a):
    model = make_model(team_a, name="Ranking")
    other = make_endpoint(team_a, method="POST")
    tag = Tag.objects.create(team=team_a, name="new")

    services.model_update(
        model=model,
        tags=[tag],
        body='{"q": #query#}',
        default_keywords="hat",
        **model_fields(other, name="Ranking", params=""),
    )

    model.refresh_from_db()
    assert (model.endpoint, model.params, model.body) == (other, [], '{"q": #query#}')
    assert (model.default_keywords, list(model.tags.all())) == ("hat", [tag])


def test_a_refused_model_update_changes_nothing(team_a):
    model = make_model(team_a, name="Ranking", params="q=#query#")
    make_model(team_a, model.endpoint, name="Other")

    problems = problems_of(
        services.model_update, model=model, **model_fields(model.endpoint, name="Other")
    )

    model.refresh_from_db()
    assert problems == ["name: the team already has a model named 'Other'"]
    assert model.name == "Ranking"


def test_a_model_used_by_evaluations_is_not_deleted_and_the_refusal_names_them(team_a):
    model = make_model(team_a, name="Ranking")
    make_evaluation(team=team_a, search_model=model, start=False)
    evaluation = make_evaluation(team=team_a, search_model=model, start=False)

    with pytest.raises(InvalidState) as refused:
        services.model_delete(model=model)

    assert refused.value.message.startswith("The model Ranking is used by the evaluations ")
    assert evaluation.name in refused.value.message
    assert SearchModel.objects.filter(pk=model.pk).exists()


def test_an_unused_model_is_deleted_and_its_endpoint_stays(team_a):
    model = make_model(team_a)

    services.model_delete(model=model)

    assert not SearchModel.objects.exists()
    assert SearchEndpoint.objects.filter(pk=model.endpoint_id).exists()


# --- Races ------------------------------------------------------------------------------


def test_a_name_taken_between_the_check_and_the_save_is_refused_like_the_check(team_a, monkeypatch):
    """A double-clicked form: both saves pass the name check; the database refuses the
    second, and the lead reads the same problem the check gives, not a server error."""
    make_endpoint(team_a, name="Catalogue")
    model = make_model(team_a, name="Ranking")
    monkeypatch.setattr(SearchEndpoint.objects, "filter", passes_first_name_check(SearchEndpoint))
    monkeypatch.setattr(SearchModel.objects, "filter", passes_first_name_check(SearchModel))

    endpoint_problems = problems_of(
        services.endpoint_create, team=team_a, **endpoint_fields(name="Catalogue")
    )
    model_problems = problems_of(
        services.model_create, team=team_a, **model_fields(model.endpoint, name="Ranking")
    )

    assert endpoint_problems == ["name: the team already has an endpoint named 'Catalogue'"]
    assert model_problems == ["name: the team already has a model named 'Ranking'"]
    assert SearchEndpoint.objects.filter(name="Catalogue").count() == 1
    assert SearchModel.objects.filter(name="Ranking").count() == 1


def passes_first_name_check(model):
    """`objects.filter` whose first name lookup finds nothing, as if the other save had
    not committed yet; later lookups (after the database refused) see the truth."""
    real_filter = type(model.objects).filter.__get__(model.objects)
    calls = {"name": 0}

    def filter(*args, **kwargs):
        if "name" in kwargs and "team" in kwargs:
            calls["name"] += 1
            if calls["name"] == 1:
                return model.objects.none()
        return real_filter(*args, **kwargs)

    return filter


def test_a_model_is_checked_against_the_endpoint_as_stored_not_as_the_caller_had_it(team_a):
    endpoint = make_endpoint(team_a, url="https://search.example.com/s?q=#query#")
    stale = SearchEndpoint.objects.get(pk=endpoint.pk)
    SearchEndpoint.objects.filter(pk=endpoint.pk).update(url="https://search.example.com/s")

    problems = problems_of(services.model_create, team=team_a, **model_fields(stale, params=""))

    assert problems[0].startswith("url: #query# appears nowhere")
