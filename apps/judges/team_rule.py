"""The team's rule for AI judges (JudgeGate, set on the Calibration page): a judge grades
live evaluations only once a finished calibration, with its current model, the prompt
version a run would use and its images shown or not as it is set, reached the team's
minimum Krippendorff's alpha.

The one place the rule is read: starting or resuming a run asks `refusal`
(calibration.gate_check, controls.run_start), the judges' pages mark who fails it and
"Let a judge grade" offers only who meets it (`judges_below_rule`). A judgement list
that is not people's (a click model's) grades an evaluation under the same minimum,
reached by a calibration of the list (`list_refusal`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import Max

from apps import engine
from apps.library.models import JudgementList

from .models import CalibrationRun, CalibrationStatus, Judge, JudgeGate, JudgePromptVersion
from .prompting import default_prompt


def min_alpha(team_id: int) -> float | None:
    """The team's minimum alpha, None when it requires nothing."""
    return JudgeGate.objects.filter(team_id=team_id).values_list("min_alpha", flat=True).first()


def refusal(judge: Judge, prompt_version: str) -> str:
    """Why the rule keeps the judge from grading with `prompt_version` ("" when it
    does not)."""
    required = min_alpha(judge.team_id)
    if required is None:
        return ""
    best = _best_alphas([judge]).get(
        (judge.id, judge.model_name, prompt_version, judge.shows_images())
    )
    if best is not None and best >= required:
        return ""
    return (
        f"The team requires a judge to agree with people to Krippendorff's alpha "
        f"{required:.2f} or more, calibrated with its current model ({judge.model_name}) "
        f"and prompt ({prompt_version}), before it grades evaluations; {_measured(best)}."
    )


def judges_below_rule(
    team_id: int, judges: Iterable[Judge], *, scale: engine.Scale | None = None
) -> dict[int, str]:
    """The judges the rule keeps from grading, by id, each with what it requires and
    what the judge has ("alpha 0.80 or more required, its best is 0.55"); none when the
    team requires nothing.

    A judge on the default prompt runs with the default of the evaluation's scale: given
    `scale` (an evaluation's), that one version counts; without, the judge fails only
    when no default version would let it grade."""
    judges = list(judges)
    if not judges:
        return {}  # asked nothing: the evaluation page pays no query without judges
    required = min_alpha(team_id)
    if required is None:
        return {}
    best = _best_alphas(judges)
    newest = _newest_versions(judges)
    defaults = (
        [default_prompt(scale).version]
        if scale is not None
        else [default_prompt(each).version for each in engine.SCALES.values()]
    )
    below = {}
    for judge in judges:
        versions = [newest.get(judge.prompt_id, "")] if judge.prompt_id else defaults
        reached = [
            alpha
            for version in versions
            if (alpha := best.get((judge.id, judge.model_name, version, judge.shows_images())))
            is not None
        ]
        top = max(reached, default=None)
        if top is None or top < required:
            below[judge.id] = f"alpha {required:.2f} or more required, {_measured(top)}"
    return below


def _measured(best: float | None) -> str:
    return "it has no calibration" if best is None else f"its best is {best:.2f}"


def _best_alphas(judges: list[Judge]) -> dict[tuple[int, str, str, bool], float]:
    """(judge, model, prompt version, shown images) -> the best alpha a finished
    calibration reached: one without images says nothing of a judge that sees them."""
    rows = (
        CalibrationRun.objects.filter(
            judge__in=[judge.id for judge in judges],
            status=CalibrationStatus.FINISHED,
            alpha__isnull=False,
        )
        .values("judge_id", "model_name", "prompt_version", "with_images")
        .annotate(best=Max("alpha"))
    )
    return {
        (row["judge_id"], row["model_name"], row["prompt_version"], row["with_images"]): row["best"]
        for row in rows
    }


def _newest_versions(judges: list[Judge]) -> dict[int, str]:
    """Team prompt id -> the version a run starting now takes (its newest)."""
    prompt_ids = {judge.prompt_id for judge in judges if judge.prompt_id}
    newest: dict[int, tuple[int, str]] = defaultdict(lambda: (0, ""))
    for prompt_id, number, version in JudgePromptVersion.objects.filter(
        prompt_id__in=prompt_ids
    ).values_list("prompt_id", "number", "version"):
        newest[prompt_id] = max(newest[prompt_id], (number, version))
    return {prompt_id: version for prompt_id, (_, version) in newest.items()}


def list_refusal(judgement_list: JudgementList) -> str:
    """Why the team's rule keeps the list from grading evaluations ("" when it does
    not): some finished calibration of it must reach the team's minimum alpha."""
    required = min_alpha(judgement_list.team_id)
    if required is None:
        return ""
    alphas = CalibrationRun.objects.filter(
        judgement_list=judgement_list, status=CalibrationStatus.FINISHED, alpha__isnull=False
    ).values_list("alpha", flat=True)
    best = max((alpha for alpha in alphas if alpha is not None), default=None)
    if best is not None and best >= required:
        return ""
    measured = "it has no calibration" if best is None else f"its best is {best:.2f}"
    return (
        f"The team requires judgements that are not people's to agree with people to "
        f"Krippendorff's alpha {required:.2f} or more on a gold set before they grade "
        f"evaluations; {measured}. Calibrate {judgement_list.name} on a gold set first."
    )
