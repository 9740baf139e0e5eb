"""A judge's run, step by step, against a real local server speaking the OpenAI protocol:
every result ends graded once through the grade writer, or listed as failed with why;
rate limits and outages wait, a wrong key pauses, budgets stop, a dead step's results
come back."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.core.errors import NotFound
from apps.evaluations.models import FeedbackSlot, Snapshot
from apps.judges import asking, claims, controls, runs
from apps.judges.models import JudgeCall, JudgeFailure, JudgeGrade, RunStatus
from apps.judges.services import judge_create
from tests.factories import make_evaluation, make_team

from .fake_provider import FakeProvider, Reply

pytestmark = pytest.mark.django_db

API_KEY = "not-a-real-key-run"


@pytest.fixture(scope="module")
def server():
    with FakeProvider() as fake:
        yield fake


def judge_of(evaluation, server):
    """A judge of the evaluation's team talking to the local server, with prices."""
    return judge_create(
        team=evaluation.team,
        name="GPT",
        protocol="openai",
        base_url=server.openai_url,
        model_name="gpt-test",
        api_key=API_KEY,
        price_input_per_million="1.00",
        price_output_per_million="2.00",
    )


@pytest.fixture
def setup(server, settings):
    """An active graded evaluation (red shoes: 3 results, blue hat: 2; one slot each) and
    a judge of its team talking to the local server."""
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    evaluation = make_evaluation(
        scale="graded", strategy=1, keywords={"red shoes": 3, "blue hat": 2}
    )
    judge = judge_of(evaluation, server)
    run = controls.run_start(judge=judge, evaluation=evaluation)
    return evaluation, judge, run


def answer(*grades, ids=None) -> Reply:
    ids = ids or [f"r{n}" for n in range(1, len(grades) + 1)]
    judgements = [
        {"id": i, "grade": g, "reason": f"reason {i}"} for i, g in zip(ids, grades, strict=True)
    ]
    return Reply.openai(json.dumps({"judgements": judgements}), tokens=(1000, 100))


def judged(evaluation, judge) -> dict[int, int]:
    """The judge's grades by slot id."""
    slots = FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user)
    return dict(slots.exclude(grade=None).values_list("id", "grade"))


def test_a_step_grades_one_keywords_results_through_the_grade_writer(server, setup):
    evaluation, judge, run = setup
    server.script(answer(3, 1, 0))
    assert runs.run_step(run_id=run.id) == runs.GO
    slots = FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user).order_by(
        "snapshot_position"
    )
    assert [s.grade for s in slots] == [3, 1, 0]
    assert [s.reason for s in slots] == ["reason r1", "reason r2", "reason r3"]
    assert {s.keyword.text for s in slots} == {"red shoes"}
    grade = JudgeGrade.objects.get(slot=slots[0])
    assert (grade.model_name, grade.prompt_version) == ("gpt-test", "default-graded-v2")
    run.refresh_from_db()
    assert (run.calls, run.graded, run.failed) == (1, 3, 0)
    assert (run.input_tokens, run.output_tokens) == (1000, 100)
    assert str(run.cost) == "0.001200"  # 1000 x 1.00 + 100 x 2.00 per million
    (call,) = JudgeCall.objects.filter(run=run)
    assert "Keyword: red shoes" in call.user_prompt and call.answer
    assert call.parsed["r1"] == {"grade": 3, "reason": "reason r1"}
    assert API_KEY not in json.dumps(
        [call.system_prompt, call.user_prompt, call.answer, call.error]
    )
    sent = server.requests[0].body
    assert sent["model"] == "gpt-test"


def test_steps_go_on_until_nothing_is_left_and_each_result_is_graded_once(server, setup):
    evaluation, judge, run = setup
    server.script(answer(3, 1, 0), answer(2, 2))
    assert runs.run_step(run_id=run.id) == runs.GO
    assert runs.run_step(run_id=run.id) == runs.GO
    final = runs.run_step(run_id=run.id)
    assert final.action == "stop" and "nothing left" in final.why
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED and run.graded == 5
    assert len(judged(evaluation, judge)) == 5
    assert JudgeGrade.objects.filter(run=run).count() == 5
    assert len(server.requests) == 2


def test_a_grade_off_the_scale_is_listed_as_failed_and_comes_back_when_retried(server, setup):
    evaluation, judge, run = setup
    server.script(answer(3, 9, 0))
    runs.run_step(run_id=run.id)
    failure = JudgeFailure.objects.get(run=run)
    assert failure.open and "grade 9 is not a graded grade (0, 1, 2, 3)" in failure.reason
    assert failure.slot.grader_id is None  # given back
    run.refresh_from_db()
    assert (run.graded, run.failed) == (2, 1)
    # The next steps leave it alone: blue hat, then nothing.
    server.script(answer(1, 1))
    runs.run_step(run_id=run.id)
    assert runs.run_step(run_id=run.id).action == "stop"
    # Retried: offered again, and graded.
    assert controls.failures_retry(run=run) == 1
    controls.run_resume(run=run)
    server.script(answer(2))
    assert runs.run_step(run_id=run.id) == runs.GO
    failure.slot.refresh_from_db()
    assert failure.slot.grade == 2 and failure.slot.grader_id == judge.user_id


def test_an_answer_without_json_fails_each_result_with_what_came_back(server, setup):
    _evaluation, _judge, run = setup
    server.script(Reply.openai("I cannot judge these results."))
    assert runs.run_step(run_id=run.id) == runs.GO
    reasons = list(JudgeFailure.objects.filter(run=run).values_list("reason", flat=True))
    assert len(reasons) == 3
    assert all("I cannot judge these results." in reason for reason in reasons)


def test_a_rate_limit_waits_as_told_and_gives_the_results_back(server, setup):
    evaluation, judge, run = setup
    server.script(Reply.error(429, "slow down", **{"retry-after": "7"}))
    step = runs.run_step(run_id=run.id)
    assert (step.action, step.seconds) == ("wait", 7.0)
    assert not FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user).exists()
    again = runs.run_step(run_id=run.id)  # before the wait is over: no call
    assert again.action == "wait" and 0 < again.seconds <= 7
    assert len(server.requests) == 1
    assert not JudgeFailure.objects.exists()


def test_outages_back_off_doubling(server, setup):
    _evaluation, _judge, run = setup
    server.script(Reply.error(503, "overloaded"))
    waits = []
    for _ in range(3):
        waits.append(runs.run_step(run_id=run.id).seconds)
        run.refresh_from_db()
        run.wait_until = timezone.now() - timedelta(seconds=1)
        run.save(update_fields=["wait_until"])
    assert waits == [1.0, 2.0, 4.0]


def test_a_rejected_key_pauses_the_run_with_the_reason(server, setup):
    _evaluation, _judge, run = setup
    server.script(Reply.error(401, "Incorrect API key"))
    step = runs.run_step(run_id=run.id)
    assert step.action == "stop" and "rejected" in step.why
    run.refresh_from_db()
    assert run.status == RunStatus.PAUSED and "Incorrect API key" in run.note
    assert API_KEY not in run.note
    assert not JudgeFailure.objects.exists()


def test_the_call_budget_stops_the_run(server, setup):
    _evaluation, judge, run = setup
    judge.budget_calls = 1
    judge.save()
    server.script(answer(3, 1, 0))
    runs.run_step(run_id=run.id)
    step = runs.run_step(run_id=run.id)
    assert step.action == "stop" and "budget of 1 calls" in step.why
    run.refresh_from_db()
    assert run.status == RunStatus.BUDGET_REACHED


def test_results_held_by_a_step_that_died_come_back_after_their_lock(server, setup, settings):
    evaluation, judge, run = setup
    [held] = claims.claim(run, 10)  # a step claimed, then its worker died
    assert len(held) == 3
    FeedbackSlot.objects.filter(id__in=[s.id for s in held]).update(
        assigned_at=timezone.now() - timedelta(seconds=settings.SLOT_LOCK_SECONDS + 1)
    )
    server.script(answer(3, 1, 0))
    assert runs.run_step(run_id=run.id) == runs.GO
    assert sorted(judged(evaluation, judge).values()) == [0, 1, 3]
    assert JudgeGrade.objects.filter(run=run).count() == 3


def test_pause_resume_and_cancel(server, setup):
    evaluation, judge, run = setup
    controls.run_pause(run=run)
    assert runs.run_step(run_id=run.id).action == "stop"
    controls.run_resume(run=run)
    claims.claim(run, 10)
    controls.run_cancel(run=run)
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert not FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user).exists()


def test_a_judge_cannot_run_on_another_teams_evaluation(setup):
    _evaluation, judge, _run = setup
    theirs = make_evaluation(team=make_team(), keywords={"q": 1})
    with pytest.raises(NotFound):
        controls.run_start(judge=judge, evaluation=theirs)


def test_lanes_run_the_steps_until_nothing_is_left(
    server, setup, django_capture_on_commit_callbacks
):
    """Without a broker the lanes run in-process: starting a run grades everything."""
    evaluation, judge, _run = setup
    other = make_evaluation(team=evaluation.team, scale="graded", keywords={"q": 2})
    server.script(answer(1, 2))
    with django_capture_on_commit_callbacks(execute=True):
        run = controls.run_start(judge=judge, evaluation=other)
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED and run.graded == 2
    assert len(judged(other, judge)) == 2


def test_lanes_of_an_older_start_end_at_their_next_step(server, setup):
    from apps.judges.tasks import judge_lane

    _evaluation, _judge, run = setup
    run.refresh_from_db()
    old = run.lane_epoch
    controls.run_pause(run=run)
    controls.run_resume(run=run)
    run.refresh_from_db()
    assert run.lane_epoch == old + 1
    assert judge_lane.apply(args=[run.id, old]).get().startswith("ended")


def test_a_judgement_already_paid_for_is_reused_and_a_changed_document_is_asked_again(
    server, setup
):
    evaluation, judge, run = setup
    server.script(answer(3, 1, 0), answer(2, 2))
    runs.run_step(run_id=run.id)
    runs.run_step(run_id=run.id)
    assert len(server.requests) == 2

    again = make_evaluation(
        team=evaluation.team, scale="graded", strategy=1, keywords={"red shoes": 3}
    )
    # The second result's document changed since: a new key, asked again alone.
    Snapshot.objects.filter(keyword__evaluation=again, position=2).update(
        name="Red shoes, new edition"
    )
    second = controls.run_start(judge=judge, evaluation=again)
    server.script(answer(2))
    assert runs.run_step(run_id=second.id) == runs.GO
    assert len(server.requests) == 1  # one call, for the changed result only
    assert "Red shoes, new edition" in server.requests[0].body["messages"][1]["content"]
    second.refresh_from_db()
    assert (second.graded, second.from_cache, second.calls) == (3, 2, 1)
    grades = FeedbackSlot.objects.filter(evaluation=again).order_by("snapshot__position")
    assert [slot.grade for slot in grades] == [3, 2, 0]
    cached = JudgeGrade.objects.filter(run=second).order_by("slot__snapshot__position")
    assert [grade.cached for grade in cached] == [True, False, True]


def test_another_model_does_not_reuse_the_judgements(server, setup):
    evaluation, judge, run = setup
    server.script(answer(3, 1, 0))
    runs.run_step(run_id=run.id)
    other = judge_create(
        team=evaluation.team,
        name="Other model",
        protocol="openai",
        base_url=server.openai_url,
        model_name="gpt-other",
    )
    again = make_evaluation(
        team=evaluation.team, scale="graded", strategy=1, keywords={"red shoes": 3}
    )
    second = controls.run_start(judge=other, evaluation=again)
    server.script(answer(1, 1, 1))
    runs.run_step(run_id=second.id)
    second.refresh_from_db()
    assert (second.from_cache, second.calls) == (0, 1)


def test_a_run_cancelled_during_a_call_records_nothing_and_lists_nothing(
    server, setup, monkeypatch
):
    evaluation, judge, run = setup
    server.script(answer(3, 1, 0))
    real_call = asking.call_model

    def cancelled_meanwhile(*args, **kwargs):
        outcome = real_call(*args, **kwargs)
        controls.run_cancel(run=run)  # the lead cancels while the model thinks
        return outcome

    monkeypatch.setattr(asking, "call_model", cancelled_meanwhile)
    runs.run_step(run_id=run.id)
    assert not FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user).exists()
    assert not JudgeFailure.objects.exists()
    assert not FeedbackSlot.objects.filter(evaluation=evaluation).exclude(grade=None).exists()


def by_keyword(replies: dict[str, Reply]):
    """A responder answering each call by the keyword its prompt shows."""

    def respond(seen):
        user = seen.body["messages"][-1]["content"]
        return next(reply for keyword, reply in replies.items() if f"Keyword: {keyword}" in user)

    return respond


def test_a_step_of_two_calls_asks_both_at_once_and_writes_what_both_brought(server, setup):
    evaluation, judge, run = setup
    server.respond_with(by_keyword({"red shoes": answer(3, 1, 0), "blue hat": answer(2, 0)}))
    assert runs.run_step(run_id=run.id, calls=2) == runs.GO
    assert len(server.requests) == 2
    grades = FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user)
    by_text = {}
    for slot in grades.order_by("snapshot_position"):
        by_text.setdefault(slot.keyword.text, []).append(slot.grade)
    assert by_text == {"red shoes": [3, 1, 0], "blue hat": [2, 0]}
    run.refresh_from_db()
    assert (run.calls, run.graded, run.failed) == (2, 5, 0)
    assert (run.input_tokens, run.output_tokens) == (2000, 200)
    calls = JudgeCall.objects.filter(run=run)
    assert calls.count() == 2
    # Each grade names the call that made it, whose prompt showed the grade's keyword.
    for grade in JudgeGrade.objects.filter(run=run).select_related("call", "slot__keyword"):
        assert f"Keyword: {grade.slot.keyword.text}" in grade.call.user_prompt
    assert runs.run_step(run_id=run.id, calls=2).action == "stop"


def test_in_a_step_of_two_calls_a_rate_limited_one_gives_its_results_back_and_waits(server, setup):
    evaluation, judge, run = setup
    limited = Reply.error(429, "slow down", **{"retry-after": "5"})
    server.respond_with(by_keyword({"red shoes": answer(3, 1, 0), "blue hat": limited}))
    step = runs.run_step(run_id=run.id, calls=2)
    assert (step.action, step.seconds) == ("wait", 5.0)
    held = FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user)
    assert sorted(held.values_list("grade", flat=True)) == [0, 1, 3]  # red shoes kept
    assert not held.filter(keyword__text="blue hat").exists()  # given back
    run.refresh_from_db()
    assert (run.calls, run.graded, run.failed, run.failures_in_a_row) == (2, 3, 0, 1)
    assert not JudgeFailure.objects.exists()


def test_in_a_step_of_two_calls_a_rejected_key_pauses_after_keeping_the_other_calls_grades(
    server, setup
):
    evaluation, judge, run = setup
    rejected = Reply.error(401, "Incorrect API key")
    server.respond_with(by_keyword({"red shoes": rejected, "blue hat": answer(2, 0)}))
    step = runs.run_step(run_id=run.id, calls=2)
    assert step.action == "stop" and "rejected" in step.why
    run.refresh_from_db()
    assert run.status == RunStatus.PAUSED and run.graded == 2
    graded = FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user)
    assert sorted(graded.values_list("grade", flat=True)) == [0, 2]


def test_a_claim_for_several_calls_makes_one_batch_a_keyword_up_to_the_call_size(server, setup):
    evaluation, judge, run = setup
    batches = claims.claim(run, 2, 3)
    sizes = [(batch[0].keyword, len(batch)) for batch in batches]
    assert sizes == [("red shoes", 2), ("red shoes", 1), ("blue hat", 2)]
    assert all(len({slot.keyword_id for slot in batch}) == 1 for batch in batches)


@pytest.mark.parametrize(
    ("calls_at_once", "widths"),
    [(1, [1]), (3, [3]), (4, [4]), (5, [3, 2]), (8, [4, 4]), (9, [3, 3, 3]), (32, [4] * 8)],
)
def test_a_runs_calls_at_once_are_shared_by_as_few_lanes_as_can_make_them(calls_at_once, widths):
    from apps.judges.tasks import lane_widths

    assert lane_widths(calls_at_once) == widths
    assert sum(widths) == calls_at_once


class InFlight:
    """A responder that answers every call by its keyword after a pause, counting how
    many calls were in flight at once."""

    def __init__(self, replies: dict[str, Reply], pause: float = 0.05):
        import threading

        self.respond = by_keyword(replies)
        self.pause = pause
        self.now = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, seen):
        import time

        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.pause)
        with self.lock:
            self.now -= 1
        return self.respond(seen)


def test_steps_overlap_yet_never_have_more_calls_in_flight_than_a_step_makes(server, setup):
    evaluation, judge, run = setup
    third = make_evaluation(team=evaluation.team, scale="graded", keywords={"a": 2, "b": 2})
    run = controls.run_start(judge=judge, evaluation=third)
    replies = InFlight({"a": answer(1, 2), "b": answer(3, 0)})
    server.respond_with(replies)
    step = runs.run_steps(run_id=run.id, calls=1, go_on=lambda: True)
    assert step.action == "stop" and "nothing left" in step.why
    assert replies.most == 1 and len(server.requests) == 2
    assert sorted(judged(third, judge).values()) == [0, 1, 2, 3]
    run.refresh_from_db()
    assert (run.status, run.calls, run.graded) == (RunStatus.FINISHED, 2, 4)


def test_steps_told_to_stop_store_the_step_in_flight_and_hold_nothing(server, setup):
    evaluation, judge, run = setup
    server.respond_with(InFlight({"red shoes": answer(3, 1, 0), "blue hat": answer(2, 0)}))
    asked = []
    step = runs.run_steps(
        run_id=run.id, calls=1, go_on=lambda: not asked.append(1) and len(asked) < 2
    )
    assert step == runs.GO  # stopped by go_on, not by the run
    graded = judged(evaluation, judge)
    assert len(graded) == 3  # the one step begun was stored
    held = FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user, grade=None)
    assert not held.exists()


def test_steps_after_a_rate_limit_store_the_step_in_flight_and_wait(server, setup):
    evaluation, judge, run = setup
    limited = Reply.error(429, "slow down", **{"retry-after": "3"})
    server.respond_with(InFlight({"red shoes": limited, "blue hat": answer(2, 0)}))
    step = runs.run_steps(run_id=run.id, calls=1, go_on=lambda: True)
    assert (step.action, step.seconds) == ("wait", 3.0)
    # Blue hat's call was begun while red shoes' was answered: it is stored, not lost.
    assert sorted(judged(evaluation, judge).values()) == [0, 2]
    assert not FeedbackSlot.objects.filter(
        evaluation=evaluation, grader=judge.user, grade=None
    ).exists()
    assert not JudgeFailure.objects.exists()


def test_a_judgement_paid_for_twice_at_once_keeps_the_first_in_the_cache(setup):
    from apps.judges.models import CachedJudgement

    evaluation, judge, _run = setup
    slot = FeedbackSlot.objects.filter(evaluation=evaluation).first()
    first = runs._Grade(slot, 2, "first", None, 0.9)
    again = runs._Grade(slot, 0, "again", None, 0.1)
    runs._pay_into_cache(judge.team_id, [first], {slot.id: "k" * 64})
    runs._pay_into_cache(judge.team_id, [again], {slot.id: "k" * 64})
    (entry,) = CachedJudgement.objects.filter(team_id=judge.team_id)
    assert (entry.grade, entry.reason, entry.confidence) == (2, "first", 0.9)


def test_a_judges_grade_starts_its_results_other_slots_for_people(server, settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    evaluation = make_evaluation(scale="graded", strategy=3, keywords={"q": 2})
    judge = judge_of(evaluation, server)
    run = controls.run_start(judge=judge, evaluation=evaluation)
    server.script(answer(2, 1))
    assert runs.run_step(run_id=run.id) == runs.GO
    slots = FeedbackSlot.objects.filter(evaluation=evaluation)
    assert slots.filter(grader=judge.user).exclude(grade=None).count() == 2  # one a result
    assert slots.count() == 6 and not slots.filter(snapshot_started=False).exists()
    assert slots.filter(grade=None).count() == 4  # people's two slots of each result
