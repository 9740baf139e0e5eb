"""Reuse strategies: earlier grades of the same team and scale fill a new evaluation."""

import pytest
from django.utils import timezone

from apps.evaluations.models import EvaluationMetric, FeedbackSlot, Status
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.steps import evaluation_finish_now, evaluation_start
from tests.factories import make_evaluation, make_grader, make_team, slots_of

pytestmark = pytest.mark.django_db


def graded_evaluation(team, graders_and_grades, *, keywords=None, scale="graded", finish=True):
    """A finished evaluation whose first result ("red shoes-doc-1") got these grades."""
    evaluation = make_evaluation(
        team=team, scale=scale, strategy=3, keywords=keywords or {"red shoes": 2}
    )
    first_three = slots_of(evaluation)[:3]
    for slot, (grader, grade) in zip(first_three, graders_and_grades, strict=False):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(grader), grade=grade)
    if finish:
        evaluation_finish_now(evaluation=evaluation)
    return evaluation


def new_evaluation(team, *, reuse="keyword_doc", strategy=3, keywords=None, scale="graded"):
    evaluation = make_evaluation(
        team=team,
        scale=scale,
        strategy=strategy,
        reuse=reuse,
        keywords=keywords or {"red shoes": 2},
        start=False,
    )
    return evaluation


def start(evaluation, capture):
    with capture(execute=True):
        evaluation_start(evaluation=evaluation)
    evaluation.refresh_from_db()
    return evaluation


def reused_grades(evaluation):
    return sorted(
        (s.snapshot.doc_id, s.grader.email if s.grader else s.external_grader, s.grade)
        for s in FeedbackSlot.objects.filter(
            evaluation=evaluation, grade__isnull=False
        ).select_related("snapshot", "grader")
    )


def test_same_keyword_and_document_copies_each_graders_grade_and_the_metrics_follow(
    django_capture_on_commit_callbacks,
):
    team = make_team()
    ann, bob = make_grader(team, "ann@example.test"), make_grader(team, "bob@example.test")
    graded_evaluation(team, [(ann, 3), (bob, 2)])
    evaluation = new_evaluation(team)

    evaluation = start(evaluation, django_capture_on_commit_callbacks)

    assert reused_grades(evaluation) == [
        ("red shoes-doc-1", "ann@example.test", 3),
        ("red shoes-doc-1", "bob@example.test", 2),
    ]
    copied = FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=False)
    assert all(slot.reused for slot in copied)
    assert evaluation.graded_slots == 2
    assert EvaluationMetric.objects.get(evaluation=evaluation, metric="ndcg").value is not None


def test_a_grader_who_graded_the_document_twice_fills_one_slot_with_the_latest_grade(
    django_capture_on_commit_callbacks,
):
    team = make_team()
    ann = make_grader(team, "ann@example.test")
    graded_evaluation(team, [(ann, 1)])
    graded_evaluation(team, [(ann, 3)])
    evaluation = new_evaluation(team)

    evaluation = start(evaluation, django_capture_on_commit_callbacks)

    assert reused_grades(evaluation) == [("red shoes-doc-1", "ann@example.test", 3)]


def test_never_more_grades_than_the_strategy_has_slots(django_capture_on_commit_callbacks):
    team = make_team()
    graders = [make_grader(team) for _ in range(3)]
    graded_evaluation(team, [(g, 2) for g in graders])
    evaluation = new_evaluation(team, strategy=1)

    evaluation = start(evaluation, django_capture_on_commit_callbacks)

    assert len(reused_grades(evaluation)) == 1


def test_the_position_strategy_reuses_only_a_document_at_the_same_position(
    django_capture_on_commit_callbacks,
):
    team = make_team()
    ann = make_grader(team)
    graded_evaluation(team, [(ann, 3)])  # red shoes-doc-1 at position 1
    evaluation = new_evaluation(team, reuse="keyword_doc_position")
    # Swap the documents of positions 1 and 2 in the new evaluation.
    first, second = evaluation.keywords.get().snapshots.order_by("position")
    first.doc_id, second.doc_id = "tmp", "red shoes-doc-1"
    first.save()
    second.save()
    first.doc_id = "red shoes-doc-2"
    first.save()

    evaluation = start(evaluation, django_capture_on_commit_callbacks)

    assert reused_grades(evaluation) == []


@pytest.mark.parametrize(
    "earlier",
    ["another scale", "another team", "not finished", "another keyword"],
)
def test_grades_are_not_reused_from(earlier, django_capture_on_commit_callbacks):
    team = make_team()
    source_team = make_team() if earlier == "another team" else team
    grader = make_grader(source_team)
    graded_evaluation(
        source_team,
        [(grader, 1)],
        scale="binary" if earlier == "another scale" else "graded",
        finish=earlier != "not finished",
        keywords={"blue hat": 2} if earlier == "another keyword" else None,
    )
    evaluation = new_evaluation(team)

    evaluation = start(evaluation, django_capture_on_commit_callbacks)

    assert reused_grades(evaluation) == []


def test_no_reuse_copies_nothing(django_capture_on_commit_callbacks):
    team = make_team()
    graded_evaluation(team, [(make_grader(team), 3)])

    evaluation = start(new_evaluation(team, reuse="none"), django_capture_on_commit_callbacks)

    assert reused_grades(evaluation) == []


def test_a_resumed_evaluation_never_gives_a_grader_a_second_slot_of_a_snapshot(
    django_capture_on_commit_callbacks,
):
    team = make_team()
    ann = make_grader(team, "ann@example.test")
    evaluation = new_evaluation(team)
    evaluation = start(evaluation, django_capture_on_commit_callbacks)
    # Ann grades the first result here, then the evaluation is paused...
    slot_judge(slot_id=slots_of(evaluation)[0].id, giver=Giver.recorded(ann), grade=1)
    evaluation.status = Status.PENDING
    evaluation.save()
    # ...while an evaluation in which she graded it too finishes.
    graded_evaluation(team, [(ann, 3)])

    evaluation = start(evaluation, django_capture_on_commit_callbacks)

    snapshot_slots = FeedbackSlot.objects.filter(
        evaluation=evaluation, snapshot__doc_id="red shoes-doc-1"
    )
    assert [s.grader.email for s in snapshot_slots if s.grader] == ["ann@example.test"]
    assert snapshot_slots.filter(grade__isnull=False).count() == 1
    assert evaluation.started_at <= timezone.now()
