"""The grade's one-statement path (slot_grade_at_once): it grades only when every rule of
slot_grade holds, and otherwise writes nothing and leaves the verdict to slot_grade."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import Membership
from apps.evaluations.models import Evaluation, FeedbackSlot, Keyword
from apps.judging.services import (
    slot_grade_and_claim_next,
    slot_grade_at_once,
    slot_record_grade,
)
from tests.factories import assign, make_evaluation, make_grader, make_team, slots_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def started():
    """A binary evaluation whose first snapshot has a grade; its second slot is held."""
    evaluation = make_evaluation(scale="binary", strategy=3, keywords={"q": 1})
    first, second, _third = slots_of(evaluation)
    slot_record_grade(slot_id=first.id, grade=1, grader_name="import")
    grader = make_grader(evaluation.team)
    assign(second, grader)
    second.refresh_from_db()
    assert second.snapshot_started and second.evaluation == evaluation  # read here, once
    return evaluation, second, grader


def grade_at_once(slot, grader, value, team_id=None) -> bool:
    return slot_grade_at_once(
        user=grader,
        team_id=team_id or slot.evaluation.team_id,
        slot_id=slot.id,
        grade=value,
        reason="clear",
    )


def test_it_grades_the_graders_started_slot_and_marks_the_keyword_in_one_statement(
    postgres, started
):
    _evaluation, slot, grader = started
    version = Keyword.objects.get(id=slot.keyword_id).grade_version

    with CaptureQueriesContext(connection) as grading:
        assert grade_at_once(slot, grader, 0)

    assert len(grading.captured_queries) == 1
    slot.refresh_from_db()
    assert (slot.grade, slot.reason) == (0, "clear")
    assert slot.graded_at is not None
    keyword = Keyword.objects.get(id=slot.keyword_id)
    assert keyword.needs_scoring and keyword.grade_version == version + 1


def refused_and_untouched(slot, grader, value, team_id=None) -> bool:
    version = Keyword.objects.get(id=slot.keyword_id).grade_version
    refused = not grade_at_once(slot, grader, value, team_id)
    stored = FeedbackSlot.objects.get(id=slot.id)
    keyword = Keyword.objects.get(id=slot.keyword_id)
    untouched = stored.grade is None and stored.graded_at is None
    return refused and untouched and keyword.grade_version == version


def test_it_refuses_another_graders_slot(postgres, started):
    evaluation, slot, _grader = started
    assert refused_and_untouched(slot, make_grader(evaluation.team), 1)


def test_it_refuses_a_slot_of_another_team(postgres, started):
    _evaluation, slot, grader = started
    assert refused_and_untouched(slot, grader, 1, team_id=make_team().id)


def test_it_refuses_a_slot_of_an_evaluation_not_open_for_grading(postgres, started):
    evaluation, slot, grader = started
    Evaluation.objects.filter(id=evaluation.id).update(status="finished")
    assert refused_and_untouched(slot, grader, 1)


@pytest.mark.parametrize("value", [2, -1, True, "1", None])
def test_it_refuses_a_grade_off_the_scale(postgres, started, value):
    _evaluation, slot, grader = started
    assert refused_and_untouched(slot, grader, value)


def test_the_first_grade_of_a_snapshot_starts_the_snapshot_in_the_same_statement(postgres):
    evaluation = make_evaluation(scale="binary", strategy=3, keywords={"q": 1})
    slot = slots_of(evaluation)[0]
    grader = make_grader(evaluation.team)
    assign(slot, grader)
    assert slot.evaluation == evaluation

    with CaptureQueriesContext(connection) as grading:
        assert grade_at_once(slot, grader, 1)

    # One statement locks and starts the snapshot's slots, writes the grade and marks
    # the keyword.
    assert len(grading.captured_queries) == 1
    stored = FeedbackSlot.objects.filter(snapshot_id=slot.snapshot_id).order_by("id")
    graded_and_started = [(s.grade, s.snapshot_started) for s in stored]
    assert graded_and_started == [(1, True), (None, True), (None, True)]
    assert Keyword.objects.get(id=slot.keyword_id).needs_scoring


def test_it_refuses_the_first_grade_of_a_snapshot_when_the_slot_is_anothers(postgres):
    evaluation = make_evaluation(scale="binary", strategy=3, keywords={"q": 1})
    slot = slots_of(evaluation)[0]
    assign(slot, make_grader(evaluation.team))
    assert slot.evaluation == evaluation

    assert refused_and_untouched(slot, make_grader(evaluation.team), 1)
    assert not FeedbackSlot.objects.filter(snapshot_started=True).exists()


def test_only_postgresql_takes_the_one_statement_path_sqlite_leaves_it_to_slot_grade(
    started,
):
    _evaluation, slot, grader = started
    with CaptureQueriesContext(connection) as grading:
        taken = grade_at_once(slot, grader, 1)
    if connection.vendor == "postgresql":
        assert taken and len(grading.captured_queries) == 1
    else:
        assert not taken and grading.captured_queries == []


# --- The grade and the next claim (the grading page's answer) ----------------------------


def claim_locks_held() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def plan_cache_mode() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('plan_cache_mode')")
        return cursor.fetchone()[0]


def test_a_grade_and_the_next_claim_take_the_claim_lock_once_and_let_it_go(postgres):
    evaluation = make_evaluation(scale="binary", strategy=3, keywords={"q": 2})
    first, slot, *_others = slots_of(evaluation)
    slot_record_grade(slot_id=first.id, grade=1, grader_name="import")
    grader = make_grader(evaluation.team)
    assign(slot, grader)
    membership = Membership.objects.select_related("user").get(user=grader, team=evaluation.team)

    with CaptureQueriesContext(connection) as answering:
        given = slot_grade_and_claim_next(membership=membership, slot_id=slot.id, grade=1)

    # The grade with the lock, one claim attempt (in a savepoint here, inside the
    # test's transaction), the lock's release.
    assert len(answering.captured_queries) == 5
    assert FeedbackSlot.objects.get(id=slot.id).grade == 1
    assert given is not None and given.slot is not None and given.slot.id != slot.id
    assert given.slot.grader_id == grader.id and given.grades_today == 1
    assert claim_locks_held() == 0 and plan_cache_mode() == "auto"


def test_a_grade_the_rules_refuse_writes_nothing_and_lets_the_lock_go(postgres, started):
    evaluation, slot, _grader = started
    other = Membership.objects.select_related("user").get(
        user=make_grader(evaluation.team), team=evaluation.team
    )

    assert slot_grade_and_claim_next(membership=other, slot_id=slot.id, grade=1) is None

    assert FeedbackSlot.objects.get(id=slot.id).grade is None
    assert not FeedbackSlot.objects.filter(grader=other.user).exists()
    assert claim_locks_held() == 0 and plan_cache_mode() == "auto"


def test_a_leads_queue_that_the_grade_finished_ends_in_the_empty_state(postgres, started):
    evaluation, slot, grader = started
    membership = Membership.objects.select_related("user").get(user=grader, team=evaluation.team)
    Evaluation.objects.filter(id=evaluation.id).update(status="finished")
    evaluation.refresh_from_db()

    given = slot_grade_and_claim_next(
        membership=membership, slot_id=slot.id, grade=1, evaluation=evaluation
    )

    assert given is None  # a finished evaluation's slot is not graded
    Evaluation.objects.filter(id=evaluation.id).update(status="active")
    given = slot_grade_and_claim_next(
        membership=membership, slot_id=slot.id, grade=1, evaluation=evaluation
    )
    assert given is not None and given.slot is None  # the queue's evaluation read as closed
    assert claim_locks_held() == 0
