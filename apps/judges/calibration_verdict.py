"""A calibration's verdict: one plain sentence a lead can act on, read from the figures
(calibration_figures.py). Pure: no Django.

The rule, on Krippendorff's alpha (what the team's gate reads too):

- the judge's alpha against people's consensus is 0 or less: it agrees with people no
  better than chance would, so it is not to be used, whatever people's own agreement;
- people's own alpha (the ceiling) is unknown: the judge's alpha is all there is to say;
- the judge's alpha less people's (the gap, with its bootstrap interval over keywords) is
  below zero with its whole interval: worse than people, by how much;
- otherwise people's agreement with each other is within reach of the figures: the judge
  agrees with people as well as they agree with each other. A gap that is negative but
  whose interval reaches zero is that case too: the gold set cannot tell them apart.

Without an interval (too few keywords for one) the gap's sign decides, and the sentence
says the interval is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .calibration_figures import Figure


class Verdict(StrEnum):
    AS_PEOPLE = "as_people"
    WORSE_THAN_PEOPLE = "worse_than_people"
    CHANCE = "chance"
    NO_CEILING = "no_ceiling"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class CalibrationVerdict:
    verdict: Verdict
    sentence: str

    @property
    def warns(self) -> bool:
        """The sentence advises against the judge (the page marks it so)."""
        return self.verdict in (Verdict.CHANCE, Verdict.WORSE_THAN_PEOPLE)


def calibration_verdict(judge: Figure, ceiling: Figure, gap: Figure) -> CalibrationVerdict:
    """The verdict on a judge whose alpha against people's consensus is `judge`, people's
    own alpha `ceiling` and the difference of the two `gap` (alpha_gap)."""
    if judge.value is None:
        return CalibrationVerdict(Verdict.UNDECIDED, f"No verdict yet: {judge.reason}.")
    if judge.value <= 0:
        return CalibrationVerdict(
            Verdict.CHANCE,
            f"Worse than chance (alpha {_number(judge.value)}, where 0 is what guessing "
            "gets): do not use this judge.",
        )
    if ceiling.value is None or gap.value is None:
        why = ceiling.reason or gap.reason
        return CalibrationVerdict(
            Verdict.NO_CEILING,
            f"Agrees with people's consensus to alpha {_number(judge.value)}; how well people "
            f"agree with each other is not known ({why}), so there is nothing to hold it "
            "against.",
        )
    compared = f"alpha {_number(judge.value)} against people's {_number(ceiling.value)}"
    interval = _interval(gap)
    worse = gap.high < 0 if gap.high is not None else gap.value < 0
    if worse:
        return CalibrationVerdict(
            Verdict.WORSE_THAN_PEOPLE,
            f"Worse than people: {compared} with each other, {_number(-gap.value)} lower "
            f"({interval}).",
        )
    return CalibrationVerdict(
        Verdict.AS_PEOPLE,
        f"Agrees with people as well as people agree with each other: {compared} with each "
        f"other (the difference, {_number(gap.value)}: {interval}).",
    )


def _interval(gap: Figure) -> str:
    if gap.low is None or gap.high is None:
        return "too few keywords for an interval"
    # Told as "how much lower", the same way as the value: the bounds swap and turn.
    if gap.high < 0:
        return f"95% interval {_number(-gap.high)} to {_number(-gap.low)}"
    return f"95% interval {_number(gap.low)} to {_number(gap.high)}"


def _number(value: float) -> str:
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text  # a rounded zero has no sign
