"""What the lead's pages read about judges and their runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Exists, Max, OuterRef, Q, QuerySet

from apps import engine
from apps.evaluations.models import Evaluation, FeedbackSlot

from .chains import ChainSummary, chain_summary
from .models import Judge, JudgeChain, JudgePrompt, JudgeRun, RunStatus
from .prompting import default_prompt, describe_scale
from .team_rule import judges_below_rule


def team_judges(team_id: int) -> QuerySet[Judge]:
    return (
        Judge.objects.filter(team_id=team_id)
        .select_related("prompt")
        .annotate(run_count=Count("runs"))
    )


@dataclass(frozen=True)
class JudgeRow:
    """A judge as the judges' list shows it: with why the team's rule keeps it from
    grading ("" when it does not)."""

    judge: Judge
    below_rule: str


def judge_rows(team_id: int) -> list[JudgeRow]:
    judges = list(team_judges(team_id))
    below = judges_below_rule(team_id, judges)
    return [JudgeRow(judge, below.get(judge.id, "")) for judge in judges]


def below_rule(judge: Judge | None) -> str:
    """Why the team's rule keeps the judge from grading ("" when it does not, or for a
    judge not added yet)."""
    return judges_below_rule(judge.team_id, [judge]).get(judge.id, "") if judge else ""


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
    # Judges not on it that the team's rule keeps from grading it (not assignable),
    # with what each has: "it has no calibration", "its best is 0.55".
    below_rule: list[tuple[Judge, str]] = field(default_factory=list)

    @property
    def running(self) -> bool:
        return any(run.status == RunStatus.RUNNING for run in self.runs)


def evaluation_judges(evaluation: Evaluation) -> EvaluationJudges:
    runs = list(runs_with_open_failures(JudgeRun.objects.filter(evaluation=evaluation)))
    on_it = {run.judge_id for run in runs}
    judges = list(Judge.objects.filter(team_id=evaluation.team_id))
    free = [judge for judge in judges if judge.id not in on_it]
    below = judges_below_rule(evaluation.team_id, free, scale=evaluation.grading_scale)
    assignable = [judge for judge in free if judge.id not in below]
    chain = JudgeChain.objects.filter(evaluation=evaluation).first()
    return EvaluationJudges(
        runs,
        assignable,
        chain_summary(chain) if chain else None,
        team_judges=judges,
        below_rule=[(judge, below[judge.id]) for judge in free if judge.id in below],
    )


def people_graded_evaluations(team_id: int) -> QuerySet[Evaluation]:
    """The team's evaluations (not archived) with a grade people gave: what a gold set's
    baseline may be, as the judges are measured against people."""
    by_people = FeedbackSlot.objects.by_people().filter(
        evaluation=OuterRef("pk"), grade__isnull=False
    )
    return (
        Evaluation.objects.filter(team_id=team_id, archived=False)
        .filter(Exists(by_people))
        .order_by("-id")
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
