"""The library page's reads: the team's query texts in order, a page of them with the
judgements that pass the lead's filters, and the counts by source.

Pages go by query text ("after" the last one shown), so a page is found without counting
what comes before it. A filter that only the judgements can answer (stale, disagreeing,
a grader) reads query texts in chunks until the page is full, and stops after
SCAN_LIMIT of them, saying where it stopped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from django.db.models import Count

from apps.evaluations.models import FeedbackSlot, Keyword, Source
from apps.judging.models import SnapshotDecision

from .entries import COUNTED_ONCE, DECISION, Entry, team_entries
from .models import JudgementList, ListedJudgement

QUERIES_PER_PAGE = 25
CHUNK = 100
SCAN_LIMIT = 5_000
KIND_CHOICES = [
    ("", "Any source"),
    (Source.PERSON, "People"),
    (Source.JUDGE, "AI judges"),
    (Source.IMPORT, "Imports"),
    (Source.CLICKS, "Clicks"),
    (DECISION, "Leads' decisions"),
]


@dataclass(frozen=True)
class Filters:
    query: str = ""  # part of the query text
    kind: str = ""  # one of KIND_CHOICES
    grader: str = ""  # part of the person's address
    stale: bool = False
    disagreeing: bool = False
    scale: str = ""  # a scale key

    def keeps(self, entry: Entry) -> bool:
        if self.stale and not entry.stale:
            return False
        if self.disagreeing and not entry.disagreeing:
            return False
        if self.kind and not any(j.kind == self.kind for j in entry.judgements):
            return False
        grader = self.grader.casefold()
        return not grader or any(grader in j.grader.casefold() for j in entry.judgements)


@dataclass
class LibraryPage:
    queries: list[tuple[str, list[Entry]]] = field(default_factory=list)
    next_after: str | None = None  # the query text the next page starts after
    stopped_at: str | None = None  # where SCAN_LIMIT stopped a filtered search


def team_query_texts(*, team_id: int, contains: str = "", after: str = "") -> Iterator[str]:
    """The team's query texts in order, from evaluations and imported lists alike."""
    keywords = Keyword.objects.filter(evaluation__team_id=team_id)
    listed = ListedJudgement.objects.filter(team_id=team_id)
    if contains:
        keywords = keywords.filter(text__icontains=contains)
        listed = listed.filter(query__icontains=contains)
    if after:
        keywords = keywords.filter(text__gt=after)
        listed = listed.filter(query__gt=after)
    # Each side unordered (the models' default ordering is not allowed inside a UNION).
    texts = (
        keywords.order_by()
        .values_list("text", flat=True)
        .union(listed.order_by().values_list("query", flat=True))
    )
    yield from texts.order_by("text").iterator(chunk_size=CHUNK)


def library_page(*, team_id: int, filters: Filters, after: str = "") -> LibraryPage:
    page = LibraryPage()
    texts = team_query_texts(team_id=team_id, contains=filters.query, after=after)
    scanned = 0
    while len(page.queries) < QUERIES_PER_PAGE:
        chunk = [text for _, text in zip(range(CHUNK), texts, strict=False)]
        if not chunk:
            return page
        entries = team_entries(team_id=team_id, queries=chunk, scale=filters.scale or None)
        by_query: dict[str, list[Entry]] = {}
        for entry in entries.values():
            if filters.keeps(entry):
                by_query.setdefault(entry.query, []).append(entry)
        for text in chunk:
            scanned += 1
            if text in by_query:
                listed = sorted(by_query[text], key=lambda e: (e.doc_id, e.scale))
                page.queries.append((text, listed))
                if len(page.queries) == QUERIES_PER_PAGE:
                    page.next_after = text
                    return page
            if scanned >= SCAN_LIMIT:
                page.stopped_at = page.next_after = text
                return page
    return page


@dataclass(frozen=True)
class LibraryCounts:
    by_kind: dict[str, int]
    lists: int

    @property
    def total(self) -> int:
        return sum(self.by_kind.values())


def library_counts(*, team_id: int) -> LibraryCounts:
    """How many judgements the team has of each source. Copies by reuse count once, as
    their originals (entries.COUNTED_ONCE)."""
    by_kind: dict[str, int] = {kind: 0 for kind, _label in KIND_CHOICES if kind}
    for kind, count in (
        FeedbackSlot.objects.filter(evaluation__team_id=team_id, grade__isnull=False)
        .filter(COUNTED_ONCE)
        .values_list("source")
        .annotate(count=Count("id"))
        .order_by()
    ):
        by_kind[kind or Source.PERSON] = by_kind.get(kind or Source.PERSON, 0) + count
    by_kind[DECISION] = SnapshotDecision.objects.filter(evaluation__team_id=team_id).count()
    for kind, count in (
        ListedJudgement.objects.filter(team_id=team_id)
        .values_list("judgement_list__source__kind")
        .annotate(count=Count("id"))
        .order_by()
    ):
        by_kind[kind] = by_kind.get(kind, 0) + count
    lists = JudgementList.objects.filter(team_id=team_id).count()
    return LibraryCounts(by_kind=by_kind, lists=lists)
