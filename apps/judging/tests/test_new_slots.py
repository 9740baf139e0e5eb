"""The grade writer's bulk entry for an import (NewJudgedSlots): new slots come out as the
grade writer leaves graded ones, for COPY and for bulk_create alike, each with its source
(the import, or the AI judge the file names), and a grade off the evaluation's scale
stops the import."""

from datetime import UTC, datetime

import pytest

from apps import engine
from apps.core.errors import InvalidInput
from apps.evaluations.models import JudgementSource, Source
from apps.judging.new_slots import SLOT_FIELDS, NewJudgedSlots
from tests.factories import make_team

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 25, 6, 0, tzinfo=UTC)
STALE = "0123456789abcdef0123456789abcdef"
JUDGED = ("judge", "Shoe expert", "gpt-test", "v2", "")
# keyword 7 (position 1): snapshot 70 graded by member 3 in slot 0, by "Ann" (named in the
# file) in slot 1 on content the document no longer shows (stale), by an AI judge the file
# names in slot 2; snapshot 71 not graded
SNAPSHOTS = [
    (
        7,
        1,
        70,
        1,
        [
            (1, 3, "", "on topic", "", None),
            (0, None, "Ann", "", STALE, None),
            (1, None, "Shoe expert", "", "", JUDGED),
        ],
    ),
    (7, 1, 71, 2, [None, None, None]),
]


def binary_slots() -> NewJudgedSlots:
    slots = NewJudgedSlots(
        evaluation_id=5,
        scale=engine.SCALES["binary"],
        now=NOW,
        team_id=make_team().id,
        label="JSON import, 2026-11-25",
    )
    slots.know_sources([[entries for *_, entries in SNAPSHOTS]])
    return slots


def test_a_grade_names_its_import_as_source_unless_the_file_names_an_ai_judge():
    member, named, judged, empty, *_ = binary_slots().objects(SNAPSHOTS)
    imported = JudgementSource.objects.get(id=member.source_detail_id)
    assert (member.source, named.source, imported.kind) == (Source.IMPORT, Source.IMPORT, "import")
    assert named.source_detail_id == imported.id and imported.name == "JSON import, 2026-11-25"
    judge = JudgementSource.objects.get(id=judged.source_detail_id)
    assert judged.source == Source.JUDGE
    assert (judge.name, judge.model_name, judge.prompt_version) == ("Shoe expert", "gpt-test", "v2")
    assert empty.source == "" and empty.source_detail_id is None


def test_a_members_grade_is_assigned_and_graded_at_the_import_a_named_graders_only_graded():
    member, named, _judged, *rest = binary_slots().objects(SNAPSHOTS)
    empty = rest[0]
    assert (member.grade, member.grader_id, member.reason) == (1, 3, "on topic")
    assert member.assigned_at == NOW and member.graded_at == NOW
    assert (named.grade, named.grader_id, named.external_grader) == (0, None, "Ann")
    assert named.assigned_at is None and named.graded_at == NOW
    assert empty.grade is None and empty.graded_at is None and empty.assigned_at is None


def test_every_slot_of_a_graded_snapshot_is_started_and_an_ungraded_one_is_fresh():
    slots = list(binary_slots().objects(SNAPSHOTS))
    assert [slot.snapshot_started for slot in slots] == [True] * 3 + [False] * 3
    assert [(slot.snapshot_id, slot.index) for slot in slots[:3]] == [(70, 0), (70, 1), (70, 2)]


def test_every_graded_slot_is_marked_imported_and_an_empty_one_is_not():
    slots = list(binary_slots().objects(SNAPSHOTS))
    assert [slot.imported for slot in slots] == [True, True, True, False, False, False]


def test_a_grade_given_on_other_content_is_stale_and_keeps_that_contents_fingerprint():
    member, named, *_ = binary_slots().objects(SNAPSHOTS)
    assert (member.stale, member.content_fingerprint) == (False, "")
    assert (named.stale, named.content_fingerprint) == (True, STALE)


def test_copy_lines_hold_the_same_values_as_the_models():
    judged = binary_slots()
    lines = list(judged.copy_lines(SNAPSHOTS))
    slots = list(judged.objects(SNAPSHOTS))
    assert len(lines) == len(slots) == 6
    for line, slot in zip(lines, slots, strict=True):
        columns = dict(zip(SLOT_FIELDS, line.split("\t"), strict=True))
        assert columns["grade"] == ("\\N" if slot.grade is None else str(slot.grade))
        assert columns["grader"] == ("\\N" if slot.grader_id is None else str(slot.grader_id))
        assert columns["external_grader"] == slot.external_grader
        assert columns["graded_at"] == ("\\N" if slot.graded_at is None else NOW.isoformat())
        assert columns["assigned_at"] == ("\\N" if slot.assigned_at is None else NOW.isoformat())
        assert columns["snapshot_started"] == ("t" if slot.snapshot_started else "f")
        assert columns["imported"] == ("t" if slot.imported else "f")
        assert columns["content_fingerprint"] == slot.content_fingerprint
        assert columns["stale"] == ("t" if slot.stale else "f")
        assert columns["source"] == slot.source
        detail = slot.source_detail_id
        assert columns["source_detail"] == ("\\N" if detail is None else str(detail))


@pytest.mark.parametrize("grade", [2, -1, True])
def test_a_grade_off_the_scale_stops_the_import_whichever_row_holds_it(grade):
    slots = binary_slots()
    snapshot = [(7, 1, 70, 1, [(grade, None, "Ann", "", "", None)])]
    slots.know_sources([[entries for *_, entries in snapshot]])
    writes = [
        lambda: list(slots.copy_lines(snapshot)),
        lambda: list(slots.objects(snapshot)),
        lambda: list(slots.decision_copy_lines([(70, (grade, None, ""))])),
        lambda: list(slots.decision_objects([(70, (grade, None, ""))])),
        lambda: list(slots.unretrieved_copy_lines([(7, "doc-9", grade)])),
        lambda: list(slots.unretrieved_objects([(7, "doc-9", grade)])),
    ]
    for write in writes:
        with pytest.raises(InvalidInput) as raised:
            write()
        assert f"{grade!r} is not a binary grade (0, 1)" in str(raised.value)


def test_decisions_and_unretrieved_judgements_keep_their_grades_and_the_import_time():
    slots = binary_slots()
    (decision,) = slots.decision_objects([(70, (1, 3, "settled"))])
    assert (decision.snapshot_id, decision.grade, decision.decided_by_id) == (70, 1, 3)
    assert decision.decided_at == NOW and decision.evaluation_id == 5
    assert list(slots.decision_copy_lines([(70, (1, None, "a\tb"))])) == [
        f"70\t5\t1\t\\N\ta\\tb\t{NOW.isoformat()}"
    ]
    assert list(slots.unretrieved_copy_lines([(7, "doc-9", 0)])) == ["7\tdoc-9\t0"]
