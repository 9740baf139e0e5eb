"""Hostile input through the API: each is refused with a 4xx that says where, never a 500,
and a refused import leaves nothing behind."""

import io
import json
import resource

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.evaluations.models import (
    Evaluation,
    FeedbackSlot,
    Keyword,
    Snapshot,
    UnretrievedJudgement,
)

pytestmark = pytest.mark.django_db

IMPORT = "/api/v1/evaluations/import/"
IMPORT_TREC = "/api/v1/evaluations/import-trec/"
CREATE = "/api/v1/evaluations/"


def row_counts() -> dict[str, int]:
    models = (Evaluation, Keyword, Snapshot, FeedbackSlot, UnretrievedJudgement)
    return {model.__name__: model.objects.count() for model in models}


def document(**changes) -> dict:
    base = {
        "format": "relevo.evaluation/1",
        "name": "Hostile",
        "scale": "graded",
        "strategy": 1,
        "metrics": [{"metric": "ndcg", "k": 10}],
        "keywords": [
            {
                "keyword": "shoes",
                "snapshots": [
                    {"position": 1, "doc_id": "d1", "grades": [2]},
                    {"position": 2, "doc_id": "d2"},
                ],
            }
        ],
    }
    return {**base, **changes}


def post_raw(api, url: str, body: bytes):
    return api.generic("POST", url, body, content_type="application/json")


def problems_of(response) -> list[str]:
    return [f"{e['field']}: {e['message']}" for e in response.json()["errors"]]


def refused_import(api, body: bytes) -> list[str]:
    before = row_counts()
    response = post_raw(api, IMPORT, body)
    assert response.status_code == 400, response.content[:300]
    assert row_counts() == before
    return problems_of(response)


def test_a_name_nested_a_hundred_thousand_deep_is_refused_without_building_it(api):
    deep = b"[" * 100_000 + b"]" * 100_000
    body = b'{"format": "relevo.evaluation/1", "name": ' + deep + b', "keywords": []}'
    grown_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    problems = refused_import(api, body)

    assert problems == ["document: nested deeper than 20 levels"]
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - grown_before
    assert grown_kib < 200_000  # it used to grow past 20 GB


def test_attributes_nested_a_thousand_deep_are_refused_not_a_recursion_error(api):
    body = document()
    body["keywords"][0]["snapshots"][0]["attributes"] = "NESTED"
    nested = '{"a": ' * 1_000 + "{}" + "}" * 1_000
    text = json.dumps(body).replace('"NESTED"', nested)

    problems = refused_import(api, text.encode())

    assert problems == ["document: nested deeper than 20 levels"]


def test_attributes_a_few_levels_deep_are_imported(api):
    body = document()
    body["keywords"][0]["snapshots"][0]["attributes"] = {"a": {"b": {"c": [1, {"d": 2}]}}}

    response = post_raw(api, IMPORT, json.dumps(body).encode())

    assert response.status_code == 201, response.content[:300]


@pytest.mark.parametrize(
    "method, path",
    [("POST", ""), ("POST", "import/"), ("PATCH", "{id}/"), ("POST", "{id}/clone/")],
    ids=str,
)
def test_any_json_body_nested_five_thousand_deep_is_a_400(api, team_a, method, path):
    evaluation = Evaluation.objects.create(team=team_a, name="target")
    url = CREATE + path.format(id=evaluation.id)
    body = b'{"name": ' + b"[" * 5_000 + b"]" * 5_000 + b"}"

    response = api.generic(method, url, body, content_type="application/json")

    assert response.status_code == 400
    assert "nested deeper than 20 levels" in json.dumps(response.json())


def test_a_lone_surrogate_in_a_rest_body_is_refused_naming_the_field(api):
    body = (
        b'{"name": "ok", "metrics": [{"metric": "ndcg", "k": 10}], '
        b'"keywords": ["fine", "a\\ud800b"]}'
    )
    before = row_counts()

    response = post_raw(api, CREATE, body)

    assert response.status_code == 400
    assert problems_of(response) == [
        "keywords[1]: is not valid Unicode (a lone surrogate such as \\ud800)"
    ]
    assert row_counts() == before


@pytest.mark.parametrize("escape", [b"\\udfff", b"\\ud800", b"\\ud800\\ud800"])
def test_a_lone_surrogate_in_an_import_is_refused_naming_its_line(api, escape):
    text = json.dumps(document(), indent=1).encode()
    body = text.replace(b'"shoes"', b'"sho' + escape + b'es"')

    problems = refused_import(api, body)

    line = text[: text.index(b'"shoes"')].count(b"\n") + 1
    shown = escape[:6].decode()
    assert problems == [f"document: line {line}: {shown} is a lone surrogate, not valid Unicode"]


def test_an_emoji_written_as_a_surrogate_pair_is_imported(api):
    body = json.dumps(document(name="Shoes 😀"), ensure_ascii=True).encode()
    assert b"\\ud83d\\ude00" in body

    response = post_raw(api, IMPORT, body)

    assert response.status_code == 201
    assert Evaluation.objects.get(id=response.json()["id"]).name == "Shoes 😀"


def test_bytes_that_are_not_utf8_are_refused(api):
    body = json.dumps(document()).encode().replace(b"shoes", b"sho\xffes")

    [problem] = refused_import(api, body)
    assert problem.startswith("document: not valid JSON")
    assert "invalid bytes in UTF8 string" in problem


def test_a_byte_order_mark_before_a_json_import_is_accepted(api):
    response = post_raw(api, IMPORT, b"\xef\xbb\xbf" + json.dumps(document()).encode())

    assert response.status_code == 201, response.content[:300]


def test_the_same_doc_id_twice_under_one_keyword_is_refused_with_both_positions(api):
    body = document()
    body["keywords"][0]["snapshots"].append({"position": 7, "doc_id": "d1"})

    problems = refused_import(api, json.dumps(body).encode())

    assert problems == [
        "keywords[0].snapshots[2].doc_id: 'd1' is listed twice for keyword 'shoes': "
        "at position 1 (snapshots[0]) and at position 7"
    ]


def trec_import(api, run: bytes, qrels: bytes | None = None, **fields):
    data = {"name": "TREC", "scale": "graded", "metrics": "ndcg@10", **fields}
    data["run"] = SimpleUploadedFile("run.txt", run)
    if qrels is not None:
        data["qrels"] = SimpleUploadedFile("qrels.txt", qrels)
    return api.post(IMPORT_TREC, data)


def test_a_trec_rank_beyond_a_database_integer_is_refused_with_its_line(api):
    before = row_counts()

    response = trec_import(api, b"q1 Q0 d1 2147483648 1.0 t\n", keep_rank="true")

    assert response.status_code == 400
    assert problems_of(response) == [
        "run.txt line 1: rank '2147483648' is not a whole number from 1 to 2147483647"
    ]
    assert row_counts() == before


def test_the_same_document_twice_in_a_run_is_refused_also_when_written_differently(api):
    response = trec_import(api, b"q1 Q0 a%41 1 2.0 t\nq1 Q0 aA 2 1.0 t\n")

    assert response.status_code == 400
    assert problems_of(response) == ["run.txt line 2: docno 'aA' given twice for qid 'q1' (line 1)"]


def test_trec_files_with_a_byte_order_mark_and_crlf_line_ends_read_as_plain_ones(api):
    run = b"\xef\xbb\xbfq1 Q0 d1 1 2.0 t\r\nq1 Q0 d2 2 1.0 t\r\n"
    qrels = b"\xef\xbb\xbfq1 0 d1 3\r\nq1 0 d2 0\r\n"

    response = trec_import(api, run, qrels)

    assert response.status_code == 201, response.content[:300]
    evaluation = Evaluation.objects.get(id=response.json()["id"])
    assert list(evaluation.keywords.values_list("text", flat=True)) == ["q1"]
    assert response.json()["import_report"]["judged_not_retrieved"] == 0
    grades = FeedbackSlot.objects.filter(evaluation=evaluation).order_by("snapshot_position")
    assert [slot.grade for slot in grades] == [3, 0]


@pytest.mark.parametrize(
    "image",
    ["javascript:alert(1)", "data:text/html,<script>alert(1)</script>", "vbscript:x", "//x/a.png"],
)
def test_an_image_that_is_not_a_web_address_or_a_picture_is_refused(api, image):
    body = document()
    body["keywords"][0]["snapshots"][0]["image"] = image

    problems = refused_import(api, json.dumps(body).encode())

    assert problems == [
        "keywords[0].snapshots[0].image: must be an http(s) address, or a data:image/png, "
        "jpeg, gif, webp or avif picture"
    ]


def test_web_and_inline_picture_images_are_imported(api):
    body = document()
    snapshots = body["keywords"][0]["snapshots"]
    snapshots[0]["image"] = "https://img.example.com/a.png"
    snapshots[1]["image"] = "data:image/png;base64,iVBORw0KGgo="

    response = post_raw(api, IMPORT, json.dumps(body).encode())

    assert response.status_code == 201, response.content[:300]


def test_an_import_over_the_size_limit_is_413_before_its_body_is_read(api, settings):
    settings.IMPORT_MAX_REQUEST_BYTES = 10_000

    class Unreadable(io.RawIOBase):
        def read(self, *args):  # the body must not be read at all
            raise AssertionError("the body was read")

    response = api.generic(
        "POST",
        IMPORT,
        b"",
        content_type="application/json",
        CONTENT_LENGTH="10001",
        **{"wsgi.input": Unreadable()},
    )

    assert response.status_code == 413
    assert "at most 10,000 bytes" in response.json()["detail"]
    assert "IMPORT_MAX_REQUEST_BYTES" in response.json()["detail"]


def test_other_requests_have_their_own_smaller_limit(api, settings):
    settings.REQUEST_MAX_BYTES = 2_000

    response = post_raw(api, CREATE, json.dumps({"name": "x" * 3_000}).encode())

    assert response.status_code == 413
    assert "REQUEST_MAX_BYTES" in response.json()["detail"]


def test_an_import_under_the_limit_is_accepted(api, settings):
    settings.IMPORT_MAX_REQUEST_BYTES = 100_000

    response = post_raw(api, IMPORT, json.dumps(document()).encode())

    assert response.status_code == 201


def test_a_path_no_api_route_matches_answers_json(api):
    response = api.get("/api/v1/nothing-here/42")

    assert response.status_code == 404
    assert response.json() == {
        "detail": "No API endpoint at /api/v1/nothing-here/42.",
        "errors": [],
    }


def test_a_page_no_route_matches_keeps_the_sites_404(client):
    response = client.get("/nothing-here/")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize(
    "run, qrels",
    [
        (b"0%00 Q0 d 1 1 run\n", None),
        (b"q Q0 d%00 1 1 run\n", None),
        (b"q Q0 d 1 1 run\n", b"q 0 x%00 1\n"),
    ],
    ids=["qid", "run docno", "qrels docno"],
)
def test_a_trec_column_that_decodes_to_nul_is_refused_with_its_line(api, run, qrels):
    before = row_counts()

    response = trec_import(api, run, qrels)

    assert response.status_code == 400
    file = "qrels.txt" if qrels else "run.txt"  # as uploaded
    assert problems_of(response) == [f"{file} line 1: a column decodes to a NUL character (%00)"]
    assert row_counts() == before


def test_nul_in_a_setting_of_an_import_is_refused_naming_the_setting(api):
    body = document(
        scale="custom",
        scale_levels={"lowest": 0, "highest": 2, "labels": ["a\u0000", "b", "c"]},
        keywords=[],
    )

    problems = refused_import(api, json.dumps(body).encode())

    assert problems == ["scale_levels.labels[0]: must not contain NUL characters"]


def test_a_value_longer_than_a_megabyte_is_refused_before_the_parser_reads_it(api):
    body = json.dumps(document(description="é" * 600_000), ensure_ascii=False).encode()

    problems = refused_import(api, body)

    assert problems == ["document: after line 1: a value longer than 1,048,576 bytes"]


def test_a_search_longer_than_any_name_is_refused_not_a_503(api):
    response = api.get("/api/v1/evaluations/", {"search": "x" * 1_000_000})

    assert response.status_code == 400
    assert problems_of(response) == ["search: at most 200 characters (got 1000000)"]


def test_a_json_body_over_djangos_default_in_memory_limit_is_read(api):
    # 3 MB is over Django's default of 2.5 MB, under REQUEST_MAX_BYTES (20 MiB).
    body = {"name": "big", "metrics": [{"metric": "ndcg", "k": 10}], "description": "x" * 3_000_000}

    response = api.post(CREATE, body, content_type="application/json")

    assert response.status_code == 201


def test_too_many_form_fields_answer_json(api):
    fields = {f"field{i}": "x" for i in range(1_001)}

    response = api.post(IMPORT_TREC, fields)

    assert response.status_code == 400
    assert "DATA_UPLOAD_MAX_NUMBER_FIELDS" in response.json()["detail"]
