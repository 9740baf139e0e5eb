"""/api/v1/evaluations/{id}/keywords/ and /judgements/: what was judged, by whom and why,
and the metric values of each keyword, called with a real team token."""

import pytest

from apps.evaluations.models import Evaluation, Keyword, Snapshot
from apps.judges.models import JudgeRun
from apps.judges.services import judge_update
from apps.judges.tests.fake_provider import FakeProvider
from apps.judges.tests.test_chains import by_model, judges, run_the_first_judge
from apps.judging.judgements import Action, Giver, slot_judge
from apps.scoring.models import KeywordMetric
from apps.scoring.services import recompute_marked
from tests.factories import assign, make_evaluation, make_grader, slots_of

pytestmark = pytest.mark.django_db


def keywords_url(evaluation) -> str:
    return f"/api/v1/evaluations/{evaluation.id}/keywords/"


def judgements_url(evaluation) -> str:
    return f"/api/v1/evaluations/{evaluation.id}/judgements/"


@pytest.fixture
def grader(team_a):
    return make_grader(team_a, "grader@a.test")


@pytest.fixture(scope="module")
def server():
    with FakeProvider() as fake:
        yield fake


@pytest.fixture
def judge_grades(server, settings):
    """grade(evaluation, team): an AI judge ("cheap", the judges' tests' first) grades one
    slot of every result through a real local model server (result N: grade N - 1,
    confidence 0.8), with prompt version "v-x"; the judge."""
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    server.respond_with(by_model({"cheap": lambda n: (n - 1, 0.8)}))

    def grade(evaluation, team):
        judge = judge_update(judge=judges(team, server)[0], api_key=API_KEY)
        JudgeRun.objects.create(judge=judge, evaluation=evaluation, prompt_version="v-x")
        run_the_first_judge(evaluation, judge)
        return judge

    return grade


API_KEY = "not-a-real-key-judgements"


def grade_all(evaluation: Evaluation, grades: dict[str, list[int | None]], grader) -> None:
    """Grade each keyword's slots in order (None: leave it), then compute the metrics."""
    for text, given in grades.items():
        for slot, grade in zip(slots_of(evaluation, text), given, strict=True):
            if grade is not None:
                slot_judge(
                    slot_id=slot.id, giver=Giver.recorded(grader), grade=grade, reason=f"r{grade}"
                )
    recompute_marked()


# --- Keywords ---------------------------------------------------------------------------


def test_keywords_lists_each_keyword_with_its_metrics_and_snapshots(api, team_a, grader):
    evaluation = make_evaluation(
        team=team_a,
        keywords={"red shoes": 4, "blue shirt": 3},
        metrics=[("ndcg", 10), ("precision", 3), ("dcg", 4)],
    )
    grade_all(evaluation, {"red shoes": [3, 0, 2, 1], "blue shirt": [2, 1, None]}, grader)
    Keyword.objects.filter(evaluation=evaluation, text="blue shirt").update(
        http_status=502, execution_message="upstream timed out", failed=True
    )

    response = api.get(keywords_url(evaluation))

    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2
    red, blue = body["results"]
    assert (red["keyword"], red["position"], red["failed"]) == ("red shoes", 1, False)
    assert (blue["keyword"], blue["position"], blue["failed"]) == ("blue shirt", 2, True)
    assert (blue["http_status"], blue["execution_message"]) == (502, "upstream timed out")
    assert (red["graded_slots"], blue["graded_slots"]) == (4, 2)
    for shown in (red, blue):
        keyword = Keyword.objects.get(evaluation=evaluation, text=shown["keyword"])
        assert shown["id"] == keyword.id
        stored = {(m.metric, m.k): m.value for m in KeywordMetric.objects.filter(keyword=keyword)}
        assert {(m["metric"], m["k"]): m["value"] for m in shown["metrics"]} == stored
        assert set(stored) == {("ndcg", 10), ("precision", 3), ("dcg", 4)}
        snapshots = Snapshot.objects.filter(keyword=keyword).order_by("position")
        assert [s["position"] for s in shown["snapshots"]] == [s.position for s in snapshots]
        assert [s["doc_id"] for s in shown["snapshots"]] == [s.doc_id for s in snapshots]
        assert [s["name"] for s in shown["snapshots"]] == [s.name for s in snapshots]
        assert [s["value"] for s in shown["snapshots"]] == [s.value for s in snapshots]
    # Full precision: the stored floats themselves, and an ungraded result is null.
    assert red["snapshots"][0]["value"] == 3.0
    assert blue["snapshots"][2]["value"] is None
    ndcg = next(m["value"] for m in red["metrics"] if m["metric"] == "ndcg")
    assert 0 < ndcg < 1
    assert ndcg == KeywordMetric.objects.get(keyword_id=red["id"], metric="ndcg").value


def test_keywords_show_the_attributes_and_image_of_each_snapshot(api, team_a):
    evaluation = make_evaluation(team=team_a, keywords={"hat": 1})
    Snapshot.objects.filter(keyword__evaluation=evaluation).update(
        image="https://img.example/hat.jpg", attributes={"brand": "Acme", "price": 79.9}
    )

    [snapshot] = api.get(keywords_url(evaluation)).json()["results"][0]["snapshots"]

    assert snapshot["image"] == "https://img.example/hat.jpg"
    assert snapshot["attributes"] == {"brand": "Acme", "price": 79.9}


def test_keywords_of_an_ungraded_evaluation_have_no_metric_values_yet(api, team_a):
    evaluation = make_evaluation(team=team_a, keywords={"hat": 2})

    [keyword] = api.get(keywords_url(evaluation)).json()["results"]

    assert keyword["metrics"] == []
    assert [s["value"] for s in keyword["snapshots"]] == [None, None]


def test_keywords_are_paginated_in_keyword_order(api, team_a):
    evaluation = make_evaluation(team=team_a, keywords={f"query {i}": 1 for i in range(5)})

    first = api.get(f"{keywords_url(evaluation)}?page_size=2").json()
    last = api.get(f"{keywords_url(evaluation)}?page_size=2&page=3").json()

    assert first["count"] == 5
    assert [k["keyword"] for k in first["results"]] == ["query 0", "query 1"]
    assert "page=2" in first["next"]
    assert [k["keyword"] for k in last["results"]] == ["query 4"]
    assert last["next"] is None


def test_keywords_of_another_teams_evaluation_are_404(api, team_b):
    theirs = make_evaluation(team=team_b)

    response = api.get(keywords_url(theirs))

    assert response.status_code == 404
    assert response.json() == {"detail": "No Evaluation matches the given query.", "errors": []}


# Measured on SQLite and PostgreSQL: the token, the evaluation, the count, the page of
# keywords, their snapshots and their metric values. The same for 1 and 12 keywords.
KEYWORDS_QUERIES = 6


@pytest.mark.parametrize("size", [1, 12])
def test_keywords_read_a_fixed_number_of_queries(
    size, api, team_a, grader, django_assert_max_num_queries
):
    evaluation = make_evaluation(team=team_a, keywords={f"q{i}": 3 for i in range(size)})
    grade_all(evaluation, {f"q{i}": [1, 2, None] for i in range(size)}, grader)

    with django_assert_max_num_queries(KEYWORDS_QUERIES):
        response = api.get(keywords_url(evaluation))

    assert len(response.json()["results"]) == size


# --- Judgements -------------------------------------------------------------------------


def test_judgements_list_every_slot_with_grade_grader_and_reason(api, team_a, grader):
    evaluation = make_evaluation(team=team_a, strategy=3, keywords={"hat": 2, "scarf": 1})
    slots = slots_of(evaluation)
    slot_judge(slot_id=slots[0].id, giver=Giver.recorded(grader), grade=3, reason="exact match")
    slot_judge(slot_id=slots[1].id, giver=Giver.recorded(None, "vendor-42"), grade=1, reason="")
    holder = make_grader(team_a, "holder@a.test")
    assign(slots[3], holder)

    response = api.get(judgements_url(evaluation))

    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 9
    rows = body["results"]
    assert [(r["keyword"], r["position"], r["slot"]) for r in rows] == [
        ("hat", 1, 0),
        ("hat", 1, 1),
        ("hat", 1, 2),
        ("hat", 2, 0),
        ("hat", 2, 1),
        ("hat", 2, 2),
        ("scarf", 1, 0),
        ("scarf", 1, 1),
        ("scarf", 1, 2),
    ]
    assert [r["id"] for r in rows] == [s.id for s in slots]
    graded_by_user, graded_by_name, empty, held = rows[0], rows[1], rows[2], rows[3]
    assert graded_by_user["grader"] == "grader@a.test"
    assert (graded_by_user["grade"], graded_by_user["reason"]) == (3, "exact match")
    assert graded_by_user["doc_id"] == "hat-doc-1"
    assert graded_by_user["graded_at"] is not None
    assert graded_by_name["grader"] == "vendor-42"
    assert graded_by_name["grade"] == 1
    assert (empty["grader"], empty["grade"], empty["reason"], empty["graded_at"]) == (
        None,
        None,
        "",
        None,
    )
    # Held by a grader but not yet graded.
    assert (held["grader"], held["grade"]) == ("holder@a.test", None)
    assert held["assigned_at"] is not None


def test_judgements_graded_true_lists_only_graded_slots(api, team_a, grader):
    evaluation = make_evaluation(team=team_a, keywords={"hat": 4})
    grade_all(evaluation, {"hat": [None, 2, None, 0]}, grader)

    graded_only = api.get(f"{judgements_url(evaluation)}?graded=true").json()
    every = api.get(f"{judgements_url(evaluation)}?graded=false").json()

    assert [(r["position"], r["grade"]) for r in graded_only["results"]] == [(2, 2), (4, 0)]
    assert every["count"] == 4


def test_judgements_are_paginated(api, team_a):
    evaluation = make_evaluation(team=team_a, keywords={"hat": 5})

    page = api.get(f"{judgements_url(evaluation)}?page_size=2&page=2").json()

    assert page["count"] == 5
    assert [r["position"] for r in page["results"]] == [3, 4]
    assert page["previous"] is not None


def test_judgements_of_another_teams_evaluation_are_404(api, team_b):
    theirs = make_evaluation(team=team_b)

    assert api.get(judgements_url(theirs)).status_code == 404


# Measured: the token, the evaluation, the count and the page (slots with their keyword,
# snapshot and grader in one join). The same for 1 and 12 keywords.
JUDGEMENTS_QUERIES = 4


@pytest.mark.parametrize("size", [1, 12])
def test_judgements_read_a_fixed_number_of_queries(
    size, api, team_a, django_assert_max_num_queries
):
    evaluation = make_evaluation(
        team=team_a, strategy=3, keywords={f"q{i}": 2 for i in range(size)}
    )
    graders = [make_grader(team_a) for _ in range(3)]
    for index, slot in enumerate(slots_of(evaluation)):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(graders[index % 3]), grade=index % 4)

    with django_assert_max_num_queries(JUDGEMENTS_QUERIES):
        response = api.get(f"{judgements_url(evaluation)}?page_size=500")

    assert len(response.json()["results"]) == size * 6


def test_an_ai_judge_s_grade_names_the_judge_its_model_and_prompt_beside_its_reason(
    api, team_a, grader, judge_grades
):
    evaluation = make_evaluation(team=team_a, strategy=3, keywords={"hat": 2})
    judge = judge_grades(evaluation, team_a)
    judged, cleared = [s for s in slots_of(evaluation) if s.grader_id == judge.user_id]
    person = next(s for s in slots_of(evaluation) if s.grader_id is None)
    slot_judge(slot_id=person.id, giver=Giver.recorded(grader), grade=1, reason="looks right")
    # A lead clears the judge's grade of result 2 and an outside grader grades it again:
    # the grade is theirs, whatever the judge's record of its own says.
    slot_judge(slot_id=cleared.id, giver=Giver.lead(), action=Action.CLEAR, team_id=team_a.id)
    slot_judge(slot_id=cleared.id, giver=Giver.recorded(None, "vendor-7"), grade=0)

    response = api.get(judgements_url(evaluation))

    assert response.status_code == 200
    rows = {row["id"]: row for row in response.json()["results"]}
    shown = rows[judged.id]
    assert (shown["grader"], shown["grade"], shown["reason"]) == ("cheap", 0, "r")
    assert shown["ai_judge"] == {
        "judge": judge.id,
        "name": "cheap",
        "model": "cheap",
        "prompt_version": "v-x",
        "confidence": 0.8,
        "agreement": None,  # a judge of one model, asked once
        "votes": None,
    }
    assert (rows[person.id]["grader"], rows[person.id]["ai_judge"]) == ("grader@a.test", None)
    assert rows[person.id]["reason"] == "looks right"
    assert (rows[cleared.id]["grader"], rows[cleared.id]["ai_judge"]) == ("vendor-7", None)
    assert judge.user.email not in response.content.decode()
    assert API_KEY not in response.content.decode()


@pytest.mark.parametrize("size", [1, 12])
def test_judgements_with_ai_judges_read_the_same_number_of_queries(
    size, api, team_a, grader, judge_grades, django_assert_max_num_queries
):
    evaluation = make_evaluation(
        team=team_a, strategy=3, keywords={f"q{i}": 2 for i in range(size)}
    )
    judge_grades(evaluation, team_a)
    people = [grader, make_grader(team_a, "second@a.test")]
    left = [slot for slot in slots_of(evaluation) if slot.grader_id is None]
    for index, slot in enumerate(left):  # two of each result's three slots, in order
        slot_judge(slot_id=slot.id, giver=Giver.recorded(people[index % 2]), grade=1)

    with django_assert_max_num_queries(JUDGEMENTS_QUERIES):
        response = api.get(f"{judgements_url(evaluation)}?page_size=500")

    rows = response.json()["results"]
    assert len(rows) == size * 6
    assert sorted(row["grader"] for row in rows) == (
        ["cheap"] * size * 2 + ["grader@a.test"] * size * 2 + ["second@a.test"] * size * 2
    )
