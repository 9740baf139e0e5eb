"""The API contract: /api/schema/ is a valid OpenAPI 3 document listing every v1 operation,
/api/docs/ works offline, and no request generated from the schema gets a server error.

The generated requests (schemathesis) go through the Django WSGI application with a real
team token, against a team that has evaluations in every state. Each operation is its own
test with a bounded number of examples."""

import json
import re

import pytest
import schemathesis
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import URLPattern
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from apps.accounts.api_tokens import api_token_create
from apps.api.urls import v1
from apps.endpoints.tests.factories import make_model
from apps.judges import chains, controls
from apps.judges.calibration import calibration_create, calibration_execute
from apps.judges.gold_sets import gold_set_create
from apps.judges.models import CalibrationRun, GoldSet
from apps.judges.services import judge_create
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.steps import evaluation_finish_now
from apps.scoring.services import recompute_marked
from config.wsgi import application
from tests.factories import make_evaluation, make_grader, make_team, slots_of

OPENAPI_JSON = {"HTTP_ACCEPT": "application/vnd.oai.openapi+json"}


def v1_paths() -> set[str]:
    """Every route of apps.api.urls.v1, written as OpenAPI writes paths."""
    paths = set()
    for pattern in v1:
        assert isinstance(pattern, URLPattern)
        route = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))
        paths.add(f"/api/v1/{route}")
    return paths


def openapi_document() -> dict:
    response = Client().get("/api/schema/", **OPENAPI_JSON)
    assert response.status_code == 200
    return json.loads(response.content)


# --- The document -----------------------------------------------------------------------


def test_the_schema_is_a_valid_openapi_3_document():
    document = openapi_document()

    assert document["openapi"].startswith("3.")
    assert document["info"]["title"] == "Relevo API"
    # Validated against the OpenAPI 3 meta-schema; raises on any violation.
    schemathesis.openapi.from_dict(document).validate()


def test_the_schema_lists_every_v1_operation_and_nothing_else():
    paths = openapi_document()["paths"]

    assert set(paths) == v1_paths()
    assert {path: sorted(methods) for path, methods in paths.items()} == {
        "/api/v1/evaluations/": ["get", "post"],
        "/api/v1/evaluations/import/": ["post"],
        "/api/v1/evaluations/import-trec/": ["post"],
        "/api/v1/evaluations/{evaluation_id}/": ["delete", "get", "patch"],
        "/api/v1/evaluations/{evaluation_id}/clone/": ["post"],
        "/api/v1/evaluations/{evaluation_id}/archive/": ["delete", "post"],
        "/api/v1/evaluations/{evaluation_id}/pin/": ["delete", "post"],
        "/api/v1/evaluations/{evaluation_id}/baseline/": ["delete", "post"],
        "/api/v1/evaluations/{evaluation_id}/start/": ["post"],
        "/api/v1/evaluations/{evaluation_id}/stale/requeue/": ["post"],
        "/api/v1/evaluations/{evaluation_id}/stop/": ["post"],
        "/api/v1/evaluations/{evaluation_id}/finish/": ["post"],
        "/api/v1/evaluations/{evaluation_id}/export/": ["get"],
        "/api/v1/evaluations/{evaluation_id}/keywords/": ["get", "post"],
        "/api/v1/evaluations/{evaluation_id}/keywords/{keyword_id}/": ["delete", "patch"],
        "/api/v1/evaluations/{evaluation_id}/keywords/{keyword_id}/notes/": ["put"],
        "/api/v1/evaluations/{evaluation_id}/judgements/": ["get"],
        "/api/v1/evaluations/{evaluation_id}/agreement/": ["get"],
        "/api/v1/evaluations/{evaluation_id}/decisive-order/": ["delete", "get", "put"],
        "/api/v1/evaluations/{evaluation_id}/judge-chain/": ["get", "post"],
        "/api/v1/evaluations/{evaluation_id}/judge-chain/steps/": ["get"],
        "/api/v1/models/": ["get"],
        "/api/v1/models/{model_id}/": ["get"],
        "/api/v1/comparisons/": ["get"],
        "/api/v1/gate/": ["get", "post"],
        "/api/v1/gate/runs/{run_id}/": ["get"],
        "/api/v1/trec-eval/": ["post"],
        "/api/v1/judges/": ["get", "post"],
        "/api/v1/judge-prompts/": ["get", "post"],
        "/api/v1/judge-prompts/{prompt_id}/": ["delete", "get", "patch"],
        "/api/v1/judges/{judge_id}/": ["delete", "get", "patch"],
        "/api/v1/judges/{judge_id}/runs/": ["post"],
        "/api/v1/judges/{judge_id}/test-connection/": ["post"],
        "/api/v1/judges/{judge_id}/fit-weights/": ["post"],
        "/api/v1/panels/": ["get", "post"],
        "/api/v1/panels/{panel_id}/": ["get", "patch"],
        "/api/v1/judge-runs/": ["get"],
        "/api/v1/judge-runs/{run_id}/": ["get"],
        "/api/v1/judge-runs/{run_id}/pause/": ["post"],
        "/api/v1/judge-runs/{run_id}/resume/": ["post"],
        "/api/v1/judge-runs/{run_id}/cancel/": ["post"],
        "/api/v1/judge-runs/{run_id}/retry-failures/": ["post"],
        "/api/v1/judge-runs/{run_id}/failures/": ["get"],
        "/api/v1/judge-runs/{run_id}/calls/": ["get"],
        "/api/v1/gold-sets/": ["get", "post"],
        "/api/v1/gold-sets/{gold_set_id}/": ["delete", "get"],
        "/api/v1/gold-sets/{gold_set_id}/items/": ["get"],
        "/api/v1/gold-sets/{gold_set_id}/calibrations/": ["post"],
        "/api/v1/calibrations/": ["get"],
        "/api/v1/calibrations/{calibration_id}/": ["get"],
        "/api/v1/calibrations/{calibration_id}/cancel/": ["post"],
        "/api/v1/calibrations/{calibration_id}/retry-failures/": ["post"],
        "/api/v1/calibrations/{calibration_id}/failures/": ["get"],
        "/api/v1/calibrations/{calibration_id}/calls/": ["get"],
        "/api/v1/judge-gate/": ["get", "patch", "put"],
        "/api/v1/click-logs/": ["get", "post"],
        "/api/v1/click-logs/{log_id}/": ["delete", "get"],
        "/api/v1/click-logs/{log_id}/judgements/": ["get", "post"],
        "/api/v1/click-judgement-jobs/{job_id}/": ["get"],
        "/api/v1/evaluations/{evaluation_id}/click-grades/": ["post"],
        "/api/v1/library/": ["get"],
        "/api/v1/library/export/": ["get"],
        "/api/v1/library/lists/": ["get", "post"],
        "/api/v1/library/lists/{list_id}/": ["delete", "get"],
        "/api/v1/query-sets/": ["get", "post"],
        "/api/v1/query-sets/sample/": ["post"],
        "/api/v1/query-sets/{set_id}/": ["delete", "get"],
        "/api/v1/tries/": ["get", "post"],
        "/api/v1/tries/{try_id}/": ["get"],
    }


def test_every_operation_asks_for_the_team_bearer_token():
    document = openapi_document()

    assert document["components"]["securitySchemes"]["teamToken"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "A team API token (Team > API tokens, or `manage.py create_api_token`).",
    }
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            assert operation["security"] == [{"teamToken": []}], (method, path)


def test_the_schema_documents_the_list_filters_and_export_formats():
    paths = openapi_document()["paths"]

    listed = {p["name"]: p for p in paths["/api/v1/evaluations/"]["get"]["parameters"]}
    assert {"status", "scale", "tag", "search", "page", "page_size"} <= set(listed)
    assert sorted(listed["status"]["schema"]["enum"]) == ["active", "finished", "pending"]
    export = paths["/api/v1/evaluations/{evaluation_id}/export/"]["get"]["parameters"]
    [format_parameter] = [p for p in export if p["name"] == "format"]
    assert sorted(format_parameter["schema"]["enum"]) == [
        "csv",
        "json",
        "qrels",
        "qrels-raw",
        "run",
        "topics",
        "trec_eval",
    ]


def test_the_schema_documents_the_evaluation_document_for_import():
    body = openapi_document()["paths"]["/api/v1/evaluations/import/"]["post"]["requestBody"]

    document = body["content"]["application/json"]["schema"]
    assert document["required"] == ["format", "name", "scale", "metrics"]
    assert document["properties"]["format"]["enum"] == ["relevo.evaluation/1"]
    snapshot = document["properties"]["keywords"]["items"]["properties"]["snapshots"]["items"]
    assert {"position", "doc_id", "grades", "attributes"} <= set(snapshot["properties"])
    upload = body["content"]["multipart/form-data"]["schema"]
    assert upload["properties"]["file"] == {"type": "string", "format": "binary"}


def test_the_schema_is_also_served_as_yaml_without_a_token():
    response = Client().get("/api/schema/")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.oai.openapi")
    assert response.content.startswith(b"openapi: 3.")


# --- The docs page ----------------------------------------------------------------------


def static_urls(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="(/static/[^"]+)"', html)


@pytest.mark.django_db
def test_the_docs_page_loads_swagger_ui_from_our_own_static_files():
    response = Client().get("/api/docs/")

    assert response.status_code == 200
    html = response.content.decode()
    # The page's start-up script, from a URL of its own (no inline script runs under the
    # Content-Security-Policy), points Swagger UI at the schema.
    assert '<script src="/api/docs/?script="></script>' in html
    script = Client().get("/api/docs/?script=")
    assert script["Content-Type"].startswith("application/javascript")
    assert "/api/schema/" in script.content.decode()
    urls = static_urls(html)
    assert {url.rsplit("/", 1)[1] for url in urls} >= {
        "swagger-ui.css",
        "swagger-ui-bundle.js",
        "swagger-ui-standalone-preset.js",
    }
    assert all(url.startswith("/static/drf_spectacular_sidecar/swagger-ui-dist/") for url in urls)
    # Nothing from a CDN or any other host.
    assert not re.findall(r'(?:src|href)="(?:https?:)?//', html)
    for url in urls:
        assert finders.find(url.removeprefix("/static/")), url


@pytest.mark.django_db
def test_the_docs_pages_static_files_answer_200(settings):
    # Tests run with DEBUG off and no collectstatic; WhiteNoise serves from the finders.
    settings.WHITENOISE_USE_FINDERS = True
    settings.WHITENOISE_AUTOREFRESH = True
    client = Client()

    for url in static_urls(client.get("/api/docs/").content.decode()):
        response = client.get(url)
        assert response.status_code == 200, url
        assert b"".join(response.streaming_content), url


@pytest.mark.django_db
def test_the_docs_page_works_for_a_logged_in_person_too():
    team = make_team("Team A", owner="owner@a.test")
    client = Client()
    client.force_login(team.memberships.get().user)

    response = client.get("/api/docs/")

    assert response.status_code == 200
    assert b"swagger-ui-bundle.js" in response.content


# --- Generated requests -----------------------------------------------------------------

schema = schemathesis.openapi.from_wsgi("/api/schema/", application, headers=OPENAPI_JSON)


@pytest.fixture
def team_data(settings) -> dict:
    """A team with a token and evaluations pending, active (partly graded) and finished,
    a gold set drawn from the active one and a judge's calibration on it, and an
    evaluation with a chain of judges that sent some of its results to people."""
    team = make_team("Schema team", owner="owner@schema.test")
    _token, text = api_token_create(team=team, name="schemathesis")
    grader = make_grader(team, "grader@schema.test")
    pending = make_evaluation(team=team, start=False, keywords={"hat": 2, "scarf": 2})
    active = make_evaluation(team=team, strategy=3, keywords={"red shoes": 3, "blue shirt": 2})
    for slot in slots_of(active)[::3]:  # the first of each result's three slots
        slot_judge(slot_id=slot.id, giver=Giver.recorded(grader), grade=2, reason="fits")
    finished = make_evaluation(team=team, keywords={"boots": 2})
    slot_judge(slot_id=slots_of(finished)[0].id, giver=Giver.recorded(None, "vendor-1"), grade=1)
    recompute_marked()
    evaluation_finish_now(evaluation=finished)
    other_team = make_team("Other team")
    theirs = make_evaluation(team=other_team, start=False)
    our_model, their_model = make_model(team), make_model(other_team)
    gold = gold_set_create(team=team, name="Schema gold", baseline=active.id, keywords=2, seed=1)
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    judge = judge_create(
        team=team, name="Judge", protocol="openai", base_url="http://127.0.0.1:9/v1", model_name="m"
    )
    # Its address refused from now on: a calibration (re)started by a request stops at
    # its first call, at once and without a network.
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = False
    ours = calibration_create(gold_set=gold, judge=judge)
    calibration_execute(run_id=ours.id)
    their_gold = GoldSet.objects.create(
        team=other_team,
        name="Theirs",
        baseline_name="x",
        scale="graded",
        profile="searchtweak",
        seed=1,
    )
    their_judge = judge_create(
        team=other_team,
        name="J",
        protocol="openai",
        base_url="https://x.example/v1",
        model_name="m",
    )
    theirs_calibrated = CalibrationRun.objects.create(
        gold_set=their_gold, judge=their_judge, model_name="m", prompt_version="v"
    )
    # The judge's run stops at its first call (its address refused); its grades are
    # written as it would have, and the chain sends half of them (the audit) to people.
    chained = make_evaluation(team=team, keywords={"cap": 3, "scarf": 3})
    chain = controls.chain_start(evaluation=chained, first=judge.id, audit_percent=50, seed=3)
    for slot in slots_of(chained):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(judge.user), grade=1, reason="fits")
    while chains.chain_advance(chain_id=chain.id) == "more":
        pass
    return {
        "headers": {"Authorization": f"Bearer {text}"},
        "evaluation_ids": [pending.id, active.id, finished.id, theirs.id, chained.id],
        "model_ids": [our_model.id, their_model.id],
        "gold_set_ids": [gold.id, their_gold.id],
        "calibration_ids": [ours.id, theirs_calibrated.id],
    }


@pytest.mark.django_db(transaction=True)
@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_generated_request_gets_a_server_error(case, team_data):
    if case.operation.path.endswith(("/import/", "/export/")):
        pytest.importorskip("apps.interchange", reason="the importer is not there")
    parameters = case.path_parameters or {}
    for name in ("evaluation_id", "model_id", "gold_set_id", "calibration_id"):
        generated = parameters.get(name)
        if isinstance(generated, int) and not isinstance(generated, bool) and generated % 5:
            # Mostly an object that exists (evaluations of ours in each state, one with a
            # chain, a model, a gold set or a calibration of ours, or another team's); the
            # rest keep the generated id, so odd ids are tried too.
            ids = team_data[name + "s"]
            parameters[name] = ids[generated % len(ids)]
    listed = (case.query or {}).get("evaluations")
    if isinstance(listed, str) and len(listed) % 4:
        # A comparison: mostly two evaluations that exist (ours in each state, or another
        # team's); the rest keep the generated text.
        ids = team_data["evaluation_ids"]
        case.query["evaluations"] = f"{ids[len(listed) % 3]},{ids[(len(listed) + 1) % 4]}"
    case.call_and_validate(headers=team_data["headers"], checks=[not_a_server_error])
