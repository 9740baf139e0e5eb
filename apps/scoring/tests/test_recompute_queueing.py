"""When a grade queues a recompute: once per run of changes a keyword waits to have scored,
never once per grade, and never so that a grade is left out of the metrics."""

from unittest import mock

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from apps.evaluations.models import Keyword
from apps.judging.judgements import Giver, slot_judge
from apps.scoring import pipeline, services, tasks
from apps.scoring.loading import load_keywords_inputs
from apps.scoring.models import KeywordMetric
from tests.factories import make_evaluation, slots_of

# Real commits: tasks are queued when the grade's transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def queued():
    """The keyword ids the grades start a recompute for, and those a task out of rounds
    queues again; nothing runs."""
    calls: list[int] = []

    def start(*, evaluation_id, keyword_ids):
        calls.extend(keyword_ids)

    def queue_again(task, keyword_ids):
        calls.extend(keyword_ids)

    with (
        mock.patch.object(pipeline, "start_recompute", start),
        mock.patch.object(tasks, "queue_now", queue_again),
    ):
        yield calls


def grade(slot, value: int) -> None:
    slot_judge(slot_id=slot.id, giver=Giver.recorded(None, "import"), grade=value)


def cg(keyword_id: int) -> float | None:
    return KeywordMetric.objects.get(keyword_id=keyword_id, metric="cg", k=5).value


def test_grades_on_a_keyword_waiting_for_its_recompute_queue_one_task(queued):
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"q": 4})
    first, second, third, _fourth = slots_of(evaluation)

    grade(first, 3)
    grade(second, 2)
    grade(third, 1)

    keyword = Keyword.objects.get(id=first.keyword_id)
    assert queued == [keyword.id]
    assert keyword.needs_scoring and keyword.grade_version == 3


def test_the_one_task_scores_every_grade_that_waited(queued):
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"q": 3})
    first, second, third = slots_of(evaluation)
    for slot, value in zip([first, second, third], [3, 2, 1], strict=True):
        grade(slot, value)

    assert services.recompute_keywords(keyword_ids=[queued[0]])[0] == 1

    assert cg(first.keyword_id) == 6
    keyword = Keyword.objects.get(id=first.keyword_id)
    assert not keyword.needs_scoring and keyword.scored_version == 3


def test_a_grade_after_the_recompute_queues_a_new_task(queued):
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"q": 2})
    first, second = slots_of(evaluation)
    grade(first, 3)
    services.recompute_keywords(keyword_ids=[first.keyword_id])

    grade(second, 2)

    assert queued == [first.keyword_id, first.keyword_id]
    services.recompute_keywords(keyword_ids=[first.keyword_id])
    assert cg(first.keyword_id) == 5


def test_each_keyword_gets_its_own_task(queued):
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"a": 2, "b": 2})
    a1, a2, b1, b2 = slots_of(evaluation)

    for slot in (a1, b1, a2, b2):
        grade(slot, 1)

    assert queued == [a1.keyword_id, b1.keyword_id]


def test_a_grade_landing_while_the_worker_computes_queues_nothing_and_is_scored(queued):
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"q": 2})
    first, second = slots_of(evaluation)
    grade(first, 3)
    real_load = load_keywords_inputs
    landed = []

    def load_then_a_grade_lands(**kwargs):
        inputs = real_load(**kwargs)
        if not landed:
            landed.append(1)
            grade(second, 2)
        return inputs

    with mock.patch("apps.scoring.services.load_keywords_inputs", load_then_a_grade_lands):
        rounds = services.recompute_keywords(keyword_ids=[first.keyword_id])[0]

    assert queued == [first.keyword_id]  # the worker's task was the only one
    assert rounds == 2  # it went round again for the grade that landed
    assert cg(first.keyword_id) == 5
    assert not Keyword.objects.get(id=first.keyword_id).needs_scoring


def test_a_task_out_of_rounds_hands_a_keyword_still_being_graded_to_a_new_task(queued):
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"q": 4})
    slots = slots_of(evaluation)
    grade(slots[0], 1)
    real_load = load_keywords_inputs
    still_to_grade = list(slots[1:])

    def load_then_another_grade_lands(**kwargs):
        inputs = real_load(**kwargs)
        if still_to_grade:
            grade(still_to_grade.pop(0), 1)
        return inputs

    with (
        mock.patch.object(services, "MAX_ROUNDS_PER_TASK", 2),
        mock.patch("apps.scoring.services.load_keywords_inputs", load_then_another_grade_lands),
    ):
        rounds = tasks.recompute_keywords([slots[0].keyword_id])

    assert rounds == 2
    # The grades that landed queued nothing; the task queued its successor.
    assert queued == [slots[0].keyword_id, slots[0].keyword_id]
    assert Keyword.objects.get(id=slots[0].keyword_id).needs_scoring


def test_marking_a_keyword_reads_what_to_queue_in_the_same_statement(queued):
    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"q": 1})
    keyword_id = slots_of(evaluation)[0].keyword_id

    with CaptureQueriesContext(connection) as marking, transaction.atomic():
        pipeline.grades_changed(keyword_ids=[keyword_id])

    on_keywords = [q["sql"] for q in marking.captured_queries if "evaluations_keyword" in q["sql"]]
    assert len(on_keywords) == 1
    assert queued == [keyword_id]


def test_a_task_queued_under_the_name_one_keyword_once_had_still_runs(queued):
    from config.celery import app

    evaluation = make_evaluation(metrics=[("cg", 5)], keywords={"q": 1})
    (slot,) = slots_of(evaluation)
    grade(slot, 2)

    assert app.tasks["apps.scoring.tasks.recompute_keyword"](slot.keyword_id) == 1
    assert cg(slot.keyword_id) == 2
