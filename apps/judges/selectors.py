"""What the lead's pages read about judges and their runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Exists, Max, OuterRef, Q, QuerySet

from apps import engine
from apps.evaluations.models import Evaluation, FeedbackSlot

from .chains import ChainSummary, chain_summary
from .models import ChainStep, Judge, JudgeChain, JudgePrompt, JudgeRun, RunStatus
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
class ShareChoice:
    """A choice of "Let a judge grade": how many of each result's slots AI judges fill
    (JudgeRun.slots_per_result), and what it will take, in the lead's words."""

    value: int
    label: str
    sentence: str
    checked: bool = False


def share_choices(evaluation: Evaluation, slots: int) -> list[ShareChoice]:
    """One grade per result (the default, the rest left to people) and, on an
    evaluation of several grades per result, "AI only"; `slots`: the evaluation's."""
    per_result = evaluation.strategy
    results = slots // per_result
    if per_result == 1:
        return [
            ShareChoice(
                1,
                "AI only: the one grade of every result",
                f"It will grade all {results} results, and no person will be asked.",
                checked=True,
            )
        ]
    return [
        ShareChoice(
            1,
            "One grade per result (the rest left to people)",
            f"It will grade {results} of the {slots} slots: one of each result's {per_result}.",
            checked=True,
        ),
        ShareChoice(
            per_result,
            f"AI only: all {per_result} grades of every result",
            f"It will grade all {results} results, and no person will be asked once "
            f"{per_result} judges grade this way: a judge gives a result one grade, the "
            "judges assigned with it the others (meanwhile people may take those).",
        ),
    ]


@dataclass(frozen=True)
class EvaluationJudges:
    """The evaluation page's AI judges panel: its runs, the judges not yet on it, and
    its chain (with what the chain did) or the judges one could be made of."""

    runs: list[JudgeRun]
    assignable: list[Judge]
    chain: ChainSummary | None = None
    # The team's judges a chain may be made of: those the team's rule lets grade it.
    team_judges: list[Judge] = field(default_factory=list)
    # Judges not on it that the team's rule keeps from grading it (not assignable),
    # with what each has: "it has no calibration", "its best is 0.55".
    below_rule: list[tuple[Judge, str]] = field(default_factory=list)
    # What "Let a judge grade" offers of each result's slots (none without a judge).
    shares: list[ShareChoice] = field(default_factory=list)

    @property
    def running(self) -> bool:
        return any(run.status == RunStatus.RUNNING for run in self.runs)


def evaluation_judges(evaluation: Evaluation) -> EvaluationJudges:
    # Each run's controls read its evaluation's status: the one already read.
    runs = list(runs_with_open_failures(JudgeRun.objects.filter(evaluation=evaluation)))
    for run in runs:
        run.evaluation = evaluation
    on_it = {run.judge_id for run in runs}
    judges = list(Judge.objects.filter(team_id=evaluation.team_id))
    free = [judge for judge in judges if judge.id not in on_it]
    # One reading of the rule for the assign form and the chain's: neither offers a
    # judge it keeps out.
    below = judges_below_rule(evaluation.team_id, judges, scale=evaluation.grading_scale)
    assignable = [judge for judge in free if judge.id not in below]
    chain = JudgeChain.objects.filter(evaluation=evaluation).first()
    slots = FeedbackSlot.objects.filter(evaluation=evaluation).count() if assignable else 0
    return EvaluationJudges(
        runs,
        assignable,
        chain_summary(chain) if chain else None,
        team_judges=[judge for judge in judges if judge.id not in below],
        below_rule=[(judge, below[judge.id]) for judge in free if judge.id in below],
        shares=share_choices(evaluation, slots) if assignable else [],
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


def chains_with_links() -> QuerySet[JudgeChain]:
    """Chains with their links' judges, read in the same query."""
    return JudgeChain.objects.select_related("first", "second_opinion", "escalate_to")


def chain_steps(
    chain: JudgeChain, *, status: str | None = None, why: str | None = None
) -> QuerySet[ChainStep]:
    """What the chain did with each result, in the keywords' order; only of a status,
    or that went on for a reason, when given."""
    steps = ChainStep.objects.filter(chain=chain).select_related("slot__keyword", "slot__snapshot")
    if status is not None:
        steps = steps.filter(status=status)
    if why is not None:
        steps = steps.filter(why=why)
    return steps.order_by("slot__keyword_position", "slot__snapshot_position", "id")
