"""A lead adds, renames and removes a pending evaluation's keywords from its edit page,
through real URLs."""

import html
import re

import pytest
from django.utils import timezone

from apps.evaluations.models import Evaluation, EvaluationMetric, FeedbackSlot, Keyword, Snapshot
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.fetching import keywords_to_run
from apps.lifecycle.keyword_editing import MAX_ADDED_AT_ONCE
from apps.lifecycle.steps import evaluation_start, evaluation_stop
from apps.scoring.models import KeywordMetric
from tests.factories import client_for, make_evaluation, make_grader, make_search_model, slots_of

from .test_pages_forms import field_errors, text

pytestmark = pytest.mark.django_db


def edit_url(evaluation) -> str:
    return f"/evaluations/{evaluation.id}/edit/"


def add_url(evaluation) -> str:
    return f"/evaluations/{evaluation.id}/keywords/add/"


def rename_url(keyword) -> str:
    return f"/evaluations/{keyword.evaluation_id}/keywords/{keyword.id}/edit/"


def remove_url(keyword) -> str:
    return f"/evaluations/{keyword.evaluation_id}/keywords/{keyword.id}/remove/"


def texts(evaluation) -> list[str]:
    return list(evaluation.keywords.order_by("position").values_list("text", flat=True))


def shown_message(client, evaluation) -> str:
    """The message the edit page shows after a redirect."""
    return re.sub(r"\s+", " ", html.unescape(text(client.get(edit_url(evaluation)))))


@pytest.fixture
def pending(team_a) -> Evaluation:
    """Never started, without a model: two keywords, no results."""
    return make_evaluation(team=team_a, keywords={"red shoes": 0, "blue hat": 0}, start=False)


@pytest.fixture
def scored(django_capture_on_commit_callbacks):
    """Run what a block queues after its commit (the metrics), as a worker would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def graded_and_paused(team, scored, *, search_model=None) -> Evaluation:
    """Two keywords with 2 results each, the first of each graded 3, scored, paused."""
    evaluation = make_evaluation(
        team=team,
        metrics=[("cg", 5)],
        keywords={"red shoes": 2, "blue hat": 2},
        start=False,
        search_model=search_model,
    )
    # As if a start had run them against the model.
    evaluation.keywords.update(executed_at=timezone.now())
    evaluation_start(evaluation=evaluation)
    grader = make_grader(team)
    for keyword in ("red shoes", "blue hat"):
        slot = slots_of(evaluation, keyword)[0]
        with scored():
            slot_judge(slot_id=slot.id, giver=Giver.recorded(grader), grade=3)
    evaluation_stop(evaluation=evaluation)
    evaluation.refresh_from_db()
    assert (evaluation.graded_slots, evaluation.total_slots) == (2, 4)
    return evaluation


def cg_mean(evaluation) -> tuple[float | None, int]:
    metric = EvaluationMetric.objects.get(evaluation=evaluation, metric="cg", k=5)
    return metric.value, metric.value_count


# --- The list on the edit page ----------------------------------------------------------


def test_the_edit_page_lists_the_keywords_fifty_at_a_time_in_a_bounded_number_of_queries(
    owner, team_a, django_assert_max_num_queries
):
    evaluation = make_evaluation(
        team=team_a, keywords={f"query {n:03}": 0 for n in range(1, 62)}, start=False
    )
    client = client_for(owner)

    with django_assert_max_num_queries(25):
        first = client.get(edit_url(evaluation))
    second = client.get(edit_url(evaluation) + "?keywords_page=2")

    assert first.status_code == 200
    assert text(first).count('data-testid="keyword-row"') == 50
    assert "61 keywords." in text(first)
    assert "Page 1 of 2" in text(first)
    assert 'value="query 050"' in text(first)
    assert 'value="query 051"' not in text(first)
    assert text(second).count('data-testid="keyword-row"') == 11
    assert 'value="query 061"' in text(second)


# --- Add ------------------------------------------------------------------------------


def test_a_lead_adds_keywords_one_per_line_skipping_blanks_repeats_and_those_listed(owner, pending):
    client = client_for(owner)

    typed = " green scarf \n\nred shoes\ngreen scarf\r\nwool socks\n"

    response = client.post(add_url(pending), {"new_keywords": typed})

    assert response.status_code == 302
    assert response["Location"] == edit_url(pending) + "#keywords"
    assert texts(pending) == ["red shoes", "blue hat", "green scarf", "wool socks"]
    assert "Added 2 keywords; 1 keyword already listed." in shown_message(client, pending)


def test_a_line_too_long_is_named_and_nothing_is_added(owner, pending):
    response = client_for(owner).post(add_url(pending), {"new_keywords": "fine\n" + "x" * 501})

    assert response.status_code == 400
    assert field_errors(response, "new_keywords") == "line 2 is longer than 500 characters"
    assert texts(pending) == ["red shoes", "blue hat"]


@pytest.mark.parametrize("typed", ["", " \n \n"])
def test_adding_no_keyword_at_all_says_what_to_type(typed, owner, pending):
    response = client_for(owner).post(add_url(pending), {"new_keywords": typed})

    assert response.status_code == 400
    assert field_errors(response, "new_keywords") == "type at least one keyword, one per line"


def test_more_keywords_than_one_go_allows_are_refused_with_the_count(owner, pending):
    lines = "\n".join(f"q{n}" for n in range(MAX_ADDED_AT_ONCE + 1))

    response = client_for(owner).post(add_url(pending), {"new_keywords": lines})

    assert response.status_code == 400
    assert field_errors(response, "new_keywords") == (
        f"at most {MAX_ADDED_AT_ONCE} keywords at once (got {MAX_ADDED_AT_ONCE + 1}); "
        "add the rest in another go"
    )
    assert pending.keywords.count() == 2


def test_keywords_added_after_a_start_with_a_model_run_at_the_resume(owner, team_a, scored):
    model = make_search_model(team_a, "https://search.example")
    evaluation = graded_and_paused(team_a, scored, search_model=model)

    client_for(owner).post(add_url(evaluation), {"new_keywords": "green scarf"})

    assert [text for _, text in keywords_to_run(evaluation.id)] == ["green scarf"]


# --- Rename ---------------------------------------------------------------------------


def test_a_lead_renames_a_keyword_never_run(owner, pending):
    keyword = pending.keywords.get(text="blue hat")
    client = client_for(owner)

    response = client.post(rename_url(keyword), {"keyword": "  blue cap "})

    assert response.status_code == 302
    keyword.refresh_from_db()
    assert (keyword.text, keyword.position) == ("blue cap", 2)
    assert "Changed 'blue hat' to 'blue cap'." in shown_message(client, pending)


def test_saving_a_keyword_as_it_is_changes_nothing_and_says_so(owner, pending):
    keyword = pending.keywords.get(text="blue hat")
    client = client_for(owner)

    client.post(rename_url(keyword), {"keyword": " blue hat "})

    assert "'blue hat' is unchanged." in shown_message(client, pending)
    assert texts(pending) == ["red shoes", "blue hat"]


@pytest.mark.parametrize(
    ("typed", "problem"),
    [
        ("red shoes", "'red shoes' is already a keyword of this evaluation."),
        ("", "type the keyword's new text"),
        ("x" * 501, "At most 500 characters (got 501)."),
    ],
)
def test_a_rename_that_breaks_a_rule_is_shown_beside_the_field(typed, problem, owner, pending):
    keyword = pending.keywords.get(text="blue hat")

    response = client_for(owner).post(rename_url(keyword), {"keyword": typed})

    assert response.status_code == 400
    assert field_errors(response, "keyword") == problem
    assert texts(pending) == ["red shoes", "blue hat"]


def test_renaming_a_run_keyword_drops_its_results_and_grades_and_runs_it_again(
    owner, team_a, scored
):
    model = make_search_model(team_a, "https://search.example")
    evaluation = graded_and_paused(team_a, scored, search_model=model)
    keyword = evaluation.keywords.get(text="blue hat")
    assert cg_mean(evaluation) == (3.0, 2)

    form = client_for(owner).get(rename_url(keyword))
    with scored():
        response = client_for(owner).post(rename_url(keyword), {"keyword": "blue cap"})

    assert "Its 2 results and their grades go with the old text" in text(form)
    assert response.status_code == 302
    keyword.refresh_from_db()
    evaluation.refresh_from_db()
    assert keyword.text == "blue cap"
    assert keyword.executed_at is None
    assert not Snapshot.objects.filter(keyword=keyword).exists()
    assert not KeywordMetric.objects.filter(keyword=keyword, value__isnull=False).exists()
    assert (evaluation.graded_slots, evaluation.total_slots, evaluation.progress) == (1, 2, 0.5)
    assert cg_mean(evaluation) == (3.0, 1)
    assert [text for _, text in keywords_to_run(evaluation.id)] == ["blue cap"]


def test_a_keyword_with_imported_results_cannot_be_renamed(owner, team_a, scored):
    evaluation = graded_and_paused(team_a, scored)  # no search model: the results were imported
    keyword = evaluation.keywords.get(text="blue hat")
    client = client_for(owner)

    response = client.post(rename_url(keyword), {"keyword": "blue cap"})

    assert response.status_code == 302
    assert "Not changed: 'blue hat' has imported results" in shown_message(client, evaluation)
    keyword.refresh_from_db()
    assert keyword.text == "blue hat"
    assert Snapshot.objects.filter(keyword=keyword).count() == 2


# --- Remove ---------------------------------------------------------------------------


def test_removing_asks_first_then_removes_the_keyword_its_results_grades_and_values(
    owner, team_a, scored
):
    evaluation = graded_and_paused(team_a, scored)
    keyword = evaluation.keywords.get(text="red shoes")
    client = client_for(owner)

    confirm = client.get(remove_url(keyword))
    assert Keyword.objects.filter(id=keyword.id).exists()
    with scored():
        response = client.post(remove_url(keyword))

    assert "Its 2 results, their 1 grade and its metric values are removed" in text(confirm)
    assert 'data-testid="confirm-remove"' in text(confirm)
    assert response.status_code == 302
    assert texts(evaluation) == ["blue hat"]
    assert not FeedbackSlot.objects.filter(keyword_id=keyword.id).exists()
    evaluation.refresh_from_db()
    assert (evaluation.graded_slots, evaluation.total_slots) == (1, 2)
    assert cg_mean(evaluation) == (3.0, 1)
    assert "Removed 'red shoes'." in shown_message(client, evaluation)


def test_removing_the_last_graded_keyword_leaves_no_mean(owner, team_a, scored):
    evaluation = graded_and_paused(team_a, scored)
    client = client_for(owner)

    for keyword in list(evaluation.keywords.all()):
        with scored():
            client.post(remove_url(keyword))

    evaluation.refresh_from_db()
    assert (evaluation.graded_slots, evaluation.total_slots, evaluation.progress) == (0, 0, 0)
    assert cg_mean(evaluation) == (None, 0)


# --- Who and when ---------------------------------------------------------------------


def test_an_open_evaluations_keywords_cannot_change_and_the_page_says_why(owner, team_a):
    evaluation = make_evaluation(team=team_a)  # started: open for grading
    keyword = evaluation.keywords.get()
    client = client_for(owner)

    answers = [
        client.post(add_url(evaluation), {"new_keywords": "more"}),
        client.post(rename_url(keyword), {"keyword": "other"}),
        client.post(remove_url(keyword)),
    ]

    assert [answer.status_code for answer in answers] == [409, 409, 409]
    assert "Only a pending evaluation can be edited; this one is active. Pause it first." in (
        text(answers[0])
    )
    assert texts(evaluation) == ["red shoes"]


def test_an_evaluator_is_refused_and_an_outsider_finds_nothing(evaluator, outsider, pending):
    keyword = pending.keywords.get(text="red shoes")
    form = {"new_keywords": "x", "keyword": "x"}
    for url in (add_url(pending), rename_url(keyword), remove_url(keyword)):
        assert client_for(evaluator).post(url, form).status_code == 403
        assert client_for(outsider).post(url, form).status_code == 404
    assert texts(pending) == ["red shoes", "blue hat"]


def test_a_keyword_of_another_evaluation_is_not_found_through_this_one(owner, team_a, pending):
    other = make_evaluation(team=team_a, start=False)
    keyword = other.keywords.get()
    wrong = f"/evaluations/{pending.id}/keywords/{keyword.id}/remove/"

    assert client_for(owner).post(wrong).status_code == 404
    assert Keyword.objects.filter(id=keyword.id).exists()


def test_a_post_without_the_csrf_token_is_refused(owner, pending):
    keyword = pending.keywords.get(text="red shoes")

    response = client_for(owner, enforce_csrf_checks=True).post(remove_url(keyword))

    assert response.status_code == 403
    assert texts(pending) == ["red shoes", "blue hat"]
