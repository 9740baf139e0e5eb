"""The lead's controls of a judge's runs: assign a judge to an evaluation (start), pause,
resume, cancel, and offer its failed results again. Starting and resuming start the
run's lanes (tasks.py) once the caller's transaction commits."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import F
from django.db.models.functions import Greatest

from apps.accounts.models import User
from apps.core.errors import InvalidInput, InvalidState, NotFound
from apps.evaluations.models import Evaluation

from .asking import not_ready
from .batch_runs import batches_cancel
from .calibration import calibration_create, calibration_reopen_failures, gate_check
from .chains import chain_create
from .claims import give_back_held
from .lifecycle_guard import refuse_when_finished, work_ended
from .models import (
    CalibrationRun,
    GoldSet,
    Judge,
    JudgeChain,
    JudgeFailure,
    JudgeRun,
    RunRole,
    RunStatus,
)
from .prompting import default_prompt
from .prompts import version_for_new_run
from .tasks import calibration_queue, chain_queue, lanes_start
from .team_rule import refusal


def slots_per_result_checked(evaluation: Evaluation, given: object) -> int:
    """The share of each result's slots a judge may fill, as the lead gave it: a whole
    number from 1 (the rest left to people) to the evaluation's strategy ("AI only")."""
    strategy = evaluation.strategy
    if type(given) is not int or not 1 <= given <= strategy:
        raise InvalidInput(
            [
                f"slots_per_result: a whole number from 1 to {strategy}, the evaluation's "
                "grades per result (1: one grade of each result, the rest left to people; "
                f"{strategy}: AI only)"
            ]
        )
    return given


def urgent_checked(given: object) -> bool:
    """Whether the lead wants the run's grades now (true) or lets them wait (false: not
    urgent, through the provider's batch interface at half the price)."""
    if type(given) is not bool:
        raise InvalidInput(
            [
                "urgent: true or false (false: not urgent, sent through the provider's "
                "batch interface at half the price, results within 24 h)"
            ]
        )
    return given


def run_start(
    *,
    judge: Judge,
    evaluation: Evaluation,
    created_by: User | None = None,
    slots_per_result: int = 1,
    urgent: bool = True,
) -> JudgeRun:
    """Assign the judge to the evaluation (of its team), or resume its run there. Refused
    while the team's gate (calibration.gate_check) does not let the judge grade.
    `slots_per_result`: a new run's share of each result's slots (JudgeRun); `urgent`
    False: a new run's calls go in batches (batch_runs.py)."""
    if evaluation.team_id != judge.team_id:
        raise NotFound("No such evaluation.")
    refuse_when_finished(evaluation_id=evaluation.id)
    existing = JudgeRun.objects.filter(judge=judge, evaluation=evaluation).first()
    if existing is not None:
        run_resume(run=existing)
        return existing
    version = version_for_new_run(judge)
    label = version.version if version else default_prompt(evaluation.grading_scale).version
    gate_check(judge, label)
    run, created = JudgeRun.objects.get_or_create(
        judge=judge,
        evaluation=evaluation,
        defaults={
            "created_by": created_by,
            "prompt": version,
            "prompt_version": label,
            "slots_per_result": slots_per_result,
            "urgent": urgent,
        },
    )
    if created:
        lanes_start(run)
    else:
        run_resume(run=run)
    return run


def run_assign(
    *,
    judge: Judge,
    evaluation: Evaluation,
    created_by: User | None = None,
    slots_per_result: object = 1,
    urgent: object = True,
) -> JudgeRun:
    """What "Let a judge grade" does (the evaluation page, the API): run_start for a judge the
    team's rule lets grade, filling the share of each result's slots the lead chose
    (`slots_per_result`, checked; a run the judge has there takes the new share as it
    resumes), now or, not `urgent`, in batches (a run there changes to it as it
    resumes). One the rule keeps out is not among the choices offered, so it is
    refused as a wrong input naming its field (run_start's own refusal, which chains
    meet too, is a state's)."""
    share = slots_per_result_checked(evaluation, slots_per_result)
    now = urgent_checked(urgent)
    existing = JudgeRun.objects.filter(judge=judge, evaluation=evaluation).first()
    if existing is not None:
        label = existing.prompt_version
    else:
        version = version_for_new_run(judge)
        label = version.version if version else default_prompt(evaluation.grading_scale).version
    why = refusal(judge, label) or not_ready(judge)
    if why:
        raise InvalidInput([f"judge: {why}"])
    if not now and (judge.is_panel or judge.samples > 1):
        raise InvalidInput(
            [
                "urgent: a panel, or a judge that asks more than once, grades now only "
                "(a batch interface answers each request once)"
            ]
        )
    changed = existing and (existing.slots_per_result, existing.urgent) != (share, now)
    if existing and existing.role == RunRole.GRADES and changed:
        refuse_when_finished(evaluation_id=evaluation.id)
        JudgeRun.objects.filter(id=existing.id).update(slots_per_result=share, urgent=now)
    return run_start(
        judge=judge,
        evaluation=evaluation,
        created_by=created_by,
        slots_per_result=share,
        urgent=now,
    )


@transaction.atomic
def chain_start(
    *, evaluation: Evaluation, created_by: User | None = None, **given: Any
) -> JudgeChain:
    """Set up the evaluation's chain (chains.py), start its first judge and its task.
    Every link must pass the team's gate, as any judge grading the evaluation."""
    refuse_when_finished(evaluation_id=evaluation.id)
    chain = chain_create(evaluation=evaluation, created_by=created_by, **given)
    for judge in (chain.second_opinion, chain.escalate_to):
        if judge is not None:
            gate_check(
                judge, JudgeRun.objects.get(judge=judge, evaluation=evaluation).prompt_version
            )
    run_start(judge=chain.first, evaluation=evaluation, created_by=created_by)
    chain_queue(chain)
    return chain


@transaction.atomic
def calibration_start(
    *,
    gold_set: GoldSet,
    judge: Judge,
    created_by: User | None = None,
    with_images: bool | None = None,
) -> CalibrationRun:
    """Calibrate the judge on the gold set, in a worker once the caller commits (shown
    the images as the judge is set to, or as `with_images` says)."""
    run = calibration_create(
        gold_set=gold_set, judge=judge, created_by=created_by, with_images=with_images
    )
    calibration_queue(run)
    return run


@transaction.atomic
def calibration_retry(*, run: CalibrationRun) -> int:
    """Ask again about what the calibration could not grade; how many."""
    retried = calibration_reopen_failures(run=run)
    calibration_queue(run)
    return retried


def run_pause(*, run: JudgeRun) -> None:
    _move(run, {RunStatus.RUNNING}, RunStatus.PAUSED, "paused by a lead")
    work_ended(evaluation_id=run.evaluation_id)


def run_resume(*, run: JudgeRun, retrying: bool = False) -> None:
    """Run again (a running run gets a fresh set of lanes); refused once cancelled, on a
    finished evaluation, and for a finished run unless `retrying` its failed results."""
    resumable: set[str] = {
        RunStatus.RUNNING,
        RunStatus.PAUSED,
        RunStatus.BUDGET_REACHED,
        RunStatus.FINISHED,
        RunStatus.FAILED,
    }
    if run.role == RunRole.CHAIN:
        raise InvalidState(f"{run.judge.name} is asked by the chain; it does not grade on its own")
    refuse_when_finished(evaluation_id=run.evaluation_id)
    if run.status == RunStatus.FINISHED and not retrying:
        raise InvalidState("the run is finished: nothing is left for the judge")
    gate_check(run.judge, run.prompt_version)
    _move(run, resumable, RunStatus.RUNNING)
    lanes_start(run)


def run_cancel(*, run: JudgeRun) -> None:
    """Cancel the run: its results given back, and its batches out cancelled at the
    provider."""
    cancellable: set[str] = {
        RunStatus.RUNNING,
        RunStatus.PAUSED,
        RunStatus.BUDGET_REACHED,
        RunStatus.FAILED,
    }
    refuse_when_finished(evaluation_id=run.evaluation_id)
    _move(run, cancellable, RunStatus.CANCELLED)
    batches_cancel(run=run)
    give_back_held(run)
    work_ended(evaluation_id=run.evaluation_id)


def failures_retry(*, run: JudgeRun) -> int:
    """Offer the run's failed results to the judge again; how many. They leave the
    run's failed count, which so counts what is listed as failed: a result failing
    again counts once more."""
    with transaction.atomic():
        retried = JudgeFailure.objects.filter(run=run, open=True).update(open=False)
        JudgeRun.objects.filter(id=run.id).update(failed=Greatest(F("failed") - retried, 0))
    return retried


def _move(run: JudgeRun, allowed: set[str], to: str, note: str = "") -> None:
    moved = JudgeRun.objects.filter(id=run.id, status__in=allowed).update(
        status=to, note=note, wait_until=None, failures_in_a_row=0, failing_since=None
    )
    if not moved:
        run.refresh_from_db()
        if run.status != to:
            raise InvalidState(f"the run is {run.get_status_display().lower()}")
    run.refresh_from_db()
