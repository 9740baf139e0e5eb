"""AI judges in an evaluation's life cycle (apps/evaluations/states.py, below this app):
an evaluation is not complete while a judge still grades it, while its chain has
results to look at, or while results the chain sent to people wait for them; when that
work ends, the evaluation finishes if every slot is graded. The app registers the
guard with the life cycle when it is ready (apps.py)."""

from __future__ import annotations

from functools import partial

from django.db import transaction

from apps.core.errors import InvalidState
from apps.evaluations.models import Evaluation, FeedbackSlot, Status
from apps.scoring.finishing import finish_if_complete

from .models import ChainStep, JudgeChain, JudgeRun, RunStatus, StepStatus


def work_under_way(evaluation: Evaluation) -> str | None:
    """The finish guard: why the judges hold the evaluation open, or None."""
    running = (
        JudgeRun.objects.filter(evaluation_id=evaluation.id, status=RunStatus.RUNNING)
        .values_list("judge__name", flat=True)
        .first()
    )
    if running is not None:
        return f"the AI judge {running} is still grading it"
    chain = JudgeChain.objects.filter(evaluation_id=evaluation.id).select_related("first").first()
    if chain is None:
        return None
    if chain_has_unseen(chain):
        return "its chain still has results to look at"
    waiting = ChainStep.objects.filter(
        chain=chain, status=StepStatus.AWAITING_PEOPLE, slot__grade__isnull=True
    ).count()
    if waiting:
        return f"{waiting} results its chain sent to people are not graded yet"
    return None


def chain_has_unseen(chain: JudgeChain) -> bool:
    """Whether the first judge graded results the chain has not looked at yet."""
    seen = ChainStep.objects.filter(chain=chain).values("slot_id")
    return (
        FeedbackSlot.objects.filter(
            evaluation_id=chain.evaluation_id, grader_id=chain.first.user_id, grade__isnull=False
        )
        .exclude(id__in=seen)
        .exists()
    )


def work_ended(*, evaluation_id: int) -> None:
    """A run or a chain stopped working on the evaluation: once the caller commits, it
    finishes if it is complete and nothing else holds it."""
    transaction.on_commit(partial(finish_if_complete, evaluation_id=evaluation_id))


def refuse_when_finished(*, evaluation_id: int) -> None:
    """Refuse a judge's work (assign, chain, resume, cancel) on an evaluation that is
    over: its grades are final."""
    over = Evaluation.objects.filter(id=evaluation_id).values_list("status", "archived").first()
    if over is not None and (over[0] == Status.FINISHED or over[1]):
        raise InvalidState("the evaluation is finished: its judges' work is over")
