"""AI judges in an evaluation's life cycle: an evaluation a judge or a chain still works
on is not finished by its last graded slot; it finishes when the work ends and people
have graded what was sent to them; a finished evaluation takes no judge's work."""

import json

import pytest

from apps.accounts.api_tokens import api_token_create
from apps.evaluations.models import FeedbackSlot, Status
from apps.judges import controls, runs
from apps.judges.models import ChainStep, JudgeChain, JudgeRun, RunStatus, StepStatus
from apps.scoring.services import recompute_marked
from tests.factories import client_for, finish, make_evaluation

from .fake_provider import Reply
from .test_chains import advance, by_model, judges, run_the_first_judge

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers_allowed")]

KEYWORDS = {"red shoes": 4, "blue hat": 4}


def status_of(evaluation):
    evaluation.refresh_from_db()
    return evaluation.status


def grade_from_the_queue(client, person, evaluation, grade):
    """A person takes the next result on Give feedback and grades it there."""
    client.get("/feedback/")
    held = FeedbackSlot.objects.get(evaluation=evaluation, grader=person, grade__isnull=True)
    client.post(f"/feedback/slots/{held.id}/grade/", {"grade": grade})
    held.refresh_from_db()
    assert held.grade == grade


def test_a_chain_whose_first_judge_answers_at_once_leaves_the_evaluation_open_until_people_grade(
    server, evaluator, team_a
):
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=1, keywords=KEYWORDS)
    cheap, second, _ = judges(team_a, server)
    # The local server answers at once; the second opinion disputes result 2 of each keyword.
    server.respond_with(
        by_model({"cheap": lambda n: (2, 0.9), "second": lambda n: (2 if n != 2 else 0, 0.9)})
    )
    chain = controls.chain_start(
        evaluation=evaluation, first=cheap.id, second_opinion=second.id, audit_percent=0
    )

    run_the_first_judge(evaluation, cheap)  # every slot graded by the first judge
    recompute_marked()  # scored: 100 %
    assert status_of(evaluation) == Status.ACTIVE
    advance(chain)
    recompute_marked()

    waiting = ChainStep.objects.filter(chain=chain, status=StepStatus.AWAITING_PEOPLE)
    assert waiting.count() == 2
    assert status_of(evaluation) == Status.ACTIVE
    person = client_for(evaluator)
    grade_from_the_queue(person, evaluator, evaluation, 1)
    recompute_marked()
    assert status_of(evaluation) == Status.ACTIVE  # one of the two still waits
    grade_from_the_queue(person, evaluator, evaluation, 3)
    recompute_marked()
    assert status_of(evaluation) == Status.FINISHED


def test_an_evaluation_its_running_judge_graded_whole_finishes_when_the_run_ends(
    server, django_capture_on_commit_callbacks
):
    evaluation = make_evaluation(scale="graded", strategy=1, keywords={"red shoes": 3})
    cheap, _, _ = judges(evaluation.team, server)
    server.respond_with(by_model({"cheap": lambda n: (2, 0.9)}))
    run = controls.run_start(judge=cheap, evaluation=evaluation)

    assert runs.run_step(run_id=run.id) == runs.GO  # one call grades all three
    recompute_marked()
    assert status_of(evaluation) == Status.ACTIVE  # its run is still running
    with django_capture_on_commit_callbacks(execute=True):
        runs.run_step(run_id=run.id)  # nothing left: the run ends

    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED
    assert status_of(evaluation) == Status.FINISHED


def test_a_finished_evaluation_refuses_assign_and_chain_on_its_page(server, owner, team_a):
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=1, keywords=KEYWORDS)
    cheap, second, _ = judges(team_a, server)
    finish(evaluation)
    lead = client_for(owner)

    assigned = lead.post(f"/evaluations/{evaluation.id}/judges/", {"judge": cheap.id}, follow=True)
    chained = lead.post(
        f"/evaluations/{evaluation.id}/judges/chain/",
        {"first": cheap.id, "second_opinion": second.id, "audit_percent": "0"},
        follow=True,
    )

    for answer in (assigned, chained):
        assert "the evaluation is finished" in answer.content.decode()
    assert not JudgeRun.objects.filter(evaluation=evaluation).exists()
    assert not JudgeChain.objects.filter(evaluation=evaluation).exists()


def test_a_finished_evaluation_refuses_a_runs_resume_and_cancel_on_the_page_and_in_the_api(
    server, owner, team_a
):
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=1, keywords=KEYWORDS)
    cheap, _, _ = judges(team_a, server)
    run = controls.run_start(judge=cheap, evaluation=evaluation)
    controls.run_pause(run=run)
    finish(evaluation)
    lead = client_for(owner)
    _token, text = api_token_create(team=team_a, name="ci")
    api_headers = {"Authorization": f"Bearer {text}"}

    for action in ("resume", "cancel"):
        page = lead.post(f"/judges/runs/{run.id}/{action}/", follow=True)
        assert "the evaluation is finished" in page.content.decode()
        answer = client_for(None).post(
            f"/api/v1/judge-runs/{run.id}/{action}/", headers=api_headers
        )
        assert answer.status_code == 409
        assert "the evaluation is finished" in json.dumps(answer.json())
    assigned = client_for(None).post(
        f"/api/v1/judges/{cheap.id}/runs/",
        {"evaluation": evaluation.id},
        content_type="application/json",
        headers=api_headers,
    )
    assert assigned.status_code == 409
    run.refresh_from_db()
    assert run.status == RunStatus.PAUSED


def test_the_pages_offer_no_resume_or_cancel_on_a_finished_run_or_evaluation(server, owner, team_a):
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=1, keywords=KEYWORDS)
    cheap, second, _ = judges(team_a, server)
    finished_run = controls.run_start(judge=cheap, evaluation=evaluation)
    paused_run = controls.run_start(judge=second, evaluation=evaluation)
    controls.run_pause(run=paused_run)
    JudgeRun.objects.filter(id=finished_run.id).update(status=RunStatus.FINISHED)
    lead = client_for(owner)

    def buttons(url: str, run: JudgeRun) -> set[str]:
        page = lead.get(url).content.decode()
        return {a for a in ("pause", "resume", "cancel") if f"/judges/runs/{run.id}/{a}/" in page}

    assert buttons(f"/judges/runs/{finished_run.id}/", finished_run) == set()
    assert buttons(f"/judges/runs/{paused_run.id}/", paused_run) == {"resume", "cancel"}
    finish(evaluation)
    assert buttons(f"/judges/runs/{paused_run.id}/", paused_run) == set()
    assert buttons(f"/evaluations/{evaluation.id}/judges/panel/", paused_run) == set()


def test_a_failed_run_can_be_cancelled_from_its_page(server, owner, team_a):
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=1, keywords=KEYWORDS)
    cheap, _, _ = judges(team_a, server)
    run = controls.run_start(judge=cheap, evaluation=evaluation)
    JudgeRun.objects.filter(id=run.id).update(status=RunStatus.FAILED)

    client_for(owner).post(f"/judges/runs/{run.id}/cancel/", follow=True)

    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED


def test_a_finished_run_offers_no_resume(server, owner, team_a):
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=1, keywords={"q": 2})
    cheap, _, _ = judges(team_a, server)
    server.respond_with(lambda seen: Reply.openai("{}"))
    run = controls.run_start(judge=cheap, evaluation=evaluation)
    JudgeRun.objects.filter(id=run.id).update(status=RunStatus.FINISHED)

    page = client_for(owner).post(f"/judges/runs/{run.id}/resume/", follow=True)

    assert "the run is finished: nothing is left for the judge" in page.content.decode()
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED


def test_a_judge_assigned_to_a_three_grade_evaluation_leaves_two_slots_a_result_to_people(
    server, owner, team_a
):
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=3, keywords={"q": 3})
    cheap, _, _ = judges(team_a, server)
    server.respond_with(by_model({"cheap": lambda n: (2, 0.9)}))
    client_for(owner).post(f"/evaluations/{evaluation.id}/judges/", {"judge": cheap.id})
    run = JudgeRun.objects.get(judge=cheap, evaluation=evaluation)

    while runs.run_step(run_id=run.id) == runs.GO:
        pass

    slots = FeedbackSlot.objects.filter(evaluation=evaluation)
    for snapshot in {slot.snapshot_id for slot in slots}:
        of_result = slots.filter(snapshot_id=snapshot)
        assert of_result.filter(grader=cheap.user, grade__isnull=False).count() == 1
        assert of_result.filter(grader__isnull=True, grade__isnull=True).count() == 2
    assert status_of(evaluation) == Status.ACTIVE
