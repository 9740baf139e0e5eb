"""The API, mounted at /api/: version 1 under v1/, its OpenAPI schema and documentation.

Every route of v1 is named and ends with a slash, as the site's pages do."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from . import (
    agreement,
    calibrations,
    click_judgements,
    click_logs,
    comparisons,
    decisive_order,
    evaluations,
    gate,
    gate_runs,
    judge_chains,
    judge_prompts,
    judge_runs,
    judges,
    keywords,
    library,
    lifecycle,
    panel_weights,
    panels,
    query_sets,
    search_models,
    trec_eval,
    tries,
)
from .authentication import PageVisitor

app_name = "api"

v1 = [
    path("evaluations/", evaluations.EvaluationListCreate.as_view(), name="evaluation_list"),
    path("evaluations/import/", evaluations.EvaluationImport.as_view(), name="evaluation_import"),
    path(
        "evaluations/import-trec/",
        evaluations.EvaluationImportTrec.as_view(),
        name="evaluation_import_trec",
    ),
    path(
        "evaluations/<int:evaluation_id>/",
        lifecycle.EvaluationEdit.as_view(),
        name="evaluation_detail",
    ),
    path(
        "evaluations/<int:evaluation_id>/start/",
        evaluations.EvaluationStart.as_view(),
        name="evaluation_start",
    ),
    path(
        "evaluations/<int:evaluation_id>/stop/",
        evaluations.EvaluationStop.as_view(),
        name="evaluation_stop",
    ),
    path(
        "evaluations/<int:evaluation_id>/finish/",
        evaluations.EvaluationFinish.as_view(),
        name="evaluation_finish",
    ),
    path(
        "evaluations/<int:evaluation_id>/stale/requeue/",
        evaluations.EvaluationStaleRequeue.as_view(),
        name="evaluation_stale_requeue",
    ),
    path(
        "evaluations/<int:evaluation_id>/clone/",
        lifecycle.EvaluationClone.as_view(),
        name="evaluation_clone",
    ),
    path(
        "evaluations/<int:evaluation_id>/archive/",
        lifecycle.EvaluationArchive.as_view(),
        name="evaluation_archive",
    ),
    path(
        "evaluations/<int:evaluation_id>/pin/",
        lifecycle.EvaluationPin.as_view(),
        name="evaluation_pin",
    ),
    path(
        "evaluations/<int:evaluation_id>/baseline/",
        lifecycle.EvaluationBaseline.as_view(),
        name="evaluation_baseline",
    ),
    path(
        "evaluations/<int:evaluation_id>/export/",
        evaluations.EvaluationExport.as_view(),
        name="evaluation_export",
    ),
    path(
        "evaluations/<int:evaluation_id>/keywords/",
        keywords.KeywordList.as_view(),
        name="keyword_list",
    ),
    path(
        "evaluations/<int:evaluation_id>/keywords/<int:keyword_id>/",
        keywords.KeywordDetail.as_view(),
        name="keyword_detail",
    ),
    path(
        "evaluations/<int:evaluation_id>/keywords/<int:keyword_id>/notes/",
        keywords.KeywordNotesDetail.as_view(),
        name="keyword_notes",
    ),
    path(
        "evaluations/<int:evaluation_id>/judgements/",
        keywords.JudgementList.as_view(),
        name="judgement_list",
    ),
    path(
        "evaluations/<int:evaluation_id>/agreement/",
        agreement.EvaluationAgreement.as_view(),
        name="evaluation_agreement",
    ),
    path(
        "evaluations/<int:evaluation_id>/decisive-order/",
        decisive_order.DecisiveOrderDetail.as_view(),
        name="decisive_order",
    ),
    path(
        "evaluations/<int:evaluation_id>/judge-chain/",
        judge_chains.ChainDetail.as_view(),
        name="judge_chain",
    ),
    path(
        "evaluations/<int:evaluation_id>/judge-chain/steps/",
        judge_chains.ChainSteps.as_view(),
        name="judge_chain_steps",
    ),
    path("models/", search_models.SearchModelList.as_view(), name="search_model_list"),
    path("click-logs/", click_logs.ClickLogListImport.as_view(), name="click_logs"),
    path("click-logs/<int:log_id>/", click_logs.ClickLogDetail.as_view(), name="click_log"),
    path(
        "click-logs/<int:log_id>/judgements/",
        click_judgements.ClickJudgementsListCreate.as_view(),
        name="click_judgements",
    ),
    path(
        "click-judgement-jobs/<int:job_id>/",
        click_judgements.ClickJudgementJobDetail.as_view(),
        name="click_judgement_job",
    ),
    path(
        "evaluations/<int:evaluation_id>/click-grades/",
        click_judgements.EvaluationClickGrades.as_view(),
        name="evaluation_click_grades",
    ),
    path("library/", library.LibraryRead.as_view(), name="library"),
    path("library/export/", library.LibraryExport.as_view(), name="library_export"),
    path("library/lists/", library.ListListImport.as_view(), name="library_lists"),
    path("library/lists/<int:list_id>/", library.ListDetail.as_view(), name="library_list_detail"),
    path("judges/", judges.JudgeListCreate.as_view(), name="judge_list"),
    path("panels/", panels.PanelListCreate.as_view(), name="panel_list"),
    path("panels/<int:panel_id>/", panels.PanelDetail.as_view(), name="panel_detail"),
    path("judge-prompts/", judge_prompts.PromptListCreate.as_view(), name="judge_prompt_list"),
    path(
        "judge-prompts/<int:prompt_id>/",
        judge_prompts.PromptDetail.as_view(),
        name="judge_prompt_detail",
    ),
    path("judges/<int:judge_id>/", judges.JudgeDetail.as_view(), name="judge_detail"),
    path(
        "judges/<int:judge_id>/test-connection/",
        judges.JudgeTestConnection.as_view(),
        name="judge_test_connection",
    ),
    path(
        "judges/<int:judge_id>/fit-weights/",
        panel_weights.PanelFitWeights.as_view(),
        name="judge_fit_weights",
    ),
    path("judges/<int:judge_id>/runs/", judge_runs.JudgeRunStart.as_view(), name="judge_run_start"),
    path("judge-runs/", judge_runs.JudgeRunList.as_view(), name="judge_run_list"),
    path("judge-runs/<int:run_id>/", judge_runs.JudgeRunDetail.as_view(), name="judge_run_detail"),
    *[
        path(
            f"judge-runs/<int:run_id>/{action}/",
            judge_runs.JudgeRunControl.as_view(action=action),
            name=f"judge_run_{action.replace('-', '_')}",
        )
        for action in judge_runs.JudgeRunControl.ACTIONS
    ],
    path(
        "judge-runs/<int:run_id>/failures/",
        judge_runs.JudgeRunFailures.as_view(),
        name="judge_run_failures",
    ),
    path(
        "judge-runs/<int:run_id>/calls/",
        judge_runs.JudgeRunCallLog.as_view(),
        name="judge_run_call_log",
    ),
    path("gold-sets/", calibrations.GoldSetListCreate.as_view(), name="gold_set_list"),
    path(
        "gold-sets/<int:gold_set_id>/",
        calibrations.GoldSetDetail.as_view(),
        name="gold_set_detail",
    ),
    path(
        "gold-sets/<int:gold_set_id>/items/",
        calibrations.GoldSetItems.as_view(),
        name="gold_set_items",
    ),
    path(
        "gold-sets/<int:gold_set_id>/calibrations/",
        calibrations.CalibrationStart.as_view(),
        name="calibration_start",
    ),
    path("calibrations/", calibrations.CalibrationList.as_view(), name="calibration_list"),
    path(
        "calibrations/<int:calibration_id>/",
        calibrations.CalibrationDetail.as_view(),
        name="calibration_detail",
    ),
    *[
        path(
            f"calibrations/<int:calibration_id>/{action}/",
            calibrations.CalibrationControl.as_view(action=action),
            name=f"calibration_{action.replace('-', '_')}",
        )
        for action in calibrations.CalibrationControl.ACTIONS
    ],
    path(
        "calibrations/<int:calibration_id>/failures/",
        calibrations.CalibrationFailures.as_view(),
        name="calibration_failures",
    ),
    path(
        "calibrations/<int:calibration_id>/calls/",
        calibrations.CalibrationCallLog.as_view(),
        name="calibration_call_log",
    ),
    path("judge-gate/", calibrations.JudgeGateDetail.as_view(), name="judge_gate"),
    path(
        "models/<int:model_id>/",
        search_models.SearchModelDetail.as_view(),
        name="search_model_detail",
    ),
    path("comparisons/", comparisons.ComparisonView.as_view(), name="comparison"),
    path("gate/", gate.GateView.as_view(), name="gate"),
    path("gate/runs/<int:run_id>/", gate_runs.GateRunDetail.as_view(), name="gate_run"),
    path("query-sets/", query_sets.QuerySetListCreate.as_view(), name="query_sets"),
    path("query-sets/sample/", query_sets.QuerySetSample.as_view(), name="query_set_sample"),
    path("query-sets/<int:set_id>/", query_sets.QuerySetDetail.as_view(), name="query_set"),
    path("tries/", tries.TryListCreate.as_view(), name="tries"),
    path("tries/<int:try_id>/", tries.TryDetail.as_view(), name="try_detail"),
    path("trec-eval/", trec_eval.TrecEvalView.as_view(), name="trec_eval"),
]

# These routes once had no trailing slash, and integrations call them so: their
# old paths answer as before, with the same views (a redirect would not do: many clients
# do not follow one with a POST). Built with schema=None, which keeps them out of the
# OpenAPI schema (DRF's and drf-spectacular's generators skip such views): the schema
# lists each operation once, at its path with the slash. Named as the route plus
# "_unslashed".
UNSLASHED = (
    "evaluation_import",
    "evaluation_import_trec",
    "evaluation_start",
    "evaluation_stop",
    "evaluation_finish",
    "evaluation_clone",
    "evaluation_archive",
    "evaluation_pin",
    "evaluation_baseline",
    "evaluation_export",
)
unslashed = [
    path(
        str(route.pattern).removesuffix("/"),
        route.callback.cls.as_view(schema=None),
        name=f"{route.name}_unslashed",
    )
    for route in v1
    if route.name in UNSLASHED
]

urlpatterns = [
    path("v1/", include([*v1, *unslashed])),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves the page's start-up script from a URL of its own (?script),
    # instead of inline: the Content-Security-Policy (config/settings.py) runs no inline
    # script, and this page needs no exception to it.
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api:schema", authentication_classes=[PageVisitor]
        ),
        name="docs",
    ),
]
