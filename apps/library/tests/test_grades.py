"""The library grades of many pairs at once (grades.py) equal those built from every
judgement in Python (entries.py), on random judgements by people, AI judges, leads'
decisions and an imported list, with documents whose content changed; on PostgreSQL
the one statement is what is checked."""

import random
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from apps.evaluations.models import FeedbackSlot, Snapshot
from apps.judging.models import SnapshotDecision
from apps.judging.sources import JudgeMade, import_source, judge_source
from apps.library.grades import READ_PLANNER, grades_from_entries, library_grades
from apps.library.models import JudgementList, ListedJudgement
from tests.factories import make_evaluation, make_team

pytestmark = pytest.mark.django_db

QUERIES = {"boots": 6, "red shoes": 6, "wool socks": 6}


def random_library(seed: int):
    """Five evaluations of the same queries (one binary), graded at distinct times."""
    rng = random.Random(seed)
    team = make_team()
    judge = judge_source(team_id=team.id, made=JudgeMade(judge_id=1, name="Quick"))
    start = timezone.now() - timedelta(days=30)
    evaluations = []
    for number in range(5):
        scale = "binary" if number == 4 else "graded"
        evaluation = make_evaluation(team=team, scale=scale, strategy=3, keywords=QUERIES)
        evaluations.append(evaluation)
        if rng.random() < 0.5:  # the document's content changed before this search
            changed = Snapshot.objects.filter(keyword__evaluation=evaluation, position=1)
            changed.update(name=f"New title {number}")
    minute = 0
    for slot in FeedbackSlot.objects.filter(evaluation__team=team).order_by("id"):
        if rng.random() < 0.35:
            continue
        minute += 1
        by_judge = rng.random() < 0.3
        top = 1 if slot.evaluation.scale == "binary" else 3
        FeedbackSlot.objects.filter(id=slot.id).update(
            grade=rng.randint(0, top),
            graded_at=start + timedelta(minutes=minute),
            source="judge" if by_judge else "person",
            source_detail_id=judge if by_judge else None,
            external_grader="" if by_judge else f"g{slot.index}",
        )
    for snapshot in Snapshot.objects.filter(keyword__evaluation__in=evaluations[:4]):
        if rng.random() < 0.08:
            minute += 1
            SnapshotDecision.objects.create(
                snapshot=snapshot,
                evaluation_id=snapshot.keyword.evaluation_id,
                grade=rng.randint(0, 3),
                decided_at=start + timedelta(minutes=minute),
            )
    listed = JudgementList.objects.create(
        team=team,
        name="Vendor",
        file_format="quepid",
        scale="graded",
        source_id=import_source(team_id=team.id, label="Vendor"),
        imported_at=start + timedelta(minutes=minute + 1),
    )
    for query, count in QUERIES.items():
        for position in range(1, count + 3):  # two documents no evaluation has
            if rng.random() < 0.3:
                ListedJudgement.objects.create(
                    judgement_list=listed,
                    team=team,
                    query=query,
                    doc_id=f"{query}-doc-{position}",
                    grade=rng.randint(0, 3),
                )
    pairs = [(q, f"{q}-doc-{n}") for q, count in QUERIES.items() for n in range(1, count + 3)]
    return team, pairs


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("scale", ["graded", "binary"])
def test_the_grades_of_many_pairs_equal_those_built_from_every_judgement(seed, scale):
    team, pairs = random_library(seed)

    fast = library_grades(team_id=team.id, pairs=pairs, scale=scale)
    built = grades_from_entries(team_id=team.id, pairs=pairs, scale=scale)

    assert fast == built
    assert fast  # the data gives grades to compare


def test_no_pair_asked_no_statement():
    assert library_grades(team_id=make_team().id, pairs=[], scale="graded") == {}


def test_texts_and_documents_are_matched_whole_whatever_they_hold():
    """Quotes, backslashes and characters beyond ASCII in the texts, and one document
    under every text: each pair gets its own grade, the one the Python rule gives."""
    texts = {'say "hi"': 2, "back\\slash": 2, "café ☕ 𝄞": 2, "boots": 2}
    team = make_team()
    evaluation = make_evaluation(team=team, keywords=texts)
    Snapshot.objects.filter(keyword__evaluation=evaluation, position=1).update(doc_id="shared")
    graded_at = timezone.now()
    for grade, text in enumerate(texts):
        FeedbackSlot.objects.filter(evaluation=evaluation, keyword__text=text).update(
            grade=grade, graded_at=graded_at, external_grader="g"
        )
    pairs = [(text, "shared") for text in texts] + [(text, f"{text}-doc-2") for text in texts]

    fast = library_grades(team_id=team.id, pairs=pairs, scale="graded")

    assert fast == grades_from_entries(team_id=team.id, pairs=pairs, scale="graded")
    assert [fast[(text, "shared")].grade for text in texts] == [0, 1, 2, 3]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's planner settings")
def test_the_callers_transaction_plans_as_before_the_statement():
    team, pairs = random_library(0)
    with connection.cursor() as cursor:
        cursor.execute(READ_PLANNER)
        before = cursor.fetchone()

    assert library_grades(team_id=team.id, pairs=pairs, scale="graded")

    with connection.cursor() as cursor:
        cursor.execute(READ_PLANNER)
        assert cursor.fetchone() == before
