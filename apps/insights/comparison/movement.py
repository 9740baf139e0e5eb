"""How one keyword's result list moved against the baseline's (pure: no Django).

Documents are matched by their doc id. A list is given as (position, doc id) pairs in
position order. As in ``ranking``, a document listed twice keeps its first (best)
position: that one is compared with the baseline, and a later repeat is marked as such
(the baseline's own repeats are simply not its position).

- **up** / **down** by n places: the document is n positions higher / lower than in the
  baseline (``↑3`` at position 2 was at 5 in the baseline).
- **same**: at the baseline's position.
- **new**: the baseline does not list it at all.
- **dropped**: a document of the baseline's part shown that this part shown does not
  hold, with where it went (a position below the part shown, or nowhere).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

Ranked = Sequence[tuple[int, str]]  # (position, doc id), in position order


class Kind(StrEnum):
    UP = "up"
    DOWN = "down"
    SAME = "same"
    NEW = "new"
    REPEAT = "repeat"


@dataclass(frozen=True)
class Move:
    """Where a document of a list stands against the baseline."""

    kind: Kind
    baseline_position: int | None  # None: the baseline does not list it
    first_position: int  # in this list: its own position, or its first for a repeat

    @property
    def places(self) -> int:
        """How many positions it moved up (> 0) or down (< 0); 0 when same or new."""
        if self.kind in (Kind.UP, Kind.DOWN) and self.baseline_position is not None:
            return self.baseline_position - self.first_position
        return 0

    @property
    def marker(self) -> str:
        """What a lead reads beside the document: ↑3, ↓2, =, new, repeat."""
        if self.kind is Kind.UP:
            return f"↑{self.places}"
        if self.kind is Kind.DOWN:
            return f"↓{-self.places}"
        return {Kind.SAME: "=", Kind.NEW: "new", Kind.REPEAT: "repeat"}[self.kind]

    @property
    def description(self) -> str:
        """The same, spelt out (a title for the marker)."""
        was = f"at {self.baseline_position} in the baseline"
        if self.kind is Kind.UP:
            return f"up {self.places} (was {was})"
        if self.kind is Kind.DOWN:
            return f"down {-self.places} (was {was})"
        if self.kind is Kind.SAME:
            return f"same position as in the baseline ({self.baseline_position})"
        if self.kind is Kind.NEW:
            return "not in the baseline's list"
        return f"listed again: first at {self.first_position}"


@dataclass(frozen=True)
class Dropped:
    """A document the baseline shows that the other list does not show."""

    doc_id: str
    baseline_position: int
    now_at: int | None  # its position further down the other list, or None: not listed


def first_positions(ranked: Ranked) -> dict[str, int]:
    """Each doc id's first position in the list."""
    positions: dict[str, int] = {}
    for position, doc_id in ranked:
        positions.setdefault(doc_id, position)
    return positions


def moves_against(baseline: Ranked, other: Ranked) -> list[Move]:
    """One Move for each item of `other`, in its order."""
    in_baseline = first_positions(baseline)
    seen: dict[str, int] = {}
    moves = []
    for position, doc_id in other:
        was = in_baseline.get(doc_id)
        if doc_id in seen:
            moves.append(Move(Kind.REPEAT, was, seen[doc_id]))
            continue
        seen[doc_id] = position
        if was is None:
            kind = Kind.NEW
        elif was > position:
            kind = Kind.UP
        elif was < position:
            kind = Kind.DOWN
        else:
            kind = Kind.SAME
        moves.append(Move(kind, was, position))
    return moves


def dropped_from(baseline: Ranked, other: Ranked, *, shown: int) -> list[Dropped]:
    """The documents of the baseline's first `shown` items missing from the other's first
    `shown`, in the baseline's order, each with its position further down (if any)."""
    in_other = first_positions(other)
    shown_in_other = {doc_id for _position, doc_id in other[:shown]}
    return [
        Dropped(doc_id, position, in_other.get(doc_id))
        for doc_id, position in first_positions(baseline[:shown]).items()
        if doc_id not in shown_in_other
    ]
