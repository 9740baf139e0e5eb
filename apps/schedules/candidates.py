"""A model run now against a baseline: what a CI job asks of the regression gate before
it ships a new ranking (relevance_gate --model, POST /api/v1/gate/).

The model runs as a try of it as it is, on the baseline's keywords (the tries' code:
apps/tries/gate_candidate.py); once the try is done its results become a copy of the
baseline's setup, the grades still valid are reused (a result both rankings return is
graded already), the rest waits for people and, if one is named, an AI judge; once the
copy is graded the run is compared with the baseline (runner.scheduled_runs_advance, on
beat's tick) and the gate reads it.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Team
from apps.core.errors import InvalidInput
from apps.core.lookup import by_id_or_name
from apps.endpoints.models import SearchModel
from apps.evaluations.models import Evaluation
from apps.judges.models import Judge
from apps.tries.gate_candidate import gate_try_start

from .models import RunState, ScheduledRun

MIN_CHANGE_MAX = 1000.0


def candidate_start(
    *,
    team: Team,
    baseline: int,
    model: int | str,
    judge: int | str | None = None,
    min_change: float = 0.0,
) -> ScheduledRun:
    """Start the candidate's run: its try is queued at once. Every problem is named at
    once, each by its field. The objects are the team's, by id or by name (a CI job knows
    names)."""
    problems: list[str] = []
    in_range = 1 <= baseline < 2**63  # an id; a bigger number no database column holds
    baseline_evaluation = (
        Evaluation.objects.filter(team=team, id=baseline).first() if in_range else None
    )
    if baseline_evaluation is None:
        problems.append(f"baseline: the team has no evaluation {baseline}")
    search_model = by_id_or_name(
        SearchModel.objects.filter(team=team),
        model,
        field="model",
        label="search model",
        problems=problems,
    )
    chosen_judge: Judge | None = None
    if judge not in (None, ""):
        chosen_judge = by_id_or_name(
            Judge.objects.filter(team=team),
            judge,
            field="judge",
            label="AI judge",
            problems=problems,
        )
    if not 0 <= min_change <= MIN_CHANGE_MAX:
        problems.append(f"min_change: from 0 to {MIN_CHANGE_MAX:g}")
    if problems:
        raise InvalidInput(problems)
    assert baseline_evaluation is not None and search_model is not None
    with transaction.atomic():
        try:
            attempt = gate_try_start(
                team=team, user=None, model=search_model, baseline=baseline_evaluation
            )
        except InvalidInput as error:  # the try's query set is the baseline's keywords
            raise InvalidInput(
                [problem.replace("evaluation:", "baseline:", 1) for problem in error.problems]
            ) from error
        return ScheduledRun.objects.create(
            due_at=timezone.now(),
            by_hand=True,
            state=RunState.TRYING,
            attempt=attempt,
            baseline=baseline_evaluation,
            judge=chosen_judge,
            min_change=min_change,
        )
