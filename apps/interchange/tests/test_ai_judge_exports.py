"""An AI judge's grades in the exports, through the lead's export page and the API: each
names its judge and what made it (model, prompt version) beside its reason, people's
grades read as before, the judge's key is in no file, and the JSON document imports
back with the judge's grades kept as named external grades."""

import csv
import io
import json

import pytest
from django.test import Client

from apps.accounts.api_tokens import api_token_create
from apps.evaluations.fingerprints import content_fingerprint
from apps.evaluations.models import Evaluation, FeedbackSlot
from apps.interchange.downloads import EXPORT_FORMAT_NAMES
from apps.judges import controls, runs
from apps.judges.models import Judge, JudgeGrade, JudgeRun
from apps.judges.services import judge_create
from apps.judges.tests.fake_provider import FakeProvider, Reply
from apps.judging.judgements import Giver, slot_judge
from apps.scoring.services import recompute_marked
from tests.factories import client_for, finish, make_evaluation, make_grader, slots_of

pytestmark = pytest.mark.django_db

API_KEY = "not-a-real-key-export-test"
JUDGE = "Shoe expert"
SURE = "Red trail shoes, as asked."
UNSURE = "Shoes | but blue, not red."


@pytest.fixture
def evaluation(team_a, settings) -> Evaluation:
    """Graded, strategy 3, "red shoes" with two results: ann gives the first a 3, then the
    judge grades both (2 and 0) in one call to a local model server."""
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True  # the model server is on this machine
    evaluation = make_evaluation(team=team_a, strategy=3, keywords={"red shoes": 2})
    ann = make_grader(team_a, "ann@a.test")
    first = slots_of(evaluation, "red shoes")[0]
    slot_judge(slot_id=first.id, giver=Giver.recorded(ann), grade=3, reason="ann's own")
    judgements = [
        {"id": "r1", "grade": 2, "reason": SURE},
        {"id": "r2", "grade": 0, "reason": UNSURE},
    ]
    with FakeProvider() as server:  # exports call no model: it is needed for the run only
        server.script(Reply.openai(json.dumps({"judgements": judgements})))
        judge = judge_create(
            team=team_a,
            name=JUDGE,
            protocol="openai",
            base_url=server.openai_url,
            model_name="gpt-test",
            api_key=API_KEY,
        )
        run = controls.run_start(judge=judge, evaluation=evaluation)
        runs.run_step(run_id=run.id)
    assert JudgeGrade.objects.filter(run=run).count() == 2
    recompute_marked()  # the metrics, as the worker would compute them
    return evaluation


def prompt_version_of(evaluation: Evaluation) -> str:
    return JudgeRun.objects.get(evaluation=evaluation).prompt_version


def api_client(team) -> Client:
    _token, text = api_token_create(team=team, name="exports")
    return Client(headers={"Authorization": f"Bearer {text}"})


def exported(client: Client, evaluation: Evaluation, format_name: str) -> str:
    response = client.get(f"/api/v1/evaluations/{evaluation.id}/export/?format={format_name}")
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode()


def page_export(lead, evaluation: Evaluation, format_name: str) -> str:
    response = client_for(lead).get(f"/evaluations/{evaluation.id}/export/?format={format_name}")
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode()


def test_the_json_export_marks_each_judge_grade_with_its_judge_model_prompt_and_reason(
    team_a, evaluation
):
    document = json.loads(exported(api_client(team_a), evaluation, "json"))

    first, second = document["keywords"][0]["snapshots"]
    judge_made = {"model": "gpt-test", "prompt_version": prompt_version_of(evaluation)}
    assert first["grades"] == [
        {"grader": "ann@a.test", "grade": 3, "reason": "ann's own"},  # a person's, as before
        {"grader": JUDGE, "grade": 2, "reason": SURE, "ai_judge": judge_made},
        None,
    ]
    assert second["grades"] == [
        {"grader": JUDGE, "grade": 0, "reason": UNSURE, "ai_judge": judge_made},
        None,
        None,
    ]


def test_the_csv_export_lines_the_judges_model_prompt_and_reason_up_with_the_grades(
    owner, evaluation
):
    rows = list(csv.reader(io.StringIO(page_export(owner, evaluation, "csv"))))

    version = prompt_version_of(evaluation)
    assert rows[0][5:10] == [
        "grades",
        "graders",
        "ai_judge_models",
        "ai_judge_prompt_versions",
        "ai_judge_reasons",
    ]
    # ann's grade first: empty entries for her in the judge's columns
    assert rows[1][5:10] == ["3|2", f"ann@a.test|{JUDGE}", "|gpt-test", f"|{version}", f"|{SURE}"]
    # a "|" inside a reason is escaped, so the entries still line up with the grades
    assert rows[2][5:10] == ["0", JUDGE, "gpt-test", version, r"Shoes \| but blue, not red."]


def test_the_csv_export_of_peoples_grades_only_leaves_the_judge_columns_empty(owner, team_a):
    evaluation = make_evaluation(team=team_a, strategy=1, keywords={"blue hat": 1})
    (slot,) = slots_of(evaluation)
    slot_judge(slot_id=slot.id, giver=Giver.recorded(None, "crowd"), grade=1)

    rows = list(csv.reader(io.StringIO(page_export(owner, evaluation, "csv"))))

    assert rows[1][5:10] == ["1", "crowd", "", "", ""]


def test_the_raw_qrels_export_names_the_judge_and_the_other_trec_exports_name_no_grader(
    team_a, evaluation
):
    client = api_client(team_a)

    raw = exported(client, evaluation, "qrels-raw").splitlines()

    assert raw == [
        "red%20shoes ann@a.test red%20shoes-doc-1 3",
        "red%20shoes Shoe%20expert red%20shoes-doc-1 2",
        "red%20shoes Shoe%20expert red%20shoes-doc-2 0",
    ]
    for format_name in ("qrels", "run", "trec_eval"):
        assert JUDGE.split()[0] not in exported(client, evaluation, format_name)


def test_no_export_carries_the_judges_key_or_its_grader_address(team_a, owner, evaluation):
    judge = Judge.objects.get(name=JUDGE)
    client = api_client(team_a)

    for format_name in EXPORT_FORMAT_NAMES:
        for text in (
            exported(client, evaluation, format_name),
            page_export(owner, evaluation, format_name),
        ):
            assert API_KEY not in text and judge.api_key_encrypted not in text
            assert judge.user.email not in text and "ai-judges.relevo.invalid" not in text


def test_a_reused_judge_grade_exports_as_the_judges_with_what_made_it_and_where_it_came_from(
    team_a, evaluation
):
    finish(evaluation)
    again = make_evaluation(
        team=team_a, strategy=3, keywords={"red shoes": 2}, reuse="keyword_doc", reuse_judges=True
    )

    document = json.loads(exported(api_client(team_a), again, "json"))

    grades = document["keywords"][0]["snapshots"][1]["grades"]
    assert grades[0] == {
        "grader": JUDGE,
        "grade": 0,
        "reason": UNSURE,
        # The copy keeps its original's source: the judge, model and prompt version.
        "ai_judge": {"model": "gpt-test", "prompt_version": prompt_version_of(evaluation)},
        "source": {"kind": "judge", "name": JUDGE, "reused_from": evaluation.name},
        # A copied grade names the content it was given on (stale judgements).
        "content_fingerprint": content_fingerprint("Result 2", "", {}),
    }


def test_reuse_leaves_a_judges_grades_behind_unless_the_lead_ticks_them(team_a, evaluation):
    finish(evaluation)
    again = make_evaluation(team=team_a, strategy=3, keywords={"red shoes": 2}, reuse="keyword_doc")

    document = json.loads(exported(api_client(team_a), again, "json"))

    first, second = document["keywords"][0]["snapshots"]
    assert [g["grader"] for g in first["grades"] if g is not None] == ["ann@a.test"]
    assert all(g is None for g in second["grades"])


def test_a_json_export_with_judge_grades_imports_back_as_grades_of_the_named_judge(
    team_a, team_b, evaluation, django_capture_on_commit_callbacks
):
    document = exported(api_client(team_a), evaluation, "json")

    with django_capture_on_commit_callbacks(execute=True):
        response = api_client(team_b).post(
            "/api/v1/evaluations/import/", document, content_type="application/json"
        )

    assert response.status_code == 201, response.content
    copy = Evaluation.objects.get(id=response.json()["id"])
    slots = FeedbackSlot.objects.filter(evaluation=copy).exclude(grade=None)
    assert sorted(slots.values_list("snapshot_position", "grade", "external_grader", "reason")) == [
        (1, 2, JUDGE, SURE),
        (1, 3, "ann@a.test", "ann's own"),  # ann is no member of team B: a name there too
        (2, 0, JUDGE, UNSURE),
    ]
    assert not slots.filter(grader__isnull=False).exists()
    assert not JudgeGrade.objects.filter(slot__evaluation=copy).exists()
    ndcg = copy.metrics.get(metric="ndcg").value
    assert ndcg is not None and ndcg == evaluation.metrics.get(metric="ndcg").value


# A lead's decision sends its snapshot through the full check instead of the quick one.
@pytest.mark.parametrize("decision", [None, {"grade": 1}])
def test_an_imported_judge_grade_named_like_a_members_email_stays_a_name(team_a, decision):
    make_grader(team_a, "bo@a.test")
    grade = {"grader": "bo@a.test", "grade": 1, "ai_judge": {"model": "m", "prompt_version": None}}
    document = import_document_with(
        grades=[grade, {"grader": "bo@a.test", "grade": 0}], decision=decision
    )

    response = api_client(team_a).post(
        "/api/v1/evaluations/import/", document, content_type="application/json"
    )

    assert response.status_code == 201, response.content
    slots = FeedbackSlot.objects.filter(evaluation_id=response.json()["id"]).order_by("index")
    judge_made, bos = slots[0], slots[1]
    assert (judge_made.grader, judge_made.external_grader) == (None, "bo@a.test")
    assert (bos.grader.email, bos.external_grader) == ("bo@a.test", "")


def test_an_import_refuses_malformed_judge_marks_naming_each_place(team_a):
    grades = [
        {"grader": "a", "grade": 1, "ai_judge": "gpt"},
        {"grader": "b", "grade": 1, "ai_judge": {"model": 4, "prompt_version": "v" * 65}},
        {"grader": "c", "grade": 1, "ai_judge": {"model": "m" * 201, "key": "x"}},
    ]
    document = import_document_with(grades=grades)

    response = api_client(team_a).post(
        "/api/v1/evaluations/import/", document, content_type="application/json"
    )

    assert response.status_code == 400
    where = "keywords[0].snapshots[0].grades"
    assert [(error["field"], error["message"]) for error in response.json()["errors"]] == [
        (f"{where}[0].ai_judge", 'must be an object {"model", "prompt_version"} or null'),
        (f"{where}[1].ai_judge.model", "must be a text or null"),
        (f"{where}[1].ai_judge.prompt_version", "at most 64 characters (got 65)"),
        (f"{where}[2].ai_judge.key", "unknown field"),
        (f"{where}[2].ai_judge.model", "at most 200 characters (got 201)"),
    ]
    assert not Evaluation.objects.filter(name="Imported with judges").exists()


def import_document_with(*, grades: list, decision: dict | None = None) -> str:
    snapshot = {"position": 1, "doc_id": "d", "grades": grades, "decision": decision}
    return json.dumps(
        {
            "format": "relevo.evaluation/1",
            "name": "Imported with judges",
            "scale": "binary",
            "strategy": 3,
            "metrics": [{"metric": "precision", "k": 5}],
            "keywords": [{"keyword": "q", "snapshots": [snapshot]}],
        }
    )
