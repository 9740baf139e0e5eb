"""The share of each result's slots AI judges fill (JudgeRun.slots_per_result): one by
default, whichever judges grade the evaluation together, the rest left to people; "AI
only" is chosen on "Let a judge grade", which says how many results it will take."""

import pytest

from apps.evaluations.models import FeedbackSlot, Status
from apps.judges import claims, controls, runs
from apps.judges.models import JudgeRun, RunStatus
from tests.factories import client_for, make_evaluation

from .fake_provider import Reply
from .test_chains import by_model, judges

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers_allowed")]

EVERY_MODEL = {
    "cheap": lambda n: (2, 0.9),
    "second": lambda n: (1, 0.9),
    "strong": lambda n: (3, 1),
}


def ai_slots_by_result(evaluation):
    slots = FeedbackSlot.objects.filter(evaluation=evaluation)
    return {
        snapshot: slots.filter(snapshot_id=snapshot, grade__isnull=False).count()
        for snapshot in set(slots.values_list("snapshot_id", flat=True))
    }


def step_in_turns(evaluation, *judges_on_it):
    """Each judge's run one step at a time, in turn, until none has more to do."""
    run_ids = [JudgeRun.objects.get(judge=j, evaluation=evaluation).id for j in judges_on_it]
    going = set(run_ids)
    while going:
        for run_id in run_ids:
            if run_id in going and runs.run_step(run_id=run_id) != runs.GO:
                going.discard(run_id)


def test_two_judges_on_a_three_grade_evaluation_fill_one_slot_of_each_result_together(
    server, owner, team_a
):
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=3, keywords={"q": 3, "r": 2})
    cheap, second, _ = judges(team_a, server)
    for judge in (cheap, second):
        judge.results_per_call = 1  # one result a step: the two judges take turns
        judge.save(update_fields=["results_per_call"])
    server.respond_with(by_model(EVERY_MODEL))
    for judge in (cheap, second):
        controls.run_start(judge=judge, evaluation=evaluation)

    step_in_turns(evaluation, cheap, second)

    assert list(ai_slots_by_result(evaluation).values()) == [1] * 5
    graded_by = FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=False)
    assert {slot.grader_id for slot in graded_by} == {cheap.user_id, second.user_id}
    assert FeedbackSlot.objects.filter(evaluation=evaluation, grader__isnull=True).count() == 10
    for judge in (cheap, second):
        assert JudgeRun.objects.get(judge=judge, evaluation=evaluation).status == (
            RunStatus.FINISHED
        )
    evaluation.refresh_from_db()
    assert evaluation.status == Status.ACTIVE


def test_a_result_a_judge_holds_is_not_claimed_by_another_judge_past_the_share(server, team_a):
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=3, keywords={"q": 2})
    cheap, second, _ = judges(team_a, server)
    server.respond_with(by_model(EVERY_MODEL))
    first = JudgeRun.objects.create(judge=cheap, evaluation=evaluation, prompt_version="p")
    other = JudgeRun.objects.create(judge=second, evaluation=evaluation, prompt_version="p")

    held = claims.claim(first, size=10)  # held by the first judge, not graded yet
    assert sum(len(batch) for batch in held) == 2

    assert claims.claim(other, size=10) == []
    assert claims.wait_for_held_work(other) is None  # nothing can come free for it

    JudgeRun.objects.filter(id=other.id).update(slots_per_result=3)
    other.refresh_from_db()
    assert sum(len(batch) for batch in claims.claim(other, size=10)) == 2


def test_ai_only_lets_judges_fill_every_slot_of_every_result(server, owner, team_a):
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=3, keywords={"q": 3})
    three = judges(team_a, server)
    server.respond_with(by_model(EVERY_MODEL))
    lead = client_for(owner)
    for judge in three:
        lead.post(
            f"/evaluations/{evaluation.id}/judges/", {"judge": judge.id, "slots_per_result": 3}
        )
    assert {run.slots_per_result for run in JudgeRun.objects.filter(evaluation=evaluation)} == {3}

    step_in_turns(evaluation, *three)

    assert list(ai_slots_by_result(evaluation).values()) == [3, 3, 3]
    for snapshot in ai_slots_by_result(evaluation):
        graders = FeedbackSlot.objects.filter(snapshot_id=snapshot).values_list(
            "grader_id", flat=True
        )
        assert sorted(graders) == sorted(judge.user_id for judge in three)


def test_one_judge_with_ai_only_gives_each_result_one_grade(server, owner, team_a):
    """A judge grades a result once (one grader a slot of a result); AI only lets the
    other judges assigned so fill the others."""
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=3, keywords={"q": 3})
    cheap, _, _ = judges(team_a, server)
    server.respond_with(by_model(EVERY_MODEL))
    controls.run_assign(judge=cheap, evaluation=evaluation, slots_per_result=3)
    step_in_turns(evaluation, cheap)
    assert list(ai_slots_by_result(evaluation).values()) == [1, 1, 1]


def _panel(lead, evaluation) -> str:
    page = lead.get(f"/evaluations/{evaluation.id}/judges/panel/", HTTP_HX_REQUEST="true")
    return page.content.decode()


def test_the_assign_form_says_how_many_results_each_choice_takes(server, owner, team_a):
    judges(team_a, server)
    lead = client_for(owner)
    three = make_evaluation(team=team_a, scale="graded", strategy=3, keywords={"q": 3, "r": 2})
    text = _panel(lead, three)
    assert "One grade per result (the rest left to people)" in text
    assert 'value="1" checked' in text
    assert "It will grade 5 of the 15 slots: one of each result&#x27;s 3." in text
    assert "AI only: all 3 grades of every result" in text
    assert "It will grade all 5 results, and no person will be asked" in text

    one = make_evaluation(team=team_a, scale="graded", strategy=1, keywords={"q": 3})
    text = _panel(lead, one)
    assert "AI only: the one grade of every result" in text
    assert "It will grade all 3 results, and no person will be asked." in text
    assert "One grade per result (the rest left to people)" not in text


def test_the_assign_form_refuses_a_share_past_the_evaluation_s_grades(server, owner, team_a):
    cheap, _, _ = judges(team_a, server)
    server.script(Reply.openai('{"judgements": []}'))
    lead = client_for(owner)
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=1, keywords={"q": 1})
    page = lead.post(
        f"/evaluations/{evaluation.id}/judges/",
        {"judge": cheap.id, "slots_per_result": 3},
        follow=True,
    ).content.decode()
    assert "slots_per_result: a whole number from 1 to 1" in page
    assert not JudgeRun.objects.filter(evaluation=evaluation).exists()
