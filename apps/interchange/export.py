"""Export an evaluation: the JSON document, CSV, qrels (aggregated or per grader), run,
and its metrics in trec_eval's format (trec_eval_output.py).

Every format streams: keywords, their metrics, snapshots and slots (and, for JSON and
CSV, the graders' skips) are read with ordered queries walked side by side, and written
one keyword at a time.
"""

import csv
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, TextIO

from django.db.models import QuerySet

from apps.core.spreadsheet import number_cell, text_cell
from apps.evaluations.metric_list import cutoff_out
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Keyword,
    Snapshot,
    SnapshotSkip,
    Source,
    UnretrievedJudgement,
)
from apps.scoring.models import KeywordMetric

from .query_ids import query_ids
from .settings_check import FORMAT
from .trec_columns import to_column
from .trec_eval_output import export_trec_eval

CHUNK = 5_000
RUN_TAG = "relevo"
ANONYMOUS_GRADER = "0"  # the iteration column's usual value, for a grade without a grader


@dataclass
class AiJudgeOut:
    """What made an AI judge's grade, as the grade recorded it (a copy keeps it)."""

    model: str | None
    prompt_version: str | None
    chain_link: str | None = None


@dataclass
class SlotOut:
    index: int
    grade: int | None
    # an AI judge's name, else the user's email, else the external grader's name, else None
    grader: str | None
    reason: str
    ai_judge: AiJudgeOut | None = None  # set for an AI judge's grade only
    # The content the grade was given on, when that is not its result's own (a grade
    # copied from an earlier evaluation); "" for a grade given on this result.
    content_fingerprint: str = ""
    stale: bool = False
    # Who gave it (models.Source; a copy keeps its original's), an import's label, and
    # whether reuse copied it, from which evaluation (None once that one is deleted).
    source: str = ""
    source_name: str = ""
    copied: bool = False
    copied_from: str | None = None


@dataclass
class DecisionOut:
    grade: int
    by: str | None  # the deciding lead's email; None once that account is gone
    reason: str


@dataclass
class SkipOut:
    """A grader said they could not judge the snapshot, and why (may be empty)."""

    grader: str  # the grader's email
    reason: str


@dataclass
class SnapshotOut:
    position: int
    doc_id: str
    name: str
    image: str
    attributes: dict[str, Any]
    value: float | None
    slots: list[SlotOut]
    decision: DecisionOut | None = None
    skips: list[SkipOut] = field(default_factory=list)

    @property
    def graded(self) -> list[SlotOut]:
        return [slot for slot in self.slots if slot.grade is not None]


@dataclass
class KeywordOut:
    text: str
    metrics: dict[tuple[str, int], float | None]
    snapshots: list[SnapshotOut]
    # judged documents that are not among the results: (doc_id, grade)
    unretrieved: list[tuple[str, int]]
    information_need: str = ""
    notes: str = ""  # the lead's
    id: int = 0


class _Grouped:
    """Rows of an ordered stream, taken group by group (the group key is row[0])."""

    def __init__(self, rows: Iterator[tuple[Any, ...]]) -> None:
        self.rows = rows
        self.head = next(rows, None)

    def take(self, key: Any) -> list[tuple[Any, ...]]:
        group = []
        while self.head is not None and self.head[0] == key:
            group.append(self.head)
            self.head = next(self.rows, None)
        return group


def _stream(rows: QuerySet[Any, Any]) -> Iterator[tuple[Any, ...]]:
    return rows.iterator(chunk_size=CHUNK)


def keywords_of(
    evaluation: Evaluation, *, with_metrics: bool = True, with_skips: bool = False
) -> Iterator[KeywordOut]:
    """The evaluation's keywords in order, each with its metrics, snapshots and slots
    (and with `with_skips` the graders' skips of each snapshot, oldest first)."""
    keywords = _stream(
        Keyword.objects.filter(evaluation=evaluation)
        .order_by("position")
        .values_list("id", "text", "notes__information_need", "notes__notes")
    )
    metrics = _Grouped(
        _stream(
            KeywordMetric.objects.filter(evaluation=evaluation)
            .order_by("keyword__position")
            .values_list("keyword_id", "metric", "k", "value")
        )
        if with_metrics
        else iter(())
    )
    snapshots = _Grouped(
        _stream(
            Snapshot.objects.filter(keyword__evaluation=evaluation)
            .order_by("keyword__position", "position")
            .values_list(
                "keyword_id",
                "id",
                "position",
                "doc_id",
                "name",
                "image",
                "attributes",
                "value",
                "decision__grade",
                "decision__decided_by__email",
                "decision__reason",
            )
        )
    )
    slots = _Grouped(
        _stream(
            FeedbackSlot.objects.filter(evaluation=evaluation)
            .order_by("keyword__position", "snapshot__position", "index")
            .values_list(
                "snapshot_id",
                "index",
                "grade",
                "grader__email",
                "external_grader",
                "reason",
                "content_fingerprint",
                "stale",
                *SOURCE_COLUMNS,
            )
        )
    )
    skips = _Grouped(
        _stream(
            SnapshotSkip.objects.filter(snapshot__keyword__evaluation=evaluation)
            .order_by("snapshot__keyword__position", "snapshot__position", "created_at", "id")
            .values_list("snapshot_id", "user__email", "reason")
        )
        if with_skips
        else iter(())
    )
    unretrieved = _Grouped(
        _stream(
            UnretrievedJudgement.objects.filter(keyword__evaluation=evaluation)
            .order_by("keyword__position", "id")
            .values_list("keyword_id", "doc_id", "grade")
        )
    )
    for keyword_id, text, information_need, keyword_notes in keywords:
        keyword_metrics = {(row[1], row[2]): row[3] for row in metrics.take(keyword_id)}
        keyword_snapshots = [
            SnapshotOut(
                position=position,
                doc_id=doc_id,
                name=name,
                image=image,
                attributes=attributes,
                value=value,
                slots=[_slot_out(*row[1:]) for row in slots.take(snapshot_id)],
                decision=None if decided is None else DecisionOut(decided, decided_by, why),
                skips=[SkipOut(email, reason) for _, email, reason in skips.take(snapshot_id)],
            )
            for (
                _,
                snapshot_id,
                position,
                doc_id,
                name,
                image,
                attributes,
                value,
                decided,
                decided_by,
                why,
            ) in snapshots.take(keyword_id)
        ]
        judged = [(doc_id, grade) for _, doc_id, grade in unretrieved.take(keyword_id)]
        yield KeywordOut(
            text,
            keyword_metrics,
            keyword_snapshots,
            judged,
            information_need or "",
            keyword_notes or "",
            keyword_id,
        )


# The grade's source, as the grade writer recorded it: its kind, what gave it (a left
# join on the source's key) and the evaluation a copy came from.
SOURCE_COLUMNS = (
    "source",
    "reused",
    "source_detail__name",
    "source_detail__model_name",
    "source_detail__prompt_version",
    "source_detail__chain_link",
    "reused_from__name",
)


def _slot_out(
    index: int,
    grade: int | None,
    email: str | None,
    external: str,
    reason: str,
    fingerprint: str,
    stale: bool,
    source: str,
    reused: bool,
    name: str | None,
    model: str | None,
    prompt_version: str | None,
    chain_link: str | None,
    reused_from: str | None,
) -> SlotOut:
    """A slot as exported: an AI judge's grade names the judge (its grader address means
    nothing to a reader) and what made it; a person's is as it always was. A copied
    grade names the content it was given on, so an import tells a stale one, and where
    it was copied from; an imported grade its import's label."""
    told = (source, name or "", reused, reused_from)
    if grade is None or source != Source.JUDGE:
        grader = email or external or None
        return SlotOut(index, grade, grader, reason, None, fingerprint, stale, *told)
    judged_by = AiJudgeOut(model or None, prompt_version or None, chain_link or None)
    return SlotOut(index, grade, name or external, reason, judged_by, fingerprint, stale, *told)


def _metric_keys(evaluation: Evaluation) -> list[tuple[str, int, float | None]]:
    return list(
        EvaluationMetric.objects.filter(evaluation=evaluation)
        .order_by("position", "id")
        .values_list("metric", "k", "value")
    )


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# --- JSON ------------------------------------------------------------------------------


def export_document(evaluation: Evaluation, out: TextIO) -> None:
    """The evaluation as a relevo.evaluation/1 document, with its read-only results."""
    evaluation = Evaluation.objects.get(id=evaluation.id)  # the current counts and status
    metrics = _metric_keys(evaluation)
    head = {
        "format": FORMAT,
        "id": evaluation.id,
        "name": evaluation.name,
        "description": evaluation.description,
        "scale": evaluation.scale,
        **({"scale_levels": evaluation.scale_levels} if evaluation.scale_levels else {}),
        "strategy": evaluation.strategy,
        "profile": evaluation.profile,
        "show_position": evaluation.show_position,
        "zero_without_results": evaluation.zero_without_results,
        "scoring_guidelines": evaluation.scoring_guidelines,
        "tags": list(evaluation.tags.order_by("name").values_list("name", flat=True)),
        "transformers": evaluation.transformers,
        "status": evaluation.status,
        "progress": evaluation.progress,
        "created_at": evaluation.created_at.isoformat(),
        "finished_at": evaluation.finished_at.isoformat() if evaluation.finished_at else None,
        "metrics": [{"metric": m, "k": cutoff_out(k), "value": value} for m, k, value in metrics],
    }
    out.write("{\n")
    for key, value in head.items():
        out.write(f"  {_dumps(key)}: {_dumps(value)},\n")
    out.write('  "keywords": [')
    strategy = evaluation.strategy
    for number, keyword in enumerate(keywords_of(evaluation, with_skips=True)):
        document: dict[str, Any] = {
            "keyword": keyword.text,
            "metrics": [
                {"metric": m, "k": cutoff_out(k), "value": keyword.metrics.get((m, k))}
                for m, k, _ in metrics
            ],
            "snapshots": [_snapshot_document(s, strategy) for s in keyword.snapshots],
        }
        for written in ("information_need", "notes"):  # only where the lead wrote them
            if getattr(keyword, written):
                document[written] = getattr(keyword, written)
        if keyword.unretrieved:  # only keywords with judged, unretrieved documents
            document["unretrieved"] = [
                {"doc_id": doc_id, "grade": grade} for doc_id, grade in keyword.unretrieved
            ]
        out.write(("\n    " if number == 0 else ",\n    ") + _dumps(document))
    out.write("\n  ]\n}\n")


def _snapshot_document(snapshot: SnapshotOut, strategy: int) -> dict[str, Any]:
    grades: list[dict[str, Any] | None] = [None] * strategy
    for slot in snapshot.graded:
        if slot.index < strategy:
            grades[slot.index] = _grade_document(slot)
    document = {
        "position": snapshot.position,
        "doc_id": snapshot.doc_id,
        "name": snapshot.name,
        "image": snapshot.image,
        "attributes": snapshot.attributes,
        "grades": grades,
        "value": snapshot.value,
    }
    if snapshot.skips:  # only skipped snapshots carry the key; an import ignores it
        document["skips"] = [{"grader": s.grader, "reason": s.reason} for s in snapshot.skips]
    decision = snapshot.decision
    if decision is not None:  # only decided snapshots carry the key
        document["decision"] = {
            "grade": decision.grade,
            "by": decision.by,
            "reason": decision.reason,
        }
    return document


def _grade_document(slot: SlotOut) -> dict[str, Any]:
    document: dict[str, Any] = {"grader": slot.grader, "grade": slot.grade, "reason": slot.reason}
    if slot.ai_judge is not None:  # only an AI judge's grades carry the key
        document["ai_judge"] = {
            "model": slot.ai_judge.model,
            "prompt_version": slot.ai_judge.prompt_version,
        }
        if slot.ai_judge.chain_link:
            document["ai_judge"]["chain_link"] = slot.ai_judge.chain_link
    if slot.grade is not None and (slot.source == Source.IMPORT or slot.copied):
        # only imported and copied grades carry the key: the rest say it all above
        document["source"] = {
            "kind": slot.source,
            "name": slot.source_name or None,
            "reused_from": slot.copied_from,
        }
    if slot.content_fingerprint and slot.grade is not None:  # a copied grade's source
        document["content_fingerprint"] = slot.content_fingerprint
    return document


# --- CSV -------------------------------------------------------------------------------

CSV_HEADER = [
    "keyword",
    "position",
    "doc_id",
    "name",
    "value",
    "grades",
    "graders",
    "ai_judge_models",
    "ai_judge_prompt_versions",
    "ai_judge_reasons",
    "grade_labels",
    "skipped_by",
    "skip_reasons",
    "grade_reasons",
    "information_need",
    "keyword_notes",
    "grade_sources",
]


def export_csv(evaluation: Evaluation, out: TextIO) -> None:
    """One row per snapshot; grades and graders of its graded slots joined with "|",
    then what made the AI judges' grades among them (_ai_judge_cells), each grade as
    the pages label it ("2 · Good", lined up with `grades`), and who skipped the
    snapshot and why (lined up with each other)."""
    scale = evaluation.grading_scale
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for keyword in keywords_of(evaluation, with_metrics=False, with_skips=True):
        for snapshot in keyword.snapshots:
            graded = snapshot.graded
            writer.writerow(
                [
                    text_cell(keyword.text),
                    snapshot.position,
                    text_cell(snapshot.doc_id),
                    text_cell(snapshot.name),
                    number_cell(snapshot.value),
                    "|".join(str(slot.grade) for slot in graded),
                    text_cell("|".join(slot.grader or "" for slot in graded)),
                    *_ai_judge_cells(graded),
                    _listed(
                        scale.label_of(slot.grade) for slot in graded if slot.grade is not None
                    ),
                    _listed(skip.grader for skip in snapshot.skips),
                    _listed(skip.reason for skip in snapshot.skips),
                    _listed(slot.reason for slot in graded),
                    text_cell(keyword.information_need),
                    text_cell(keyword.notes),
                    _listed(_source_cell(slot) for slot in graded),
                ]
            )


def _source_cell(slot: SlotOut) -> str:
    """Who gave a grade, lined up with `grades`: person, judge or import, with "copied"
    for a grade reuse copied (its original's source)."""
    kind = slot.source or Source.PERSON.value
    return f"{kind} (copied)" if slot.copied else kind


def _ai_judge_cells(graded: list[SlotOut]) -> list[str]:
    """Model, prompt version and reason of each graded slot, lined up with `grades` and
    `graders`: an empty entry for a person's grade, and three empty cells when no AI
    judge graded the snapshot (a row of people's grades reads as it always did)."""
    marks = [slot.ai_judge for slot in graded]
    if not any(marks):
        return ["", "", ""]
    return [
        _listed(mark.model if mark else None for mark in marks),
        _listed(mark.prompt_version if mark else None for mark in marks),
        _listed(slot.reason if slot.ai_judge else None for slot in graded),
    ]


def _listed(entries: Iterable[str | None]) -> str:
    r"""Entries joined with "|". A reason is a model's free text and may hold "|" itself:
    there it is written "\|" (and a backslash "\\"), so the entries still line up with
    the grades. Written as text, as a model's reason may start like a formula."""
    escaped = ((entry or "").replace("\\", "\\\\").replace("|", "\\|") for entry in entries)
    return text_cell("|".join(escaped))


# --- TREC ------------------------------------------------------------------------------


def round_half_up(value: float) -> int:
    """2.5 -> 3, 1.5 -> 2 (Python's round() would give 2 and 2)."""
    return int(Decimal(repr(value)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def export_qrels(evaluation: Evaluation, out: TextIO, *, raw: bool = False) -> None:
    """`qid 0 docno grade` per judged snapshot: its stage-1 value rounded half up; then
    each judged document that is not among the keyword's results, with its grade.

    raw: one line per graded slot instead, `qid grader docno grade`, with the grader
    (an AI judge's name, an email or an external name; "0" when the grade has none) in
    the iteration column. The column has no room to mark an AI judge's grade as one: the
    JSON and CSV exports do.
    Columns are encoded as trec_columns.to_column describes; the qids are query_ids.py's.
    """
    qids = query_ids(evaluation)
    for keyword in keywords_of(evaluation, with_metrics=False):
        qid = qids[keyword.id]
        for snapshot in keyword.snapshots:
            docno = to_column(snapshot.doc_id)
            if raw:
                for slot in snapshot.graded:
                    grader = to_column(slot.grader) if slot.grader else ANONYMOUS_GRADER
                    out.write(f"{qid} {grader} {docno} {slot.grade}\n")
            elif snapshot.value is not None:
                out.write(f"{qid} 0 {docno} {round_half_up(snapshot.value)}\n")
        # Judged documents the results do not hold, as the qrels they came from.
        for doc_id, grade in keyword.unretrieved:
            out.write(f"{qid} {ANONYMOUS_GRADER} {to_column(doc_id)} {grade}\n")


def export_qrels_raw(evaluation: Evaluation, out: TextIO) -> None:
    export_qrels(evaluation, out, raw=True)


def export_run(evaluation: Evaluation, out: TextIO) -> None:
    """`qid Q0 docno rank score tag` per snapshot: rank = position, and scores that fall
    with the position (the last one scores 1), so trec_eval ranks in position order."""
    qids = query_ids(evaluation)
    for keyword in keywords_of(evaluation, with_metrics=False):
        qid = qids[keyword.id]
        last = max((snapshot.position for snapshot in keyword.snapshots), default=0)
        for snapshot in keyword.snapshots:
            rank = snapshot.position
            out.write(f"{qid} Q0 {to_column(snapshot.doc_id)} {rank} {last - rank + 1} {RUN_TAG}\n")


def export_topics(evaluation: Evaluation, out: TextIO) -> None:
    """`qid<TAB>keyword text` per keyword: the map from the query ids the qrels, run and
    trec_eval exports write (query_ids.py) to the keywords as people read them, and the
    topics file a TREC import takes to give the run's queries those texts back. A line break in a
    keyword is written as a space (it would end the line)."""
    qids = query_ids(evaluation)
    keywords = (
        Keyword.objects.filter(evaluation=evaluation)
        .order_by("position")
        .values_list("id", "text")
        .iterator(chunk_size=CHUNK)
    )
    for keyword_id, text in keywords:
        out.write(f"{qids[keyword_id]}\t{' '.join(text.splitlines())}\n")


Exporter = Callable[[Evaluation, TextIO], None]

# format -> (function, content type, file name extension)
EXPORT_FORMATS: dict[str, tuple[Exporter, str, str]] = {
    "json": (export_document, "application/json", ".json"),
    "csv": (export_csv, "text/csv", ".csv"),
    "qrels": (export_qrels, "text/plain", ".qrels"),
    "qrels-raw": (export_qrels_raw, "text/plain", ".raw.qrels"),
    "run": (export_run, "text/plain", ".run"),
    # the query ids of the TREC formats -> the keywords (a TREC import's topics file)
    "topics": (export_topics, "text/plain", ".topics"),
    # the metrics per keyword and their means, as trec_eval -q prints them
    "trec_eval": (export_trec_eval, "text/plain", ".trec_eval.txt"),
}
