"""Slots created already judged: the grade writer's bulk entry for an import.

An import creates an evaluation with its keywords, snapshots and slots in one go, many
slots already graded (by team members, or by graders named in the file), some snapshots
decided by a lead, and documents judged that the keywords did not retrieve (TREC qrels).
Their grade columns are set here, and only here, by the
rules slot_judge follows (judgements.py): a grade of the evaluation's scale, graded_at at
the import's time (assigned_at too when the grader is a member, as if taken from the
queue), every graded slot `imported` (its grade is the file's: it counts in progress and
metrics, never as anyone's work today or on the leaderboard), and every slot of a
snapshot with a grade `snapshot_started`, so the queue offers the rest of it before
fresh results. A grade off the scale stops the import (check_grade's error);
the import's own checks have already named its line (apps/interchange/checks.py).

The rows go to the import's COPY on PostgreSQL (`copy_lines`, fields `SLOT_FIELDS`) or
to bulk_create elsewhere (`objects`), in the import's transaction. Nothing is marked for
recomputation: the import scores its new keywords from these same grades and stores the
values beside them (apps/interchange/writer.py), so they are current when they commit.
"""

from collections.abc import Iterable, Iterator
from datetime import datetime

from apps import engine
from apps.core.copy_text import NULL, text
from apps.evaluations.models import FeedbackSlot, Source, UnretrievedJudgement

from .judgements import check_grade
from .models import SnapshotDecision
from .sources import JudgeMade, clicks_source, import_source, judge_source

# What a file says gave a grade, as an export writes it (the grade's `source`, its
# `ai_judge` mark): the kind (models.Source), the judge's name or the import's label,
# the model, the prompt version and the chain's link.
SourceMark = tuple[str, str, str, str, str]
# grade, grader user id (None: a grader named in the file), that grader's name, reason,
# the fingerprint of the content the grade was given on when that is not the result's
# own (the file's grade is stale: the document changed since), else "", and what the file
# says gave it (None: nothing, so the grade's source is this import)
SlotGrade = tuple[int, int | None, str, str, str, SourceMark | None]
# a lead's decision: grade, the deciding user's id (None: not a member), reason
Decision = tuple[int, int | None, str]
# one new snapshot: its keyword's id and position, its own id and position, and each slot
# index's judgement (None: not graded yet), as many as the evaluation's strategy
NewSnapshot = tuple[int, int, int, int, list[SlotGrade | None]]
# a document judged for a new keyword but not among its results: keyword id, doc id, grade
UnretrievedJudged = tuple[int, str, int]

SLOT_FIELDS = (
    "evaluation",
    "keyword",
    "snapshot",
    "index",
    "grader",
    "external_grader",
    "grade",
    "reason",
    "assigned_at",
    "graded_at",
    "keyword_position",
    "snapshot_position",
    "snapshot_started",
    "imported",
    "content_fingerprint",
    "stale",
    "source",
    "source_detail",
)
UNRETRIEVED_FIELDS = ("keyword", "doc_id", "grade")
DECISION_FIELDS = ("snapshot", "evaluation", "grade", "decided_by", "reason", "decided_at")


class NewJudgedSlots:
    """The slots and decisions of one evaluation's new snapshots, judged at `now`, their
    source the import labelled `label` (or the AI judge a grade's mark names)."""

    def __init__(
        self, evaluation_id: int, scale: engine.Scale, now: datetime, *, team_id: int, label: str
    ) -> None:
        self.evaluation_id = evaluation_id
        self.scale = scale
        self.grades = frozenset(scale.grades)
        self.now = now
        self.team_id = team_id
        self.label = label
        self._sources: dict[SourceMark | None, tuple[str, int]] = {}

    def know_sources(self, slots: Iterable[Iterable[Iterable[SlotGrade | None]]]) -> None:
        """Find or make the sources of a batch's grades (per keyword, per snapshot, its
        slots), before its rows are written: on PostgreSQL they are written on a thread
        that must not query (pgcopy.py), so the rows only look their sources up."""
        for keyword in slots:
            for snapshot in keyword:
                for entry in snapshot:
                    if entry is not None and entry[5] not in self._sources:
                        self._sources[entry[5]] = self._made_source(entry[5])

    def source_of(self, mark: SourceMark | None) -> tuple[str, int]:
        """(kind, JudgementSource id) of a grade with this mark (know_sources found it)."""
        return self._sources[mark]

    def _made_source(self, mark: SourceMark | None) -> tuple[str, int]:
        """An AI judge's grade stays the judge's, with what made it; clicks stay clicks;
        an earlier import's keeps that import's label; anything else is this import's."""
        kind, name, model, prompt_version, link = mark or (Source.IMPORT, "", "", "", "")
        if kind == Source.JUDGE:
            made = JudgeMade(0, name, model, prompt_version, link)
            return (Source.JUDGE, judge_source(team_id=self.team_id, made=made))
        if kind == Source.CLICKS:
            made_by = clicks_source(team_id=self.team_id, name=name, model="", settings="")
            return (Source.CLICKS, made_by)
        label = name if kind == Source.IMPORT and name else self.label
        return (Source.IMPORT, import_source(team_id=self.team_id, label=label))

    def copy_lines(self, snapshots: Iterable[NewSnapshot]) -> Iterator[str]:
        """COPY text lines of the snapshots' slots, fields in SLOT_FIELDS order."""
        now = self.now.isoformat()
        grades = self.grades
        head = f"{self.evaluation_id}\t"
        for keyword_id, keyword_position, snapshot_id, snapshot_position, entries in snapshots:
            prefix = f"{head}{keyword_id}\t{snapshot_id}\t"
            started = "t" if any(entry is not None for entry in entries) else "f"
            suffix = f"\t{keyword_position}\t{snapshot_position}\t{started}"
            for index, entry in enumerate(entries):
                if entry is None:
                    yield (
                        f"{prefix}{index}\t{NULL}\t\t{NULL}\t\t{NULL}\t{NULL}{suffix}\tf\t\tf"
                        f"\t\t{NULL}"
                    )
                    continue
                grade, user, external, reason, graded_on, mark = entry
                source, detail = self.source_of(mark)
                if grade not in grades or type(grade) is not int:  # inline: millions of grades
                    check_grade(grade, self.scale)
                grader, assigned = (NULL, NULL) if user is None else (str(user), now)
                yield (
                    f"{prefix}{index}\t{grader}\t{text(external)}\t{grade}\t{text(reason)}\t"
                    f"{assigned}\t{now}{suffix}\tt\t{graded_on}\t{'t' if graded_on else 'f'}"
                    f"\t{source}\t{detail}"
                )

    def objects(self, snapshots: Iterable[NewSnapshot]) -> Iterator[FeedbackSlot]:
        """The same slots as unsaved models, for bulk_create."""
        for keyword_id, keyword_position, snapshot_id, snapshot_position, entries in snapshots:
            started = any(entry is not None for entry in entries)
            for index, entry in enumerate(entries):
                slot = FeedbackSlot(
                    evaluation_id=self.evaluation_id,
                    keyword_id=keyword_id,
                    snapshot_id=snapshot_id,
                    index=index,
                    keyword_position=keyword_position,
                    snapshot_position=snapshot_position,
                    snapshot_started=started,
                )
                if entry is not None:
                    grade, user, external, reason, graded_on, mark = entry
                    slot.source, slot.source_detail_id = self.source_of(mark)
                    slot.content_fingerprint, slot.stale = graded_on, bool(graded_on)
                    slot.grade = self._check(grade)
                    slot.grader_id, slot.external_grader, slot.reason = user, external, reason
                    slot.assigned_at = None if user is None else self.now
                    slot.graded_at = self.now
                    slot.imported = True
                yield slot

    def decision_copy_lines(self, decided: Iterable[tuple[int, Decision]]) -> Iterator[str]:
        """COPY text lines of lead decisions (snapshot id, decision), DECISION_FIELDS order."""
        now = self.now.isoformat()
        for snapshot_id, (grade, user, reason) in decided:
            self._check(grade)
            decider = NULL if user is None else str(user)
            yield f"{snapshot_id}\t{self.evaluation_id}\t{grade}\t{decider}\t{text(reason)}\t{now}"

    def decision_objects(
        self, decided: Iterable[tuple[int, Decision]]
    ) -> Iterator[SnapshotDecision]:
        for snapshot_id, (grade, user, reason) in decided:
            yield SnapshotDecision(
                snapshot_id=snapshot_id,
                evaluation_id=self.evaluation_id,
                grade=self._check(grade),
                decided_by_id=user,
                reason=reason,
                decided_at=self.now,
            )

    def unretrieved_copy_lines(self, judged: Iterable[UnretrievedJudged]) -> Iterator[str]:
        """COPY text lines of judged documents that were not retrieved, UNRETRIEVED_FIELDS
        order."""
        for keyword_id, doc_id, grade in judged:
            self._check(grade)
            yield f"{keyword_id}\t{text(doc_id)}\t{grade}"

    def unretrieved_objects(
        self, judged: Iterable[UnretrievedJudged]
    ) -> Iterator[UnretrievedJudgement]:
        for keyword_id, doc_id, grade in judged:
            yield UnretrievedJudgement(
                keyword_id=keyword_id, doc_id=doc_id, grade=self._check(grade)
            )

    def _check(self, grade: int) -> int:
        """The grade (check_grade's error when it is not one of the scale's; the set
        lookup first, as it runs for each of millions of grades)."""
        if grade in self.grades and type(grade) is int:
            return grade
        return check_grade(grade, self.scale)
