"""POST /api/v1/evaluations/import/ and GET /api/v1/evaluations/{id}/export, with a real team
token, in the formats of interchange.md.

Both call apps.interchange; each test skips with that reason while the
package is not there."""

import csv
import io
import json
from urllib.parse import unquote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from apps.accounts.api_tokens import api_token_create
from apps.accounts.models import Tag
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Keyword,
    Snapshot,
)
from apps.judging.judgements import Giver, slot_judge
from apps.scoring.services import recompute_marked
from tests.factories import make_evaluation, make_grader, slots_of

pytestmark = pytest.mark.django_db

IMPORT = "/api/v1/evaluations/import/"


def needs_interchange() -> None:
    pytest.importorskip(
        "apps.interchange",
        reason="apps.interchange (import_document, EXPORT_FORMATS) is not written yet",
    )


def export_url(evaluation, format_name: str | None = None) -> str:
    url = f"/api/v1/evaluations/{evaluation.id}/export/"
    return f"{url}?format={format_name}" if format_name else url


def row_counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (Evaluation, EvaluationMetric, Keyword, Snapshot, FeedbackSlot, Tag)
    }


def body_of(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def trec_lines(response) -> list[list[str]]:
    """A TREC file's lines as columns, each unquoted (a space in a doc id is %20)."""
    return [
        [unquote(column) for column in line.split()]
        for line in body_of(response).decode().splitlines()
        if line.strip()
    ]


def document(**changes) -> dict:
    doc = {
        "format": "relevo.evaluation/1",
        "name": "Holiday query set, try 4",
        "description": "imported",
        "scale": "graded",
        "strategy": 3,
        "profile": "searchtweak",
        "show_position": False,
        "tags": ["apparel"],
        "metrics": [{"metric": "ndcg", "k": 10}, {"metric": "precision", "k": 5}],
        "keywords": [
            {
                "keyword": "red running shoes",
                "snapshots": [
                    {
                        "position": 1,
                        "doc_id": "sku-123",
                        "name": "Trail runner, red",
                        "image": "https://img.example/sku-123.jpg",
                        "attributes": {"brand": "Acme", "price": 79.9},
                        "grades": [
                            3,
                            {"grader": "grader@a.test", "grade": 2, "reason": "close"},
                            None,
                        ],
                    },
                    {"position": 2, "doc_id": "sku-7", "name": "Sandal", "grades": [0]},
                ],
            },
            {
                "keyword": "blue shirt",
                "snapshots": [
                    {
                        "position": 1,
                        "doc_id": "sku-9",
                        "grades": [{"grader": "vendor-42", "grade": 1}],
                    }
                ],
            },
        ],
    }
    doc.update(changes)
    return doc


def do_import(api: Client, doc, django_capture_on_commit_callbacks, **kwargs):
    """POST the document; what it queues after commit (the metrics) runs too."""
    with django_capture_on_commit_callbacks(execute=True):
        if "file" in kwargs:
            return api.post(IMPORT, {"file": kwargs["file"]})
        return api.post(IMPORT, doc, content_type="application/json")


def finished_evaluation(team) -> Evaluation:
    """Two keywords graded by a member and by an external grader, metrics computed."""
    evaluation = make_evaluation(
        team=team,
        strategy=3,
        keywords={"red shoes": 3, "blue shirt": 2},
        metrics=[("ndcg", 10), ("precision", 3)],
    )
    member = make_grader(team, "member@a.test")
    grades = {"red shoes": [3, 2, None, 0, 1, 1, 2, None, None], "blue shirt": [1, 0, 3]}
    for text, given in grades.items():
        for slot, grade in zip(slots_of(evaluation, text), given, strict=False):
            if grade is None:
                continue
            if slot.index == 0:
                slot_judge(
                    slot_id=slot.id, giver=Giver.recorded(member), grade=grade, reason="sure"
                )
            else:
                slot_judge(
                    slot_id=slot.id, giver=Giver.recorded(None, f"ext-{slot.index}"), grade=grade
                )
    recompute_marked()
    evaluation.refresh_from_db()
    return evaluation


# --- Import -----------------------------------------------------------------------------


def test_import_of_a_json_body_creates_the_evaluation_with_its_grades(
    api, team_a, django_capture_on_commit_callbacks
):
    needs_interchange()
    make_grader(team_a, "grader@a.test")

    response = do_import(api, document(), django_capture_on_commit_callbacks)

    assert response.status_code == 201, response.content
    body = response.json()
    evaluation = Evaluation.objects.get(id=body["id"], team=team_a)
    assert body["name"] == evaluation.name == "Holiday query set, try 4"
    assert (body["scale"], body["strategy"], body["keywords"]) == ("graded", 3, 2)
    assert body["tags"] == ["apparel"]
    assert [(m["metric"], m["k"]) for m in body["metrics"]] == [("ndcg", 10), ("precision", 5)]
    assert list(evaluation.keywords.order_by("position").values_list("text", flat=True)) == [
        "red running shoes",
        "blue shirt",
    ]
    first = Snapshot.objects.get(keyword__evaluation=evaluation, doc_id="sku-123")
    assert (first.position, first.name, first.image) == (
        1,
        "Trail runner, red",
        "https://img.example/sku-123.jpg",
    )
    assert first.attributes == {"brand": "Acme", "price": 79.9}
    slots = FeedbackSlot.objects.filter(snapshot=first).order_by("index")
    assert [s.grade for s in slots] == [3, 2, None]
    assert slots[1].grader.email == "grader@a.test"
    assert slots[1].reason == "close"
    external = FeedbackSlot.objects.get(snapshot__doc_id="sku-9", index=0)
    assert (external.grader, external.external_grader, external.grade) == (None, "vendor-42", 1)
    assert body["graded_slots"] == 4
    assert body["total_slots"] == 9


def test_import_of_a_multipart_file_works_like_a_json_body(
    api, team_a, django_capture_on_commit_callbacks
):
    needs_interchange()
    upload = SimpleUploadedFile(
        "holiday.json", json.dumps(document()).encode(), content_type="application/json"
    )

    response = do_import(api, None, django_capture_on_commit_callbacks, file=upload)

    assert response.status_code == 201, response.content
    assert response.json()["keywords"] == 2
    assert Snapshot.objects.filter(keyword__evaluation_id=response.json()["id"]).count() == 3


def test_import_of_a_json_body_larger_than_djangos_in_memory_limit_works(
    api, settings, django_capture_on_commit_callbacks
):
    # The body used to be read whole (request.body), which Django refuses above
    # DATA_UPLOAD_MAX_MEMORY_SIZE with an HTML 400: a large import could not be sent.
    needs_interchange()
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 50_000
    long = document(scoring_guidelines="Be strict. " * 10_000)

    response = do_import(api, long, django_capture_on_commit_callbacks)

    assert response.status_code == 201, response.content[:500]
    assert Evaluation.objects.get(id=response.json()["id"]).scoring_guidelines.startswith(
        "Be strict. Be strict."
    )


def test_import_of_a_large_multipart_file_works(api, settings, django_capture_on_commit_callbacks):
    needs_interchange()
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 50_000
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 50_000  # kept in a temporary file, not in memory
    content = json.dumps(document(scoring_guidelines="Be strict. " * 10_000)).encode()
    upload = SimpleUploadedFile("large.json", content, content_type="application/json")

    response = do_import(api, None, django_capture_on_commit_callbacks, file=upload)

    assert response.status_code == 201, response.content[:500]


def test_import_as_multipart_without_a_file_field_is_400_naming_file(api):
    response = api.post(IMPORT, {"document": "{}"})

    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["file"]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"scale": "huge"}, "scale"),
        ({"strategy": 2}, "strategy"),
        ({"metrics": [{"metric": "ndcg", "k": 1001}]}, "metrics[0].k"),
        (
            {
                "keywords": [
                    {
                        "keyword": "q",
                        "snapshots": [
                            {"position": 1, "doc_id": "a"},
                            {"position": 1, "doc_id": "b"},
                        ],
                    }
                ]
            },
            "keywords[0].snapshots[1].position",
        ),
        (
            {"keywords": [{"keyword": "q", "snapshots": []}, {"keyword": "q", "snapshots": []}]},
            "keywords[1]",
        ),
    ],
)
def test_import_of_a_bad_document_is_400_naming_the_place_and_writes_nothing(
    changes, field, api, django_capture_on_commit_callbacks
):
    needs_interchange()
    before = row_counts()

    response = do_import(api, document(**changes), django_capture_on_commit_callbacks)

    assert response.status_code == 400
    fields = [e["field"] or "" for e in response.json()["errors"]]
    assert any(f.startswith(field) for f in fields), fields
    assert row_counts() == before


def test_import_lists_every_problem_of_a_document_at_once(api, django_capture_on_commit_callbacks):
    needs_interchange()
    before = row_counts()

    response = do_import(
        api,
        document(scale="huge", strategy=2, metrics=[{"metric": "magic", "k": 5}]),
        django_capture_on_commit_callbacks,
    )

    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["errors"]}
    assert {"scale", "strategy"} <= fields
    assert any((f or "").startswith("metrics[0]") for f in fields)
    assert row_counts() == before


@pytest.mark.parametrize("body", [b"{not json", b"[]", b"", b'"a string"'])
def test_import_of_something_that_is_not_a_document_is_400_and_writes_nothing(
    body, api, django_capture_on_commit_callbacks
):
    needs_interchange()
    before = row_counts()

    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(IMPORT, body, content_type="application/json")

    assert response.status_code == 400
    assert response.json()["errors"]
    assert row_counts() == before


def test_import_belongs_to_the_tokens_team_only(
    api, team_a, team_b, django_capture_on_commit_callbacks
):
    needs_interchange()

    response = do_import(api, document(), django_capture_on_commit_callbacks)

    assert Evaluation.objects.get(id=response.json()["id"]).team == team_a
    assert not Evaluation.objects.filter(team=team_b).exists()
    assert not Tag.objects.filter(team=team_b).exists()


def test_import_reads_and_writes_a_number_of_queries_that_does_not_grow_per_keyword(
    api, django_capture_on_commit_callbacks
):
    needs_interchange()
    size = 12
    keywords = [
        {
            "keyword": f"query {i}",
            "snapshots": [{"position": p, "doc_id": f"d{p}", "grades": [1]} for p in (1, 2, 3)],
        }
        for i in range(size)
    ]
    with CaptureQueriesContext(connection) as small:
        do_import(
            api, document(keywords=keywords[:2], name="small"), django_capture_on_commit_callbacks
        )
    with CaptureQueriesContext(connection) as large:
        response = do_import(
            api, document(keywords=keywords, name="large"), django_capture_on_commit_callbacks
        )

    assert response.status_code == 201
    # Measured: about 45 queries for 2, 12 and 30 keywords (rows are written in batches).
    assert len(large) <= len(small) + 5, (len(small), len(large))


# --- Export -----------------------------------------------------------------------------


def test_export_as_json_is_an_attachment_with_every_value_at_full_precision(api, team_a):
    needs_interchange()
    evaluation = finished_evaluation(team_a)

    response = api.get(export_url(evaluation, "json"))

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert response["Content-Disposition"] == (
        f'attachment; filename="evaluation-{evaluation.id}.json"'
    )
    doc = json.loads(body_of(response))
    assert doc["format"] == "relevo.evaluation/1"
    assert (doc["id"], doc["name"], doc["status"]) == (
        evaluation.id,
        evaluation.name,
        evaluation.status,
    )
    assert (doc["scale"], doc["strategy"]) == ("graded", 3)
    stored = {
        (m.metric, m.k): m.value for m in EvaluationMetric.objects.filter(evaluation=evaluation)
    }
    assert {(m["metric"], m["k"]): m["value"] for m in doc["metrics"]} == stored
    assert [k["keyword"] for k in doc["keywords"]] == ["red shoes", "blue shirt"]
    red = doc["keywords"][0]
    assert [s["doc_id"] for s in red["snapshots"]] == [
        "red shoes-doc-1",
        "red shoes-doc-2",
        "red shoes-doc-3",
    ]
    values = {s.doc_id: s.value for s in Snapshot.objects.filter(keyword__evaluation=evaluation)}
    for keyword in doc["keywords"]:
        for snapshot in keyword["snapshots"]:
            assert snapshot["value"] == values[snapshot["doc_id"]]


@pytest.mark.parametrize(
    ("format_name", "content_type", "filename"),
    [
        ("json", "application/json", "evaluation-{id}.json"),
        ("csv", "text/csv", "evaluation-{id}.csv"),
        ("qrels", "text/plain", "evaluation-{id}.qrels"),
        ("qrels-raw", "text/plain", "evaluation-{id}.raw.qrels"),
        ("run", "text/plain", "evaluation-{id}.run"),
    ],
)
def test_every_export_format_is_an_attachment_of_its_content_type(
    format_name, content_type, filename, api, team_a
):
    needs_interchange()
    evaluation = finished_evaluation(team_a)

    response = api.get(export_url(evaluation, format_name))

    assert response.status_code == 200
    assert response["Content-Type"].split(";")[0] == content_type
    if content_type.startswith("text/"):
        assert response["Content-Type"].endswith("charset=utf-8")
    assert response["Content-Disposition"] == (
        f'attachment; filename="{filename.format(id=evaluation.id)}"'
    )
    assert body_of(response).strip()


def test_export_without_a_format_is_json(api, team_a):
    needs_interchange()
    evaluation = make_evaluation(team=team_a)

    response = api.get(export_url(evaluation))

    assert response.status_code == 200
    assert json.loads(body_of(response))["format"] == "relevo.evaluation/1"


def test_export_as_csv_has_one_row_per_snapshot(api, team_a):
    needs_interchange()
    evaluation = finished_evaluation(team_a)

    response = api.get(export_url(evaluation, "csv"))

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith("attachment;")
    assert f"evaluation-{evaluation.id}" in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(body_of(response).decode())))
    assert ",".join(rows[0]) == (
        "keyword,position,doc_id,name,value,grades,graders,"
        "ai_judge_models,ai_judge_prompt_versions,ai_judge_reasons,"
        "grade_labels,skipped_by,skip_reasons,grade_reasons,information_need,keyword_notes,"
        "grade_sources"
    )
    assert len(rows) == 1 + 5
    first = dict(zip(rows[0], rows[1], strict=True))
    assert (first["keyword"], first["position"], first["doc_id"]) == (
        "red shoes",
        "1",
        "red shoes-doc-1",
    )
    assert sorted(first["grades"].split("|")) == ["2", "3"]
    assert "member@a.test" in first["graders"].split("|")
    assert float(first["value"]) == Snapshot.objects.get(doc_id="red shoes-doc-1").value


def test_export_as_qrels_has_the_aggregated_grade_of_each_graded_snapshot(api, team_a):
    needs_interchange()
    evaluation = finished_evaluation(team_a)
    graded = Snapshot.objects.filter(keyword__evaluation=evaluation, value__isnull=False)

    response = api.get(export_url(evaluation, "qrels"))

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    lines = trec_lines(response)
    assert all(len(line) == 4 for line in lines)
    assert sorted(line[2] for line in lines) == sorted(s.doc_id for s in graded)
    assert all(line[3].lstrip("-").isdigit() for line in lines)


def test_export_as_raw_qrels_has_one_line_per_grade_with_its_grader(api, team_a):
    needs_interchange()
    evaluation = finished_evaluation(team_a)
    grades = FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=False)

    response = api.get(export_url(evaluation, "qrels-raw"))

    assert response.status_code == 200
    lines = trec_lines(response)
    assert len(lines) == grades.count()
    assert {line[1] for line in lines} >= {"member@a.test", "ext-1"}


def test_export_as_a_run_has_one_line_per_snapshot(api, team_a):
    needs_interchange()
    evaluation = finished_evaluation(team_a)

    response = api.get(export_url(evaluation, "run"))

    assert response.status_code == 200
    lines = trec_lines(response)
    assert len(lines) == 5
    assert all(len(line) == 6 and line[1] == "Q0" for line in lines)
    assert {line[2] for line in lines} == set(
        Snapshot.objects.filter(keyword__evaluation=evaluation).values_list("doc_id", flat=True)
    )


def test_export_in_an_unknown_format_is_400_naming_format(api, team_a):
    needs_interchange()
    evaluation = make_evaluation(team=team_a)

    response = api.get(export_url(evaluation, "xml"))

    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["format"]


def test_export_of_another_teams_evaluation_is_404(api, team_b):
    theirs = make_evaluation(team=team_b)

    response = api.get(export_url(theirs, "json"))

    assert response.status_code == 404
    assert response.json()["errors"] == []


@pytest.mark.parametrize("format_name", ["json", "csv", "qrels", "qrels-raw", "run"])
def test_export_reads_the_same_number_of_queries_for_2_and_12_keywords(format_name, api, team_a):
    needs_interchange()
    counts = []
    for size in (2, 12):
        evaluation = make_evaluation(team=team_a, keywords={f"q{i}": 3 for i in range(size)})
        for slot in slots_of(evaluation)[::2]:
            slot_judge(slot_id=slot.id, giver=Giver.recorded(None, "vendor"), grade=1)
        recompute_marked()
        with CaptureQueriesContext(connection) as queries:
            response = api.get(export_url(evaluation, format_name))
            body_of(response)  # a streamed export reads while it is sent
        assert response.status_code == 200
        counts.append(len(queries))

    assert counts[0] == counts[1], counts


# --- Round trip -------------------------------------------------------------------------


def test_an_exported_evaluation_imports_back_with_the_same_keywords_grades_and_values(
    api, team_a, team_b, django_capture_on_commit_callbacks
):
    needs_interchange()
    original = finished_evaluation(team_a)
    exported = body_of(api.get(export_url(original, "json")))
    # Into another team, as into an empty install.
    _token, text = api_token_create(team=team_b, name="restore")
    other = Client(headers={"Authorization": f"Bearer {text}"})

    response = do_import(other, json.loads(exported), django_capture_on_commit_callbacks)

    assert response.status_code == 201, response.content
    copy = Evaluation.objects.get(id=response.json()["id"])
    assert copy.team == team_b

    def shape(evaluation):
        return [
            (s.keyword.text, s.position, s.doc_id, s.name, s.value)
            for s in Snapshot.objects.filter(keyword__evaluation=evaluation)
            .select_related("keyword")
            .order_by("keyword__position", "position")
        ]

    def grades(evaluation):
        return [
            (s.keyword.text, s.snapshot_position, s.index, s.grade, s.external_grader or None)
            for s in FeedbackSlot.objects.filter(evaluation=evaluation).order_by(
                "keyword_position", "snapshot_position", "index"
            )
        ]

    def metrics(evaluation):
        return list(
            EvaluationMetric.objects.filter(evaluation=evaluation)
            .order_by("position")
            .values_list("metric", "k", "value")
        )

    assert shape(copy) == shape(original)
    assert [g[:4] for g in grades(copy)] == [g[:4] for g in grades(original)]
    assert metrics(copy) == metrics(original)


# --- TREC files over the API --------------------------------------------------------------

RUN = "q1 Q0 d1 1 9.0 sys\nq1 Q0 d2 2 8.0 sys\nq1 Q0 d3 3 7.0 sys\nq2 Q0 d4 1 5.0 sys\n"
QRELS = "q1 0 d1 3\nq1 0 d3 1\nq2 0 d4 0\n"


def trec_form(**changes) -> dict:
    form = {
        "run": SimpleUploadedFile("run.txt", RUN.encode()),
        "qrels": SimpleUploadedFile("qrels.txt", QRELS.encode()),
        "name": "BM25 run",
        "scale": "graded",
        "metrics": "cg@3, ndcg@3",
        "profile": "trec",
    }
    form.update(changes)
    return {key: value for key, value in form.items() if value is not None}


def test_a_trec_run_and_qrels_become_an_evaluation_with_its_grades_and_metrics(api, team_a):
    needs_interchange()

    response = api.post("/api/v1/evaluations/import-trec/", trec_form())

    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["name"], body["scale"], body["profile"], body["keywords"]) == (
        "BM25 run",
        "graded",
        "trec",
        2,
    )
    evaluation = Evaluation.objects.get(id=body["id"], team=team_a)
    assert evaluation.total_slots == 4 and evaluation.graded_slots == 3
    # CG@3 of q1 = 3 + 0 (d2 unjudged) + 1; of q2 = 0; the mean of both keywords.
    cg = next(m for m in body["metrics"] if m["metric"] == "cg")
    assert cg["value"] == pytest.approx((4 + 0) / 2)


def test_a_broken_run_file_is_refused_with_its_line_and_nothing_is_written(api):
    needs_interchange()
    before = row_counts()
    broken = SimpleUploadedFile("run.txt", b"q1 Q0 d1 1 9.0 sys\nq1 Q0 d2\n")

    response = api.post("/api/v1/evaluations/import-trec/", trec_form(run=broken))

    assert response.status_code == 400
    messages = " ".join(f"{e['field']}: {e['message']}" for e in response.json()["errors"])
    assert "line 2" in messages
    assert row_counts() == before


def test_trec_import_names_each_bad_field(api):
    needs_interchange()

    response = api.post(
        "/api/v1/evaluations/import-trec/",
        trec_form(run=None, scale="huge", metrics="ndcg@ten"),
    )

    assert response.status_code == 400
    fields = {error["field"] for error in response.json()["errors"]}
    assert {"run", "scale", "metrics"} <= fields


def test_a_json_export_imported_back_keeps_the_leads_decisions(api, team_a):
    # The round trip through the API keeps everything the export holds.
    from apps.interchange.tests.test_document import graded_evaluation, without_sources
    from apps.judging.models import SnapshotDecision

    graders = [make_grader(team_a, f"ann{i}@example.test") for i in range(2)]
    original = graded_evaluation(team_a, graders)
    exported = json.loads(body_of(api.get(export_url(original, "json"))))
    exported["name"] += " (copy)"  # the team has the original's name

    response = api.post(IMPORT, exported, content_type="application/json")

    assert response.status_code == 201, response.content[:300]
    copy = response.json()["id"]
    [decision] = SnapshotDecision.objects.filter(evaluation_id=copy)
    assert (decision.grade, decision.reason) == (3, "the photo shows it")
    again = without_sources(
        json.loads(body_of(api.get(f"/api/v1/evaluations/{copy}/export/?format=json")))
    )
    identity = {"id", "created_at", "finished_at", "status"}
    assert {k: v for k, v in again.items() if k not in identity} == {
        k: v for k, v in exported.items() if k not in identity
    }


def test_trec_import_problems_name_the_files_as_uploaded_however_large(api, settings):
    needs_interchange()
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 16  # the upload goes to a temporary file

    response = api.post(
        "/api/v1/evaluations/import-trec/",
        trec_form(run=SimpleUploadedFile("week-3.run", b"q1 Q0 d1 1 2.0 x\nq1 Q0 d2\n")),
    )

    assert response.status_code == 400
    assert [error["field"] for error in response.json()["errors"]] == ["week-3.run line 2"]
