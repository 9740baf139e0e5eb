"""What /api/v1/gold-sets/, /api/v1/calibrations/ and /api/v1/judge-gate/ take and
answer (the views are calibrations.py). A gold set's report is measured before it is
written: GoldSetDetailOut reads it from its context, computing nothing."""

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.judges import gold_sets
from apps.judges.calibration import GoldReport, RunReport
from apps.judges.models import CalibrationRun, CalibrationStatus, GoldItem, GoldSet

from .figure_fields import FigureOut, FiniteFloatField


class CalibrationOut(serializers.Serializer):
    id = serializers.IntegerField()
    gold_set = serializers.IntegerField(source="gold_set_id")
    gold_set_name = serializers.CharField(source="gold_set.name")
    judge = serializers.IntegerField(
        source="judge_id", allow_null=True, help_text="null: a judgement list's calibration"
    )
    judgement_list = serializers.IntegerField(
        source="judgement_list_id",
        allow_null=True,
        help_text="the library's list calibrated (a click model's judgements); null: a judge's",
    )
    judge_name = serializers.CharField(
        source="graded_by", help_text="the judge's name, or the judgement list's"
    )
    model_name = serializers.CharField()
    prompt_version = serializers.CharField()
    with_images = serializers.BooleanField(help_text="the judge was shown the results' images")
    status = serializers.ChoiceField(choices=CalibrationStatus.choices)
    note = serializers.CharField(help_text="why it stopped")
    items = serializers.IntegerField(source="item_count", help_text="results to grade")
    graded = serializers.IntegerField()
    from_cache = serializers.IntegerField(help_text="of graded: reused, no call paid for")
    failed = serializers.IntegerField(help_text="results it could not grade (see failures/)")
    progress = serializers.SerializerMethodField()
    calls = serializers.IntegerField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cost = serializers.DecimalField(max_digits=12, decimal_places=6)
    alpha = FiniteFloatField(
        allow_null=True, help_text="Krippendorff's alpha once finished: what the gate reads"
    )
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_progress(self, run: CalibrationRun) -> float:
        """(graded + failed) / items, from 0 to 1."""
        total = run.item_count  # type: ignore[attr-defined]
        return min(1.0, (run.graded + run.failed) / total) if total else 1.0


class CeilingOut(serializers.Serializer):
    alpha = FigureOut(help_text="Krippendorff's alpha among people's own grades")
    agreement = FigureOut(help_text="the share of agreeing pairs among people's grades")


class DecisionOut(serializers.Serializer):
    metric = serializers.CharField(help_text='e.g. "ndcg@10"')
    people = serializers.CharField(
        help_text='candidate against baseline with people\'s grades: "better", "worse", '
        '"no significant difference" or "no keyword to compare"'
    )
    judge = serializers.CharField(help_text="the same verdict with the judge's grades")
    people_difference = FiniteFloatField(allow_null=True, help_text="mean candidate - baseline")
    judge_difference = FiniteFloatField(allow_null=True)
    same = serializers.BooleanField(help_text="the judge reaches people's verdict")


class ConfusionOut(serializers.Serializer):
    grades = serializers.ListField(child=serializers.IntegerField(), help_text="the scale's")
    labels = serializers.ListField(child=serializers.CharField(), help_text="of the grades")
    matrix = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="rows: people's consensus (its nearest grade); columns: the judge's grade",
    )


class VerdictOut(serializers.Serializer):
    verdict = serializers.CharField(
        help_text="as_people, worse_than_people, chance (do not use), no_ceiling or undecided"
    )
    sentence = serializers.CharField(help_text="the verdict in one sentence, as the page says it")
    warns = serializers.BooleanField(help_text="the sentence advises against the judge")


class MemberFiguresOut(serializers.Serializer):
    judge = serializers.IntegerField(help_text="the member judge's id")
    name = serializers.CharField(help_text="as its votes in this calibration name it")
    compared = serializers.IntegerField(
        source="figures.compared", help_text="results with people's consensus and its grade"
    )
    alpha = FigureOut(
        source="figures.alpha", help_text="its Krippendorff's alpha against people's consensus"
    )
    exact = FigureOut(source="figures.exact", help_text="share of the same grade")
    within_one = FigureOut(
        source="figures.within_one", help_text="share at most one grade from the consensus"
    )


class VoteAgreementOut(serializers.Serializer):
    voters = serializers.IntegerField(help_text="the members, or the samples, that voted")
    alpha = FigureOut(
        help_text="Krippendorff's alpha among them, each a coder (ordinal; nominal on binary)"
    )
    all_agree = FigureOut(help_text="the share of results on which every vote was the same")
    mean_agreement = FigureOut(
        help_text="the mean share of the votes that gave the grade kept (null when none was)"
    )


class FittedWeightOut(serializers.Serializer):
    judge = serializers.IntegerField()
    name = serializers.CharField()
    weight = FiniteFloatField()


class RunReportOut(serializers.Serializer):
    calibration = serializers.SerializerMethodField()
    verdict = serializers.SerializerMethodField(
        help_text="the calibration's verdict against people; null until it is over"
    )
    stale = serializers.CharField(
        help_text="why these figures no longer describe the judge (its model or prompt "
        "changed since); empty when they do"
    )
    compared = serializers.IntegerField(
        source="figures.compared", help_text="results with people's consensus and a grade"
    )
    alpha = FigureOut(
        source="figures.alpha",
        help_text="Krippendorff's alpha against people's consensus: ordinal, nominal on "
        "the binary scale",
    )
    exact = FigureOut(source="figures.exact", help_text="share of the same grade")
    within_one = FigureOut(
        source="figures.within_one", help_text="share at most one grade from the consensus"
    )
    ranking_tau = FigureOut(
        source="figures.ranking_tau",
        help_text="Kendall's tau-b between the keywords' nDCG@10 with people's and with "
        "the judge's grades",
    )
    confusion = serializers.SerializerMethodField()
    decisions = DecisionOut(
        source="figures.decisions", many=True, help_text="with a candidate: per metric"
    )
    changes_a_decision = serializers.BooleanField(source="figures.changes_a_decision")
    members = MemberFiguresOut(
        source="votes.members",
        many=True,
        help_text="a panel's: each member's figures against people, from its own grades",
    )
    member_agreement = VoteAgreementOut(
        source="votes.member_agreement",
        allow_null=True,
        help_text="a panel's: how well its members agree with each other; null otherwise",
    )
    sample_agreement = VoteAgreementOut(
        source="votes.sample_agreement",
        allow_null=True,
        help_text="a sampled judge's: how well its samples agree with each other; null otherwise",
    )
    fitted_weights = serializers.SerializerMethodField(
        help_text="a panel's weights, when they were fitted on this calibration"
    )

    @extend_schema_field(FittedWeightOut(many=True))
    def get_fitted_weights(self, report: RunReport) -> list[dict[str, Any]]:
        return [
            {"judge": judge, "name": name, "weight": weight}
            for judge, name, weight in report.fitted_weights
        ]

    @extend_schema_field(CalibrationOut)
    def get_calibration(self, report: RunReport) -> dict[str, Any]:
        return CalibrationOut(self.context["calibrations"][report.run.id]).data

    @extend_schema_field(VerdictOut(allow_null=True))
    def get_verdict(self, report: RunReport) -> dict[str, Any] | None:
        verdict = report.verdict
        if verdict is None:
            return None
        return {
            "verdict": str(verdict.verdict),
            "sentence": verdict.sentence,
            "warns": verdict.warns,
        }

    @extend_schema_field(ConfusionOut)
    def get_confusion(self, report: RunReport) -> dict[str, Any]:
        scale = self.context["scale"]
        return {
            "grades": list(scale.grades),
            "labels": list(scale.labels),
            "matrix": report.figures.confusion,
        }


class GoldReportOut(serializers.Serializer):
    samples = serializers.SerializerMethodField(help_text="bootstrap resamples per interval")
    keywords = serializers.IntegerField()
    items = serializers.IntegerField()
    ceiling = CeilingOut(help_text="people's agreement with each other: the best to expect")
    calibrations = RunReportOut(
        source="runs", many=True, help_text="every calibration on the gold set, oldest first"
    )

    def get_samples(self, report: GoldReport) -> int:
        return int(self.context["samples"])


class GoldSetOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    baseline = serializers.IntegerField(
        source="baseline_id", allow_null=True, help_text="null once that evaluation is deleted"
    )
    baseline_name = serializers.CharField()
    candidate = serializers.IntegerField(source="candidate_id", allow_null=True)
    candidate_name = serializers.CharField()
    scale = serializers.CharField()
    profile = serializers.CharField()
    metrics = serializers.SerializerMethodField()
    seed = serializers.IntegerField(help_text="the same seed draws the same sample")
    keywords = serializers.IntegerField(source="keyword_count")
    items = serializers.IntegerField(source="item_count", help_text="results people graded")
    calibrations = serializers.IntegerField(source="calibration_count")
    created_at = serializers.DateTimeField()

    def get_metrics(self, gold_set: GoldSet) -> list[str]:
        return [f"{name}@{k}" for name, k in gold_set.metrics]


class GoldSetDetailOut(GoldSetOut):
    report = serializers.SerializerMethodField()

    @extend_schema_field(GoldReportOut)
    def get_report(self, gold_set: GoldSet) -> dict[str, Any]:
        """The report measured by the view: context "report", "samples" and
        "calibrations" (the gold set's runs by id, with item counts)."""
        report: GoldReport = self.context["report"]
        context = {
            "scale": report.scale,
            "samples": self.context["samples"],
            "calibrations": self.context["calibrations"],
        }
        return GoldReportOut(report, context=context).data


class GoldSetIn(serializers.Serializer):
    """Types and bounds, each problem naming its field; then the service checks the
    evaluations (the team's, graded by people, of one scale)."""

    name = serializers.CharField(max_length=gold_sets.NAME_MAX)
    baseline = serializers.IntegerField(help_text="an evaluation of the team people graded")
    candidate = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text="an evaluation of the same keywords on the same scale: the figures then "
        "say whether the judge would change a decision",
    )
    keywords = serializers.IntegerField(
        required=False,
        min_value=gold_sets.KEYWORDS_MIN,
        max_value=gold_sets.KEYWORDS_MAX,
        help_text=f"how many keywords to sample; {gold_sets.KEYWORDS_DEFAULT} if missing",
    )
    seed = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=gold_sets.SEED_MAX,
        help_text="of the random draw; missing: a new one",
    )


class GoldItemOut(serializers.Serializer):
    id = serializers.IntegerField()
    keyword = serializers.CharField()
    doc_id = serializers.CharField()
    title = serializers.CharField()
    people_grades = serializers.ListField(
        child=serializers.IntegerField(), help_text="a lead's decision alone when there is one"
    )
    baseline_position = serializers.IntegerField(allow_null=True)
    candidate_position = serializers.IntegerField(allow_null=True)
    judge = serializers.SerializerMethodField()

    @extend_schema_field(
        {
            "type": "object",
            "nullable": True,
            "description": "with ?calibration=: its grade of the result (null: none yet)",
            "properties": {
                "grade": {"type": "integer", "nullable": True},
                "reason": {"type": "string"},
                "failure": {"type": "string", "description": "why there is no grade"},
                "cached": {"type": "boolean"},
            },
        }
    )
    def get_judge(self, item: GoldItem) -> dict[str, Any] | None:
        return self.context.get("grades", {}).get(item.id)


class CalibrationIn(serializers.Serializer):
    judge = serializers.IntegerField(
        required=False, help_text="a judge of the team (or judgement_list)"
    )
    judgement_list = serializers.IntegerField(
        required=False,
        help_text="a judgement list of the team's library, calibrated at once (or judge)",
    )
    with_images = serializers.BooleanField(
        required=False,
        help_text="with a judge: show it the results' images or not (left out: as it is set)",
    )


class CalibrationFailureOut(serializers.Serializer):
    item = serializers.IntegerField(source="item_id")
    keyword = serializers.CharField(source="item.keyword")
    doc_id = serializers.CharField(source="item.doc_id")
    title = serializers.CharField(source="item.title")
    reason = serializers.CharField(source="failure")


class JudgeGateOut(serializers.Serializer):
    min_alpha = FiniteFloatField(
        allow_null=True,
        min_value=0,
        max_value=1,
        help_text="the Krippendorff's alpha a judge must reach on a calibration with its "
        "current model and prompt before it grades evaluations; null: no requirement",
    )
