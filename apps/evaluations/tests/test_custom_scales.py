"""Integer scales of an evaluation's own: TREC's grade levels (-2..4, -1..4, 0..4), made
by a TREC import from the levels its qrels hold, or given by a lead or a document; graded
on the grader's page with their labels and keys; scored as trec_eval scores them."""

import io
import json
import random
import re

import pytest
from django.core.management import call_command

from apps.core.errors import InvalidInput
from apps.engine import WHOLE_LIST
from apps.evaluations.models import EvaluationMetric, FeedbackSlot
from apps.evaluations.services import evaluation_create
from apps.interchange.document import import_document
from apps.interchange.export import export_document
from apps.interchange.trec import import_trec
from apps.scoring.models import KeywordMetric
from tests.factories import assign, client_for, make_evaluation, make_grader, make_team

pytestmark = pytest.mark.django_db

pytrec_eval = pytest.importorskip("pytrec_eval")

METRICS = [
    ("ap", WHOLE_LIST),
    ("ndcg", WHOLE_LIST),
    ("precision", 10),
    ("ndcg", 10),
    ("recall", 100),
]
TREC_NAMES = {
    ("ap", WHOLE_LIST): "map",
    ("ndcg", WHOLE_LIST): "ndcg",
    ("precision", 10): "P_10",
    ("ndcg", 10): "ndcg_cut_10",
    ("recall", 100): "recall_100",
}
LEVELS = dict(lowest=-2, highest=4, relevant_from=1)


def web_track_files(seed: int) -> tuple[str, str]:
    """A run and qrels with the TREC Web tracks' levels -2..4, some of them not retrieved.
    Every judged query has a document at level 4 (pytrec_eval crashes on a query with no
    level reaching the relevance level; see apps/scoring/tests/test_engine_trec_pool.py)."""
    rng = random.Random(seed)
    run, qrels = [], []
    for query in range(20):
        depth = rng.choice([5, 60, 150])
        for rank in range(1, depth + 1):
            run.append(f"t{query} Q0 doc{rank} {rank} {depth - rank + rng.random()} web")
            if rng.random() < 0.4:
                qrels.append(f"t{query} 0 doc{rank} {rng.choice([-2, -1, 0, 0, 1, 2, 3])}")
        qrels.append(f"t{query} 0 best{query} 4")  # not retrieved
    return "\n".join(run) + "\n", "\n".join(qrels) + "\n"


def named(text: str, name: str) -> io.BytesIO:
    stream = io.BytesIO(text.encode())
    stream.name = name
    return stream


def reference(run: str, qrels: str, relevance_level: int) -> dict[str, dict[str, float]]:
    judged: dict[str, dict[str, int]] = {}
    for line in qrels.splitlines():
        qid, _, docno, grade = line.split()
        judged.setdefault(qid, {})[docno] = int(grade)
    scored: dict[str, dict[str, float]] = {}
    for line in run.splitlines():
        qid, _, docno, _, score, _ = line.split()
        scored.setdefault(qid, {})[docno] = float(score)
    measures = {"map", "ndcg", "P.10", "ndcg_cut.10", "recall.100"}
    evaluator = pytrec_eval.RelevanceEvaluator(judged, measures, relevance_level=relevance_level)
    return evaluator.evaluate(scored)


@pytest.mark.parametrize("relevant_from", [1, 2])
def test_a_trec_import_takes_the_levels_its_qrels_hold_and_equals_trec_eval(relevant_from):
    run, qrels = web_track_files(seed=relevant_from)

    evaluation = import_trec(
        team=make_team(),
        run=named(run, "run.txt"),
        qrels=named(qrels, "qrels.txt"),
        name="web",
        scale="custom",
        relevant_from=relevant_from,
        profile="trec",
        metrics=METRICS,
    ).evaluation

    assert evaluation.scale == "custom"
    assert evaluation.scale_levels == {**LEVELS, "relevant_from": relevant_from}
    expected = reference(run, qrels, relevant_from)
    rows = KeywordMetric.objects.filter(evaluation=evaluation).values_list(
        "keyword__text", "metric", "k", "value"
    )
    compared = 0
    for text, metric, k, value in rows:
        assert value == pytest.approx(expected[text][TREC_NAMES[(metric, k)]], abs=1e-9), (
            text,
            metric,
            k,
        )
        compared += 1
    assert compared == 20 * len(METRICS)
    for row in EvaluationMetric.objects.filter(evaluation=evaluation):
        name = TREC_NAMES[(row.metric, row.k)]
        mean = sum(values[name] for values in expected.values()) / len(expected)
        assert row.value == pytest.approx(mean, abs=1e-9)


def test_levels_off_the_scale_and_too_many_levels_are_refused_with_their_place():
    with pytest.raises(InvalidInput) as raised:
        import_trec(
            team=make_team(),
            run=named("q Q0 a 1 1 t\n", "run.txt"),
            qrels=named("q 0 a -5\nq 0 b 9\n", "qrels.txt"),
            name="wide",
            scale="custom",
            metrics=[("ndcg", 10)],
        )
    assert raised.value.problems == [
        "scale_levels.highest: from lowest to highest must be 2 to 10 levels, got 15"
    ]

    with pytest.raises(InvalidInput) as raised:
        import_trec(
            team=make_team(),
            run=named("q Q0 a 1 1 t\n", "run.txt"),
            qrels=named("q 0 a 7\n", "qrels.txt"),
            name="given",
            scale="custom",
            scale_levels={"lowest": 0, "highest": 4},
            metrics=[("ndcg", 10)],
        )
    assert raised.value.problems == [
        "qrels.txt line 1: grade 7 is not a custom grade (0, 1, 2, 3, 4)"
    ]


def test_a_lead_defines_levels_and_metrics_that_cannot_use_them_are_refused():
    team = make_team()
    with pytest.raises(InvalidInput) as raised:
        evaluation_create(
            team=team,
            name="web",
            scale="custom",
            scale_levels={"lowest": -2, "highest": 4, "relevant_from": -2, "labels": ["x"]},
            metrics=[("err", 10), ("ndcg", 10)],
        )
    assert raised.value.problems == [
        "scale_levels.relevant_from: must be a level above the lowest (-1 to 4)",
        "scale_levels.labels: one per level, 7 in all",
    ]
    with pytest.raises(InvalidInput) as raised:
        evaluation_create(
            team=team,
            name="web",
            scale="custom",
            scale_levels=LEVELS,
            metrics=[("err", 10)],
            transformers={"graded": {"0": 0}},
        )
    assert raised.value.problems == [
        "metrics[0].metric: ERR is defined on the graded scale's grades 0 to 3; "
        "it is not offered on a custom scale",
        "transformers.graded: a custom scale's graded and detail metrics take its levels "
        "as gains; only binary rules apply",
    ]
    with pytest.raises(InvalidInput, match="scale_levels: only for the custom scale"):
        evaluation_create(team=team, name="g", scale="graded", scale_levels=LEVELS, metrics=[])


def test_a_grader_grades_on_the_custom_levels_with_their_labels_and_keys():
    labels = ["Spam", "Junk", "Not relevant", "Related", "Relevant", "Highly", "Key"]
    evaluation = make_evaluation(
        scale="custom",
        scale_levels={**LEVELS, "labels": labels},
        metrics=[("ndcg", 3), ("precision", 3)],
        keywords={"shoes": 3},
    )
    grader = make_grader(evaluation.team)
    slot = assign(FeedbackSlot.objects.filter(evaluation=evaluation).first(), grader)
    client = client_for(grader)

    page = client.get("/feedback/").content.decode()
    buttons = re.findall(r'name="grade" value="(-?\d+)"(?: data-key="(\w)")?', page)
    # Each level on its own digit; the levels below 0 have none (a click gives them).
    assert buttons == [
        ("-2", ""),
        ("-1", ""),
        ("0", "0"),
        ("1", "1"),
        ("2", "2"),
        ("3", "3"),
        ("4", "4"),
    ]
    assert re.search(r"-2 · Spam\s*</button>", page)
    assert '4 · Key <kbd title="key 4">4</kbd>' in page

    refused = client.post(f"/feedback/slots/{slot.id}/grade/", {"grade": 5}, follow=True)
    assert "5 is not a custom grade (-2, -1, 0, 1, 2, 3, 4)" in refused.content.decode()
    slot.refresh_from_db()
    assert slot.grade is None
    client.post(f"/feedback/slots/{slot.id}/grade/", {"grade": -2})
    slot.refresh_from_db()
    assert slot.grade == -2


def test_a_document_carries_its_levels_both_ways():
    team = make_team()
    document = {
        "format": "relevo.evaluation/1",
        "name": "levels",
        "scale": "custom",
        "scale_levels": {"lowest": -1, "highest": 4, "relevant_from": 2},
        "profile": "trec",
        "metrics": [{"metric": "ap", "k": None}, {"metric": "ndcg", "k": 5}],
        "keywords": [
            {
                "keyword": "q",
                "snapshots": [
                    {"position": 1, "doc_id": "a", "grades": [-1]},
                    {"position": 2, "doc_id": "b", "grades": [2]},
                ],
                "unretrieved": [{"doc_id": "c", "grade": 4}],
            }
        ],
    }
    evaluation = import_document(team=team, source=io.BytesIO(json.dumps(document).encode()))
    values = dict(
        EvaluationMetric.objects.filter(evaluation=evaluation).values_list("metric", "value")
    )
    # Relevant from 2: b (rank 2) and c (not retrieved); AP = (1/2) / 2.
    assert values["ap"] == pytest.approx(0.25)
    out = io.StringIO()
    export_document(evaluation, out)
    exported = json.loads(out.getvalue())
    assert exported["scale_levels"] == document["scale_levels"]

    again = import_document(
        team=team, source=io.BytesIO(out.getvalue().replace('"levels"', '"levels 2"', 1).encode())
    )
    assert again.scale_levels == document["scale_levels"]

    document["keywords"][0]["snapshots"][0]["grades"] = [5]
    document["name"] = "levels 3"  # a team's names are unique: this one is free
    with pytest.raises(InvalidInput) as raised:
        import_document(team=team, source=io.BytesIO(json.dumps(document).encode()))
    assert raised.value.problems == [
        "keywords[0].snapshots[0].grades[0]: 5 is not a custom grade (-1, 0, 1, 2, 3, 4)"
    ]


def test_the_api_takes_custom_levels(team_a):
    from django.test import Client

    from apps.accounts.api_tokens import api_token_create

    _token, text = api_token_create(team=team_a, name="ci")
    api = Client(headers={"Authorization": f"Bearer {text}"})
    created = api.post(
        "/api/v1/evaluations/",
        {
            "name": "web levels",
            "scale": "custom",
            "scale_levels": {"lowest": 0, "highest": 4, "relevant_from": 2},
            "metrics": [{"metric": "ndcg", "k": 10}],
            "keywords": ["shoes"],
        },
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["scale_levels"] == {"lowest": 0, "highest": 4, "relevant_from": 2}

    refused = api.post(
        "/api/v1/evaluations/",
        {
            "name": "bad levels",
            "scale": "custom",
            "scale_levels": {"lowest": 0, "highest": 40},
            "metrics": [{"metric": "ndcg", "k": 10}],
        },
        content_type="application/json",
    )
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["field"] == "scale_levels.highest"


def test_a_lead_creates_custom_levels_on_the_form(team_a, owner):
    lead = client_for(owner)
    form = {
        "name": "web levels",
        "scale": "custom",
        "strategy": 1,
        "profile": "trec",
        "metrics": "map, ndcg_cut_10",
        "levels_lowest": -2,
        "levels_highest": 4,
        "levels_relevant_from": 1,
        "levels_labels": "Spam\nJunk\nNo\nSome\nGood\nGreat\nKey",
        "reuse": "none",
    }

    response = lead.post("/evaluations/new/", form)

    assert response.status_code == 302, response.content.decode()[:2000]
    evaluation = team_a.evaluations.get(name="web levels")
    assert evaluation.scale_levels == {
        "lowest": -2,
        "highest": 4,
        "relevant_from": 1,
        "labels": ["Spam", "Junk", "No", "Some", "Good", "Great", "Key"],
    }
    bad = lead.post("/evaluations/new/", {**form, "name": "wide", "levels_highest": 12})
    assert bad.status_code == 400
    assert "must be 2 to 10 levels" in bad.content.decode()


def test_the_import_trec_command_makes_custom_levels(tmp_path):
    run, qrels = web_track_files(seed=5)
    (tmp_path / "run.txt").write_text(run)
    (tmp_path / "qrels.txt").write_text(qrels)
    out = io.StringIO()
    call_command(
        "import_trec",
        *("--team", str(make_team().id)),
        *("--run", str(tmp_path / "run.txt"), "--qrels", str(tmp_path / "qrels.txt")),
        *("--scale", "custom", "--relevant-from", "3", "--profile", "trec"),
        *("--metrics", "map", "--no-progress"),
        stdout=out,
        stderr=io.StringIO(),
    )
    from apps.evaluations.models import Evaluation

    evaluation = Evaluation.objects.get(id=int(out.getvalue()))
    assert evaluation.scale_levels == {"lowest": -2, "highest": 4, "relevant_from": 3}
