from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from . import agreement, comparisons, evaluations, keywords, lifecycle, search_models
from .authentication import PageVisitor

v1 = [
    path("evaluations/", evaluations.EvaluationListCreate.as_view()),
    path("evaluations/import", evaluations.EvaluationImport.as_view()),
    path("evaluations/import-trec", evaluations.EvaluationImportTrec.as_view()),
    path("evaluations/<int:evaluation_id>/", lifecycle.EvaluationEdit.as_view()),
    path("evaluations/<int:evaluation_id>/start", evaluations.EvaluationStart.as_view()),
    path("evaluations/<int:evaluation_id>/stop", evaluations.EvaluationStop.as_view()),
    path("evaluations/<int:evaluation_id>/finish", evaluations.EvaluationFinish.as_view()),
    path("evaluations/<int:evaluation_id>/clone", lifecycle.EvaluationClone.as_view()),
    path("evaluations/<int:evaluation_id>/archive", lifecycle.EvaluationArchive.as_view()),
    path("evaluations/<int:evaluation_id>/pin", lifecycle.EvaluationPin.as_view()),
    path("evaluations/<int:evaluation_id>/baseline", lifecycle.EvaluationBaseline.as_view()),
    path("evaluations/<int:evaluation_id>/export", evaluations.EvaluationExport.as_view()),
    path("evaluations/<int:evaluation_id>/keywords/", keywords.KeywordList.as_view()),
    path("evaluations/<int:evaluation_id>/judgements/", keywords.JudgementList.as_view()),
    path("evaluations/<int:evaluation_id>/agreement/", agreement.EvaluationAgreement.as_view()),
    path("models/", search_models.SearchModelList.as_view()),
    path("models/<int:model_id>/", search_models.SearchModelDetail.as_view()),
    path("comparisons/", comparisons.ComparisonView.as_view()),
]

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api_schema"),
    # The split view serves the page's start-up script from a URL of its own (?script),
    # instead of inline: the Content-Security-Policy (config/settings.py) runs no inline
    # script, and this page needs no exception to it.
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api_schema", authentication_classes=[PageVisitor]
        ),
        name="api_docs",
    ),
]
