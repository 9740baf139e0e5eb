"""The grade-to-metrics pipeline on the test database, tasks running in-process."""

import math
from unittest import mock

import pytest

from apps.core.errors import InvalidInput, InvalidState, NotAllowed
from apps.evaluations.models import Evaluation, EvaluationMetric, Keyword
from apps.judging.judgements import Action, Giver, slot_judge
from apps.scoring import pipeline, services
from apps.scoring.loading import load_keyword_inputs, load_keywords_inputs
from apps.scoring.models import KeywordMetric
from apps.scoring.store import store_keyword_score
from tests.factories import assign, make_evaluation, make_grader, slots_of

# Real commits: the pipeline runs on commit, as it does in production.
pytestmark = pytest.mark.django_db(transaction=True)


def grade_all(slots, grades):
    for slot, grade in zip(slots, grades, strict=True):
        if grade is not None:
            slot_judge(slot_id=slot.id, giver=Giver.recorded(None, "import"), grade=grade)


def keyword_value(keyword_text, metric, k):
    """The stored value; None when it is null or was never computed (nothing graded)."""
    row = KeywordMetric.objects.filter(keyword__text=keyword_text, metric=metric, k=k).first()
    return None if row is None else row.value


def evaluation_value(evaluation, metric, k):
    return EvaluationMetric.objects.get(evaluation=evaluation, metric=metric, k=k).value


def test_grades_turn_into_the_worked_example_metrics_of_the_keyword():
    evaluation = make_evaluation(
        metrics=[("cg", 5), ("dcg", 5), ("ndcg", 5), ("precision", 5)],
        keywords={"red shoes": 5},
    )
    grade_all(slots_of(evaluation), [3, 2, 3, 0, 1])

    assert keyword_value("red shoes", "cg", 5) == pytest.approx(9)
    assert keyword_value("red shoes", "dcg", 5) == pytest.approx(6.1487, abs=5e-5)
    assert keyword_value("red shoes", "ndcg", 5) == pytest.approx(0.9724, abs=5e-5)
    # Graded to binary by the default rules (0 -> 0, 1..3 -> 1): four of five relevant.
    assert keyword_value("red shoes", "precision", 5) == pytest.approx(0.8)
    assert evaluation_value(evaluation, "dcg", 5) == pytest.approx(6.1487, abs=5e-5)


def test_evaluation_mean_is_map_over_the_worked_example_keywords():
    evaluation = make_evaluation(
        scale="binary", metrics=[("ap", 5)], keywords={"a": 5, "b": 5, "c": 5, "ungraded": 5}
    )
    grade_all(slots_of(evaluation, "a"), [1, 0, 1, 0, 1])
    grade_all(slots_of(evaluation, "b"), [1, 1, 0, 0, 1])
    grade_all(slots_of(evaluation, "c"), [0, 0, 1, 1, 1])

    assert keyword_value("a", "ap", 5) == pytest.approx(0.7556, abs=5e-5)
    assert keyword_value("ungraded", "ap", 5) is None
    # The ungraded keyword is left out of the mean, not counted as zero.
    assert evaluation_value(evaluation, "ap", 5) == pytest.approx(0.7, abs=5e-5)


def test_progress_counts_slots_not_snapshots():
    evaluation = make_evaluation(strategy=3, keywords={"q": 1})
    grade_all(slots_of(evaluation), [2, 1, None])

    evaluation.refresh_from_db()
    assert (evaluation.graded_slots, evaluation.total_slots) == (2, 3)
    assert evaluation.progress == pytest.approx(0.6667, abs=5e-5)


def test_a_graded_evaluation_votes_binary_metrics_after_transforming_each_grade():
    evaluation = make_evaluation(strategy=3, metrics=[("precision", 1)], keywords={"q": 1})
    grade_all(slots_of(evaluation), [1, 0, 2])

    assert keyword_value("q", "precision", 1) == 1.0


def test_the_snapshot_keeps_its_stage_one_value_on_the_native_scale():
    evaluation = make_evaluation(strategy=3, keywords={"q": 1})
    grade_all(slots_of(evaluation), [3, 2, None])

    assert evaluation.keywords.get().snapshots.get().value == pytest.approx(2.5)


def test_evaluation_finishes_by_itself_when_every_slot_is_graded():
    evaluation = make_evaluation(keywords={"q": 2})
    grade_all(slots_of(evaluation), [1, 2])

    evaluation.refresh_from_db()
    assert evaluation.status == "finished"
    assert evaluation.finished_at is not None
    assert evaluation.progress == 1.0


def test_auto_restart_starts_a_copy_with_the_trailing_number_incremented():
    evaluation = make_evaluation(keywords={"q": 2}, auto_restart=True)
    Evaluation.objects.filter(id=evaluation.id).update(name="Holiday set 4")
    grade_all(slots_of(evaluation), [1, 2])

    copy = Evaluation.objects.exclude(id=evaluation.id).get(team=evaluation.team)
    assert copy.name == "Holiday set 5"
    assert copy.status == "active"
    assert copy.total_slots == 2 and copy.graded_slots == 0


def test_a_grader_grades_their_own_slot_and_may_change_it():
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"q": 2})
    grader = make_grader(evaluation.team)
    slot = slots_of(evaluation)[0]
    assign(slot, grader)

    slot_judge(slot_id=slot.id, giver=Giver.grader(grader), grade=3)
    assert keyword_value("q", "cg", 5) == 3
    slot_judge(slot_id=slot.id, giver=Giver.grader(grader), grade=1, reason="on second look")
    assert keyword_value("q", "cg", 5) == 1


def test_grading_refuses_another_graders_slot_a_bad_grade_and_a_closed_evaluation():
    evaluation = make_evaluation(scale="binary", keywords={"q": 2})
    grader, other = make_grader(evaluation.team), make_grader(evaluation.team)
    first, second = slots_of(evaluation)
    assign(first, grader)

    with pytest.raises(NotAllowed):
        slot_judge(slot_id=first.id, giver=Giver.grader(other), grade=1)
    with pytest.raises(InvalidInput) as error:
        slot_judge(slot_id=first.id, giver=Giver.grader(grader), grade=2)
    assert error.value.field == "grade"
    assert "not a binary grade" in error.value.message
    Evaluation.objects.filter(id=evaluation.id).update(status="finished")
    with pytest.raises(InvalidState):
        slot_judge(slot_id=first.id, giver=Giver.grader(grader), grade=1)
    first.refresh_from_db()
    assert first.grade is None


def test_a_leads_reset_clears_the_slot_and_the_metrics_follow():
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"q": 2})
    first, second = slots_of(evaluation)
    grade_all([first], [3])

    slot_judge(slot_id=first.id, giver=Giver.lead(), action=Action.CLEAR)

    first.refresh_from_db()
    assert first.grade is None and first.grader is None
    assert keyword_value("q", "cg", 5) is None
    evaluation.refresh_from_db()
    assert evaluation.graded_slots == 0


def test_a_grade_saved_during_a_recomputation_leads_to_another_run():
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"q": 2})
    first, second = slots_of(evaluation)
    with mock.patch.object(pipeline, "start_recompute"):
        slot_judge(slot_id=first.id, giver=Giver.recorded(), grade=3)

    real_load = load_keywords_inputs
    calls = []

    def load_then_a_grader_saves(**kwargs):
        inputs = real_load(**kwargs)
        if not calls:  # the second grade lands after the worker read the slots
            calls.append(1)
            slot_judge(slot_id=second.id, giver=Giver.recorded(), grade=2)
        return inputs

    with mock.patch("apps.scoring.services.load_keywords_inputs", load_then_a_grader_saves):
        rounds = services.recompute_keywords(keyword_ids=[first.keyword_id])[0]

    assert rounds == 2
    assert keyword_value("q", "cg", 5) == 5
    assert not Keyword.objects.get(id=first.keyword_id).needs_scoring


def test_a_stale_result_never_overwrites_a_fresher_one():
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"q": 2})
    first, second = slots_of(evaluation)
    grade_all([first], [3])
    stale = load_keyword_inputs(keyword_id=first.keyword_id)
    grade_all([second], [2])  # recomputed at once: CG 5 stored
    assert keyword_value("q", "cg", 5) == 5

    still_marked = store_keyword_score(inputs=stale, scored=stale.score())

    assert not still_marked
    assert keyword_value("q", "cg", 5) == 5
    assert evaluation_value(evaluation, "cg", 5) == 5


def test_the_sweep_recomputes_keywords_whose_task_never_ran():
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"a": 2, "b": 2})
    with mock.patch.object(pipeline, "start_recompute"):
        grade_all(slots_of(evaluation), [3, 2, 1, 0])
    assert Keyword.objects.filter(needs_scoring=True).count() == 2
    assert evaluation_value(evaluation, "cg", 5) is None

    assert services.recompute_marked() == 2

    assert keyword_value("a", "cg", 5) == 5
    assert evaluation_value(evaluation, "cg", 5) == 3
    assert not Keyword.objects.filter(needs_scoring=True).exists()


def test_the_sweep_takes_over_a_keyword_whose_worker_died_holding_the_lease():
    from datetime import timedelta

    from django.utils import timezone

    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"a": 1})
    with mock.patch.object(pipeline, "start_recompute"):
        grade_all(slots_of(evaluation), [2])
    keyword = Keyword.objects.get()
    Keyword.objects.filter(id=keyword.id).update(
        scoring_lease_until=timezone.now() + timedelta(seconds=30)
    )
    assert services.recompute_marked() == 0  # the lease is still live

    Keyword.objects.filter(id=keyword.id).update(
        scoring_lease_until=timezone.now() - timedelta(seconds=1)
    )
    assert services.recompute_marked() == 1
    assert keyword_value("a", "cg", 5) == 2


def test_means_kept_incrementally_are_made_exact_by_the_sweep():
    keywords = {f"q{i}": 3 for i in range(7)}
    evaluation = make_evaluation(metrics=[("ndcg", 3)], keywords=keywords)
    slots = slots_of(evaluation)
    grade_all(slots, [(i * 7) % 4 for i in range(len(slots) - 1)] + [None])
    for slot, grade in zip(slots[:6], [0, 3, 1, 2, 3, 0], strict=True):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(), grade=grade)
    metric = EvaluationMetric.objects.get(evaluation=evaluation)
    assert not metric.means_exact

    services.recompute_marked()

    metric.refresh_from_db()
    values = list(
        KeywordMetric.objects.filter(evaluation=evaluation, value__isnull=False).values_list(
            "value", flat=True
        )
    )
    assert metric.means_exact
    assert metric.value == math.fsum(values) / len(values)


def test_gmap_is_exp_of_the_mean_log_ap_grade_by_grade_and_once_made_exact():
    evaluation = make_evaluation(
        scale="binary", metrics=[("gm_ap", 0), ("ap", 0)], keywords={"a": 3, "b": 3, "c": 2}
    )
    grade_all(slots_of(evaluation, "a"), [1, 0, 1])  # AP (1 + 2/3) / 2
    grade_all(slots_of(evaluation, "b"), [0, 0, 0])  # AP 0: log(0.00001)
    grade_all(slots_of(evaluation, "c"), [0, 1])  # AP 1/2

    logs = [math.log((1 + 2 / 3) / 2), math.log(0.00001), math.log(0.5)]
    assert keyword_value("a", "gm_ap", 0) == pytest.approx(logs[0])
    assert keyword_value("b", "gm_ap", 0) == pytest.approx(logs[1])
    gmap = math.exp(math.fsum(logs) / 3)
    # Kept grade by grade: the sum of the logs, the count, exp of their mean.
    assert evaluation_value(evaluation, "gm_ap", 0) == pytest.approx(gmap, rel=1e-12)
    # One keyword at 0 pulls GMAP far below the mean of AP.
    assert evaluation_value(evaluation, "ap", 0) == pytest.approx((5 / 6 + 0 + 0.5) / 3)
    assert gmap < 0.03

    services.recompute_marked()

    metric = EvaluationMetric.objects.get(evaluation=evaluation, metric="gm_ap")
    assert metric.means_exact and metric.value == math.exp(math.fsum(logs) / 3)


def test_a_full_recompute_gives_the_same_values_as_grade_by_grade():
    keywords = {f"q{i}": 4 for i in range(5)}
    evaluation = make_evaluation(
        strategy=3, metrics=[("ndcg", 3), ("err", 4), ("precision", 2)], keywords=keywords
    )
    slots = slots_of(evaluation)
    grade_all(slots, [None if i % 5 == 0 else (i * 3) % 4 for i in range(len(slots))])
    before = dict(
        KeywordMetric.objects.values_list("keyword__text", "metric", "k")
        .annotate()
        .values_list("id", "value")
    )
    means_before = dict(EvaluationMetric.objects.values_list("metric", "value"))
    KeywordMetric.objects.all().delete()
    Keyword.objects.update(scored_version=0, graded_slots=0)
    Evaluation.objects.filter(id=evaluation.id).update(graded_slots=0, progress=0)

    services.recompute_evaluation(evaluation_id=evaluation.id)

    after = dict(KeywordMetric.objects.values_list("id", "value"))
    assert sorted(v for v in after.values() if v is not None) == pytest.approx(
        sorted(v for v in before.values() if v is not None)
    )
    assert dict(EvaluationMetric.objects.values_list("metric", "value")) == pytest.approx(
        means_before
    )
    evaluation.refresh_from_db()
    assert evaluation.graded_slots == sum(1 for i in range(len(slots)) if i % 5)


def test_each_recompute_records_this_minutes_history_point():
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"q": 3})
    grade_all(slots_of(evaluation)[:2], [3, 1])

    metric = EvaluationMetric.objects.get(evaluation=evaluation)
    points = list(metric.history.all())
    assert len(points) == 1  # both grades fell in the same minute
    assert points[0].value == 4
    assert points[0].progress == pytest.approx(2 / 3)


def test_keywords_scored_together_move_the_means_as_scored_one_by_one():
    evaluation = make_evaluation(
        metrics=[("cg", 5), ("ndcg", 5)], keywords={"a": 2, "b": 2, "c": 2, "d": 2}
    )
    with mock.patch.object(pipeline, "start_recompute"):
        grade_all(slots_of(evaluation), [3, 2, 1, 0, 0, 0, 2, None])
    keyword_ids = list(Keyword.objects.filter(evaluation=evaluation).values_list("id", flat=True))

    assert services.recompute_keywords(keyword_ids=keyword_ids[:1]) == (1, 4)  # all along

    assert [keyword_value(text, "cg", 5) for text in "abcd"] == [5, 1, 0, 2]
    assert evaluation_value(evaluation, "cg", 5) == pytest.approx((5 + 1 + 0 + 2) / 4)
    metric = EvaluationMetric.objects.get(evaluation=evaluation, metric="cg", k=5)
    assert (metric.value_count, metric.value_sum) == (4, pytest.approx(8.0))
    evaluation.refresh_from_db()
    assert evaluation.graded_slots == 7
    assert not Keyword.objects.filter(needs_scoring=True).exists()


def test_of_keywords_scored_together_a_stale_one_is_left_marked_and_the_rest_stored():
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"a": 2, "b": 2})
    a1, a2, b1, _b2 = slots_of(evaluation)
    with mock.patch.object(pipeline, "start_recompute"):
        grade_all([a1, b1], [3, 2])
    real_load = load_keywords_inputs

    def load_then_a_grade_lands(**kwargs):
        inputs = real_load(**kwargs)
        with mock.patch.object(pipeline, "start_recompute"):
            grade_all([a2], [1])  # after a's slots were read
        return inputs

    with mock.patch("apps.scoring.services.load_keywords_inputs", load_then_a_grade_lands):
        stale_round = services._recompute_claimed(services._claim([a1.keyword_id, b1.keyword_id]))

    assert stale_round == {a1.keyword_id}  # still marked: graded after it was read
    assert keyword_value("a", "cg", 5) == 3 and keyword_value("b", "cg", 5) == 2
    assert services.recompute_keywords(keyword_ids=[a1.keyword_id])[0] == 1
    assert keyword_value("a", "cg", 5) == 4
    assert evaluation_value(evaluation, "cg", 5) == pytest.approx((4 + 2) / 2)
