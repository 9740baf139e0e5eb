"""POST /api/v1/trec-eval/ answers what trec_eval prints for two files, stores nothing,
and refuses a bad file or measure naming its line or field."""

import pytest

from apps.evaluations.models import Evaluation

pytestmark = pytest.mark.django_db

QRELS = b"q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n"
RUN = b"q1 Q0 a 1 3 api-run\nq1 Q0 b 2 2 api-run\nq2 Q0 d 1 5 api-run\n"


def upload(name, content):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, content, content_type="text/plain")


def test_a_run_and_its_qrels_come_back_as_trec_eval_prints_them(api):
    response = api.post(
        "/api/v1/trec-eval/",
        {
            "qrels": upload("q", QRELS),
            "run": upload("r", RUN),
            "measures": "map P.1",
            "per_query": "true",
        },
        format="multipart",
    )
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    assert response.content.decode().splitlines() == [
        "map                   \tq1\t1.0000",
        "P_1                   \tq1\t1.0000",
        "map                   \tq2\t0.0000",
        "P_1                   \tq2\t0.0000",
        "runid                 \tall\tapi-run",
        "num_q                 \tall\t2",
        "map                   \tall\t0.5000",
        "P_1                   \tall\t0.5000",
    ]
    assert not Evaluation.objects.exists()


def test_a_bad_line_is_refused_with_its_file_and_line(api):
    response = api.post(
        "/api/v1/trec-eval/",
        {"qrels": upload("q", b"q1 0 a x\n"), "run": upload("r", RUN)},
        format="multipart",
    )
    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert error["field"] == "qrels line 1"
    assert "must be a whole number" in error["message"]


def test_an_unknown_measure_and_an_option_out_of_range_name_their_fields(api):
    unknown = api.post(
        "/api/v1/trec-eval/",
        {"qrels": upload("q", QRELS), "run": upload("r", RUN), "measures": "utility"},
        format="multipart",
    )
    assert unknown.status_code == 400
    assert unknown.json()["errors"][0]["field"] == "measures"
    deep = api.post(
        "/api/v1/trec-eval/",
        {"qrels": upload("q", QRELS), "run": upload("r", RUN), "max_results": "0"},
        format="multipart",
    )
    assert deep.status_code == 400
    assert deep.json()["errors"][0]["field"] == "max_results"
