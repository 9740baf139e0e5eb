"""The team's judgements for query texts, wherever they were given: in an evaluation (a
person's, an AI judge's, an import's grade on a result; a lead's decision) or in a
judgement list imported into the library. One call reads them for many query texts at
once, a query per place they are kept, and groups them by query, document and scale.

Each group's library grade rests on the most trusted judgements it has: a lead's
decision, else people's (a person's or an imported grade), else AI judges'; fresh ones
before stale ones. Within that tier the most common grade wins, a tie going to the most
recent. A judgement is stale when the document's newest content in the team's results
differs from the content it was given on (apps/evaluations/fingerprints.py).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Q

from apps.evaluations.fingerprints import content_fingerprint
from apps.evaluations.models import (
    PEOPLE_SOURCES,
    FeedbackSlot,
    JudgementSource,
    Snapshot,
    Source,
)
from apps.judging.models import SnapshotDecision

from .models import ListedJudgement

DECISION = "decision"
# The tiers a library grade may rest on, most trusted first.
PEOPLE = "people"
JUDGES = "judges"
CLICKS = "clicks"
BASIS_LABELS = {
    DECISION: "a lead's decision",
    PEOPLE: "people",
    JUDGES: "AI judges",
    CLICKS: "clicks",
}
# The graded slots the library counts: a copy by reuse is its original again, kept in
# the evaluation or the list it was copied from, and counts only once neither is kept.
COUNTED_ONCE = Q(reused=False) | Q(reused_from__isnull=True, reused_from_list__isnull=True)


@dataclass(frozen=True)
class Judgement:
    """One judgement of a query text and document, with who gave it and where."""

    query: str
    doc_id: str
    grade: int
    scale: str  # scale_key() of the evaluation or list it was given on
    kind: str  # a Source value, or DECISION
    source: str  # what gave it, as pages name it
    grader: str  # the person, "" for an AI judge or a list
    judged_at: datetime | None
    fingerprint: str  # the content it was given on; "" when not recorded
    origin: str  # the evaluation or list it is kept in
    evaluation_id: int | None = None
    list_id: int | None = None

    @property
    def tier(self) -> str:
        if self.kind == DECISION:
            return DECISION
        if self.kind in PEOPLE_SOURCES:
            return PEOPLE
        return CLICKS if self.kind == Source.CLICKS else JUDGES


@dataclass
class Entry:
    """The judgements of one query text and document on one scale."""

    query: str
    doc_id: str
    scale: str
    judgements: list[Judgement] = field(default_factory=list)  # newest first
    newest_fingerprint: str = ""

    def is_stale(self, judgement: Judgement) -> bool:
        return bool(
            judgement.fingerprint
            and self.newest_fingerprint
            and judgement.fingerprint != self.newest_fingerprint
        )

    @property
    def basis(self) -> list[Judgement]:
        """The judgements the library grade rests on: the first tier that has any, its
        fresh ones if it has those."""
        for tier in (DECISION, PEOPLE, JUDGES, CLICKS):
            found = [j for j in self.judgements if j.tier == tier]
            if found:
                fresh = [j for j in found if not self.is_stale(j)]
                return fresh or found
        return []

    @property
    def basis_tier(self) -> str:
        basis = self.basis
        return basis[0].tier if basis else ""

    @property
    def grade(self) -> int | None:
        basis = self.basis
        if not basis:
            return None
        if basis[0].tier == DECISION:
            return basis[0].grade
        counts = Counter(j.grade for j in basis)
        most = max(counts.values())
        # Judgements are newest first: the first with a most common grade is the newest.
        return next(j.grade for j in basis if counts[j.grade] == most)

    @property
    def stale(self) -> bool:
        """Whether the library grade rests on stale judgements alone."""
        basis = self.basis
        return bool(basis) and all(self.is_stale(j) for j in basis)

    @property
    def disagreeing(self) -> bool:
        """Whether its judgements (decisions aside) give more than one grade."""
        return len({j.grade for j in self.judgements if j.tier != DECISION}) > 1

    @property
    def agreement(self) -> float | None:
        """The share of its judgements (decisions aside) that give the most common grade;
        None with fewer than two."""
        grades = [j.grade for j in self.judgements if j.tier != DECISION]
        if len(grades) < 2:
            return None
        return max(Counter(grades).values()) / len(grades)


def scale_key(scale: str, levels: Any) -> str:
    """One name per scale: a built-in one's, or a custom scale's levels, so grades on
    different levels never count together."""
    if scale != "custom" or not isinstance(levels, dict):
        return scale
    lowest, highest = levels.get("lowest"), levels.get("highest")
    return f"custom {lowest}..{highest} from {levels.get('relevant_from', 1)}"


def team_entries(
    *, team_id: int, queries: Collection[str], scale: str | None = None
) -> dict[tuple[str, str, str], Entry]:
    """(query, doc id, scale key) -> its entry, for the team's judgements of `queries`,
    on one scale key or all."""
    entries: dict[tuple[str, str, str], Entry] = {}
    if not queries:
        return entries
    texts = list(set(queries))
    sources = _source_names(team_id)
    judgements = [
        *_slot_judgements(team_id, texts, sources),
        *_decisions(team_id, texts),
        *_listed_judgements(team_id, texts, sources),
    ]
    judgements.sort(key=_newest_first)
    for judgement in judgements:
        if scale is not None and judgement.scale != scale:
            continue
        key = (judgement.query, judgement.doc_id, judgement.scale)
        entry = entries.get(key)
        if entry is None:
            entry = entries[key] = Entry(judgement.query, judgement.doc_id, judgement.scale)
        entry.judgements.append(judgement)
    newest = _newest_content(team_id, texts)
    for (query, doc_id, _scale), entry in entries.items():
        entry.newest_fingerprint = newest.get((query, doc_id), "")
    return entries


def lookup(
    *, team_id: int, pairs: Iterable[tuple[str, str]], scale: str
) -> dict[tuple[str, str], Entry]:
    """(query, doc id) -> its entry on `scale`, for the pairs that have one."""
    wanted = set(pairs)
    entries = team_entries(team_id=team_id, queries={query for query, _doc in wanted}, scale=scale)
    return {
        (query, doc_id): entry
        for (query, doc_id, _scale), entry in entries.items()
        if (query, doc_id) in wanted
    }


def _newest_first(judgement: Judgement) -> tuple[bool, float]:
    at = judgement.judged_at
    return (at is None, -at.timestamp() if at else 0.0)


def _slot_judgements(
    team_id: int, texts: list[str], sources: dict[int, str]
) -> Iterable[Judgement]:
    """Grades given in the team's evaluations. A copy by reuse is its original again and
    is left out, unless the evaluation and the list it was copied from are both gone."""
    rows = (
        FeedbackSlot.objects.filter(
            evaluation__team_id=team_id, keyword__text__in=texts, grade__isnull=False
        )
        .filter(COUNTED_ONCE)
        .values_list(
            "keyword__text",
            "snapshot__doc_id",
            "grade",
            "evaluation__scale",
            "evaluation__scale_levels",
            "source",
            "source_detail_id",
            "grader__email",
            "external_grader",
            "graded_at",
            "content_fingerprint",
            "snapshot__name",
            "snapshot__image",
            "snapshot__attributes",
            "evaluation_id",
            "evaluation__name",
        )
        .order_by()
    )
    for (
        text,
        doc_id,
        grade,
        scale,
        levels,
        kind,
        source_id,
        email,
        external,
        graded_at,
        fingerprint,
        name,
        image,
        attributes,
        evaluation_id,
        evaluation_name,
    ) in rows:
        grader = email or external
        yield Judgement(
            query=text,
            doc_id=doc_id,
            grade=int(grade or 0),  # never None: the filter reads graded slots
            scale=scale_key(scale, levels),
            kind=kind or Source.PERSON,
            source=sources.get(source_id) or _kind_label(kind, grader),
            grader=grader if kind != Source.JUDGE else "",
            judged_at=graded_at,
            fingerprint=fingerprint or content_fingerprint(name, image, attributes),
            origin=evaluation_name,
            evaluation_id=evaluation_id,
        )


def _decisions(team_id: int, texts: list[str]) -> Iterable[Judgement]:
    rows = (
        SnapshotDecision.objects.filter(
            evaluation__team_id=team_id, snapshot__keyword__text__in=texts
        )
        .values_list(
            "snapshot__keyword__text",
            "snapshot__doc_id",
            "grade",
            "evaluation__scale",
            "evaluation__scale_levels",
            "decided_by__email",
            "decided_at",
            "snapshot__name",
            "snapshot__image",
            "snapshot__attributes",
            "evaluation_id",
            "evaluation__name",
        )
        .order_by()
    )
    for text, doc_id, grade, scale, levels, email, at, name, image, attributes, eid, ename in rows:
        yield Judgement(
            query=text,
            doc_id=doc_id,
            grade=int(grade),
            scale=scale_key(scale, levels),
            kind=DECISION,
            source=f"Decision by {email}" if email else "A lead's decision",
            grader=email or "",
            judged_at=at,
            fingerprint=content_fingerprint(name, image, attributes),
            origin=ename,
            evaluation_id=eid,
        )


def _listed_judgements(
    team_id: int, texts: list[str], sources: dict[int, str]
) -> Iterable[Judgement]:
    rows = (
        ListedJudgement.objects.filter(team_id=team_id, query__in=texts)
        .values_list(
            "query",
            "doc_id",
            "grade",
            "judgement_list__scale",
            "judgement_list__scale_levels",
            "judgement_list__source__kind",
            "judgement_list__source_id",
            "judgement_list__imported_at",
            "judgement_list_id",
            "judgement_list__name",
        )
        .order_by()
    )
    for text, doc_id, grade, scale, levels, kind, source_id, at, list_id, list_name in rows:
        yield Judgement(
            query=text,
            doc_id=doc_id,
            grade=int(grade),
            scale=scale_key(scale, levels),
            kind=kind,
            source=sources.get(source_id) or _kind_label(kind, ""),
            grader="",
            judged_at=at,
            fingerprint="",
            origin=list_name,
            list_id=list_id,
        )


def _newest_content(team_id: int, texts: list[str]) -> dict[tuple[str, str], str]:
    """(query, doc id) -> the fingerprint of the document's content in the team's newest
    result for it."""
    newest: dict[tuple[str, str], str] = {}
    rows = (
        Snapshot.objects.filter(keyword__evaluation__team_id=team_id, keyword__text__in=texts)
        .order_by("-keyword__evaluation_id")
        .values_list("keyword__text", "doc_id", "name", "image", "attributes")
    )
    for text, doc_id, name, image, attributes in rows:
        if (text, doc_id) not in newest:
            newest[(text, doc_id)] = content_fingerprint(name, image, attributes)
    return newest


def _source_names(team_id: int) -> dict[int, str]:
    names: dict[int, str] = {}
    for source in JudgementSource.objects.filter(team_id=team_id):
        label = str(source)
        names[source.id] = f"Import: {label}" if source.kind == Source.IMPORT else label
    return names


def _kind_label(kind: str, grader: str) -> str:
    if kind == Source.JUDGE:
        return "AI judge"
    if kind == Source.IMPORT:
        return "Import"
    if kind == Source.CLICKS:
        return "Clicks"
    return grader or "A person"


def grouped_by_query(entries: Iterable[Entry]) -> dict[str, list[Entry]]:
    """Entries by query text, each query's in document order."""
    by_query: dict[str, list[Entry]] = defaultdict(list)
    for entry in entries:
        by_query[entry.query].append(entry)
    for listed in by_query.values():
        listed.sort(key=lambda entry: (entry.doc_id, entry.scale))
    return dict(by_query)
