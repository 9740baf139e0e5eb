"""/api/v1/evaluations: list, get, create, delete, start, stop, finish, import, export.

Editing and the other lifecycle actions (clone, archive, pin, baseline) are in
lifecycle.py.
"""

import io
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, TypedDict

from django.db import transaction
from django.db.models import (
    BooleanField,
    Case,
    Count,
    F,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.http import FileResponse, HttpRequest
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import generics, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps import engine
from apps.accounts.models import Tag
from apps.accounts.services import tags_get_or_create
from apps.core.errors import InvalidInput
from apps.endpoints.models import SearchModel
from apps.evaluations import services
from apps.evaluations.metric_list import cutoff_out, parse_metric_list
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Profile,
    Reuse,
    Scale,
    Status,
)
from apps.evaluations.source_mix import evaluation_mix, evaluation_mixes
from apps.interchange.downloads import EXPORT_FORMAT_NAMES, export_download
from apps.lifecycle import stale, steps

from .documents import DOCUMENT_UPLOAD, EVALUATION_DOCUMENT
from .pagination import Pages
from .parsers import BoundedJSONParser

if TYPE_CHECKING:
    # django-stubs' types, not installed in production (hence quotes where they are used).
    from django_stubs_ext import WithAnnotations

    class KeywordCount(TypedDict):
        keyword_count: int

    # An evaluation as team_evaluations reads it, its keywords counted.
    Counted = WithAnnotations[Evaluation, KeywordCount]


class MetricValueOut(serializers.Serializer):
    metric = serializers.CharField()
    k = serializers.IntegerField(allow_null=True, help_text="the cutoff; null: the whole list")
    label = serializers.CharField(help_text="e.g. nDCG@10, AP@10, AP over the whole list")
    value = serializers.FloatField(allow_null=True, help_text="full precision; null if none")
    keywords_counted = serializers.IntegerField(help_text="keywords with a value in the mean")


class JudgeGradesOut(serializers.Serializer):
    name = serializers.CharField()
    graded = serializers.IntegerField()


class JudgedByOut(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=["none", "people", "ai", "clicks", "mixed"],
        help_text=(
            "people: people's and imported grades only; ai: AI judges' only; clicks: click "
            "models' only"
        ),
    )
    graded = serializers.IntegerField()
    people = serializers.IntegerField(help_text="given here by people")
    imported = serializers.IntegerField(help_text="brought by an import (people's)")
    judges = JudgeGradesOut(many=True, help_text="each AI judge's grades")
    clicks = JudgeGradesOut(
        many=True, help_text='each click model\'s judgements, by source ("clicks: PBM, ...")'
    )
    copied = serializers.IntegerField(help_text="of all, copied by reuse")
    stale = serializers.IntegerField(help_text="of the copied, on content since changed")


class EvaluationOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    description = serializers.CharField()
    status = serializers.ChoiceField(choices=Status.choices)
    scale = serializers.ChoiceField(choices=Scale.choices)
    scale_levels = serializers.JSONField(
        allow_null=True, help_text="for scale custom: its levels; null for the others"
    )
    strategy = serializers.IntegerField()
    profile = serializers.ChoiceField(choices=Profile.choices)
    show_position = serializers.BooleanField()
    scoring_guidelines = serializers.CharField()
    reuse = serializers.ChoiceField(choices=Reuse.choices)
    reuse_judges = serializers.BooleanField(
        help_text="reuse copies AI judges' grades too (people's always)"
    )
    auto_restart = serializers.BooleanField()
    zero_without_results = serializers.BooleanField(
        help_text="judged keywords without results count as 0 in the means (trec_eval -c)"
    )
    transformers = serializers.DictField()
    pinned = serializers.BooleanField()
    archived = serializers.BooleanField()
    tags = serializers.SerializerMethodField()
    keywords = serializers.IntegerField(source="keyword_count")
    progress = serializers.FloatField()
    graded_slots = serializers.IntegerField()
    total_slots = serializers.IntegerField()
    model = serializers.IntegerField(
        source="search_model_id", allow_null=True, help_text="search model id; null if imported"
    )
    fetching = serializers.BooleanField(help_text="true while a start runs the keywords")
    keywords_run = serializers.IntegerField(source="keywords_run_count")
    keywords_failed = serializers.IntegerField(source="keywords_failed_count")
    is_baseline = serializers.BooleanField(help_text="the team's baseline evaluation")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    metrics = serializers.SerializerMethodField()
    stale_judgements = serializers.IntegerField(
        help_text="grades copied from an earlier evaluation whose document changed since it "
        "was graded; the metrics count them (POST .../stale/requeue/ sends them back)"
    )
    judged_by = serializers.SerializerMethodField()

    @extend_schema_field(JudgedByOut())
    def get_judged_by(self, evaluation: Evaluation) -> dict[str, object]:
        """Whose grades the metrics rest on: a list answer reads its page's at once."""
        mixes = self.context.get("mixes") or {}
        mix = mixes.get(evaluation.id) or evaluation_mix(evaluation)
        return mix.as_json()

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_tags(self, evaluation: Evaluation) -> list[str]:
        return [tag.name for tag in evaluation.tags.all()]

    @extend_schema_field(MetricValueOut(many=True))
    def get_metrics(self, evaluation: "Counted") -> list[dict[str, Any]]:
        many = evaluation.keyword_count > 1
        return [
            {
                "metric": m.metric,
                "k": cutoff_out(m.k),
                "label": engine.metric_label(m.metric, m.k, many_keywords=many),
                "value": m.value,
                "keywords_counted": m.value_count,
            }
            for m in evaluation.metrics.all()
        ]


class MetricName(serializers.ChoiceField):
    """A metric's name in any case, with spaces around it or not ("NDCG" is ndcg)."""

    def to_internal_value(self, data: Any) -> Any:
        return super().to_internal_value(data.strip().lower() if isinstance(data, str) else data)


class MetricIn(serializers.Serializer):
    metric = MetricName(choices=sorted(engine.METRICS))
    k = serializers.IntegerField(
        min_value=0,
        max_value=engine.MAX_CUTOFF,
        allow_null=True,
        help_text="the cutoff, 1 to 1000; null (or 0) for the whole list",
    )

    def validate_k(self, k: int | None) -> int:
        return engine.WHOLE_LIST if k is None else k


class EvaluationIn(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    scale = serializers.ChoiceField(choices=Scale.choices, default=Scale.GRADED)
    scale_levels = serializers.JSONField(
        required=False,
        allow_null=True,
        default=None,
        help_text='for scale custom: {"lowest", "highest", "relevant_from", "labels", "keys"}',
    )
    strategy = serializers.ChoiceField(choices=[1, 3], default=1)
    profile = serializers.ChoiceField(choices=Profile.choices, default=Profile.SEARCHTWEAK)
    show_position = serializers.BooleanField(default=False)
    scoring_guidelines = serializers.CharField(required=False, allow_blank=True, default="")
    reuse = serializers.ChoiceField(choices=Reuse.choices, default=Reuse.NONE)
    reuse_judges = serializers.BooleanField(
        default=False,
        help_text="reuse copies AI judges' grades too, from judges meeting the team's "
        "calibration rule (people's grades always)",
    )
    auto_restart = serializers.BooleanField(default=False)
    zero_without_results = serializers.BooleanField(
        default=False,
        help_text="judged keywords without results count as 0 in the means (trec_eval -c)",
    )
    transformers = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField()), required=False, default=dict
    )
    tags = serializers.ListField(child=serializers.CharField(max_length=60), default=list)
    model = serializers.IntegerField(
        required=False, allow_null=True, default=None, help_text="search model id"
    )
    metrics = MetricIn(many=True, allow_empty=False)
    keywords = serializers.ListField(
        child=serializers.CharField(max_length=500, allow_blank=True),
        default=list,
        help_text="one query each; trimmed, blanks and repeats skipped",
    )


def team_evaluations(request: Request) -> QuerySet[Evaluation]:
    """The caller's team's evaluations, with what EvaluationOut reads, in few queries."""
    return (
        Evaluation.objects.filter(team_id=request.user.team_id)
        .annotate(
            keyword_count=Count("keywords", distinct=True),
            keywords_run_count=Count(
                "keywords", filter=Q(keywords__executed_at__isnull=False), distinct=True
            ),
            keywords_failed_count=Count("keywords", filter=Q(keywords__failed=True), distinct=True),
            stale_judgements=Coalesce(
                Subquery(
                    FeedbackSlot.objects.filter(
                        evaluation_id=OuterRef("id"), stale=True, grade__isnull=False
                    )
                    .order_by()
                    .values("evaluation_id")
                    .annotate(count=Count("id"))
                    .values("count")
                ),
                0,
            ),
            is_baseline=Case(
                When(team__baseline_evaluation_id=F("id"), then=Value(True)),
                default=Value(False),
                output_field=BooleanField(),
            ),
        )
        .prefetch_related(
            Prefetch("metrics", queryset=EvaluationMetric.objects.order_by("position", "id")),
            Prefetch("tags", queryset=Tag.objects.order_by("name")),
        )
        .order_by("-created_at", "-id")
    )


def team_search_model(team: Any, model_id: int | None) -> SearchModel | None:
    """The team's search model with this id; another team's is "no such model" (400)."""
    if model_id is None:
        return None
    model = SearchModel.objects.filter(team=team, id=model_id).first()
    if model is None:
        raise InvalidInput([f"model: no search model {model_id} in this team"])
    return model


def evaluation_of(request: Request, evaluation_id: int) -> Evaluation:
    """One of the caller's team's evaluations (the row alone); another team's answers 404."""
    return get_object_or_404(
        Evaluation.objects.filter(team_id=request.user.team_id), id=evaluation_id
    )


def answer(request: Request, evaluation_id: int, code: int = status.HTTP_200_OK) -> Response:
    """The evaluation as EvaluationOut; another team's answers 404."""
    evaluation = get_object_or_404(team_evaluations(request), id=evaluation_id)
    return Response(EvaluationOut(evaluation).data, status=code)


TAG_LENGTH = Tag._meta.get_field("name").max_length or 60
SEARCH_LENGTH = 200


@extend_schema_view(
    get=extend_schema(
        summary="List the team's evaluations",
        parameters=[
            OpenApiParameter("status", OpenApiTypes.STR, enum=Status.values),
            OpenApiParameter("scale", OpenApiTypes.STR, enum=Scale.values),
            OpenApiParameter("tag", OpenApiTypes.STR, description="tag name"),
            OpenApiParameter("search", OpenApiTypes.STR, description="in name or description"),
        ],
    )
)
class EvaluationListCreate(generics.ListAPIView):
    serializer_class = EvaluationOut
    pagination_class = Pages

    def paginate_queryset(self, queryset: Any) -> list[Evaluation] | None:
        page = super().paginate_queryset(queryset)
        self.mixes = evaluation_mixes(page) if page is not None else {}
        return page

    def get_serializer_context(self) -> dict[str, Any]:
        return {**super().get_serializer_context(), "mixes": getattr(self, "mixes", {})}

    def get_queryset(self) -> QuerySet[Evaluation]:
        request = self.request
        evaluations = team_evaluations(request)
        params = request.query_params
        problems = []
        for name, allowed in (("status", Status.values), ("scale", Scale.values)):
            value = params.get(name)
            if value is not None and value not in allowed:
                problems.append(f"{name}: {value!r} is not one of {', '.join(allowed)}")
            elif value is not None:
                evaluations = evaluations.filter(**{name: value})
        # PostgreSQL refuses text with a NUL byte (such a filter answered 500), and SQLite
        # a LIKE pattern of a megabyte; no name or description is longer than these.
        for name, longest in (("tag", TAG_LENGTH), ("search", SEARCH_LENGTH)):
            value = params.get(name, "")
            if "\x00" in value:
                problems.append(f"{name}: must not contain NUL (0x00) characters")
            elif len(value) > longest:
                problems.append(f"{name}: at most {longest} characters (got {len(value)})")
        if problems:
            raise InvalidInput(problems)
        if tag := params.get("tag"):
            evaluations = evaluations.filter(tags__name=tag)
        if search := params.get("search", "").strip():
            evaluations = evaluations.filter(
                Q(name__icontains=search) | Q(description__icontains=search)
            )
        return evaluations

    @extend_schema(
        summary="Create an evaluation (settings, metrics, keywords)",
        request=EvaluationIn,
        responses={201: EvaluationOut},
    )
    def post(self, request: Request) -> Response:
        data = EvaluationIn(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        team = request.user.team
        # One transaction: tags named by a request the service then refuses are not kept.
        with transaction.atomic():
            evaluation = services.evaluation_create_with_keywords(
                team=team,
                metrics=[(m["metric"], m["k"]) for m in fields.pop("metrics")],
                keywords=fields.pop("keywords"),
                tags=tags_get_or_create(team=team, names=fields.pop("tags")),
                search_model=team_search_model(team, fields.pop("model")),
                **fields,
            )
        return answer(request, evaluation.id, status.HTTP_201_CREATED)


class EvaluationDetail(APIView):
    @extend_schema(summary="One evaluation with its metric values", responses=EvaluationOut)
    def get(self, request: Request, evaluation_id: int) -> Response:
        return answer(request, evaluation_id)

    @extend_schema(
        summary="Delete an evaluation (refused while active or starting)", responses={204: None}
    )
    def delete(self, request: Request, evaluation_id: int) -> Response:
        steps.evaluation_delete(evaluation=evaluation_of(request, evaluation_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class EvaluationStart(APIView):
    @extend_schema(
        summary="Start or resume a pending evaluation",
        description="With a search model, its keywords not yet run run first on a worker "
        "(`fetching` is true meanwhile) and the evaluation opens when they are done; "
        "without one it opens at once.",
        request=None,
        responses=EvaluationOut,
    )
    def post(self, request: Request, evaluation_id: int) -> Response:
        steps.evaluation_start(evaluation=evaluation_of(request, evaluation_id))
        return answer(request, evaluation_id)


class EvaluationStop(APIView):
    @extend_schema(
        summary="Pause an active evaluation, or a start whose keywords run",
        request=None,
        responses=EvaluationOut,
    )
    def post(self, request: Request, evaluation_id: int) -> Response:
        steps.evaluation_stop(evaluation=evaluation_of(request, evaluation_id))
        return answer(request, evaluation_id)


class EvaluationFinish(APIView):
    @extend_schema(summary="Finish an active evaluation now", request=None, responses=EvaluationOut)
    def post(self, request: Request, evaluation_id: int) -> Response:
        steps.evaluation_finish_now(evaluation=evaluation_of(request, evaluation_id))
        return answer(request, evaluation_id)


class EvaluationStaleRequeue(APIView):
    @extend_schema(
        summary="Send an evaluation's stale judgements back to the queue",
        description="Clears every grade copied from an earlier evaluation whose document "
        "changed since it was graded, so people grade the document as it is now. Only "
        "while the evaluation is pending or active (409 otherwise).",
        request=None,
        responses=EvaluationOut,
    )
    def post(self, request: Request, evaluation_id: int) -> Response:
        stale.stale_requeue(evaluation=evaluation_of(request, evaluation_id), lead=None)
        return answer(request, evaluation_id)


class RequestBody(io.RawIOBase):
    """A request's body as a binary file, read as the reader goes rather than at once."""

    def __init__(self, request: HttpRequest) -> None:
        self._request = request

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._request.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class EvaluationImport(APIView):
    parser_classes = [BoundedJSONParser, MultiPartParser]

    @extend_schema(
        summary="Import an evaluation document (relevo.evaluation/1)",
        description="Send the document as the JSON body, or as the multipart field `file`. "
        "A document with any problem is refused whole, listing every problem.",
        request={
            "application/json": EVALUATION_DOCUMENT,
            "multipart/form-data": DOCUMENT_UPLOAD,
        },
        responses={201: EvaluationOut},
    )
    def post(self, request: Request) -> Response:
        if request.content_type.startswith("multipart/"):
            upload = request.FILES.get("file")
            if upload is None:
                raise InvalidInput(["file: send the document in the multipart field 'file'"])
            source = upload.file
        else:
            # The importer reads the body as a stream (DRF never parses it): `request.body`
            # would hold it all in memory, and refuse one over DATA_UPLOAD_MAX_MEMORY_SIZE.
            source = io.BufferedReader(RequestBody(request._request))
        from apps.interchange.document import import_document

        evaluation = import_document(team=request.user.team, source=source)
        return answer(request, evaluation.id, status.HTTP_201_CREATED)


class EvaluationExport(APIView):
    @extend_schema(
        summary="Export an evaluation",
        parameters=[OpenApiParameter("format", OpenApiTypes.STR, enum=EXPORT_FORMAT_NAMES)],
        responses={(200, "*/*"): OpenApiTypes.BINARY},
    )
    def get(self, request: Request, evaluation_id: int) -> FileResponse:
        evaluation = evaluation_of(request, evaluation_id)
        return export_download(evaluation, request.query_params.get("format", "json"))


class TrecImportIn(serializers.Serializer):
    run = serializers.FileField(help_text="qid Q0 docno rank score tag")
    qrels = serializers.FileField(required=False, help_text="qid iteration docno grade")
    topics = serializers.FileField(required=False, help_text="qid<TAB>keyword text")
    name = serializers.CharField(max_length=200)
    scale = serializers.ChoiceField(choices=Scale.choices)
    metrics = serializers.CharField(help_text="metric@k separated by commas: ndcg@10,precision@5")
    profile = serializers.ChoiceField(choices=Profile.choices, default=Profile.SEARCHTWEAK)
    strategy = serializers.ChoiceField(choices=[1, 3], default=1)
    keep_rank = serializers.BooleanField(default=False, help_text="keep the run's rank column")
    relevant_from = serializers.IntegerField(
        default=1,
        min_value=-100,
        max_value=100,
        help_text="scale custom: the lowest level the binary metrics count as relevant "
        "(trec_eval -l); the levels are those the qrels hold",
    )
    zero_without_results = serializers.BooleanField(
        default=False,
        help_text="judged queries without results count as 0 in the means (trec_eval -c)",
    )

    def validate_metrics(self, text: str) -> list[tuple[str, int]]:
        try:
            return parse_metric_list(text)
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from None


class TrecReportOut(serializers.Serializer):
    keywords = serializers.IntegerField()
    results = serializers.IntegerField()
    results_without_judgements = serializers.IntegerField()
    judged_not_retrieved = serializers.IntegerField()
    score_ties_broken_by_docno = serializers.IntegerField()
    queries_with_judgements_only = serializers.IntegerField()


class TrecImportOut(EvaluationOut):
    import_report = TrecReportOut(help_text="what the import did with the files")


class EvaluationImportTrec(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(
        summary="Import a TREC run with its qrels (and topics) as a new evaluation",
        description="One keyword per qid (text from the topics file when given), results "
        "ordered by score (ties by docno, as trec_eval) unless keep_rank, one graded "
        "slot per qrels line whose document is in the run, and the other qrels lines kept "
        "as judged documents not retrieved (the trec profile counts them, as trec_eval). "
        "The answer is the evaluation with `import_report`: what the import did. A file "
        "with any problem is refused whole, listing every problem with its line.",
        request={"multipart/form-data": TrecImportIn},
        responses={201: TrecImportOut},
    )
    def post(self, request: Request) -> Response:
        from apps.interchange.trec import import_trec

        data = TrecImportIn(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        imported = import_trec(
            team=request.user.team,
            # The uploads themselves, not their files: problems name them as uploaded.
            run=fields["run"],
            qrels=fields.get("qrels"),
            topics=fields.get("topics"),
            name=fields["name"].strip(),
            scale=fields["scale"],
            metrics=fields["metrics"],
            profile=fields["profile"],
            strategy=int(fields["strategy"]),
            keep_rank=fields["keep_rank"],
            relevant_from=fields["relevant_from"],
            zero_without_results=fields["zero_without_results"],
        )
        evaluation = get_object_or_404(team_evaluations(request), id=imported.evaluation.id)
        body = {**EvaluationOut(evaluation).data, "import_report": asdict(imported.report)}
        return Response(body, status=status.HTTP_201_CREATED)
