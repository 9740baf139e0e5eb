"""Every lifecycle rule of an evaluation, including the transitions it refuses."""

import pytest

from apps.core.errors import InvalidInput, InvalidState
from apps.evaluations.models import Evaluation, FeedbackSlot, Keyword, Status
from apps.evaluations.services import evaluation_create_with_keywords
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.editing import evaluation_update
from apps.lifecycle.steps import (
    evaluation_archive,
    evaluation_clone,
    evaluation_delete,
    evaluation_finish_now,
    evaluation_pin,
    evaluation_start,
    evaluation_stop,
    team_set_baseline,
)
from tests.factories import make_evaluation, make_grader, make_search_model, make_team, slots_of

pytestmark = pytest.mark.django_db


def starting(evaluation):
    """An evaluation whose keywords are running (its start queued the run)."""
    Evaluation.objects.filter(id=evaluation.id).update(fetching=True)
    evaluation.refresh_from_db()
    return evaluation


# --- editing -------------------------------------------------------------------------


def test_a_pending_evaluation_that_never_started_can_change_every_setting():
    evaluation = make_evaluation(strategy=1, keywords={"red shoes": 2}, start=False)

    evaluation = evaluation_update(
        evaluation=evaluation,
        name="  Renamed ",
        scale="detail",
        strategy=3,
        profile="trec",
        reuse="keyword_doc",
        metrics=[("dcg", 3)],
    )

    assert (evaluation.name, evaluation.scale, evaluation.strategy) == ("Renamed", "detail", 3)
    assert evaluation.total_slots == 6
    assert FeedbackSlot.objects.filter(evaluation=evaluation).count() == 6
    assert list(evaluation.metrics.values_list("metric", "k")) == [("dcg", 3)]


def test_a_smaller_strategy_removes_the_extra_slots():
    evaluation = make_evaluation(strategy=3, keywords={"red shoes": 2}, start=False)

    evaluation = evaluation_update(evaluation=evaluation, strategy=1)

    assert evaluation.total_slots == 2
    assert set(
        FeedbackSlot.objects.filter(evaluation=evaluation).values_list("index", flat=True)
    ) == {0}


def test_scale_strategy_profile_transformers_and_reuse_lock_once_started():
    evaluation = make_evaluation()
    evaluation = evaluation_stop(evaluation=evaluation)

    with pytest.raises(InvalidInput) as refused:
        evaluation_update(
            evaluation=evaluation, scale="binary", strategy=3, profile="trec", reuse="keyword_doc"
        )

    assert set(refused.value.problems) == {
        "scale: locked once the evaluation has started",
        "strategy: locked once the evaluation has started",
        "profile: locked once the evaluation has started",
        "reuse: locked once the evaluation has started",
    }
    evaluation.refresh_from_db()
    assert (evaluation.scale, evaluation.strategy) == ("graded", 1)


def test_names_guidelines_tags_and_metrics_stay_editable_after_a_pause():
    evaluation = evaluation_stop(evaluation=make_evaluation())

    evaluation = evaluation_update(
        evaluation=evaluation,
        name="Paused",
        scoring_guidelines="Judge **freshness**",
        metrics=[("ndcg", 10), ("ap", 10)],
    )

    assert evaluation.name == "Paused"
    assert list(evaluation.metrics.values_list("metric", "k")) == [("ndcg", 10), ("ap", 10)]


def test_a_metric_kept_in_an_edit_keeps_its_row_and_history():
    evaluation = make_evaluation(metrics=[("ndcg", 10), ("precision", 5)], start=False)
    kept = evaluation.metrics.get(metric="ndcg")

    evaluation_update(evaluation=evaluation, metrics=[("precision", 5), ("ndcg", 10)])

    assert evaluation.metrics.get(metric="ndcg").id == kept.id
    assert list(evaluation.metrics.values_list("metric", flat=True)) == ["precision", "ndcg"]


def test_editing_is_refused_while_active_or_starting(search_server):
    with pytest.raises(InvalidState, match="this one is active"):
        evaluation_update(evaluation=make_evaluation(), name="x")
    with pytest.raises(InvalidState, match="this one is starting"):
        evaluation_update(evaluation=starting(make_evaluation(start=False)), name="x")


def test_scale_cannot_change_under_imported_grades():
    evaluation = make_evaluation(start=False)
    slot_judge(slot_id=slots_of(evaluation)[0].id, giver=Giver.recorded(None, "trec"), grade=2)

    with pytest.raises(InvalidInput) as refused:
        evaluation_update(evaluation=evaluation, scale="binary")

    assert refused.value.problems == ["scale: cannot change while results have grades"]


def test_bad_settings_are_all_named_and_nothing_is_written():
    evaluation = make_evaluation(start=False)

    with pytest.raises(InvalidInput) as refused:
        evaluation_update(evaluation=evaluation, name=" ", strategy=2, metrics=[("nope", 5)])

    assert "name: required" in refused.value.problems
    assert "strategy: 2 must be 1 or 3" in refused.value.problems
    assert "metrics[0].metric: unknown metric 'nope'" in refused.value.problems
    evaluation.refresh_from_db()
    assert evaluation.strategy == 1 and evaluation.name.startswith("Evaluation")


def test_a_search_model_of_another_team_is_refused(search_server):
    evaluation = make_evaluation(start=False)
    foreign = make_search_model(make_team(), search_server.base_url)

    with pytest.raises(InvalidInput) as refused:
        evaluation_update(evaluation=evaluation, search_model=foreign)

    assert refused.value.problems == ["model: not a search model of this team"]


# --- transitions ----------------------------------------------------------------------


def test_only_a_pending_evaluation_starts():
    with pytest.raises(InvalidState, match="only a pending evaluation can start"):
        evaluation_start(evaluation=make_evaluation())


def test_pause_returns_an_active_evaluation_to_pending_and_keeps_its_grades():
    evaluation = make_evaluation()
    slot_judge(slot_id=slots_of(evaluation)[0].id, giver=Giver.recorded(None, "x"), grade=2)

    evaluation = evaluation_stop(evaluation=evaluation)

    assert evaluation.status == Status.PENDING
    assert FeedbackSlot.objects.filter(evaluation=evaluation, grade=2).count() == 1


def test_pause_stops_a_start_whose_keywords_run():
    evaluation = evaluation_stop(evaluation=starting(make_evaluation(start=False)))

    assert (evaluation.status, evaluation.fetching) == (Status.PENDING, False)


@pytest.mark.parametrize("state", ["pending", "finished"])
def test_pause_is_refused_when_nothing_runs(state):
    evaluation = make_evaluation(start=state == "finished")
    if state == "finished":
        evaluation = evaluation_finish_now(evaluation=evaluation)

    with pytest.raises(InvalidState, match="only an active or starting evaluation can pause"):
        evaluation_stop(evaluation=evaluation)


@pytest.mark.parametrize("state", ["active", "starting"])
def test_delete_is_refused_while_running(state):
    evaluation = make_evaluation(start=state == "active")
    if state == "starting":
        evaluation = starting(evaluation)

    with pytest.raises(InvalidState, match="pause the evaluation before deleting it"):
        evaluation_delete(evaluation=evaluation)

    assert Evaluation.objects.filter(id=evaluation.id).exists()


def test_deleting_the_team_baseline_leaves_the_team_without_one():
    evaluation = evaluation_finish_now(evaluation=make_evaluation())
    team_set_baseline(team=evaluation.team, evaluation=evaluation)

    evaluation_delete(evaluation=evaluation)

    evaluation.team.refresh_from_db()
    assert evaluation.team.baseline_evaluation is None


def test_archive_hides_a_pending_or_finished_evaluation_and_is_refused_while_running():
    finished = evaluation_finish_now(evaluation=make_evaluation())
    assert evaluation_archive(evaluation=finished).archived
    assert not evaluation_archive(evaluation=finished, archived=False).archived
    with pytest.raises(InvalidState, match="before archiving"):
        evaluation_archive(evaluation=make_evaluation())


def test_pin_and_unpin():
    evaluation = make_evaluation()
    assert evaluation_pin(evaluation=evaluation).pinned
    assert not evaluation_pin(evaluation=evaluation, pinned=False).pinned


def test_only_a_finished_evaluation_of_the_team_becomes_the_baseline():
    active = make_evaluation()
    with pytest.raises(InvalidState, match="only a finished evaluation can be the baseline"):
        team_set_baseline(team=active.team, evaluation=active)
    other_team = make_team()
    finished = evaluation_finish_now(evaluation=make_evaluation())
    with pytest.raises(InvalidInput):
        team_set_baseline(team=other_team, evaluation=finished)

    team_set_baseline(team=finished.team, evaluation=finished)
    finished.team.refresh_from_db()
    assert finished.team.baseline_evaluation == finished
    team_set_baseline(team=finished.team, evaluation=None)
    finished.team.refresh_from_db()
    assert finished.team.baseline_evaluation is None


# --- with a search model --------------------------------------------------------------


def model_evaluation(team, server, **settings):
    return evaluation_create_with_keywords(
        team=team,
        name="Shoes 7",
        metrics=[("precision", 5)],
        keywords=[" red shoes ", "red shoes", "", "blue hat"],
        search_model=make_search_model(team, server.base_url),
        **settings,
    )


def test_keywords_are_trimmed_and_deduplicated():
    team = make_team()
    evaluation = evaluation_create_with_keywords(
        team=team, name="k", metrics=[("ndcg", 5)], keywords=[" a ", "a", "", "b", "  "]
    )
    assert list(evaluation.keywords.values_list("text", flat=True)) == ["a", "b"]


def test_a_clone_of_a_model_evaluation_runs_its_keywords_again_when_started(
    search_server, django_capture_on_commit_callbacks
):
    team = make_team()
    evaluation = model_evaluation(team, search_server)
    with django_capture_on_commit_callbacks(execute=True):
        evaluation_start(evaluation=evaluation)

    copy = evaluation_clone(evaluation=evaluation)

    assert (copy.name, copy.status, copy.search_model_id) == (
        "Shoes 8",
        Status.PENDING,
        evaluation.search_model_id,
    )
    assert list(copy.keywords.values_list("text", flat=True)) == ["red shoes", "blue hat"]
    assert not Keyword.objects.filter(evaluation=copy, executed_at__isnull=False).exists()
    with django_capture_on_commit_callbacks(execute=True):
        evaluation_start(evaluation=copy)
    assert search_server.keyword_calls["red shoes"] == 2
    copy.refresh_from_db()
    assert copy.status == Status.ACTIVE and copy.total_slots == 10


def test_finishing_at_full_progress_auto_restarts_a_model_evaluation_with_fresh_results(
    search_server, django_capture_on_commit_callbacks
):
    team = make_team()
    grader = make_grader(team)
    evaluation = model_evaluation(team, search_server, auto_restart=True)
    with django_capture_on_commit_callbacks(execute=True):
        evaluation_start(evaluation=evaluation)

    with django_capture_on_commit_callbacks(execute=True):
        for slot in slots_of(evaluation):
            slot_judge(slot_id=slot.id, giver=Giver.recorded(grader), grade=1)

    evaluation.refresh_from_db()
    assert evaluation.status == Status.FINISHED
    restarted = Evaluation.objects.get(team=team, name="Shoes 8")
    assert restarted.status == Status.ACTIVE
    assert search_server.keyword_calls["blue hat"] == 2
    assert restarted.total_slots == 10


def test_a_keyword_too_long_for_its_column_is_refused_with_its_place():
    with pytest.raises(InvalidInput) as refused:
        evaluation_create_with_keywords(
            team=make_team(), name="k", metrics=[("ndcg", 5)], keywords=["ok", "x" * 501]
        )

    assert refused.value.problems == ["keywords[1]: at most 500 characters (got 501)"]
    assert not Evaluation.objects.filter(name="k").exists()


def test_a_model_evaluation_without_keywords_does_not_start(search_server):
    team = make_team()
    evaluation = evaluation_create_with_keywords(
        team=team,
        name="Empty",
        metrics=[("ndcg", 5)],
        keywords=[],
        search_model=make_search_model(team, search_server.base_url),
    )

    with pytest.raises(InvalidState, match="add keywords before starting"):
        evaluation_start(evaluation=evaluation)


def test_scale_cannot_change_under_a_leads_decision():
    from django.utils import timezone

    from apps.judging.models import SnapshotDecision

    evaluation = make_evaluation(start=False)
    snapshot = slots_of(evaluation)[0].snapshot
    SnapshotDecision.objects.create(
        snapshot=snapshot, evaluation=evaluation, grade=2, decided_at=timezone.now()
    )

    with pytest.raises(InvalidInput) as refused:
        evaluation_update(evaluation=evaluation, scale="binary")

    assert refused.value.problems == ["scale: cannot change while a lead's decisions exist"]
