"""The exports' exact text for a small evaluation: CSV, qrels, raw qrels, run, JSON."""

import csv
import io
import json

import pytest

from apps.evaluations.services import Document, evaluation_create, keywords_add, snapshots_add
from apps.interchange.document import import_document
from apps.interchange.export import (
    EXPORT_FORMATS,
    export_csv,
    export_document,
    export_qrels,
    export_run,
    round_half_up,
)
from apps.judging.judgements import Action, Giver, slot_judge
from apps.lifecycle.steps import evaluation_start
from apps.scoring.services import recompute_evaluation
from tests.factories import assign, make_grader, make_team, slots_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def evaluation():
    """Graded, three slots: sku 1 -> 3, 2 (mean 2.5); sku-2 -> 1, 2 (1.5); sku-3 ungraded;
    b-1 -> 0; b-2 -> 2, 3, 3 (the last one without a grader)."""
    team = make_team()
    ann = make_grader(team, "ann@example.test")
    bob = make_grader(team, "bob@example.test")
    evaluation = evaluation_create(
        team=team, name="Small", scale="graded", strategy=3, metrics=[("ndcg", 3), ("cg", 2)]
    )
    red, blue = keywords_add(evaluation=evaluation, texts=["red shoes", "blue shirt"])
    snapshots_add(
        keyword=red,
        documents=[Document("sku 1", "Result 1"), Document("sku-2", "Result 2"), Document("sku-3")],
    )
    snapshots_add(
        keyword=blue, documents=[Document("b-1", "Result 1"), Document("b-2", 'Result 2, "best"')]
    )
    evaluation_start(evaluation=evaluation)
    given = {
        ("red shoes", 0): (3, ann, ""),
        ("red shoes", 1): (2, None, "crowd worker"),
        ("red shoes", 3): (1, ann, ""),
        ("red shoes", 4): (2, None, "x"),
        ("blue shirt", 0): (0, bob, ""),
        ("blue shirt", 3): (2, ann, ""),
        ("blue shirt", 4): (3, bob, ""),
        ("blue shirt", 5): (3, None, ""),
    }
    for (keyword, number), (grade, user, name) in given.items():
        slot = slots_of(evaluation, keyword)[number]
        slot_judge(slot_id=slot.id, giver=Giver.recorded(user, name), grade=grade)
    recompute_evaluation(evaluation_id=evaluation.id)
    evaluation.refresh_from_db()
    return evaluation


def written(export, evaluation) -> str:
    out = io.StringIO()
    export(evaluation, out)
    return out.getvalue()


def test_csv_has_one_row_per_snapshot_with_its_value_grades_and_graders(evaluation):
    # People's grades only: the AI judges' three columns stay empty; nobody skipped; each
    # grade's source (lined up with the grades) is a person.
    assert written(export_csv, evaluation) == (
        "keyword,position,doc_id,name,value,grades,graders,"
        "ai_judge_models,ai_judge_prompt_versions,ai_judge_reasons,"
        "grade_labels,skipped_by,skip_reasons,grade_reasons,information_need,keyword_notes,"
        "grade_sources\n"
        "red shoes,1,sku 1,Result 1,2.5,3|2,ann@example.test|crowd worker,,,,"
        "3 · Perfect|2 · Good,,,|,,,person|person\n"
        "red shoes,2,sku-2,Result 2,1.5,1|2,ann@example.test|x,,,,1 · Fair|2 · Good,,,|,,,"
        "person|person\n"
        "red shoes,3,sku-3,,,,,,,,,,,,,,\n"
        "blue shirt,1,b-1,Result 1,0,0,bob@example.test,,,,0 · Poor,,,,,,person\n"
        'blue shirt,2,b-2,"Result 2, ""best""",2.66666666667,2|3|3,'
        "ann@example.test|bob@example.test|,,,,2 · Good|3 · Perfect|3 · Perfect,,,||,,,"
        "person|person|person\n"
    )


def skipped(evaluation, keyword: str, position: int, grader, reason: str) -> None:
    """The grader skips the result through the grade writer, as the grading page does."""
    slot = next(
        slot
        for slot in slots_of(evaluation, keyword)
        if slot.snapshot.position == position and slot.grade is None
    )
    assign(slot, grader)
    slot_judge(slot_id=slot.id, giver=Giver.grader(grader), action=Action.SKIP, reason=reason)


def test_csv_lists_who_skipped_a_result_and_why_lined_up(evaluation):
    team = evaluation.team
    skipped(evaluation, "red shoes", 3, make_grader(team, "cy@example.test"), "no | image")
    skipped(evaluation, "red shoes", 3, make_grader(team, "di@example.test"), "")

    rows = list(csv.DictReader(io.StringIO(written(export_csv, evaluation))))

    assert (rows[2]["keyword"], rows[2]["position"]) == ("red shoes", "3")
    assert rows[2]["skipped_by"] == "cy@example.test|di@example.test"
    assert rows[2]["skip_reasons"] == "no \\| image|"
    assert (rows[0]["skipped_by"], rows[0]["skip_reasons"]) == ("", "")


def test_json_lists_a_skipped_snapshots_skips_and_imports_back_without_them(evaluation):
    skipped(evaluation, "red shoes", 3, make_grader(evaluation.team, "cy@example.test"), "blurry")

    document = json.loads(written(export_document, evaluation))

    red = document["keywords"][0]["snapshots"]
    assert red[2]["skips"] == [{"grader": "cy@example.test", "reason": "blurry"}]
    assert "skips" not in red[0]
    again = import_document(team=make_team(), source=io.BytesIO(json.dumps(document).encode()))
    assert again.keywords.count() == 2


def test_qrels_have_the_value_of_each_judged_snapshot_rounded_half_up(evaluation):
    assert written(export_qrels, evaluation) == (
        "red%20shoes 0 sku%201 3\n"
        "red%20shoes 0 sku-2 2\n"
        "blue%20shirt 0 b-1 0\n"
        "blue%20shirt 0 b-2 3\n"
    )


def test_raw_qrels_have_one_line_per_grade_with_its_grader_as_iteration(evaluation):
    assert written(EXPORT_FORMATS["qrels-raw"][0], evaluation) == (
        "red%20shoes ann@example.test sku%201 3\n"
        "red%20shoes crowd%20worker sku%201 2\n"
        "red%20shoes ann@example.test sku-2 1\n"
        "red%20shoes x sku-2 2\n"
        "blue%20shirt bob@example.test b-1 0\n"
        "blue%20shirt ann@example.test b-2 2\n"
        "blue%20shirt bob@example.test b-2 3\n"
        "blue%20shirt 0 b-2 3\n"
    )


def test_the_run_ranks_by_position_with_scores_that_fall_with_it(evaluation):
    assert written(export_run, evaluation) == (
        "red%20shoes Q0 sku%201 1 3 relevo\n"
        "red%20shoes Q0 sku-2 2 2 relevo\n"
        "red%20shoes Q0 sku-3 3 1 relevo\n"
        "blue%20shirt Q0 b-1 1 2 relevo\n"
        "blue%20shirt Q0 b-2 2 1 relevo\n"
    )


def test_the_json_document_adds_ids_status_values_and_graders(evaluation):
    document = json.loads(written(export_document, evaluation))

    assert list(document) == [
        "format",
        "id",
        "name",
        "description",
        "scale",
        "strategy",
        "profile",
        "show_position",
        "zero_without_results",
        "scoring_guidelines",
        "tags",
        "transformers",
        "status",
        "progress",
        "created_at",
        "finished_at",
        "metrics",
        "keywords",
    ]
    assert (
        document["id"],
        document["status"],
        document["progress"],
        document["zero_without_results"],
    ) == (
        evaluation.id,
        "active",
        8 / 15,
        False,
    )
    assert document["metrics"] == [
        {"metric": m.metric, "k": m.k, "value": m.value} for m in evaluation.metrics.all()
    ]
    blue = document["keywords"][1]
    assert blue["keyword"] == "blue shirt"
    assert [m["metric"] for m in blue["metrics"]] == ["ndcg", "cg"]
    assert blue["metrics"][1]["value"] == 0.0 + 8 / 3
    assert blue["snapshots"][1] == {
        "position": 2,
        "doc_id": "b-2",
        "name": 'Result 2, "best"',
        "image": "",
        "attributes": {},
        "grades": [
            {"grader": "ann@example.test", "grade": 2, "reason": ""},
            {"grader": "bob@example.test", "grade": 3, "reason": ""},
            {"grader": None, "grade": 3, "reason": ""},
        ],
        "value": 8 / 3,
    }
    assert document["keywords"][0]["snapshots"][2]["grades"] == [None, None, None]


def test_every_export_format_names_its_function_content_type_and_extension():
    assert {name: spec[1:] for name, spec in EXPORT_FORMATS.items()} == {
        "json": ("application/json", ".json"),
        "csv": ("text/csv", ".csv"),
        "qrels": ("text/plain", ".qrels"),
        "qrels-raw": ("text/plain", ".raw.qrels"),
        "run": ("text/plain", ".run"),
        "topics": ("text/plain", ".topics"),
        "trec_eval": ("text/plain", ".trec_eval.txt"),
    }


@pytest.mark.parametrize(
    ("value", "grade"), [(2.5, 3), (1.5, 2), (0.5, 1), (2.4999, 2), (1 / 3, 0), (3.0, 3)]
)
def test_values_round_half_up_to_a_grade(value, grade):
    assert round_half_up(value) == grade


def test_csv_text_that_a_spreadsheet_would_run_as_a_formula_is_written_as_text():
    team = make_team()
    evaluation = evaluation_create(
        team=team, name="Risky", scale="binary", metrics=[("precision", 1)]
    )
    (keyword,) = keywords_add(evaluation=evaluation, texts=["=HYPERLINK(1)"])
    snapshots_add(keyword=keyword, documents=[Document("+1", "@SUM(A1)"), Document("-2", "ok")])

    rows = list(csv.reader(io.StringIO(written(export_csv, evaluation))))

    assert rows[1][:4] == ["'=HYPERLINK(1)", "1", "'+1", "'@SUM(A1)"]
    assert rows[2][:4] == ["'=HYPERLINK(1)", "2", "'-2", "ok"]
