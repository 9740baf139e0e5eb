"""Whose judgements an evaluation's numbers rest on: its graded slots by source (people,
each AI judge, imports, each click model's judgements), with how many reuse copied and
how many are stale.

Every page and answer that shows an evaluation's metrics shows this beside them (a badge
People / AI / Mixed, or the sentence), so a change of who judged is never read as a
change of ranking. Read in one grouped query for any number of evaluations, and kept in
the shared cache under each evaluation's live token (apps/core/live.py), which renews
whenever its grades change.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db.models import Count

from apps.core import live

from .models import Evaluation, FeedbackSlot, Source


class MixKind:
    NONE = "none"  # nothing graded yet
    PEOPLE = "people"  # people's and imported grades only
    AI = "ai"  # AI judges' grades only
    CLICKS = "clicks"  # click models' grades only
    MIXED = "mixed"


@dataclass(frozen=True)
class SourceMix:
    """An evaluation's (or a keyword's) graded slots by source."""

    people: int = 0  # given here by people
    imported: int = 0  # brought by an import (people's, unless a file named a judge)
    judges: tuple[tuple[str, int], ...] = ()  # (judge's name, grades), most first
    clicks: tuple[tuple[str, int], ...] = ()  # (click judgements' source, grades), most first
    copied: int = 0  # of all of these, copied by reuse from earlier evaluations
    stale: int = 0  # copied, on content the document no longer shows

    @property
    def by_people(self) -> int:
        return self.people + self.imported

    @property
    def by_judges(self) -> int:
        return sum(count for _name, count in self.judges)

    @property
    def by_clicks(self) -> int:
        return sum(count for _name, count in self.clicks)

    @property
    def graded(self) -> int:
        return self.by_people + self.by_judges + self.by_clicks

    @property
    def kind(self) -> str:
        if not self.graded:
            return MixKind.NONE
        only = [
            kind
            for kind, count in (
                (MixKind.PEOPLE, self.by_people),
                (MixKind.AI, self.by_judges),
                (MixKind.CLICKS, self.by_clicks),
            )
            if count
        ]
        return only[0] if len(only) == 1 else MixKind.MIXED

    @property
    def badge(self) -> str:
        """People, AI, Clicks or Mixed ("" before any grade)."""
        return BADGES.get(self.kind, "")

    @property
    def judge_share(self) -> float:
        return self.by_judges / self.graded if self.graded else 0.0

    def parts(self) -> list[tuple[str, int]]:
        """(who, grades) for each source with grades: people, imported, each judge."""
        parts = [("people", self.people), ("imported", self.imported)]
        parts += [(f"AI judge {name}", count) for name, count in self.judges]
        parts += [(name, count) for name, count in self.clicks]
        return [(who, count) for who, count in parts if count]

    @property
    def text(self) -> str:
        """One sentence: "80 grades: people 56 (70 %), AI judge Quick 24 (30 %); 10
        copied from earlier evaluations, 2 of them stale"."""
        if not self.graded:
            return "No grades yet."
        shares = ", ".join(
            f"{who} {count} ({round(100 * count / self.graded)} %)" for who, count in self.parts()
        )
        told = f"{self.graded} grade{'s' if self.graded != 1 else ''}: {shares}"
        if self.copied:
            told += f"; {self.copied} copied from earlier evaluations"
            if self.stale:
                told += f", {self.stale} of them stale"
        return told + "."

    def as_json(self) -> dict[str, object]:
        """The API's `judged_by`."""
        return {
            "kind": self.kind,
            "graded": self.graded,
            "people": self.people,
            "imported": self.imported,
            "judges": [{"name": name, "graded": count} for name, count in self.judges],
            "clicks": [{"name": name, "graded": count} for name, count in self.clicks],
            "copied": self.copied,
            "stale": self.stale,
        }


BADGES = {
    MixKind.PEOPLE: "People",
    MixKind.AI: "AI",
    MixKind.CLICKS: "Clicks",
    MixKind.MIXED: "Mixed",
}
NO_GRADES = SourceMix()


@dataclass
class _Tally:
    people: int = 0
    imported: int = 0
    judges: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    clicks: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    copied: int = 0
    stale: int = 0

    def add(self, source: str, name: str | None, reused: bool, stale: bool, n: int) -> None:
        if source == Source.JUDGE:
            self.judges[name or "unnamed judge"] += n
        elif source == Source.CLICKS:
            self.clicks[name or "clicks"] += n
        elif source == Source.IMPORT:
            self.imported += n
        else:
            self.people += n
        if reused:
            self.copied += n
            self.stale += n if stale else 0

    def mix(self) -> SourceMix:
        def most_first(counts: dict[str, int]) -> tuple[tuple[str, int], ...]:
            return tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

        return SourceMix(
            self.people,
            self.imported,
            most_first(self.judges),
            most_first(self.clicks),
            self.copied,
            self.stale,
        )


def mixes_of(
    evaluation_ids: Iterable[int], *, keyword_id: int | None = None
) -> dict[int, SourceMix]:
    """Each evaluation's mix (or one keyword's, with `keyword_id`), in one query."""
    ids = list(evaluation_ids)
    if not ids:
        return {}
    slots = FeedbackSlot.objects.filter(evaluation_id__in=ids, grade__isnull=False)
    if keyword_id is not None:
        slots = slots.filter(keyword_id=keyword_id)
    rows = (
        slots.values_list("evaluation_id", "source", "source_detail__name", "reused", "stale")
        .annotate(n=Count("id"))
        .order_by()
    )
    tallies: dict[int, _Tally] = defaultdict(_Tally)
    for evaluation_id, source, name, reused, stale, n in rows:
        tallies[evaluation_id].add(source, name, reused, stale, n)
    return {evaluation_id: tallies[evaluation_id].mix() for evaluation_id in ids}


def mix_of_slots(slots: Iterable[FeedbackSlot]) -> SourceMix:
    """The mix of slots already read with their source's name (select_related
    "source_detail"): a keyword page's, at no query."""
    tally = _Tally()
    for slot in slots:
        if slot.grade is not None:
            name = slot.source_detail.name if slot.source_detail else ""
            tally.add(slot.source, name, slot.reused, slot.stale, 1)
    return tally.mix()


def evaluation_mixes(evaluations: Sequence[Evaluation]) -> dict[int, SourceMix]:
    """mixes_of for these evaluations, each computed once per change of its grades (kept
    under its live token, named by id and creation time as coverage.py does)."""
    keys: dict[int, str] = {}
    for evaluation in evaluations:
        token = live.version(live.evaluation_topic(evaluation.id))
        if token is not None:
            keys[evaluation.id] = (
                f"source-mix:{evaluation.id}:{evaluation.created_at.timestamp()}:{token}"
            )
    found: dict[int, SourceMix] = {}
    if keys:
        cached = cache.get_many(list(keys.values()))
        found = {eid: cached[key] for eid, key in keys.items() if key in cached}
    missing = [evaluation.id for evaluation in evaluations if evaluation.id not in found]
    if missing:
        fresh = mixes_of(missing)
        found.update(fresh)
        cache.set_many(
            {keys[eid]: mix for eid, mix in fresh.items() if eid in keys}, live.VERSION_SECONDS
        )
    return found


def evaluation_mix(evaluation: Evaluation) -> SourceMix:
    return evaluation_mixes([evaluation])[evaluation.id]
