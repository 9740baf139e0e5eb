"""What the lead's pages read about judges and their runs."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from apps.evaluations.models import Evaluation

from .models import Judge, JudgeRun, RunStatus


def team_judges(team_id: int) -> QuerySet[Judge]:
    return Judge.objects.filter(team_id=team_id).annotate(run_count=Count("runs"))


def runs_with_open_failures(runs: QuerySet[JudgeRun]) -> QuerySet[JudgeRun]:
    return runs.select_related("judge").annotate(
        failures_open=Count("failures", filter=Q(failures__open=True))
    )


@dataclass(frozen=True)
class EvaluationJudges:
    """The evaluation page's AI judges panel: its runs, and the judges not yet on it."""

    runs: list[JudgeRun]
    assignable: list[Judge]

    @property
    def running(self) -> bool:
        return any(run.status == RunStatus.RUNNING for run in self.runs)


def evaluation_judges(evaluation: Evaluation) -> EvaluationJudges:
    runs = list(runs_with_open_failures(JudgeRun.objects.filter(evaluation=evaluation)))
    on_it = {run.judge_id for run in runs}
    assignable = [
        judge for judge in Judge.objects.filter(team_id=evaluation.team_id) if judge.id not in on_it
    ]
    return EvaluationJudges(runs, assignable)
