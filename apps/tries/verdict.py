"""A try's verdict against its baseline, from the paired comparison of one metric and
how much of both sides' top k the library has judged. Pure: no Django.

Too little judged decides nothing: a ranking that brings up unjudged documents would
score lower only because nobody has graded them yet, so below MIN_JUDGED of the top k
on either side the verdict is "not enough judged", whatever the numbers say.
"""

from __future__ import annotations

from enum import StrEnum

from apps.stats.paired import PairedResult

MIN_JUDGED = 0.8  # the share of each side's top k the library must grade to decide


class Verdict(StrEnum):
    BETTER = "better"
    WORSE = "worse"
    NO_CHANGE = "no change"  # every query scores the same on both sides
    NOT_SIGNIFICANT = "no significant change"
    NOT_ENOUGH_JUDGED = "not enough judged"
    NO_BASELINE = "no baseline"


EXIT_CODES = {
    Verdict.BETTER: 0,
    Verdict.NO_CHANGE: 0,
    Verdict.NOT_SIGNIFICANT: 0,
    Verdict.WORSE: 1,
    Verdict.NOT_ENOUGH_JUDGED: 3,
    Verdict.NO_BASELINE: 3,
}


def verdict_of(
    paired: PairedResult | None, *, judged_try: float | None, judged_baseline: float | None
) -> Verdict:
    """`judged_*`: the mean share of each side's top k that has a library grade."""
    if paired is None:
        return Verdict.NO_BASELINE
    if min(judged_try or 0.0, judged_baseline or 0.0) < MIN_JUDGED or paired.compared == 0:
        return Verdict.NOT_ENOUGH_JUDGED
    if paired.wins == 0 and paired.losses == 0:
        return Verdict.NO_CHANGE
    if not paired.significant or paired.difference is None:
        return Verdict.NOT_SIGNIFICANT
    return Verdict.BETTER if paired.difference > 0 else Verdict.WORSE
