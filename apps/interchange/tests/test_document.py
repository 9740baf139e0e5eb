"""The evaluation document (relevo.evaluation/1): export, import, and a rejected import."""

import io
import json

import pytest

from apps.accounts.models import Tag
from apps.core.errors import InvalidInput
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Keyword,
    Snapshot,
    Status,
)
from apps.evaluations.services import Document, evaluation_create, keywords_add, snapshots_add
from apps.interchange.document import import_document
from apps.interchange.export import export_document
from apps.interchange.problems import LIMIT
from apps.judging.decisions import snapshot_decide
from apps.judging.judgements import Giver, slot_judge
from apps.judging.models import SnapshotDecision
from apps.lifecycle.steps import evaluation_start
from apps.scoring.models import KeywordMetric
from apps.scoring.services import recompute_evaluation
from tests.factories import make_grader, make_team, slots_of

pytestmark = pytest.mark.django_db

METRICS = [("ndcg", 10), ("precision", 5), ("ap", 10), ("err", 3), ("cg_d", 5)]
TRANSFORMERS = {"binary": {"0": 0, "1": 0, "2": 1, "3": 1}}


def exported(evaluation: Evaluation) -> dict:
    out = io.StringIO()
    export_document(evaluation, out)
    return json.loads(out.getvalue())


def as_file(document: dict) -> io.BytesIO:
    return io.BytesIO(json.dumps(document).encode())


def row_counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (Evaluation, EvaluationMetric, Keyword, Snapshot, FeedbackSlot, Tag)
    }


def owner_of(team):
    return team.memberships.get(role="owner").user


def graded_evaluation(team, graders):
    """Strategy 3, graded, grades from users and external graders, with reasons."""
    evaluation = evaluation_create(
        team=team,
        name="Holiday query set, try 4",
        description="the fourth try",
        scale="graded",
        strategy=3,
        profile="searchtweak",
        metrics=METRICS,
        transformers=TRANSFORMERS,
        show_position=True,
        scoring_guidelines="# Be *strict*",
        tags=[Tag.objects.create(team=team, name="apparel")],
    )
    keywords = keywords_add(evaluation=evaluation, texts=["red running shoes", "Red running shoes"])
    for keyword in keywords:
        snapshots_add(
            keyword=keyword,
            documents=[
                Document(
                    f"sku-{keyword.id}-{i}",
                    f"Trail runner {i}",
                    f"https://img.example/{i}.jpg",
                    {"brand": "Acme", "price": 79.9 + i, "sizes": [40, 41], "new": i == 2},
                )
                for i in range(1, 6)
            ],
        )
    evaluation_start(evaluation=evaluation)
    grades = [3, 2, None, 0, 1, 2, 3, 3, 1, None, 0, 2, 1, 1, None]
    for number, slot in enumerate(slots_of(evaluation, "red running shoes")):
        grade = grades[number]
        if grade is None:
            continue
        if slot.index == 2:
            slot_judge(slot_id=slot.id, giver=Giver.recorded(None, "crowd worker 7"), grade=grade)
        else:
            slot_judge(
                slot_id=slot.id,
                giver=Giver.recorded(graders[slot.index]),
                grade=grade,
                reason=f"seen {number}",
            )
    first = slots_of(evaluation, "Red running shoes")[0]
    slot_judge(
        slot_id=first.id, giver=Giver.recorded(None, "agency"), grade=3, reason="exact match"
    )
    # The graders disagreed on the second result (0, 1 and 2); a lead settled it.
    disputed = slots_of(evaluation, "red running shoes")[3].snapshot_id
    snapshot_decide(
        membership=owner_of(team).memberships.get(team=team),
        snapshot_id=disputed,
        grade=3,
        reason="the photo shows it",
    )
    recompute_evaluation(evaluation_id=evaluation.id)
    evaluation.refresh_from_db()
    return evaluation


def without_identity(document: dict) -> dict:
    """What an import must reproduce: all but the new id, dates and status."""
    return {
        key: value
        for key, value in document.items()
        if key not in {"id", "created_at", "finished_at", "status"}
    }


def without_sources(document: dict) -> dict:
    """The document with its grades' sources left out (an import is their source)."""
    for keyword in document["keywords"]:
        for snapshot in keyword["snapshots"]:
            for grade in snapshot["grades"]:
                if grade is not None:
                    grade.pop("source", None)
    return document


def test_an_exported_evaluation_imports_into_a_fresh_team_with_the_same_everything():
    team = make_team()
    graders = [make_grader(team, f"ann{i}@example.test") for i in range(2)]
    original = graded_evaluation(team, graders)
    before = exported(original)
    original.delete()
    fresh = make_team()
    for grader in graders:
        make_grader(fresh, grader.email)
    make_grader(fresh, owner_of(team).email, role="admin")  # the lead who decided

    imported = import_document(team=fresh, source=as_file(before))

    after = exported(imported)
    # Every grade now says it came by this import; the rest is as it was.
    label = f"JSON import, {imported.created_at:%Y-%m-%d}"
    assert {
        (grade["source"]["kind"], grade["source"]["name"])
        for keyword in after["keywords"]
        for snapshot in keyword["snapshots"]
        for grade in snapshot["grades"]
        if grade is not None
    } == {("import", label)}
    assert without_identity(without_sources(after)) == without_identity(before)
    decided = before["keywords"][0]["snapshots"][1]
    assert decided["decision"] == {
        "grade": 3,
        "by": owner_of(team).email,
        "reason": "the photo shows it",
    }
    assert decided["value"] == 3.0  # the decision, not the graders' mean (1.0)
    decision = SnapshotDecision.objects.get(evaluation=imported)
    assert decision.decided_by.email == owner_of(team).email
    assert imported.status == Status.PENDING
    assert imported.team == fresh
    # Full precision: the same floats, not merely close ones.
    assert [m["value"] for m in after["metrics"]] == [m["value"] for m in before["metrics"]]
    assert any(isinstance(m["value"], float) and m["value"] % 1 for m in after["metrics"])
    assert before["progress"] == pytest.approx(13 / 30)


def test_imported_grades_keep_their_graders_and_count_as_graded_slots():
    team = make_team()
    graders = [make_grader(team, f"bob{i}@example.test") for i in range(2)]
    document = exported(graded_evaluation(team, graders))
    fresh = make_team()
    member = make_grader(fresh, "BOB0@example.test")  # emails match whatever their case

    imported = import_document(team=fresh, source=as_file(document))

    slots = slots_of(imported, "red running shoes")
    assert slots[0].grader == member and slots[0].external_grader == ""
    assert slots[0].reason == "seen 0" and slots[0].graded_at is not None
    # Not a member of this team: kept as an external grader's name.
    assert (slots[1].grader, slots[1].external_grader) == (None, "bob1@example.test")
    assert slots[2].grade is None and slots[2].snapshot_started  # its snapshot has grades
    assert slots[5].external_grader == "crowd worker 7"
    assert imported.graded_slots == 13 and imported.total_slots == 30
    assert imported.progress == pytest.approx(13 / 30)
    assert KeywordMetric.objects.filter(evaluation=imported).count() == 2 * len(METRICS)
    assert not Keyword.objects.filter(evaluation=imported, needs_scoring=True).exists()


def test_slots_carry_the_copies_snapshots_add_gives_them():
    document = minimal_document(
        keywords=[
            {"keyword": "b", "snapshots": [{"position": 3, "doc_id": "x", "grades": [1]}]},
            {"keyword": "a", "snapshots": [{"position": 1, "doc_id": "y"}]},
        ]
    )
    imported = import_document(team=make_team(), source=as_file(document))

    assert list(imported.keywords.values_list("text", "position")) == [("b", 1), ("a", 2)]
    slot = FeedbackSlot.objects.get(evaluation=imported, keyword__text="b")
    assert (slot.keyword_position, slot.snapshot_position, slot.snapshot_started) == (1, 3, True)
    assert slot.snapshot.keyword == slot.keyword


def test_a_lead_s_decision_is_imported_and_scored_in_place_of_the_grades():
    team = make_team()
    lead = make_grader(team, "lena@example.test", role="admin")
    snapshots = [
        {"position": 1, "doc_id": "a", "grades": [0, 3], "decision": {"grade": 2}},
        {
            "position": 2,
            "doc_id": "b",
            "grades": [1],
            "decision": {"grade": 0, "by": "LENA@example.test", "reason": "off topic"},
        },
        {"position": 3, "doc_id": "c", "decision": {"grade": 1, "by": "gone@example.test"}},
        {"position": 4, "doc_id": "d", "grades": [3, 3], "decision": None},
    ]
    document = minimal_document(strategy=3, keywords=[{"keyword": "q", "snapshots": snapshots}])

    imported = import_document(team=team, source=as_file(document))

    decisions = SnapshotDecision.objects.filter(evaluation=imported).order_by("snapshot__position")
    assert [(d.snapshot.position, d.grade, d.decided_by, d.reason) for d in decisions] == [
        (1, 2, None, ""),
        (2, 0, lead, "off topic"),
        (3, 1, None, ""),  # not a member of this team: who decided is not kept
    ]
    assert all(d.decided_at is not None for d in decisions)
    values = Snapshot.objects.filter(keyword__evaluation=imported).order_by("position")
    assert list(values.values_list("value", flat=True)) == [2.0, 0.0, 1.0, 3.0]
    assert exported(imported)["keywords"][0]["snapshots"][3].get("decision") is None


def test_decision_problems_are_listed_with_their_locations():
    snapshots = [
        {"position": 1, "doc_id": "a", "decision": {"grade": 4, "by": 7, "note": "x"}},
        {"position": 2, "doc_id": "b", "decision": {"reason": "r" * 2001}},
        {"position": 3, "doc_id": "c", "decision": 2},
    ]
    document = minimal_document(keywords=[{"keyword": "q", "snapshots": snapshots}])

    problems = rejected(document)

    where = "keywords[0].snapshots"
    assert problems == [
        f"{where}[0].decision.note: unknown field",
        f"{where}[0].decision.grade: 4 is not a graded grade (0, 1, 2, 3)",
        f"{where}[0].decision.by: must be the email of the lead who decided",
        f"{where}[1].decision.grade: required, a grade on the evaluation's scale",
        f"{where}[1].decision.reason: at most 2000 characters (got 2001)",
        f'{where}[2].decision: must be an object {{"grade", "by", "reason"}} or null',
    ]


def minimal_document(**overrides) -> dict:
    document = {
        "format": "relevo.evaluation/1",
        "name": "Small",
        "scale": "graded",
        "strategy": 1,
        "metrics": [{"metric": "ndcg", "k": 10}],
        "keywords": [],
    }
    document.update(overrides)
    return document


def test_settings_after_the_keywords_are_read_as_well():
    text = (
        '{"keywords": [{"keyword": "q", "snapshots": [{"position": 1, "doc_id": "d",'
        ' "grades": [1, null, 0]}]}], "format": "relevo.evaluation/1", "name": "Late",'
        ' "scale": "binary", "strategy": 3, "metrics": [{"metric": "precision", "k": 1}],'
        ' "tags": ["late", "new"]}'
    )
    team = make_team()

    imported = import_document(team=team, source=io.BytesIO(text.encode()))

    assert (imported.name, imported.scale, imported.strategy) == ("Late", "binary", 3)
    assert sorted(imported.tags.values_list("name", flat=True)) == ["late", "new"]
    assert imported.metrics.get().value is None  # 1 vs 0: a tie, so no value
    assert imported.graded_slots == 2


def test_a_source_that_cannot_seek_is_read_all_the_same():
    class Stream(io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self.inner = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:
            data = self.inner.read(len(buffer))
            buffer[: len(data)] = data
            return len(data)

    document = minimal_document(keywords=[{"keyword": "q", "snapshots": []}])

    imported = import_document(team=make_team(), source=Stream(json.dumps(document).encode()))

    assert imported.keywords.count() == 1


def test_progress_is_told_the_snapshots_imported_so_far():
    seen: list[int] = []
    keywords = [
        {"keyword": f"k{i}", "snapshots": [{"position": 1, "doc_id": "d"}]} for i in range(3)
    ]

    import_document(
        team=make_team(), source=as_file(minimal_document(keywords=keywords)), progress=seen.append
    )

    assert seen and seen[-1] == 3


def test_progress_may_use_the_database_while_batches_are_written(monkeypatch):
    from apps.interchange import writer

    monkeypatch.setattr(writer, "BATCH_SNAPSHOTS", 4)
    keywords = [
        {"keyword": f"k{i}", "snapshots": [{"position": p, "doc_id": f"d{p}"} for p in (1, 2, 3)]}
        for i in range(10)
    ]
    stored: list[tuple[int, int]] = []

    def progress(done: int) -> None:
        stored.append((done, Snapshot.objects.filter(keyword__text__startswith="k").count()))

    import_document(
        team=make_team(), source=as_file(minimal_document(keywords=keywords)), progress=progress
    )

    assert [done for done, _ in stored] == [6, 12, 18, 24, 30]
    assert all(done == count for done, count in stored)  # what it is told is stored


def rejected(document: dict | bytes, team=None) -> list[str]:
    """The problems of a rejected import; also checks that nothing was written."""
    team = team or make_team()
    before = row_counts()
    source = io.BytesIO(document) if isinstance(document, bytes) else as_file(document)
    with pytest.raises(InvalidInput) as raised:
        import_document(team=team, source=source)
    assert row_counts() == before
    return raised.value.problems


def test_every_problem_is_listed_with_its_location_and_nothing_is_written():
    team = make_team()
    make_grader(team, "carol@example.test")
    document = {
        "format": "relevo.evaluation/2",
        "name": "   ",
        "scale": "x",
        "strategy": 2,
        "profile": "pytrec",
        "show_position": "yes",
        "tags": ["ok", "", 5],
        "transformers": {"binary": {"0": 0}},
        "metrics": [
            {"metric": "ndcg", "k": 10},
            {"metric": "ndcg", "k": 10},
            {"metric": "nope", "k": 1001},
            "p@5",
            {"metric": "ap", "k": 5, "cutoff": 3},
        ],
        "colour": "red",
        "keywords": [
            {"keyword": "a", "snapshots": []},
            {"keyword": "a", "snapshots": [{"position": 1, "doc_id": "d"}]},
            {"keyword": " ", "snapshots": {}},
            "b",
        ],
    }

    problems = rejected(document, team)

    assert problems == [
        "colour: unknown field",
        "format: 'relevo.evaluation/2' is not supported; expected 'relevo.evaluation/1'",
        "show_position: must be true or false",
        'metrics[3]: must be an object {"metric", "k"}',
        "metrics[4].cutoff: unknown field",
        "tags[1]: must be a name of 1 to 60 characters",
        "tags[2]: must be a name of 1 to 60 characters",
        "name: required",
        "scale: 'x' is not one of binary, graded, detail, custom",
        "strategy: 2 must be 1 or 3",
        "profile: 'pytrec' is not one of searchtweak, trec",
        "metrics[1]: ndcg@10 is listed twice",
        "metrics[2].metric: unknown metric 'nope'",
        "metrics[2].k: 1001 must be a whole number from 1 to 1000, or null for the whole list",
        "keywords[1].keyword: duplicate of keywords[0]",
        "keywords[2].keyword: required, a text",
        "keywords[2].snapshots: must be a list",
        'keywords[3]: must be an object {"keyword", "snapshots"}',
    ]


def test_transformer_rules_are_checked_against_the_scale():
    document = minimal_document(transformers={"binary": {"0": 0, "1": 2}, "detail": 5})

    assert rejected(document) == [
        "transformers.binary.1: 2 is not a binary grade (0, 1)",
        "transformers.binary.2: missing",
        "transformers.binary.3: missing",
        "transformers.detail: must map each graded grade to a detail grade",
    ]


def test_snapshot_and_grade_problems_are_listed_with_their_locations():
    team = make_team()
    make_grader(team, "dan@example.test")
    snapshots = [
        {"position": 1, "doc_id": "ok", "grades": [3, {"grader": "dan@example.test", "grade": 2}]},
        {"position": 1, "doc_id": "", "attributes": [1]},
        {"position": 0, "doc_id": "d", "name": 5, "grades": [7, 1.5, "2", True]},
        {
            "doc_id": "e",
            "grades": [
                {"grader": "DAN@example.test", "grade": 1},
                {"grader": "dan@example.test", "grade": 0, "note": "x"},
                {"grader": "", "grade": None},
            ],
            "value": 0.5,
        },
        {"position": 4, "doc_id": "f", "grades": {"a": 1}, "colour": "red"},
    ]
    document = minimal_document(
        strategy=3, keywords=[{"keyword": "q", "snapshots": snapshots, "metrics": []}]
    )

    problems = rejected(document, team)

    where = "keywords[0].snapshots"
    assert problems == [
        f"{where}[1].position: duplicate",
        f"{where}[1].doc_id: required, a text",
        f"{where}[1].attributes: must be an object",
        f"{where}[2].position: 0 is not a whole number from 1 to 2147483647",
        f"{where}[2].name: must be a text",
        f"{where}[2].grades: 4 entries, at most 3 (strategy)",
        f"{where}[2].grades[0]: 7 is not a graded grade (0, 1, 2, 3)",
        f"{where}[2].grades[1]: 1.5 is not a graded grade",
        f"{where}[2].grades[2]: '2' is not a graded grade",
        f"{where}[2].grades[3]: True is not a graded grade",
        f"{where}[3].position: required a whole number from 1 to 2147483647",
        f"{where}[3].grades[1].note: unknown field",
        f"{where}[3].grades[1].grader: 'dan@example.test' already graded this snapshot "
        "in grades[0]",
        f"{where}[3].grades[2].grader: must be an email or a name of 1 to 254 characters",
        f"{where}[4].colour: unknown field",
        f"{where}[4].grades: must be a list",
    ]


def test_an_external_grader_may_not_grade_one_snapshot_twice_either():
    grades = [{"grader": "crowd", "grade": 1}, {"grader": "crowd", "grade": 2}]
    snapshot = {"position": 1, "doc_id": "d", "grades": grades}
    document = minimal_document(strategy=3, keywords=[{"keyword": "q", "snapshots": [snapshot]}])

    assert rejected(document) == [
        "keywords[0].snapshots[0].grades[1].grader: 'crowd' already graded this snapshot "
        "in grades[0]"
    ]


def test_a_problem_late_in_a_long_document_rejects_what_came_before_it():
    keywords = [
        {"keyword": f"k{i}", "snapshots": [{"position": 1, "doc_id": "d", "grades": [2]}]}
        for i in range(60)
    ]
    keywords[-1]["snapshots"][0]["grades"] = [9]
    document = minimal_document(keywords=keywords)

    from apps.interchange import writer

    saved = writer.BATCH_SNAPSHOTS
    writer.BATCH_SNAPSHOTS = 10  # so earlier batches are written before the problem
    try:
        problems = rejected(document)
    finally:
        writer.BATCH_SNAPSHOTS = saved

    assert problems == ["keywords[59].snapshots[0].grades[0]: 9 is not a graded grade (0, 1, 2, 3)"]


def test_a_broken_huge_document_lists_the_first_problems_and_counts_the_rest():
    snapshots = [{"position": 1, "doc_id": "d"}] * 250
    document = minimal_document(keywords=[{"keyword": "q", "snapshots": snapshots}])

    problems = rejected(document)

    assert len(problems) == LIMIT + 1
    assert problems[0] == "keywords[0].snapshots[1].position: duplicate"
    assert problems[-1] == f"... and {249 - LIMIT} more problems"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (b"", "document: not valid JSON"),
        (b'{"name": "x", ', "document: not valid JSON"),
        (b'{"name": "x"} trailing', "document: not valid JSON"),
        (b"[1, 2]", "document: must be a JSON object"),
    ],
)
def test_a_file_that_is_not_a_json_object_is_rejected(text, problem):
    problems = rejected(text)

    assert len(problems) == 1 and problems[0].startswith(problem)


def test_keywords_that_are_not_a_list_and_missing_settings_are_reported():
    problems = rejected(b'{"keywords": {"keyword": "q"}, "name": "x", "name": "y"}')

    assert problems == [
        "keywords: must be a list",
        "name: given twice",
        "format: required; expected 'relevo.evaluation/1'",
        "scale: required (binary, graded, detail or custom)",
        'metrics: required: a list of {"metric", "k"}',
    ]


def stored_scores(evaluation: Evaluation) -> dict:
    evaluation.refresh_from_db()
    return {
        "snapshots": list(
            Snapshot.objects.filter(keyword__evaluation=evaluation)
            .order_by("id")
            .values_list("id", "value")
        ),
        "keywords": list(
            KeywordMetric.objects.filter(evaluation=evaluation)
            .order_by("keyword_id", "metric", "k")
            .values_list("keyword_id", "metric", "k", "value")
        ),
        "graded": list(
            Keyword.objects.filter(evaluation=evaluation)
            .order_by("id")
            .values_list("id", "graded_slots")
        ),
        "means": list(evaluation.metrics.values_list("metric", "k", "value", "value_count")),
        "progress": (evaluation.graded_slots, evaluation.total_slots, evaluation.progress),
    }


@pytest.mark.parametrize("profile", ["searchtweak", "trec"])
def test_what_an_import_stores_is_exactly_what_recompute_evaluation_computes(profile):
    import random

    rng = random.Random(7)
    keywords = [
        {
            "keyword": f"k{number}",
            "snapshots": [
                {
                    "position": position,
                    "doc_id": f"d{position}",
                    "grades": [rng.choice([None, 0, 1, 2, 3]) for _ in range(rng.randint(0, 3))],
                    "decision": {"grade": rng.choice([0, 1, 2, 3])} if rng.random() < 0.1 else None,
                }
                for position in rng.sample(range(1, 40), rng.randint(0, 15))
            ],
        }
        for number in range(60)
    ]
    document = minimal_document(
        strategy=3,
        profile=profile,
        transformers=TRANSFORMERS,
        metrics=[{"metric": m, "k": k} for m, k in METRICS + [("rr", 5), ("f1", 3)]],
        keywords=keywords,
    )
    imported = import_document(team=make_team(), source=as_file(document))
    stored = stored_scores(imported)

    Keyword.objects.filter(evaluation=imported).update(grade_version=1, needs_scoring=True)
    recompute_evaluation(evaluation_id=imported.id)

    assert stored_scores(imported) == stored
    assert SnapshotDecision.objects.filter(evaluation=imported).exists()
    assert any(value is None for _, value in stored["snapshots"])
    assert any(value is not None and value % 1 for _, value in stored["snapshots"])


def test_a_document_imports_the_same_with_and_without_postgres_key_checks(postgres):
    from apps.interchange import pgcopy

    team = make_team()
    make_grader(team, "eve@example.test")
    grades = [{"grader": "eve@example.test", "grade": 2}, 1]
    decision = {"grade": 3, "by": "eve@example.test", "reason": "settled"}
    snapshot = {"position": 1, "doc_id": "d", "grades": grades, "decision": decision}
    document = minimal_document(strategy=3, keywords=[{"keyword": "q", "snapshots": [snapshot]}])
    imported = []
    for skip in (True, False):
        pgcopy.SKIP_ROW_CHECKS = skip
        document["name"] = f"Imported, row checks skipped: {skip}"  # a team's names differ
        try:
            imported.append(exported(import_document(team=team, source=as_file(document))))
        finally:
            pgcopy.SKIP_ROW_CHECKS = True
    with postgres.cursor() as cursor:
        cursor.execute("SHOW session_replication_role")
        assert cursor.fetchone()[0] == "origin"  # the checks are back on after the import
    first, second = (without_identity(document) | {"name": ""} for document in imported)
    assert first == second
    assert imported[0]["keywords"][0]["snapshots"][0]["decision"] == decision
