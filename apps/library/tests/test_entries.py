"""The library reads every judgement of a query text and document wherever it was given,
and its grade rests on a lead's decision, else people's, else AI judges', fresh before
stale; grades on other scales never count together."""

import pytest

from apps.evaluations.models import FeedbackSlot, Snapshot, Source
from apps.judging.judgements import Giver, slot_judge
from apps.judging.sources import JudgeMade, judge_source
from apps.library.entries import DECISION, JUDGES, PEOPLE, lookup, team_entries
from apps.library.models import JudgementList, ListedJudgement
from tests.factories import finish, make_evaluation, make_grader, make_team, slots_of

pytestmark = pytest.mark.django_db

DOC = "red shoes-doc-1"


def grade(slot, value, giver):
    slot_judge(slot_id=slot.id, giver=giver, grade=value, team_id=slot.evaluation.team_id)


def judge_giver(team, name="Quick"):
    source = judge_source(team_id=team.id, made=JudgeMade(judge_id=7, name=name, model_name="m1"))
    return Giver.judge_recorded(None, source)


def first_slot(evaluation):
    return slots_of(evaluation, "red shoes")[0]


def entry_of(team, scale="graded"):
    return lookup(team_id=team.id, pairs=[("red shoes", DOC)], scale=scale)[("red shoes", DOC)]


def test_a_persons_grade_and_a_judges_are_both_read_and_people_decide_the_grade():
    team = make_team()
    people = make_evaluation(team=team, keywords={"red shoes": 2})
    judged = make_evaluation(team=team, keywords={"red shoes": 2})
    grade(first_slot(people), 1, Giver.recorded(name="ann"))
    grade(first_slot(judged), 3, judge_giver(team))

    entry = entry_of(team)

    assert sorted((j.grade, j.kind) for j in entry.judgements) == [
        (1, Source.PERSON),
        (3, Source.JUDGE),
    ]
    assert entry.grade == 1
    assert entry.basis_tier == PEOPLE
    assert entry.disagreeing
    assert entry.agreement == 0.5
    judge = next(j for j in entry.judgements if j.kind == Source.JUDGE)
    assert judge.source == "Quick (m1)"
    assert judge.grader == ""


def test_without_people_the_judges_grade_is_the_library_grade():
    team = make_team()
    judged = make_evaluation(team=team, keywords={"red shoes": 2})
    grade(first_slot(judged), 2, judge_giver(team))

    entry = entry_of(team)

    assert (entry.grade, entry.basis_tier) == (2, JUDGES)


def test_a_leads_decision_overrides_people():
    from django.utils import timezone

    from apps.judging.models import SnapshotDecision

    team = make_team()
    evaluation = make_evaluation(team=team, keywords={"red shoes": 2})
    slot = first_slot(evaluation)
    grade(slot, 1, Giver.recorded(name="ann"))
    SnapshotDecision.objects.create(
        snapshot_id=slot.snapshot_id, evaluation=evaluation, grade=3, decided_at=timezone.now()
    )

    entry = entry_of(team)

    assert (entry.grade, entry.basis_tier) == (3, DECISION)
    assert not entry.disagreeing  # a decision settles, it does not disagree


def test_the_most_common_grade_wins_and_a_tie_goes_to_the_newest():
    team = make_team()
    grades = [2, 2, 0]
    for value in grades:
        evaluation = make_evaluation(team=team, keywords={"red shoes": 1})
        grade(first_slot(evaluation), value, Giver.recorded(name=f"g{value}"))
    assert entry_of(team).grade == 2

    newest = make_evaluation(team=team, keywords={"red shoes": 1})
    grade(first_slot(newest), 0, Giver.recorded(name="late"))
    # 2, 2, 0, 0: a tie, and the newest judgement gave 0.
    assert entry_of(team).grade == 0


def test_a_judgement_given_on_content_that_changed_since_is_stale_and_fresh_ones_come_first():
    team = make_team()
    old = make_evaluation(team=team, keywords={"red shoes": 1})
    grade(first_slot(old), 3, Giver.recorded(name="ann"))
    new = make_evaluation(team=team, keywords={"red shoes": 1})
    Snapshot.objects.filter(keyword__evaluation=new, doc_id=DOC).update(name="A new title")

    entry = entry_of(team)
    assert entry.stale  # the only people's grade was given on the old title
    assert entry.grade == 3

    grade(first_slot(new), 1, Giver.recorded(name="bob"))
    entry = entry_of(team)
    assert not entry.stale
    assert entry.grade == 1  # the fresh grade, though the stale one is as common


def test_grades_on_another_scale_are_another_entry():
    team = make_team()
    graded = make_evaluation(team=team, keywords={"red shoes": 1})
    binary = make_evaluation(team=team, scale="binary", keywords={"red shoes": 1})
    grade(first_slot(graded), 3, Giver.recorded(name="ann"))
    grade(first_slot(binary), 1, Giver.recorded(name="ann"))

    entries = team_entries(team_id=team.id, queries=["red shoes"])

    assert {(key[2], entry.grade) for key, entry in entries.items()} == {
        ("graded", 3),
        ("binary", 1),
    }


def test_a_copy_by_reuse_is_not_read_twice():
    team = make_team()
    source = make_evaluation(team=team, keywords={"red shoes": 1})
    grade(first_slot(source), 2, Giver.recorded(name="ann"))
    finish(source)
    copy = make_evaluation(team=team, keywords={"red shoes": 1}, reuse="keyword_doc")

    assert FeedbackSlot.objects.filter(evaluation=copy, reused=True).count() == 1
    assert len(entry_of(team).judgements) == 1


def test_an_imported_lists_judgements_are_read_with_the_lists_source():
    from django.utils import timezone

    from apps.judging.sources import import_source

    team = make_team()
    listed = JudgementList.objects.create(
        team=team,
        name="Vendor 2025",
        file_format="quepid",
        scale="graded",
        source_id=import_source(team_id=team.id, label="Vendor 2025"),
        imported_at=timezone.now(),
        judgement_count=1,
    )
    ListedJudgement.objects.create(
        judgement_list=listed, team=team, query="red shoes", doc_id=DOC, grade=2
    )

    entry = entry_of(team)

    assert [(j.grade, j.kind, j.source, j.origin) for j in entry.judgements] == [
        (2, Source.IMPORT, "Import: Vendor 2025", "Vendor 2025")
    ]
    assert entry.basis_tier == PEOPLE


def test_another_teams_judgements_are_never_read():
    team, other = make_team(), make_team()
    evaluation = make_evaluation(team=other, keywords={"red shoes": 1})
    grade(first_slot(evaluation), 3, Giver.recorded(name="ann"))
    make_grader(team)

    assert team_entries(team_id=team.id, queries=["red shoes"]) == {}
