"""Whether an evaluation's reuse may copy an AI judge's grade (apps/lifecycle/reuse.py
asks, once the lead has ticked "copy AI judges' grades too"): only a judge of the team
that meets the team's calibration rule with the model and prompt version that made the
grade. Without a rule, every judge of the team does."""

from .models import CalibrationRun, CalibrationStatus, Judge, JudgeGate


def judge_grade_copyable(team_id: int, judge_id: int, model_name: str, prompt_version: str) -> bool:
    if not Judge.objects.filter(id=judge_id, team_id=team_id).exists():
        return False
    gate = JudgeGate.objects.filter(team_id=team_id).values_list("min_alpha", flat=True).first()
    if gate is None:
        return True
    return CalibrationRun.objects.filter(
        judge_id=judge_id,
        model_name=model_name,
        prompt_version=prompt_version,
        status=CalibrationStatus.FINISHED,
        alpha__gte=gate,
    ).exists()
