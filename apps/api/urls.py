from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from . import evaluations, keywords
from .authentication import PageVisitor

v1 = [
    path("evaluations/", evaluations.EvaluationListCreate.as_view()),
    path("evaluations/import", evaluations.EvaluationImport.as_view()),
    path("evaluations/import-trec", evaluations.EvaluationImportTrec.as_view()),
    path("evaluations/<int:evaluation_id>/", evaluations.EvaluationDetail.as_view()),
    path("evaluations/<int:evaluation_id>/start", evaluations.EvaluationStart.as_view()),
    path("evaluations/<int:evaluation_id>/stop", evaluations.EvaluationStop.as_view()),
    path("evaluations/<int:evaluation_id>/finish", evaluations.EvaluationFinish.as_view()),
    path("evaluations/<int:evaluation_id>/export", evaluations.EvaluationExport.as_view()),
    path("evaluations/<int:evaluation_id>/keywords/", keywords.KeywordList.as_view()),
    path("evaluations/<int:evaluation_id>/judgements/", keywords.JudgementList.as_view()),
]

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api_schema"),
    path(
        "docs/",
        SpectacularSwaggerView.as_view(url_name="api_schema", authentication_classes=[PageVisitor]),
        name="api_docs",
    ),
]
