"""The lead's import page and export downloads, through real URLs."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.evaluations.models import Evaluation, Keyword
from tests.factories import client_for, make_evaluation

pytestmark = pytest.mark.django_db(transaction=True)

DOCUMENT = {
    "format": "relevo.evaluation/1",
    "name": "Holiday query set, try 4",
    "scale": "graded",
    "strategy": 1,
    "metrics": [{"metric": "cg", "k": 5}],
    "keywords": [
        {
            "keyword": "red running shoes",
            "snapshots": [
                {"position": 1, "doc_id": "sku-1", "name": "Trail runner", "grades": [3]},
                {"position": 2, "doc_id": "sku-2", "name": "Sandal", "grades": [1]},
            ],
        }
    ],
}


def upload(name: str, content: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content.encode())


def test_a_lead_imports_a_document_and_lands_on_its_page_with_metrics(owner, team_a):
    client = client_for(owner)

    response = client.post(
        "/evaluations/import/",
        {"kind": "json", "document": upload("e.json", json.dumps(DOCUMENT))},
        follow=True,
    )

    evaluation = Evaluation.objects.get(team=team_a, name="Holiday query set, try 4")
    assert response.redirect_chain[-1][0] == f"/evaluations/{evaluation.id}/"
    assert "4.0000" in response.content.decode()  # CG@5 = 3 + 1


def test_a_broken_document_lists_every_problem_and_writes_nothing(owner, team_a):
    client = client_for(owner)
    broken = dict(DOCUMENT, scale="huge", keywords=[DOCUMENT["keywords"][0]] * 2)

    response = client.post(
        "/evaluations/import/", {"kind": "json", "document": upload("e.json", json.dumps(broken))}
    )

    page = response.content.decode()
    assert response.status_code == 200
    assert 'data-testid="import-problems"' in page
    assert "scale" in page and "keywords[1]" in page
    assert not Evaluation.objects.exists() and not Keyword.objects.exists()


def test_a_lead_imports_a_trec_run_with_qrels(owner, team_a):
    client = client_for(owner)

    response = client.post(
        "/evaluations/import/",
        {
            "kind": "trec",
            "run": upload("run.txt", "q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\n"),
            "qrels": upload("qrels.txt", "q1 0 d1 2\n"),
            "name": "Run A",
            "scale": "graded",
            "profile": "trec",
            "metrics": "cg@2",
        },
    )

    evaluation = Evaluation.objects.get(team=team_a, name="Run A")
    assert response.status_code == 302
    assert evaluation.total_slots == 2 and evaluation.graded_slots == 1


def test_the_import_page_asks_for_the_files_each_kind_needs(owner):
    response = client_for(owner).post("/evaluations/import/", {"kind": "trec", "metrics": "x@y"})

    page = response.content.decode()
    assert "Choose the run file." in page
    assert "Name the new evaluation." in page
    assert "is not metric@k" in page


def test_an_evaluator_may_not_import(evaluator):
    assert client_for(evaluator).get("/evaluations/import/").status_code == 403


def test_a_lead_downloads_every_export_format(owner, team_a):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2})
    client = client_for(owner)

    for name, extension in [
        ("json", ".json"),
        ("csv", ".csv"),
        ("qrels", ".qrels"),
        ("qrels-raw", ".raw.qrels"),
        ("run", ".run"),
    ]:
        response = client.get(f"/evaluations/{evaluation.id}/export/?format={name}")
        assert response.status_code == 200
        assert response["Content-Disposition"] == (
            f'attachment; filename="evaluation-{evaluation.id}{extension}"'
        )
    body = b"".join(
        client.get(f"/evaluations/{evaluation.id}/export/?format=csv").streaming_content
    )
    assert body.decode().splitlines()[0] == (
        "keyword,position,doc_id,name,value,grades,graders,"
        "ai_judge_models,ai_judge_prompt_versions,ai_judge_reasons,"
        "grade_labels,skipped_by,skip_reasons,grade_reasons,information_need,keyword_notes,"
        "grade_sources"
    )


def test_exports_are_for_the_teams_leads_only(owner, evaluator, outsider, team_a):
    evaluation = make_evaluation(team=team_a)
    url = f"/evaluations/{evaluation.id}/export/?format=json"

    assert client_for(evaluator).get(url).status_code == 403
    assert client_for(outsider).get(url).status_code == 404
    assert client_for(owner).get(url.replace("json", "xml")).status_code == 404
