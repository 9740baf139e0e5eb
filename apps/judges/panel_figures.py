"""A panel's members and a sampled judge's samples on a gold set: each member's figures
against people (as a judge's, calibration_figures.py), and how well the members, or the
samples, agree with each other.

Pure (numpy, the statistics; no Django). A calibration of a panel or a sampled judge
keeps each gold item's votes (combining.Vote: a member's name, grade and judge id; a
sample's name and grade) beside the grade kept: everything here is read from them.
Figures have the same 95% percentile bootstrap interval over keywords as the judge's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from apps import engine
from apps.stats.agreement import category_counts, krippendorff_alpha
from apps.stats.resampling import IntArray, bootstrap_interval

from .calibration_figures import (
    SAMPLES,
    SEED,
    UNDEFINED,
    Figure,
    JudgeFigures,
    Pair,
    alpha_level,
    judge_figures,
)

Voter = int | str  # a member by its judge id; a sample by its name ("sample 2")


@dataclass(frozen=True)
class Voted:
    """One gold item's votes, (voter, name, grade) each in the order given, its keyword,
    and the share of the votes that gave the grade kept (None: no grade was kept)."""

    keyword: int
    votes: tuple[tuple[Voter, str, int], ...] = ()
    agreement: float | None = None

    def grade_of(self, voter: Voter) -> int | None:
        return next((grade for who, _, grade in self.votes if who == voter), None)

    @property
    def grades(self) -> list[int]:
        return [grade for _, _, grade in self.votes]


def voted(keyword: int, votes: object, agreement: float | None = None) -> Voted:
    """An item's stored votes (a list of {"by", "grade"} and, a member's, "judge") read
    as Voted; an entry without a whole grade is left out."""
    read: list[tuple[Voter, str, int]] = []
    for vote in votes if isinstance(votes, list | tuple) else ():
        if not isinstance(vote, Mapping):
            continue
        grade, name, judge = vote.get("grade"), str(vote.get("by", "")), vote.get("judge")
        if not isinstance(grade, int) or isinstance(grade, bool):
            continue
        voter: Voter = judge if isinstance(judge, int) and not isinstance(judge, bool) else name
        read.append((voter, name, grade))
    return Voted(keyword, tuple(read), agreement)


def voters(items: Sequence[Voted]) -> list[tuple[Voter, str]]:
    """Who voted, in the order they first did (a panel's order), named as their first
    vote names them."""
    seen: dict[Voter, str] = {}
    for item in items:
        for who, name, _ in item.votes:
            seen.setdefault(who, name)
    return list(seen.items())


def by_members(items: Sequence[Voted]) -> bool:
    """Whether the votes are a panel's members' (they name a judge), not samples'."""
    return any(isinstance(who, int) for who, _ in voters(items))


# --- Each member against people ---------------------------------------------------------


@dataclass(frozen=True)
class MemberFigures:
    judge: int
    name: str
    figures: JudgeFigures


def member_figures(
    pairs: Sequence[Pair],
    items: Sequence[Voted],
    scale: engine.Scale,
    *,
    profile: str = "searchtweak",
    samples: int = SAMPLES,
    seed: int = SEED,
) -> list[MemberFigures]:
    """Each member's figures against people's consensus, as a judge's: its own grade of
    each gold item (`pairs` and `items` are the same items in the same order) as the
    judge's. No decisions: those are the panel's."""
    if len(pairs) != len(items):
        raise ValueError("member_figures needs the votes of every pair, in the same order")
    members = [(who, name) for who, name in voters(items) if isinstance(who, int)]
    return [
        MemberFigures(
            judge,
            name,
            judge_figures(
                [
                    replace(pair, judge=item.grade_of(judge))
                    for pair, item in zip(pairs, items, strict=True)
                ],
                scale,
                profile=profile,
                samples=samples,
                seed=seed,
            ),
        )
        for judge, name in members
    ]


# --- The members (or samples) with each other -----------------------------------------


@dataclass(frozen=True)
class VoteAgreement:
    """How well a panel's members, or a judge's samples, agree with each other, on the
    gold items two votes or more were given for (`n` of each figure)."""

    voters: int
    alpha: Figure  # Krippendorff's alpha among them, each member or sample a coder
    all_agree: Figure  # the share of items on which every vote is the same grade
    mean_agreement: Figure  # the mean share of the votes that gave the grade kept


NO_TWO_VOTES = "no gold item has two votes"
NO_GRADE_KEPT = "no grade was kept from the votes"


_Statistic = Callable[[list[Voted]], float | None]


def vote_agreement(
    items: Sequence[Voted], scale: engine.Scale, *, samples: int = SAMPLES, seed: int = SEED
) -> VoteAgreement:
    paired = [item for item in items if len(item.votes) >= 2]
    keywords = sorted({item.keyword for item in paired})
    per_keyword: list[list[Voted]] = [[] for _ in keywords]
    index = {keyword: position for position, keyword in enumerate(keywords)}
    for item in paired:
        per_keyword[index[item.keyword]].append(item)
    level = alpha_level(scale)

    def alpha(chosen: list[Voted]) -> float | None:
        rows = [row for row, item in enumerate(chosen) for _ in item.votes]
        grades = [grade for item in chosen for grade in item.grades]
        return krippendorff_alpha(category_counts(rows, grades, scale.grades), level).value

    def all_agree(chosen: list[Voted]) -> float | None:
        return float(np.mean([len(set(item.grades)) == 1 for item in chosen]))

    def mean_agreement(chosen: list[Voted]) -> float | None:
        kept = [item.agreement for item in chosen if item.agreement is not None]
        return float(np.mean(kept)) if kept else None

    def measured(statistic: _Statistic, *, undefined: str) -> Figure:
        if not paired:
            return Figure(None, reason=NO_TWO_VOTES)
        value = statistic(paired)
        if value is None:
            return Figure(None, n=len(paired), reason=undefined)

        def on_resample(drawn: IntArray) -> float | None:
            chosen = [item for k in drawn for item in per_keyword[k]]
            return statistic(chosen) if chosen else None

        low, high = bootstrap_interval(on_resample, len(keywords), samples=samples, seed=seed)
        return Figure(value, low, high, len(paired))

    return VoteAgreement(
        voters=len(voters(items)),
        alpha=measured(alpha, undefined=UNDEFINED),
        all_agree=measured(all_agree, undefined=NO_TWO_VOTES),
        mean_agreement=measured(mean_agreement, undefined=NO_GRADE_KEPT),
    )
