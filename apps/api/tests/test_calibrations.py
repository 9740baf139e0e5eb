"""/api/v1/gold-sets, /api/v1/calibrations and /api/v1/judge-gate: an integration draws a
gold set from what people graded, calibrates a judge on it through a real local model
server, reads the report (every figure with its interval, the confusion matrix with the
scale's grades, the decisions, the stale mark), lists and retries failures, exports the
call log and sets the team's gate; every problem names its field; another team's
objects are 404; the judge's API key never comes back in any answer."""

import json

import pytest

from apps.judges import calibration, prompts
from apps.judges.gold_sets import gold_set_create
from apps.judges.models import CalibrationRun, CalibrationStatus, GoldSet, JudgeGate
from apps.judges.tests.fake_provider import FakeProvider, Reply
from apps.judges.tests.test_calibration import (
    KEYWORDS,
    PEOPLE,
    grades_by_title,
    judge_for,
    people_grade,
)
from tests.factories import make_evaluation

pytestmark = pytest.mark.django_db

# What the API key of every judge here (judge_for's) begins with.
API_KEY = "not-a-real-key"


@pytest.fixture(scope="module")
def server():
    with FakeProvider() as fake:
        yield fake


@pytest.fixture(autouse=True)
def local_model_servers_allowed(settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True


class Answers:
    """The `api` client, keeping every answer's text (streamed ones read in full and
    handed back whole), so that a test can say what no answer ever held."""

    def __init__(self, client) -> None:
        self.client = client
        self.texts: list[str] = []

    def send(self, method: str, path: str, body=None):
        if method in ("get", "delete"):
            answer = getattr(self.client, method)(path)
        else:
            text = body if isinstance(body, str) else json.dumps({} if body is None else body)
            answer = getattr(self.client, method)(path, text, content_type="application/json")
        if answer.streaming:
            content = b"".join(answer.streaming_content)
            answer.streaming_content = [content]
        else:
            content = answer.content
        self.texts.append(content.decode())
        return answer

    def get(self, path: str):
        return self.send("get", path)

    def post(self, path: str, body=None):
        return self.send("post", path, body)


@pytest.fixture
def client(api):
    answers = Answers(api)
    yield answers
    assert answers.texts
    assert not [text for text in answers.texts if API_KEY in text]


@pytest.fixture
def graded(team_a):
    """A baseline and a candidate of the same eight keywords, graded alike by three
    people: result N of keyword K gets PEOPLE(K, N)."""
    baseline = make_evaluation(team=team_a, scale="graded", strategy=3, keywords=KEYWORDS)
    candidate = make_evaluation(team=team_a, scale="graded", strategy=3, keywords=KEYWORDS)
    for evaluation in (baseline, candidate):
        people_grade(evaluation, PEOPLE)
    return baseline, candidate


def problems(answer) -> list[str]:
    return [f"{error['field']}: {error['message']}" for error in answer.json()["errors"]]


def fields(answer) -> set[str]:
    return {error["field"] for error in answer.json()["errors"]}


def one_above_people(keyword: int, number: int) -> int:
    return min(3, PEOPLE(keyword, number) + 1)


# --- Gold sets -------------------------------------------------------------------------


def test_a_gold_set_is_drawn_listed_and_its_frozen_items_read(client, graded):
    baseline, candidate = graded
    drawn = client.post(
        "/api/v1/gold-sets/",
        {
            "name": "Shop gold",
            "baseline": baseline.id,
            "candidate": candidate.id,
            "keywords": 5,
            "seed": 42,
        },
    )
    assert drawn.status_code == 201, drawn.content
    gold = drawn.json()
    assert (gold["keywords"], gold["items"], gold["calibrations"]) == (5, 20, 0)
    assert gold["metrics"] == ["ndcg@10", "precision@5"]
    assert (gold["baseline"], gold["candidate"], gold["seed"]) == (baseline.id, candidate.id, 42)
    assert (gold["baseline_name"], gold["scale"]) == (baseline.name, "graded")

    listed = client.get("/api/v1/gold-sets/").json()
    assert [each["id"] for each in listed["results"]] == [gold["id"]]

    page = client.get(f"/api/v1/gold-sets/{gold['id']}/items/?page_size=8").json()
    assert (page["count"], len(page["results"])) == (20, 8)
    item = page["results"][2]
    keyword = int(item["keyword"].split()[-1])
    assert item["doc_id"] == f"{item['keyword']}-doc-3"
    assert item["people_grades"] == [PEOPLE(keyword, 3)] * 3
    assert (item["baseline_position"], item["candidate_position"], item["judge"]) == (3, 3, None)


def test_every_problem_of_a_new_gold_set_names_its_field_and_nothing_is_drawn(
    client, graded, team_b
):
    baseline, _ = graded
    theirs = make_evaluation(team=team_b, keywords={"x": 1})
    binary = make_evaluation(team=baseline.team, scale="binary", keywords={"x": 1})

    def refused(body) -> list[str]:
        answer = client.post("/api/v1/gold-sets/", body)
        assert answer.status_code == 400, answer.content
        return problems(answer)

    assert refused([1, 2]) == ["body: must be a JSON object"]
    assert refused({"name": "g", "baseline": baseline.id, "colour": "red"}) == [
        "colour: not a field of a gold set"
    ]
    assert fields(
        client.post(
            "/api/v1/gold-sets/",
            {"name": "", "baseline": "x", "candidate": [1], "keywords": 10**30, "seed": -1},
        )
    ) == {"name", "baseline", "candidate", "keywords", "seed"}
    assert fields(client.post("/api/v1/gold-sets/", {})) == {"name", "baseline"}
    for wrong in (1, 501, 3.5, True, "many", 10**400, None):
        assert fields(
            client.post(
                "/api/v1/gold-sets/", {"name": "g", "baseline": baseline.id, "keywords": wrong}
            )
        ) == {"keywords"}, wrong
    assert fields(
        client.post("/api/v1/gold-sets/", {"name": "g", "baseline": baseline.id, "seed": 2**31})
    ) == {"seed"}
    assert fields(client.post("/api/v1/gold-sets/", {"name": "n" * 101, "baseline": 1})) >= {"name"}
    assert refused({"name": "g", "baseline": theirs.id}) == [
        f"baseline: the team has no evaluation '{theirs.id}'"
    ]
    assert refused({"name": "g", "baseline": 10**30}) == [
        "baseline: the team has no evaluation '1000000000000000000000000000000'"
    ]
    assert refused({"name": "g", "baseline": baseline.id, "candidate": baseline.id}) == [
        "candidate: choose an evaluation other than the baseline"
    ]
    assert refused({"name": "g", "baseline": baseline.id, "candidate": binary.id})[0].startswith(
        "candidate: graded on Binary"
    )
    assert refused({"name": "g", "baseline": binary.id}) == [
        "baseline: no keyword of it has people's grades yet"
    ]
    assert not GoldSet.objects.exists()
    drawn = client.post("/api/v1/gold-sets/", {"name": "g", "baseline": baseline.id})
    assert drawn.status_code == 201
    assert refused({"name": "g", "baseline": baseline.id}) == [
        "name: the team already has a gold set named 'g'"
    ]


# --- Calibrating and the report ---------------------------------------------------------


def test_a_calibration_runs_and_the_report_shows_every_figure_with_its_interval(
    client, graded, server, django_capture_on_commit_callbacks
):
    baseline, candidate = graded
    gold = gold_set_create(
        team=baseline.team, name="Gold", baseline=baseline.id, candidate=candidate.id, seed=1
    )
    judge = judge_for(baseline.team, server, results_per_call=3)
    server.respond_with(grades_by_title(one_above_people))

    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(f"/api/v1/gold-sets/{gold.id}/calibrations/", {"judge": judge.id})
    assert started.status_code == 201, started.content
    assert (started.json()["status"], started.json()["graded"]) == ("running", 0)
    run_id = started.json()["id"]

    run = client.get(f"/api/v1/calibrations/{run_id}/").json()
    assert (run["status"], run["items"], run["graded"], run["failed"]) == ("finished", 32, 32, 0)
    assert (run["progress"], run["calls"], run["input_tokens"]) == (1.0, 16, 16 * 500)
    assert (run["judge"], run["judge_name"], run["gold_set"]) == (judge.id, "GPT", gold.id)
    assert run["alpha"] < 1.0 and run["model_name"] == "gpt-test"

    answer = client.get(f"/api/v1/gold-sets/{gold.id}/?samples=200")
    assert answer.status_code == 200 and b"NaN" not in answer.content
    report = answer.json()["report"]
    assert (report["samples"], report["keywords"], report["items"]) == (200, 8, 32)
    assert report["ceiling"]["alpha"]["value"] == pytest.approx(1.0)
    [calibrated] = report["calibrations"]
    assert calibrated["calibration"] == run and calibrated["stale"] == ""
    alpha = calibrated["alpha"]
    assert isinstance(alpha["value"], float) and alpha["value"] == pytest.approx(run["alpha"])
    assert alpha["low"] <= alpha["value"] <= alpha["high"] and alpha["n"] == 32
    assert (calibrated["exact"]["value"], calibrated["within_one"]["value"]) == (0.25, 1.0)
    assert calibrated["exact"]["reason"] == ""
    # Rows: people's consensus; columns: the judge, one grade above (3 at most).
    assert calibrated["confusion"] == {
        "grades": [0, 1, 2, 3],
        "labels": ["Poor", "Fair", "Good", "Perfect"],
        "matrix": [[0, 8, 0, 0], [0, 0, 8, 0], [0, 0, 0, 8], [0, 0, 0, 8]],
    }
    assert set(calibrated["ranking_tau"]) == {"value", "low", "high", "n", "reason"}
    assert [d["metric"] for d in calibrated["decisions"]] == ["ndcg@10", "precision@5"]
    assert all(d["same"] for d in calibrated["decisions"])
    assert calibrated["changes_a_decision"] is False
    # The verdict the gold set's page says, in one sentence: one grade above people's on
    # every result is worse than people, who agree with each other fully.
    shown = calibration.gold_report(gold, samples=200).runs[0].verdict
    assert calibrated["verdict"] == {
        "verdict": "worse_than_people",
        "sentence": shown.sentence,
        "warns": True,
    }
    assert calibrated["verdict"]["sentence"].startswith("Worse than people: alpha ")

    fast = client.get(f"/api/v1/gold-sets/{gold.id}/?samples=0").json()["report"]
    figure = fast["calibrations"][0]["alpha"]
    assert (figure["low"], figure["high"]) == (None, None) and figure["value"] is not None

    items = client.get(f"/api/v1/gold-sets/{gold.id}/items/?calibration={run_id}").json()
    for item in items["results"]:
        keyword, number = int(item["keyword"].split()[-1]), item["baseline_position"]
        assert item["judge"]["grade"] == one_above_people(keyword, number)
        assert item["judge"]["reason"] == "as the rule says"

    log = client.get(f"/api/v1/calibrations/{run_id}/calls/")
    assert log["Content-Type"] == "application/x-ndjson"
    lines = [json.loads(row) for row in b"".join(log.streaming_content).decode().splitlines()]
    assert len(lines) == 16
    assert {(line["calibration"], line["gold_set"], line["judge"]) for line in lines} == {
        (run_id, gold.id, "GPT")
    }
    assert lines[0]["parsed"]["r1"]["reason"] == "as the rule says"

    listed = client.get(f"/api/v1/calibrations/?gold_set={gold.id}&judge={judge.id}").json()
    assert [each["id"] for each in listed["results"]] == [run_id]
    assert client.get("/api/v1/calibrations/?status=running").json()["count"] == 0
    assert client.get(f"/api/v1/gold-sets/{gold.id}/").json()["calibrations"] == 1


def test_a_calibration_is_marked_stale_once_the_judge_s_prompt_changed(
    client, graded, server, django_capture_on_commit_callbacks
):
    baseline, _ = graded
    gold = gold_set_create(team=baseline.team, name="Gold", baseline=baseline.id, seed=5)
    judge = judge_for(baseline.team, server)
    server.respond_with(grades_by_title(PEOPLE))
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/api/v1/gold-sets/{gold.id}/calibrations/", {"judge": judge.id})

    judge.prompt = prompts.prompt_create(team=baseline.team, name="Mine")
    judge.save()

    [calibrated] = client.get(f"/api/v1/gold-sets/{gold.id}/?samples=0").json()["report"][
        "calibrations"
    ]
    assert calibrated["stale"] == f"the judge's prompt is now prompt-{judge.prompt.id}-v1"
    assert calibrated["decisions"] == [] and calibrated["alpha"]["value"] == pytest.approx(1.0)


def test_what_a_judge_could_not_grade_is_listed_with_why_and_retried(
    client, graded, server, django_capture_on_commit_callbacks
):
    baseline, _ = graded
    gold = gold_set_create(
        team=baseline.team, name="Gold", baseline=baseline.id, keywords=2, seed=5
    )
    judge = judge_for(baseline.team, server, results_per_call=4, calls_at_once=1)
    good = grades_by_title(PEOPLE)
    # The first keyword's call answers grades off the scale; everything after is right.
    replies = iter([Reply.openai(json.dumps({"judgements": [{"id": "r1", "grade": 9}]}))])
    server.respond_with(lambda seen: next(replies, None) or good(seen))
    with django_capture_on_commit_callbacks(execute=True):
        run_id = client.post(f"/api/v1/gold-sets/{gold.id}/calibrations/", {"judge": judge.id})
    run_id = run_id.json()["id"]

    run = client.get(f"/api/v1/calibrations/{run_id}/").json()
    assert (run["status"], run["graded"], run["failed"], run["progress"]) == (
        "finished",
        4,
        4,
        1.0,
    )
    failures = client.get(f"/api/v1/calibrations/{run_id}/failures/?page_size=3").json()
    assert failures["count"] == 4 and len(failures["results"]) == 3
    first = failures["results"][0]
    assert first["doc_id"].startswith(first["keyword"]) and first["title"].startswith("Result")
    assert "9" in first["reason"]

    with django_capture_on_commit_callbacks(execute=True):
        retried = client.post(f"/api/v1/calibrations/{run_id}/retry-failures/")
    assert retried.status_code == 200 and retried.json()["failed"] == 0
    run = client.get(f"/api/v1/calibrations/{run_id}/").json()
    assert (run["status"], run["graded"], run["failed"]) == ("finished", 8, 0)
    assert client.get(f"/api/v1/calibrations/{run_id}/failures/").json()["count"] == 0


def test_a_running_calibration_is_cancelled_once_and_neither_retried_nor_doubled(
    client, graded, server
):
    baseline, _ = graded
    gold = gold_set_create(team=baseline.team, name="Gold", baseline=baseline.id, seed=5)
    judge = judge_for(baseline.team, server)
    path = f"/api/v1/gold-sets/{gold.id}/calibrations/"
    run_id = client.post(path, {"judge": judge.id}).json()["id"]  # never committed: not run
    [running] = client.get(f"/api/v1/gold-sets/{gold.id}/?samples=0").json()["report"][
        "calibrations"
    ]
    assert running["verdict"] is None  # no verdict until it is over

    again = client.post(path, {"judge": judge.id})
    assert again.status_code == 409 and "already being calibrated" in again.json()["detail"]
    busy = client.post(f"/api/v1/calibrations/{run_id}/retry-failures/")
    assert busy.status_code == 409 and "still running" in busy.json()["detail"]
    cancelled = client.post(f"/api/v1/calibrations/{run_id}/cancel/")
    assert cancelled.status_code == 200
    assert (cancelled.json()["status"], cancelled.json()["note"]) == (
        "stopped",
        "cancelled by a lead",
    )
    twice = client.post(f"/api/v1/calibrations/{run_id}/cancel/")
    assert twice.status_code == 409 and "stopped" in twice.json()["detail"]


def test_a_calibration_asks_for_a_judge_of_the_team_by_its_id(client, graded, team_b, server):
    baseline, _ = graded
    gold = gold_set_create(team=baseline.team, name="Gold", baseline=baseline.id, seed=5)
    theirs = judge_for(team_b, server, name="Theirs")
    path = f"/api/v1/gold-sets/{gold.id}/calibrations/"
    for wrong in ({}, {"judge": "1"}, {"judge": 1.5}, {"judge": True}, {"judge": None}):
        answer = client.post(path, wrong)
        assert answer.status_code == 400 and problems(answer) == [
            "judge: the id of a judge of the team (or judgement_list alone)"
        ], wrong
    assert problems(client.post(path, {"judgement_list": "1"})) == [
        "judgement_list: the id of a list in the team's library"
    ]
    assert problems(client.post(path, {"judge": 1, "judgement_list": 1})) == [
        "judgement_list: a judge or a judgement list, not both"
    ]
    assert problems(client.post(path, {"judge": 1, "gold_set": 2})) == [
        "gold_set: not a field of a calibration"
    ]
    assert client.post(path, {"judge": theirs.id}).status_code == 404
    assert client.post(path, {"judge": 10**30}).status_code == 404
    assert not CalibrationRun.objects.exists()


def test_a_gold_set_is_removed_with_its_calibrations(client, graded, server):
    baseline, _ = graded
    gold = gold_set_create(team=baseline.team, name="Gold", baseline=baseline.id, seed=5)
    run_id = client.post(
        f"/api/v1/gold-sets/{gold.id}/calibrations/", {"judge": judge_for(gold.team, server).id}
    ).json()["id"]
    # Not while it runs (its worker writes beside the items): cancelled first.
    assert client.send("delete", f"/api/v1/gold-sets/{gold.id}/").status_code == 409
    client.post(f"/api/v1/calibrations/{run_id}/cancel/", {})
    assert client.send("delete", f"/api/v1/gold-sets/{gold.id}/").status_code == 204
    assert client.get(f"/api/v1/gold-sets/{gold.id}/").status_code == 404
    assert client.get(f"/api/v1/calibrations/{run_id}/").status_code == 404


# --- The team's gate -----------------------------------------------------------------------


def test_the_team_s_gate_is_set_cleared_and_refuses_what_is_not_a_number_from_0_to_1(
    client, graded, server
):
    assert client.get("/api/v1/judge-gate/").json() == {"min_alpha": None}
    assert client.send("put", "/api/v1/judge-gate/", {"min_alpha": 0.8}).json() == {
        "min_alpha": 0.8
    }
    assert client.send("patch", "/api/v1/judge-gate/", {}).json() == {"min_alpha": 0.8}
    assert client.send("patch", "/api/v1/judge-gate/", {"min_alpha": 1}).json() == {
        "min_alpha": 1.0
    }
    for wrong in (1.5, -0.1, "0.8", "", True, [], {}, "NaN"):
        answer = client.send("put", "/api/v1/judge-gate/", {"min_alpha": wrong})
        assert answer.status_code == 400 and fields(answer) == {"min_alpha"}, wrong
    for text in ('{"min_alpha": 1e400}', '{"min_alpha": NaN}'):
        answer = client.send("put", "/api/v1/judge-gate/", text)
        assert answer.status_code == 400 and fields(answer) == {"min_alpha"}, text
    assert fields(client.send("put", "/api/v1/judge-gate/", {})) == {"min_alpha"}
    assert problems(client.send("put", "/api/v1/judge-gate/", {"alpha": 0.5})) == [
        "alpha: not a field of the judge gate"
    ]
    assert problems(client.send("put", "/api/v1/judge-gate/", [0.5])) == [
        "body: must be a JSON object"
    ]
    assert client.get("/api/v1/judge-gate/").json() == {"min_alpha": 1.0}

    # The gate holds: a judge with no calibration may not grade an evaluation.
    baseline, _ = graded
    judge = judge_for(baseline.team, server)
    refused = client.post(f"/api/v1/judges/{judge.id}/runs/", {"evaluation": baseline.id})
    assert refused.status_code == 400
    [error] = refused.json()["errors"]
    assert error["field"] == "judge" and "it has no calibration" in error["message"]

    assert client.send("patch", "/api/v1/judge-gate/", {"min_alpha": None}).json() == {
        "min_alpha": None
    }
    assert JudgeGate.objects.get(team=baseline.team).min_alpha is None


# --- Another team's objects, and the queries' bounds --------------------------------------


def test_another_team_s_gold_sets_calibrations_and_gate_are_not_there(
    client, team_a, team_b, server
):
    theirs = GoldSet.objects.create(
        team=team_b, name="Theirs", baseline_name="x", scale="graded", profile="searchtweak", seed=1
    )
    their_judge = judge_for(team_b, server, name="Theirs")
    their_run = CalibrationRun.objects.create(
        gold_set=theirs, judge=their_judge, model_name="m", prompt_version="v"
    )
    calibration.gate_set(team=team_b, min_alpha=0.5)

    for path in ("", "items/"):
        assert client.get(f"/api/v1/gold-sets/{theirs.id}/{path}").status_code == 404
    assert client.send("delete", f"/api/v1/gold-sets/{theirs.id}/").status_code == 404
    assert (
        client.post(f"/api/v1/gold-sets/{theirs.id}/calibrations/", {"judge": their_judge.id})
    ).status_code == 404
    for path in ("", "failures/", "calls/"):
        assert client.get(f"/api/v1/calibrations/{their_run.id}/{path}").status_code == 404
    for action in ("cancel", "retry-failures"):
        assert client.post(f"/api/v1/calibrations/{their_run.id}/{action}/").status_code == 404
    assert client.get("/api/v1/gold-sets/").json()["count"] == 0
    assert client.get(f"/api/v1/calibrations/?gold_set={theirs.id}").json()["count"] == 0
    assert client.get("/api/v1/judge-gate/").json() == {"min_alpha": None}
    assert CalibrationRun.objects.get(id=their_run.id).status == CalibrationStatus.RUNNING


def test_every_query_parameter_is_bounded_and_a_bad_one_named(client, team_a, server):
    gold = GoldSet.objects.create(
        team=team_a, name="Mine", baseline_name="x", scale="graded", profile="searchtweak", seed=1
    )
    other = GoldSet.objects.create(
        team=team_a, name="Other", baseline_name="x", scale="graded", profile="searchtweak", seed=1
    )
    judge = judge_for(team_a, server)
    elsewhere = CalibrationRun.objects.create(
        gold_set=other, judge=judge, model_name="m", prompt_version="v"
    )
    for query, field in (
        ("calibrations/?gold_set=abc", "gold_set"),
        ("calibrations/?gold_set=%C2%B2", "gold_set"),  # a superscript two: a digit to isdigit()
        (f"calibrations/?judge={'9' * 30}", "judge"),
        ("calibrations/?judge=-1", "judge"),
        ("calibrations/?status=done", "status"),
        (f"gold-sets/{gold.id}/?samples=5000", "samples"),
        (f"gold-sets/{gold.id}/?samples=-1", "samples"),
        (f"gold-sets/{gold.id}/items/?calibration=x", "calibration"),
        (f"gold-sets/{gold.id}/items/?calibration={elsewhere.id}", "calibration"),
    ):
        answer = client.get(f"/api/v1/{query}")
        assert answer.status_code == 400 and fields(answer) == {field}, query
    empty = client.get(f"/api/v1/gold-sets/{gold.id}/?samples=0").json()
    assert (empty["items"], empty["report"]["calibrations"]) == (0, [])
    assert empty["report"]["ceiling"]["alpha"] == {
        "value": None,
        "low": None,
        "high": None,
        "n": 0,
        "reason": "no result has grades from two people",
    }
