"""The lead's new-evaluation and edit pages, through real URLs."""

import html
import json
import re

import pytest

from apps.accounts.models import Tag
from apps.evaluations.models import Evaluation, EvaluationMetric, Keyword, Status
from apps.evaluations.services import evaluation_create
from apps.lifecycle.forms import keyword_list, suggested_name
from apps.lifecycle.steps import evaluation_start, evaluation_stop
from tests.factories import client_for, make_evaluation, make_search_model

pytestmark = pytest.mark.django_db

NEW = "/evaluations/new/"


def text(response) -> str:
    return response.content.decode()


def field_errors(response, field: str) -> str:
    """The errors shown next to one field ("" when none)."""
    match = re.search(rf'<ul class="errorlist" id="id_{field}_error">(.*?)</ul>', text(response))
    return html.unescape(re.sub(r"<[^>]+>", " ", match.group(1))).strip() if match else ""


def valid_post(**changes):
    data = {
        "search_model": "",
        "name": "Shoes 1",
        "keywords": "red shoes\nblue hat",
        "scale": "graded",
        "strategy": "1",
        "profile": "searchtweak",
        "metrics": "ndcg@10, precision@5",
        "transformers": "",
        "scoring_guidelines": "",
        "reuse": "none",
    }
    data.update(changes)
    return data


@pytest.fixture
def model(team_a):
    """A search model of team A; these pages never call its endpoint."""
    return make_search_model(
        team_a,
        "https://search.example",
        name="Catalogue",
        default_keywords="red shoes\r\nblue hat\r\n",
    )


# --- Pure helpers --------------------------------------------------------------------


def test_a_suggested_name_numbers_on_from_the_highest_taken():
    assert suggested_name("Catalogue", []) == "Catalogue 1"
    assert suggested_name("Catalogue", ["Catalogue 1", "Catalogue 3", "Other 9"]) == "Catalogue 4"
    assert suggested_name("A+B", ["A+B 2", "AAB 7", "A+B 2 copy"]) == "A+B 3"


def test_keywords_are_trimmed_without_blanks_or_repeats_in_their_order():
    assert keyword_list(" red shoes \n\n blue hat\r\nred shoes\n") == ["red shoes", "blue hat"]


# --- New evaluation ------------------------------------------------------------------


@pytest.mark.parametrize("lead", ["owner", "admin"])
def test_a_lead_opens_the_new_evaluation_page_with_every_setting(lead, request, model):
    response = client_for(request.getfixturevalue(lead)).get(NEW)

    page = text(response)
    assert response.status_code == 200
    assert "none — results will be imported" in page
    assert f'<option value="{model.id}">Catalogue</option>' in page
    for field in ["name", "keywords", "scale", "strategy", "profile", "metrics", "transformers"]:
        assert f'name="{field}"' in page
    for field in ["show_position", "scoring_guidelines", "reuse", "auto_restart"]:
        assert f'name="{field}"' in page
    assert 'value="ndcg@10, precision@10"' in page  # the graded scale's default metrics
    defaults = json.loads(re.search(r'id="model-defaults"[^>]*>(.*?)</script>', page).group(1))
    assert defaults == {str(model.id): {"name": "Catalogue 1", "keywords": "red shoes\nblue hat\n"}}


def test_coming_from_a_model_prefills_its_next_name_and_default_keywords(owner, team_a, model):
    evaluation_create(team=team_a, name="Catalogue 1", metrics=[("ndcg", 10)])

    response = client_for(owner).get(f"{NEW}?model={model.id}")

    page = text(response)
    assert f'<option value="{model.id}" selected>Catalogue</option>' in page
    assert 'value="Catalogue 2"' in page
    assert ">\nred shoes\nblue hat\n</textarea>" in page
    assert '<strong id="keyword-count">2</strong>' in page


def test_the_evaluation_list_and_a_models_page_link_to_a_new_evaluation(owner, model):
    client = client_for(owner)

    assert f'href="{NEW}"' in text(client.get("/evaluations/"))
    assert f'href="{NEW}?model={model.id}"' in text(client.get(f"/models/{model.id}/"))


def test_a_team_without_models_is_told_where_to_make_one(owner):
    page = text(client_for(owner).get(NEW))

    assert 'data-testid="no-models"' in page and 'href="/models/new/"' in page


def test_another_teams_model_is_never_offered_or_prefilled(owner, team_b):
    theirs = make_search_model(team_b, "https://b.example", default_keywords="secret")

    page = text(client_for(owner).get(f"{NEW}?model={theirs.id}"))

    assert "secret" not in page and theirs.name not in page


def test_the_metric_field_lists_every_metric_with_its_definition(owner):
    page = text(client_for(owner).get(NEW))

    help_table = page[page.index('data-testid="metric-help"') :]
    assert "<code>bpref</code>" in help_table
    assert "<code>rbp_80_res</code>" in help_table
    assert (
        "How rarely a judged non-relevant result is ranked above a relevant one"
        in html.unescape(help_table)
    )


def test_a_lead_creates_an_evaluation_with_issue_19s_measures_by_trec_eval_names(owner, team_a):
    post = valid_post(profile="trec", metrics="Rprec, bpref, 11pt_avg, success_5, rbp_80@10")

    response = client_for(owner).post(NEW, post)

    evaluation = Evaluation.objects.get(team=team_a)
    assert response.status_code == 302
    assert list(evaluation.metrics.values_list("metric", "k")) == [
        ("rprec", 0),
        ("bpref", 0),
        ("iprec_avg", 0),
        ("success", 5),
        ("rbp_80", 10),
    ]


def test_a_lead_creates_an_evaluation_from_a_model_and_lands_on_its_page(
    owner, team_a, model, django_capture_on_commit_callbacks
):
    tag = Tag.objects.create(team=team_a, name="german")
    post = valid_post(
        search_model=model.id,
        name="  Catalogue 1 ",
        keywords=" red shoes \n\nblue hat\nred shoes\n",
        scale="binary",
        strategy="3",
        profile="trec",
        metrics="precision@5, ap@10",
        transformers='{"graded": {"0": 0, "1": 3}}',
        show_position="on",
        scoring_guidelines="**Exact** matches only.",
        reuse="keyword_doc",
        auto_restart="on",
        tags=[tag.id],
    )

    response = client_for(owner).post(NEW, post)

    evaluation = Evaluation.objects.get(team=team_a)
    assert response.status_code == 302
    assert response["Location"] == f"/evaluations/{evaluation.id}/"
    assert evaluation.name == "Catalogue 1" and evaluation.search_model == model
    assert (evaluation.scale, evaluation.strategy, evaluation.profile) == ("binary", 3, "trec")
    assert evaluation.transformers == {"graded": {"0": 0, "1": 3}}
    assert evaluation.show_position and evaluation.auto_restart
    assert evaluation.reuse == "keyword_doc" and evaluation.status == Status.PENDING
    assert evaluation.scoring_guidelines == "**Exact** matches only."
    assert evaluation.created_by == owner
    assert list(evaluation.tags.all()) == [tag]
    assert list(evaluation.metrics.values_list("metric", "k")) == [("precision", 5), ("ap", 10)]
    assert list(evaluation.keywords.values_list("text", flat=True)) == ["red shoes", "blue hat"]


def test_an_evaluation_for_imported_results_needs_no_model_and_no_keywords(owner, team_a):
    response = client_for(owner).post(NEW, valid_post(keywords=""), follow=True)

    evaluation = Evaluation.objects.get(team=team_a)
    assert evaluation.search_model is None and not evaluation.keywords.exists()
    assert "Created Shoes 1 with 0 keywords." in text(response)


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"name": "   "}, "name", "Required."),
        ({"name": "x" * 201}, "name", "At most 200 characters"),
        ({"metrics": "ndcg@ten"}, "metrics", "is not metric@k"),
        ({"metrics": ""}, "metrics", "name at least one metric"),
        ({"metrics": "fancy@10"}, "metrics", "metrics[0].metric: unknown metric 'fancy'"),
        (
            {"metrics": "ndcg@1001"},
            "metrics",
            "metrics[0].k: 1001 must be a whole number from 1 to 1000, or null for the whole list",
        ),
        (
            {"metrics": "ndcg@0"},
            "metrics",
            "'ndcg@0': k starts at 1; write 'ndcg' for the whole list",
        ),
        ({"transformers": "{nope"}, "transformers", "not valid JSON (line 1, column 2"),
        ({"transformers": "[1]"}, "transformers", "must be a JSON object"),
        ({"transformers": '{"binary": {"0": 7}}'}, "transformers", "transformers.binary"),
        ({"scale": "huge"}, "scale", "huge is not one of the available choices"),
        ({"strategy": "2"}, "strategy", "2 is not one of the available choices"),
        ({"profile": "mine"}, "profile", "mine is not one of the available choices"),
        ({"reuse": "all"}, "reuse", "all is not one of the available choices"),
        ({"keywords": "ok\n" + "y" * 501}, "keywords", "line 2 is longer than 500 characters"),
    ],
)
def test_bad_input_is_named_next_to_its_field_and_nothing_is_written(owner, changes, field, words):
    response = client_for(owner).post(NEW, valid_post(**changes))

    assert response.status_code == 400
    assert words in field_errors(response, field)
    assert 'data-testid="form-problems"' in text(response)
    assert not Evaluation.objects.exists() and not Keyword.objects.exists()


def test_a_model_evaluation_needs_a_keyword_to_run(owner, model):
    response = client_for(owner).post(NEW, valid_post(search_model=model.id, keywords=" \n"))

    assert response.status_code == 400
    assert "at least one keyword" in field_errors(response, "keywords")
    assert not Evaluation.objects.exists()


def test_another_teams_model_or_tag_is_refused_on_the_field(owner, team_b):
    theirs = make_search_model(team_b, "https://b.example")
    their_tag = Tag.objects.create(team=team_b, name="theirs")

    response = client_for(owner).post(NEW, valid_post(search_model=theirs.id, tags=[their_tag.id]))

    assert response.status_code == 400
    assert "Select a valid choice" in field_errors(response, "search_model")
    assert "Select a valid choice" in field_errors(response, "tags")
    assert not Evaluation.objects.exists()


def test_a_bad_page_keeps_what_the_lead_typed(owner):
    response = client_for(owner).post(NEW, valid_post(metrics="nope", keywords="a\nb\na"))

    assert ">\na\nb\na</textarea>" in text(response)
    assert '<strong id="keyword-count">2</strong>' in text(response)
    assert 'value="nope"' in text(response)


def test_an_evaluator_may_not_create_evaluations(evaluator):
    client = client_for(evaluator)

    assert client.get(NEW).status_code == 403
    assert client.post(NEW, valid_post()).status_code == 403
    assert not Evaluation.objects.exists()


def test_creating_needs_the_csrf_token(owner):
    client = client_for(owner, enforce_csrf_checks=True)

    assert client.post(NEW, valid_post()).status_code == 403
    assert not Evaluation.objects.exists()


def test_someone_not_logged_in_is_sent_to_log_in():
    response = client_for(None).get(NEW)

    assert response.status_code == 302 and "/login/" in response["Location"]


@pytest.mark.parametrize("models", [1, 6])
def test_the_new_page_reads_a_fixed_number_of_queries(
    models, owner, team_a, django_assert_max_num_queries
):
    for number in range(models):
        make_search_model(team_a, "https://search.example", name=f"Model {number}")
        evaluation_create(team=team_a, name=f"Model {number} 1", metrics=[("ndcg", 10)])
    Tag.objects.create(team=team_a, name="german")
    client = client_for(owner)
    client.get("/")  # the session is warm

    with django_assert_max_num_queries(8):
        response = client.get(NEW)

    assert text(response).count("<option value=") >= models + 3


def test_creating_reads_and_writes_a_bounded_number_of_queries(
    owner, model, django_assert_max_num_queries
):
    keywords = "\n".join(f"keyword {n}" for n in range(50))
    client = client_for(owner)
    client.get("/")

    with django_assert_max_num_queries(20):
        response = client.post(NEW, valid_post(search_model=model.id, keywords=keywords))

    assert response.status_code == 302
    assert Keyword.objects.count() == 50


# --- Edit ----------------------------------------------------------------------------


def edit_url(evaluation):
    return f"/evaluations/{evaluation.id}/edit/"


def edit_post(evaluation, **changes):
    data = valid_post(
        name=evaluation.name,
        scale=evaluation.scale,
        strategy=str(evaluation.strategy),
        profile=evaluation.profile,
        metrics=", ".join(f"{m.metric}@{m.k}" for m in evaluation.metrics.all()),
        reuse=evaluation.reuse,
    )
    data.pop("keywords")
    data.update(changes)
    return data


@pytest.mark.parametrize("lead", ["owner", "admin"])
def test_a_lead_edits_every_setting_of_an_evaluation_that_never_started(
    lead, request, team_a, model
):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2}, start=False)
    client = client_for(request.getfixturevalue(lead))

    page = text(client.get(edit_url(evaluation)))
    assert f'value="{evaluation.name}"' in page and "disabled" not in page
    assert 'value="ndcg@10, precision@5"' in page
    assert 'name="keywords"' not in page

    response = client.post(
        edit_url(evaluation),
        edit_post(
            evaluation,
            name="Renamed",
            scale="detail",
            strategy="3",
            metrics="ndcg_d@5",
            search_model=model.id,
            transformers='{"graded": {"1": 0, "2": 0, "3": 1, "4": 1, "5": 1, "6": 2, '
            '"7": 2, "8": 3, "9": 3, "10": 3}}',
        ),
    )

    evaluation.refresh_from_db()
    assert response.status_code == 302 and response["Location"] == f"/evaluations/{evaluation.id}/"
    assert (evaluation.name, evaluation.scale, evaluation.strategy) == ("Renamed", "detail", 3)
    assert evaluation.search_model == model and evaluation.total_slots == 6
    assert evaluation.transformers["graded"]["10"] == 3
    assert list(evaluation.metrics.values_list("metric", "k")) == [("ndcg_d", 5)]


def test_once_started_the_grade_shaping_settings_are_shown_locked_and_kept(owner, team_a):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2}, reuse="keyword_doc")
    evaluation_stop(evaluation=evaluation)  # paused: pending again, but it has started
    client = client_for(owner)

    page = text(client.get(edit_url(evaluation)))
    for field in ["scale", "strategy", "profile", "transformers", "reuse", "search_model"]:
        assert re.search(rf'name="{field}"[^>]*disabled', page), field
        assert "cannot change any more: the evaluation has started" in page
    assert not re.search(r'name="name"[^>]*disabled', page)

    response = client.post(
        edit_url(evaluation),
        edit_post(evaluation, name="Renamed", scale="binary", strategy="3", reuse="none"),
    )

    evaluation.refresh_from_db()
    assert response.status_code == 302
    assert evaluation.name == "Renamed"
    assert (evaluation.scale, evaluation.strategy, evaluation.reuse) == ("graded", 1, "keyword_doc")


def test_imported_grades_lock_the_scale_and_strategy(owner, team_a):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2}, start=False)
    Evaluation.objects.filter(id=evaluation.id).update(graded_slots=1)

    page = text(client_for(owner).get(edit_url(evaluation)))

    assert re.search(r'name="scale"[^>]*disabled', page)
    assert "cannot change any more: its results already have grades." in page
    assert not re.search(r'name="profile"[^>]*disabled', page)


@pytest.mark.parametrize("state", ["active", "finished", "starting"])
def test_an_evaluation_that_is_not_pending_cannot_be_edited(owner, team_a, state):
    evaluation = make_evaluation(team=team_a, start=state != "starting")
    if state == "finished":
        Evaluation.objects.filter(id=evaluation.id).update(status=Status.FINISHED)
    if state == "starting":
        Evaluation.objects.filter(id=evaluation.id).update(fetching=True)
    client = client_for(owner)

    shown = client.get(edit_url(evaluation))
    posted = client.post(edit_url(evaluation), edit_post(evaluation, name="Renamed"))

    assert shown.status_code == posted.status_code == 409
    assert "Only a pending evaluation can be edited" in text(shown)
    assert Evaluation.objects.get(id=evaluation.id).name == evaluation.name


def test_bad_edits_are_named_on_their_field_and_change_nothing(owner, team_a):
    evaluation = make_evaluation(team=team_a, start=False)

    response = client_for(owner).post(
        edit_url(evaluation), edit_post(evaluation, name="Renamed", metrics="dcg@1001")
    )

    assert response.status_code == 400
    assert (
        "metrics[0].k: 1001 must be a whole number from 1 to 1000, or null for the whole list"
        in field_errors(response, "metrics")
    )
    evaluation.refresh_from_db()
    assert evaluation.name != "Renamed"
    assert EvaluationMetric.objects.filter(evaluation=evaluation).count() == 2


def test_editing_is_for_the_teams_leads_only(team_a, evaluator, outsider):
    evaluation = make_evaluation(team=team_a, start=False)

    assert client_for(evaluator).get(edit_url(evaluation)).status_code == 403
    assert client_for(outsider).get(edit_url(evaluation)).status_code == 404
    assert client_for(outsider).post(edit_url(evaluation), edit_post(evaluation)).status_code == 404


def test_editing_needs_the_csrf_token(owner, team_a):
    evaluation = make_evaluation(team=team_a, start=False)
    client = client_for(owner, enforce_csrf_checks=True)

    assert client.post(edit_url(evaluation), edit_post(evaluation, name="X")).status_code == 403
    assert Evaluation.objects.get(id=evaluation.id).name == evaluation.name


def test_the_edit_page_reads_a_fixed_number_of_queries(
    owner, team_a, django_assert_max_num_queries
):
    evaluation = make_evaluation(team=team_a, start=False)
    evaluation_start(evaluation=evaluation)
    evaluation_stop(evaluation=evaluation)
    client = client_for(owner)
    client.get("/")

    with django_assert_max_num_queries(10):
        assert client.get(edit_url(evaluation)).status_code == 200
