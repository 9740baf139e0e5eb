"""POST /api/v1/trec-eval/: score a run against qrels as trec_eval does, nothing stored.

The same scorer as `manage.py trec_eval` (apps/trec_eval); the answer is the text
trec_eval prints, so a team can score run files in CI without an evaluation. The body is
held to REQUEST_MAX_BYTES; larger files go through the command."""

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.views import APIView

from apps.core.errors import InvalidInput
from apps.trec_eval.files import FileProblems
from apps.trec_eval.measures import MeasureError
from apps.trec_eval.report import write_report
from apps.trec_eval.scorer import MAX_DEPTH, Options, score_files

# How many -m specifications one request may give.
MAX_MEASURES = 50


class TrecEvalIn(serializers.Serializer):
    qrels = serializers.FileField(help_text="qid iteration docno level")
    run = serializers.FileField(help_text="qid Q0 docno rank score tag")
    per_query = serializers.BooleanField(default=False, help_text="each query's lines (-q)")
    complete = serializers.BooleanField(
        default=False, help_text="judged queries the run lacks count, as 0 (-c)"
    )
    relevance_level = serializers.IntegerField(
        default=1, min_value=-99, max_value=100, help_text="the lowest relevant level (-l)"
    )
    judged_only = serializers.BooleanField(default=False, help_text="judged documents only (-J)")
    max_results = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_DEPTH, help_text="results read per query (-M)"
    )
    measures = serializers.CharField(
        required=False,
        default="",
        max_length=2000,
        help_text="trec_eval's -m specifications separated by spaces: 'map P.5,10 ndcg_cut.10'; "
        "none: trec_eval's default measures",
    )

    def validate_measures(self, text: str) -> list[str]:
        specifications = text.split()
        if len(specifications) > MAX_MEASURES:
            raise serializers.ValidationError(f"at most {MAX_MEASURES} measures")
        return specifications


class TrecEvalView(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(
        summary="Score a TREC run against qrels as trec_eval does (nothing is stored)",
        description="The answer is the text trec_eval prints (text/plain). A file with any "
        "problem is refused whole, each problem naming its file and line.",
        request={"multipart/form-data": TrecEvalIn},
        responses={(200, "text/plain"): OpenApiTypes.STR},
    )
    def post(self, request: Request) -> HttpResponse:
        data = TrecEvalIn(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        options = Options(
            per_query=fields["per_query"],
            complete=fields["complete"],
            relevance_level=fields["relevance_level"],
            judged_only=fields["judged_only"],
            max_results=fields.get("max_results"),
            measures=fields["measures"],
        )
        try:
            report = score_files(
                fields["qrels"].file,
                fields["run"].file,
                options,
                qrels_name="qrels",
                run_name="run",
            )
        except FileProblems as problems:
            raise InvalidInput(problems.problems) from None
        except MeasureError as error:
            raise InvalidInput([f"measures: {error}"]) from None
        response = HttpResponse(content_type="text/plain; charset=utf-8")
        write_report(report, response, per_query_lines=options.per_query)
        return response
