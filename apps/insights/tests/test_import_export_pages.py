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


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10" + bytes(range(256)) * 8


def problems_on(page: str) -> list[str]:
    """The problems the import page lists, one per item."""
    report = page.split('data-testid="import-problems"', 1)[1].split("</ul>", 1)[0]
    return [item.split("</code>")[0] for item in report.split("<li><code>")[1:]]


def test_a_name_typed_on_the_page_wins_over_the_document_s_own(owner, team_a):
    client = client_for(owner)
    document = upload("e.json", json.dumps(DOCUMENT))

    client.post("/evaluations/import/", {"kind": "json", "document": document, "name": "  Try 5 "})

    assert list(Evaluation.objects.values_list("name", flat=True)) == ["Try 5"]


def test_an_exported_document_imports_back_into_its_team_under_a_typed_name(owner, team_a):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2})
    client = client_for(owner)
    exported = b"".join(
        client.get(f"/evaluations/{evaluation.id}/export/?format=json").streaming_content
    )

    same_name = client.post(
        "/evaluations/import/",
        {"kind": "json", "document": SimpleUploadedFile("e.json", exported)},
    )
    typed = client.post(
        "/evaluations/import/",
        {"kind": "json", "document": SimpleUploadedFile("e.json", exported), "name": "Copy"},
    )

    assert "already exists in this team" in same_name.content.decode()
    copy = Evaluation.objects.get(team=team_a, name="Copy")
    assert typed["Location"] == f"/evaluations/{copy.id}/"
    assert copy.keywords.get().text == "red shoes"


@pytest.mark.parametrize("kind,field", [("json", "document"), ("trec", "run"), ("trec", "qrels")])
def test_a_binary_file_gets_one_line_naming_it(owner, team_a, kind, field):
    files = {"run": upload("run.txt", "q1 Q0 d1 1 2.0 x\n")} if kind == "trec" else {}
    files[field] = SimpleUploadedFile("photo.png", PNG)

    response = client_for(owner).post(
        "/evaluations/import/",
        {"kind": kind, **files, "name": "Run A", "scale": "graded", "metrics": "cg@2"},
    )

    assert problems_on(response.content.decode()) == [
        "photo.png: this is not a text file (JSON and TREC files are UTF-8 text)"
    ]
    assert not Evaluation.objects.exists()


def test_problems_in_a_trec_file_name_the_file_the_lead_chose(owner, team_a):
    response = client_for(owner).post(
        "/evaluations/import/",
        {
            "kind": "trec",
            "run": upload("week-3.run", "q1 Q0 d1 1 2.0 x\nq1 Q0 d2\n"),
            "name": "Run A",
            "scale": "graded",
            "metrics": "cg@2",
        },
    )

    assert problems_on(response.content.decode()) == [
        "week-3.run line 2: expected 6 columns (qid Q0 docno rank score tag), got 3"
    ]


def test_the_trec_import_reports_its_findings_in_one_message_without_zeros(owner, team_a):
    response = client_for(owner).post(
        "/evaluations/import/",
        {
            "kind": "trec",
            "run": upload("run.txt", "q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\nq2 Q0 d1 1 1.0 x\n"),
            "qrels": upload("qrels.txt", "q1 0 d1 2\nq1 0 d9 1\nq2 0 d1 0\n"),
            "name": "Run A",
            "scale": "graded",
            "profile": "trec",
            "metrics": "cg@2",
        },
        follow=True,
    )

    shown = [str(message) for message in response.context["messages"]]
    assert shown == [
        "Imported Run A: 2 keywords with 3 results; 1 result without judgements, "
        "1 judged document not retrieved."
    ]


def test_an_import_sent_by_the_page_s_script_answers_with_the_report_alone(owner, team_a):
    client = client_for(owner)
    broken = dict(DOCUMENT, scale="huge")

    refused = client.post(
        "/evaluations/import/",
        {"kind": "json", "document": upload("e.json", json.dumps(broken))},
        HTTP_HX_REQUEST="true",
    )
    missing = client.post(
        "/evaluations/import/",
        {"kind": "trec", "name": "", "scale": "graded", "metrics": "cg@2"},
        HTTP_HX_REQUEST="true",
    )
    imported = client.post(
        "/evaluations/import/",
        {"kind": "json", "document": upload("e.json", json.dumps(DOCUMENT))},
        HTTP_HX_REQUEST="true",
    )

    report = refused.content.decode()
    assert "<form" not in report and "scale" in problems_on(report)[0]
    assert problems_on(missing.content.decode()) == [
        "Run file: Choose the run file.",
        "Name: Name the new evaluation.",
    ]
    evaluation = Evaluation.objects.get(team=team_a)
    assert imported["HX-Redirect"] == f"/evaluations/{evaluation.id}/"


def downloaded(client, evaluation, format_name: str) -> bytes:
    url = f"/evaluations/{evaluation.id}/export/?format={format_name}"
    return b"".join(client.get(url).streaming_content)


def test_the_topics_export_maps_each_query_id_to_its_keyword(owner, team_a):
    evaluation = make_evaluation(team=team_a, keywords={"red running shoes": 1, "hat": 1})
    client = client_for(owner)

    topics = downloaded(client, evaluation, "topics").decode()
    run_ids = {
        line.split()[0] for line in downloaded(client, evaluation, "run").decode().splitlines()
    }

    assert topics.splitlines() == ["red%20running%20shoes\tred running shoes", "hat\that"]
    assert {line.split("\t")[0] for line in topics.splitlines()} == run_ids
    assert client.get(f"/evaluations/{evaluation.id}/").content.decode().count("format=topics") == 1


def import_week_3(client) -> Evaluation:
    client.post(
        "/evaluations/import/",
        {
            "kind": "trec",
            "run": upload("run.txt", "301 Q0 d1 1 2.0 x\n301 Q0 d2 2 1.0 x\n302 Q0 d3 1 1.0 x\n"),
            "qrels": upload("qrels.txt", "301 0 d1 2\n302 0 d3 1\n"),
            "topics": upload("topics.txt", "301\tred running shoes\n302\tblue hat\n"),
            "name": "Week 3",
            "scale": "graded",
            "profile": "trec",
            "metrics": "cg@2",
        },
    )
    return Evaluation.objects.get(name="Week 3")


def test_a_run_its_qrels_and_topics_import_back_into_the_same_keywords_and_grades(owner, team_a):
    client = client_for(owner)
    first = import_week_3(client)

    response = client.post(
        "/evaluations/import/",
        {
            "kind": "trec",
            "run": SimpleUploadedFile("w.run", downloaded(client, first, "run")),
            "qrels": SimpleUploadedFile("w.qrels", downloaded(client, first, "qrels")),
            "topics": SimpleUploadedFile("w.topics", downloaded(client, first, "topics")),
            "name": "Week 3, again",
            "scale": "graded",
            "metrics": "cg@2",
        },
    )

    again = Evaluation.objects.get(name="Week 3, again")
    assert response.status_code == 302
    texts = list(again.keywords.order_by("position").values_list("text", flat=True))
    assert texts == ["red running shoes", "blue hat"]
    assert downloaded(client, again, "qrels") == downloaded(client, first, "qrels")
    assert downloaded(client, again, "topics") == downloaded(client, first, "topics")


def test_the_trec_exports_keep_the_query_ids_a_trec_import_read(owner, team_a):
    client = client_for(owner)
    evaluation = import_week_3(client)

    qrels = downloaded(client, evaluation, "qrels").decode()
    run = downloaded(client, evaluation, "run").decode()
    topics = downloaded(client, evaluation, "topics").decode()
    trec_eval = downloaded(client, evaluation, "trec_eval").decode()

    assert qrels.splitlines() == ["301 0 d1 2", "302 0 d3 1"]
    assert [line.split()[0] for line in run.splitlines()] == ["301", "301", "302"]
    assert topics.splitlines() == ["301\tred running shoes", "302\tblue hat"]
    assert {line.split("\t")[1].strip() for line in trec_eval.splitlines()} == {
        "301",
        "302",
        "all",
    }


def test_a_keyword_renamed_keeps_its_query_id(owner, team_a):
    client = client_for(owner)
    evaluation = import_week_3(client)
    evaluation.keywords.filter(text="blue hat").update(text="navy hat")

    topics = downloaded(client, evaluation, "topics").decode()

    assert topics.splitlines() == ["301\tred running shoes", "302\tnavy hat"]


def test_with_a_keyword_added_after_the_import_every_query_id_is_its_keyword(owner, team_a):
    client = client_for(owner)
    evaluation = import_week_3(client)
    Keyword.objects.create(evaluation=evaluation, text="301", position=3)

    topics = downloaded(client, evaluation, "topics").decode()

    assert topics.splitlines() == [
        "red%20running%20shoes\tred running shoes",
        "blue%20hat\tblue hat",
        "301\t301",
    ]
