"""The lead's pages for search endpoints and models, used by the cast of team A (owner,
admin, evaluator), a lead of team B (the outsider) and someone not logged in."""

import json

import pytest

from apps.accounts.models import Tag
from apps.endpoints.models import SearchEndpoint, SearchModel
from tests.factories import client_for, make_evaluation
from tests.search_server import MAPPER

from .factories import make_endpoint, make_model

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return response.content.decode()


def endpoint_post(**overrides) -> dict:
    data = {
        "name": "Catalogue",
        "description": "",
        "method": "GET",
        "url": "https://search.example.com/search",
        "headers": "Authorization: Basic user:secret\nAccept: application/json",
        "timeout_seconds": "10",
        "mapper": json.dumps(MAPPER),
    }
    data.update(overrides)
    return data


def model_post(endpoint, **overrides) -> dict:
    data = {
        "name": "Default ranking",
        "description": "",
        "endpoint": str(endpoint.id),
        "params": "q=#query#\nsize=10",
        "headers": "",
        "body": "",
        "body_type": "json",
        "default_keywords": "red shoes\nblue shirt",
    }
    data.update(overrides)
    return data


@pytest.fixture
def endpoint(team_a):
    return make_endpoint(team_a, name="Catalogue", headers="Authorization: Basic user:secret")


@pytest.fixture
def model(team_a, endpoint):
    return make_model(team_a, endpoint, name="Default ranking")


def lead_pages(endpoint, model) -> list[str]:
    return [
        "/endpoints/",
        "/endpoints/new/",
        f"/endpoints/{endpoint.id}/",
        f"/endpoints/{endpoint.id}/edit/",
        f"/endpoints/{endpoint.id}/delete/",
        "/models/",
        "/models/new/",
        f"/models/{model.id}/",
        f"/models/{model.id}/edit/",
        f"/models/{model.id}/delete/",
        f"/models/{model.id}/test/",
    ]


# --- Who may open them ------------------------------------------------------------------


@pytest.mark.parametrize("who", ["owner", "admin"])
def test_every_page_opens_for_the_team_leads(request, who, endpoint, model):
    client = client_for(request.getfixturevalue(who))

    for path in lead_pages(endpoint, model):
        assert client.get(path).status_code == 200, path


def test_an_evaluator_is_refused_every_page(evaluator, endpoint, model):
    client = client_for(evaluator)

    for path in lead_pages(endpoint, model):
        assert client.get(path).status_code == 403, path
    assert client.post("/endpoints/new/", endpoint_post(name="Sneaky")).status_code == 403
    assert client.post(f"/models/{model.id}/delete/").status_code == 403
    assert client.post(f"/models/{model.id}/test/", {"keyword": "x"}).status_code == 403
    assert SearchModel.objects.filter(pk=model.pk).exists()
    assert not SearchEndpoint.objects.filter(name="Sneaky").exists()


def test_someone_not_logged_in_is_sent_to_the_login_page(endpoint, model):
    from django.test import Client

    for path in lead_pages(endpoint, model):
        response = Client().get(path)
        assert response.status_code == 302 and response.url.startswith("/accounts/login/"), path


def test_a_lead_of_another_team_gets_not_found_for_this_teams_objects(outsider, endpoint, model):
    client = client_for(outsider)

    for path in lead_pages(endpoint, model):
        if path not in ("/endpoints/", "/endpoints/new/", "/models/", "/models/new/"):
            assert client.get(path).status_code == 404, path
    assert client.post(f"/endpoints/{endpoint.id}/delete/").status_code == 404
    assert client.post(f"/models/{model.id}/delete/").status_code == 404
    assert client.post(f"/models/{model.id}/test/", {"keyword": "x"}).status_code == 404
    assert client.post(f"/models/{model.id}/edit/", {"name": "Mine"}).status_code == 404
    assert SearchModel.objects.get(pk=model.pk).name == "Default ranking"


def test_a_lead_of_another_team_sees_none_of_this_teams_objects_in_the_lists(
    outsider, endpoint, model
):
    client = client_for(outsider)

    assert "Catalogue" not in text(client.get("/endpoints/"))
    assert "Default ranking" not in text(client.get("/models/"))
    assert f'value="{endpoint.id}"' not in text(client.get("/models/new/"))


def test_the_nav_link_shows_for_leads_only(owner, evaluator):
    assert 'href="/models/">Search models</a>' in text(client_for(owner).get("/"))
    assert 'href="/models/"' not in text(client_for(evaluator).get("/"))


# --- Endpoints --------------------------------------------------------------------------


def test_a_lead_creates_an_endpoint_and_lands_on_its_page(team_a, owner):
    response = client_for(owner).post("/endpoints/new/", endpoint_post(), follow=True)

    endpoint = SearchEndpoint.objects.get(team=team_a)
    assert response.redirect_chain == [(f"/endpoints/{endpoint.id}/", 302)]
    assert endpoint.headers == [
        ["Authorization", "Basic user:secret"],
        ["Accept", "application/json"],
    ]
    assert endpoint.mapper == MAPPER and endpoint.created_by == owner
    page = text(response)
    assert "Created the endpoint Catalogue." in page
    assert "Accept: application/json" in page
    assert "Authorization: hidden (17 characters; Edit shows it)" in page
    assert "user:secret" not in page
    assert "hits.hits[*]" in page


def test_the_endpoint_form_explains_the_mapper_with_an_example(owner):
    page = text(client_for(owner).get("/endpoints/new/"))

    assert 'data-testid="mapper-help"' in page
    assert "<code>images[0].url</code>" in page and '<code>["my key"].value</code>' in page
    assert "&quot;results&quot;: &quot;hits.hits[*]&quot;" in page  # the example


def test_a_header_line_without_a_colon_is_refused_naming_the_field_and_line(team_a, owner):
    response = client_for(owner).post(
        "/endpoints/new/", endpoint_post(headers="Accept: application/json\nno colon here")
    )

    assert response.status_code == 200
    form = response.context["form"]
    assert form.errors["headers"] == ["Line 2: no ':' (write Name: value)."]
    assert "Line 2: no &#x27;:&#x27; (write Name: value)." in text(response)
    assert not SearchEndpoint.objects.exists()


def test_mapper_errors_are_shown_next_to_the_mapper_with_every_other_problem(team_a, owner):
    response = client_for(owner).post(
        "/endpoints/new/",
        endpoint_post(
            name="", timeout_seconds="500", mapper='{"results": "hits", "name": "title"}'
        ),
    )

    errors = response.context["form"].errors
    assert errors["name"] == ["Required."]
    assert errors["timeout_seconds"] == ["Must be more than 0 and at most 120 seconds."]
    assert errors["mapper"] == [
        "results: needs exactly one [*] (found 0).",
        "id: required.",
    ]
    # The problems are in the mapper's own block of the page, below its text box.
    page = text(response)
    mapper_block = page[page.index('data-testid="mapper-field"') :]
    assert mapper_block.index("id: required.") < mapper_block.index("How to write a mapper")
    assert not SearchEndpoint.objects.exists()


def test_a_mapper_that_is_not_json_is_refused_with_its_line_and_column(owner):
    response = client_for(owner).post("/endpoints/new/", endpoint_post(mapper='{"id": }'))

    assert response.context["form"].errors["mapper"] == [
        "Not valid JSON: Expecting value (line 1, column 8)."
    ]


def test_a_timeout_that_is_not_a_number_is_refused_naming_the_field(owner):
    response = client_for(owner).post("/endpoints/new/", endpoint_post(timeout_seconds="soon"))

    assert response.context["form"].errors["timeout_seconds"] == ["Enter a number."]
    assert not SearchEndpoint.objects.exists()


def test_the_edit_form_shows_headers_as_typed_and_saves_changes(owner, endpoint):
    client = client_for(owner)

    page = text(client.get(f"/endpoints/{endpoint.id}/edit/"))
    response = client.post(
        f"/endpoints/{endpoint.id}/edit/",
        endpoint_post(name="Catalogue v2", headers="X-Key: a:b:c"),
    )

    assert "Authorization: Basic user:secret</textarea>" in page
    assert "&quot;results&quot;: &quot;hits.hits[*]&quot;" in page  # the mapper as JSON
    assert response.status_code == 302 and response.url == f"/endpoints/{endpoint.id}/"
    endpoint.refresh_from_db()
    assert (endpoint.name, endpoint.headers) == ("Catalogue v2", [["X-Key", "a:b:c"]])


def test_deleting_an_unused_endpoint_asks_first_then_deletes(owner, team_a):
    endpoint = make_endpoint(team_a, name="Old")
    client = client_for(owner)

    confirm = client.get(f"/endpoints/{endpoint.id}/delete/")
    response = client.post(f"/endpoints/{endpoint.id}/delete/", follow=True)

    assert "Delete the endpoint Old?" in text(confirm)
    assert response.redirect_chain == [("/endpoints/", 302)]
    assert "Deleted the endpoint Old." in text(response)
    assert not SearchEndpoint.objects.filter(pk=endpoint.pk).exists()


def test_an_endpoint_in_use_is_not_deleted_and_the_page_names_its_models(owner, endpoint, model):
    client = client_for(owner)

    confirm = text(client.get(f"/endpoints/{endpoint.id}/delete/"))
    response = client.post(f"/endpoints/{endpoint.id}/delete/", follow=True)

    assert 'data-testid="delete-refused"' in confirm and "Default ranking" in confirm
    assert response.redirect_chain == [(f"/endpoints/{endpoint.id}/", 302)]
    assert "is used by the model Default ranking" in text(response)
    assert SearchEndpoint.objects.filter(pk=endpoint.pk).exists()


# --- Models -----------------------------------------------------------------------------


def test_a_lead_creates_a_model_with_tags_and_lands_on_its_test_form(team_a, owner, endpoint):
    tag = Tag.objects.create(team=team_a, name="shoes")

    response = client_for(owner).post(
        "/models/new/", model_post(endpoint, tags=[str(tag.id)]), follow=True
    )

    model = SearchModel.objects.get(team=team_a)
    assert response.redirect_chain == [(f"/models/{model.id}/", 302)]
    assert (model.endpoint, model.params) == (endpoint, [["q", "#query#"], ["size", "10"]])
    assert list(model.tags.all()) == [tag] and model.created_by == owner
    page = text(response)
    assert 'name="keyword" value="red shoes"' in page  # the first default keyword
    assert f'hx-post="/models/{model.id}/test/"' in page


def test_the_new_model_form_offers_only_the_teams_endpoints_and_tags(team_a, team_b, owner):
    mine = make_endpoint(team_a, name="Mine")
    theirs = make_endpoint(team_b, name="Theirs")
    Tag.objects.create(team=team_b, name="their-tag")

    page = text(client_for(owner).get(f"/models/new/?endpoint={mine.id}"))

    assert f'<option value="{mine.id}" selected>Mine</option>' in page
    assert "Theirs" not in page and "their-tag" not in page
    assert f'value="{theirs.id}"' not in page


def test_without_an_endpoint_the_new_model_page_points_to_creating_one(owner):
    page = text(client_for(owner).get("/models/new/"))

    assert 'href="/endpoints/new/"' in page and 'name="params"' not in page


def test_another_teams_endpoint_is_refused_naming_the_field(team_b, owner, endpoint):
    theirs = make_endpoint(team_b)

    response = client_for(owner).post("/models/new/", model_post(theirs))

    assert "endpoint" in response.context["form"].errors
    assert not SearchModel.objects.exists()


def test_model_problems_are_shown_by_field_and_line(owner, endpoint):
    client = client_for(owner)

    lines = client.post(
        "/models/new/", model_post(endpoint, params="size=10\nq #query#", headers="X-A: 1\nnope")
    )
    names = client.post("/models/new/", model_post(endpoint, headers="X-A: 1\n\nBad Header: 1"))

    assert lines.context["form"].errors == {
        "params": ["Line 2: no '=' (write name=value)."],
        "headers": ["Line 2: no ':' (write Name: value)."],
    }
    assert names.context["form"].errors == {
        "headers": ["Line 3: 'Bad Header' is not a valid header name."]
    }
    assert not SearchModel.objects.exists()


def test_a_model_without_the_query_anywhere_is_refused_above_the_form(owner, endpoint):
    response = client_for(owner).post("/models/new/", model_post(endpoint, params="size=10"))

    [problem] = response.context["form"].non_field_errors()
    assert problem.startswith("url: #query# appears nowhere (URL, parameters, headers or body)")
    assert 'role="alert"' in text(response)


def test_the_model_edit_form_shows_lines_as_typed_and_saves(owner, team_a, endpoint, model):
    client = client_for(owner)

    page = text(client.get(f"/models/{model.id}/edit/"))
    response = client.post(
        f"/models/{model.id}/edit/",
        model_post(endpoint, name="Renamed", params="q=#query#\nfq=type:shoe"),
    )

    assert "q=#query#</textarea>" in page
    assert response.status_code == 302
    model.refresh_from_db()
    assert (model.name, model.params) == ("Renamed", [["q", "#query#"], ["fq", "type:shoe"]])


def test_a_model_used_by_an_evaluation_is_not_deleted_and_the_page_names_it(owner, team_a, model):
    evaluation = make_evaluation(team=team_a, search_model=model, start=False)
    client = client_for(owner)

    confirm = text(client.get(f"/models/{model.id}/delete/"))
    response = client.post(f"/models/{model.id}/delete/", follow=True)

    assert evaluation.name in confirm
    assert f"is used by the evaluation {evaluation.name}" in text(response)
    assert SearchModel.objects.filter(pk=model.pk).exists()


def test_an_unused_model_is_deleted_after_confirming(owner, model):
    response = client_for(owner).post(f"/models/{model.id}/delete/", follow=True)

    assert response.redirect_chain == [("/models/", 302)]
    assert not SearchModel.objects.filter(pk=model.pk).exists()


# --- CSRF -------------------------------------------------------------------------------


def test_every_form_refuses_a_post_without_the_csrf_token(owner, endpoint, model):
    client = client_for(owner, enforce_csrf_checks=True)

    posts = {
        "/endpoints/new/": endpoint_post(name="No token"),
        f"/endpoints/{endpoint.id}/edit/": endpoint_post(name="No token"),
        f"/endpoints/{endpoint.id}/delete/": {},
        "/models/new/": model_post(endpoint, name="No token"),
        f"/models/{model.id}/edit/": model_post(endpoint, name="No token"),
        f"/models/{model.id}/delete/": {},
        f"/models/{model.id}/test/": {"keyword": "shoes"},
    }
    for path, data in posts.items():
        assert client.post(path, data).status_code == 403, path
    assert not SearchEndpoint.objects.filter(name="No token").exists()
    assert not SearchModel.objects.filter(name="No token").exists()
    assert SearchModel.objects.filter(pk=model.pk).exists()


# --- Bounded queries --------------------------------------------------------------------


@pytest.mark.parametrize("count", [2, 12])
def test_the_list_pages_take_the_same_queries_however_many_rows(
    count, team_a, owner, django_assert_max_num_queries
):
    endpoint = make_endpoint(team_a)
    tag = Tag.objects.create(team=team_a, name="shoes")
    for number in range(count):
        model = make_model(team_a, endpoint, name=f"Model {number}")
        model.tags.set([tag])
        make_endpoint(team_a, name=f"Listed {number}")
    client = client_for(owner)
    client.get("/models/")  # the session is loaded once

    # Session, user, membership, then one query per list (and one for all tags).
    with django_assert_max_num_queries(5):
        assert client.get("/models/").status_code == 200
    with django_assert_max_num_queries(4):
        assert client.get("/endpoints/").status_code == 200


def test_the_detail_pages_take_a_bounded_number_of_queries(
    owner, team_a, endpoint, model, django_assert_max_num_queries
):
    for _ in range(3):
        make_evaluation(team=team_a, search_model=model, start=False)
    client = client_for(owner)

    with django_assert_max_num_queries(6):
        assert client.get(f"/models/{model.id}/").status_code == 200
    with django_assert_max_num_queries(5):
        assert client.get(f"/endpoints/{endpoint.id}/").status_code == 200


def test_the_model_page_hides_credentials_in_its_headers_but_shows_the_others(owner, team_a):
    model = make_model(team_a, headers="X-Api-Key: abc123\nX-Client: relevo")

    page = text(client_for(owner).get(f"/models/{model.id}/"))

    assert "X-Api-Key: hidden (6 characters; Edit shows it)" in page
    assert "abc123" not in page
    assert "X-Client: relevo" in page
