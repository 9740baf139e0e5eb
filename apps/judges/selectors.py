"""What the lead's pages read about judges and their runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Max, Q, QuerySet

from apps import engine
from apps.evaluations.models import Evaluation

from .chains import ChainSummary, chain_summary
from .models import Judge, JudgeChain, JudgePrompt, JudgeRun, RunStatus
from .prompting import default_prompt, describe_scale


def team_judges(team_id: int) -> QuerySet[Judge]:
    return (
        Judge.objects.filter(team_id=team_id)
        .select_related("prompt")
        .annotate(run_count=Count("runs"))
    )


def runs_with_open_failures(runs: QuerySet[JudgeRun]) -> QuerySet[JudgeRun]:
    return runs.select_related("judge").annotate(
        failures_open=Count("failures", filter=Q(failures__open=True))
    )


@dataclass(frozen=True)
class EvaluationJudges:
    """The evaluation page's AI judges panel: its runs, the judges not yet on it, and
    its chain (with what the chain did) or the judges one could be made of."""

    runs: list[JudgeRun]
    assignable: list[Judge]
    chain: ChainSummary | None = None
    team_judges: list[Judge] = field(default_factory=list)

    @property
    def running(self) -> bool:
        return any(run.status == RunStatus.RUNNING for run in self.runs)


def evaluation_judges(evaluation: Evaluation) -> EvaluationJudges:
    runs = list(runs_with_open_failures(JudgeRun.objects.filter(evaluation=evaluation)))
    on_it = {run.judge_id for run in runs}
    judges = list(Judge.objects.filter(team_id=evaluation.team_id))
    assignable = [judge for judge in judges if judge.id not in on_it]
    chain = JudgeChain.objects.filter(evaluation=evaluation).first()
    return EvaluationJudges(
        runs, assignable, chain_summary(chain) if chain else None, team_judges=judges
    )


def team_prompts(team_id: int) -> QuerySet[JudgePrompt]:
    return JudgePrompt.objects.filter(team_id=team_id).annotate(
        version_count=Count("versions", distinct=True),
        newest_number=Max("versions__number"),
        judge_count=Count("judges", distinct=True),
    )


@dataclass(frozen=True)
class DefaultPrompt:
    """A built-in prompt as the lead reads it: its version and the scale it is for."""

    version: str
    scale: engine.Scale
    scale_text: str  # what {scale} becomes


def default_prompts() -> list[DefaultPrompt]:
    return [
        DefaultPrompt(default_prompt(scale).version, scale, describe_scale(scale))
        for scale in engine.SCALES.values()
    ]
