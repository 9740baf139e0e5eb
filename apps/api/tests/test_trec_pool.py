"""Over the REST API and on the lead's pages: judged documents a run did not retrieve,
the whole-list cutoff, and the metrics as trec_eval -q prints them."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.factories import client_for

pytestmark = pytest.mark.django_db

# q1: d1 relevant at rank 1, d2 not judged; two relevant documents it did not retrieve.
# q3: judged, never run. The run's second line carries text after its tag.
RUN = "q1 Q0 d1 1 9.0 sys\nq1 Q0 d2 2 8.0 sys trailing text\nq2 Q0 d9 1 1.0 sys\n"
QRELS = "q1 0 d1 2\nq1 0 x7 1\nq1 0 x8 3\nq2 0 d9 0\nq3 0 y1 1\n"


def trec_form(**changes) -> dict:
    form = {
        "run": SimpleUploadedFile("run.txt", RUN.encode()),
        "qrels": SimpleUploadedFile("qrels.txt", QRELS.encode()),
        "name": "BM25 run",
        "scale": "graded",
        "metrics": "ap, recall@1000, ndcg@10",
        "profile": "trec",
    }
    form.update(changes)
    return form


def test_a_trec_import_answers_with_what_it_did_and_whole_list_metrics(api):
    response = api.post("/api/v1/evaluations/import-trec/", trec_form())

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["import_report"] == {
        "keywords": 3,
        "results": 3,
        "results_without_judgements": 1,
        "judged_not_retrieved": 3,
        "score_ties_broken_by_docno": 0,
        "queries_with_judgements_only": 1,
    }
    metrics = {(m["metric"], m["k"]): m for m in body["metrics"]}
    # q1: R = 3 (d1, x7, x8), AP = 1/3; q2: no relevant document, AP = 0; q3 not run.
    assert metrics[("ap", None)]["label"] == "AP"
    assert metrics[("ap", None)]["value"] == pytest.approx((1 / 3 + 0) / 2)
    assert metrics[("ap", None)]["keywords_counted"] == 2
    assert metrics[("recall", 1000)]["label"] == "R@1000"


def test_with_zero_without_results_the_judged_query_without_results_counts(api):
    response = api.post("/api/v1/evaluations/import-trec/", trec_form(zero_without_results="true"))

    body = response.json()
    assert body["zero_without_results"] is True
    ap = next(m for m in body["metrics"] if m["metric"] == "ap")
    assert ap["value"] == pytest.approx((1 / 3 + 0 + 0) / 3)
    assert ap["keywords_counted"] == 3


def test_the_trec_eval_export_comes_from_the_api(api):
    evaluation_id = api.post("/api/v1/evaluations/import-trec/", trec_form()).json()["id"]

    response = api.get(f"/api/v1/evaluations/{evaluation_id}/export/?format=trec_eval")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert f"{'map':<22}\tq1\t0.3333" in lines
    assert f"{'num_q':<22}\tall\t2" in lines
    assert not any("\tq3\t" in line for line in lines)


def test_keywords_and_metrics_take_k_null_for_the_whole_list(api):
    created = api.post(
        "/api/v1/evaluations/",
        {
            "name": "whole",
            "scale": "binary",
            "metrics": [{"metric": "rr", "k": None}, {"metric": "precision", "k": 1000}],
            "keywords": ["shoes"],
        },
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    metrics = [(m["metric"], m["k"], m["label"]) for m in created.json()["metrics"]]
    assert metrics == [("rr", None, "RR"), ("precision", 1000, "P@1000")]

    refused = api.post(
        "/api/v1/evaluations/",
        {"name": "deep", "scale": "binary", "metrics": [{"metric": "rr", "k": 1001}]},
        content_type="application/json",
    )
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["field"] == "metrics[0].k"


def test_the_lead_sees_how_many_judged_documents_a_keyword_did_not_retrieve(api, owner):
    evaluation_id = api.post("/api/v1/evaluations/import-trec/", trec_form()).json()["id"]
    lead = client_for(owner)

    page = lead.get(f"/evaluations/{evaluation_id}/").content.decode()
    assert "+ 2 judged, not retrieved" in page  # q1
    assert "+ 1 judged, not retrieved" in page  # q3

    keyword_id = next(
        k["id"]
        for k in api.get(f"/api/v1/evaluations/{evaluation_id}/keywords/").json()["results"]
        if k["keyword"] == "q1"
    )
    detail = lead.get(f"/evaluations/{evaluation_id}/keywords/{keyword_id}/").content.decode()
    assert "Judged, not retrieved (2)" in detail
    assert "x7" in detail and "x8" in detail
