"""One grade from several: a panel's members' grades, or one model's repeated samples.

Pure Python (no Django). The rules, as docs/ai-judges.md ("Panels and samples") tells a
lead:

- median: the middle grade; of an even number, the lower of the two middle ones (a
  panel that cannot agree between two grades gives the more cautious one);
- majority: the grade most members gave; a tie for most is no grade at all, and the
  result is left for people;
- fitted: the members' grades weighted (weights fitted on a gold set, fit_weights), to
  the nearest grade of the scale, a tie to the lower;
- samples: the grade given most often; a tie for most goes to the lower median.

Agreement is the share of the grades that equal the grade chosen: 1 when all agree.
It is kept beside the confidence the models reported (their mean, when each said one):
a chain escalates on either.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from .answers import Judged

MEDIAN, MAJORITY, FITTED = "median", "majority", "fitted"
RULES = (MEDIAN, MAJORITY, FITTED)  # a panel's
SAMPLES = "samples"  # one model's repeated samples


def median_grade(grades: Sequence[int]) -> int:
    ordered = sorted(grades)
    return ordered[(len(ordered) - 1) // 2]


def majority_grade(grades: Sequence[int]) -> int | None:
    """The grade given most often; None when two or more tie for most."""
    counts = Counter(grades).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None
    return counts[0][0]


def sampled_grade(grades: Sequence[int]) -> int:
    """The grade sampled most often; a tie for most goes to the lower median."""
    most = majority_grade(grades)
    return most if most is not None else median_grade(grades)


def weighted_grade(
    grades: Sequence[int], weights: Sequence[float], scale_grades: Sequence[int]
) -> int:
    """The scale's grade nearest the weighted mean of `grades` (a tie to the lower)."""
    total = sum(weights)
    mean = sum(g * w for g, w in zip(grades, weights, strict=True)) / total
    return min(sorted(scale_grades), key=lambda grade: abs(grade - mean))


def agreement(grades: Sequence[int], chosen: int) -> float:
    return sum(1 for grade in grades if grade == chosen) / len(grades)


@dataclass(frozen=True)
class Vote:
    """One grade of several: a member's (`by` its name, `judge` its id) or a sample's."""

    by: str
    grade: int
    judge: int | None = None

    def as_json(self) -> dict[str, object]:
        shown: dict[str, object] = {"by": self.by, "grade": self.grade}
        if self.judge is not None:
            shown["judge"] = self.judge
        return shown


@dataclass(frozen=True)
class Combined:
    """Per result id: its one grade with the votes behind it, or why it has none."""

    judged: dict[str, Judged]
    failed: dict[str, str]


def combine(
    ids: Sequence[str],
    parts: Sequence[tuple[str, int | None, dict[str, Judged], dict[str, str]]],
    *,
    rule: str,
    scale_grades: Sequence[int],
    weights: Sequence[float] = (),
) -> Combined:
    """The results `ids` graded from `parts`: (who, their judge id or None, what they
    judged, why they failed) each. A result is graded only when every part graded it;
    the reason kept is that of the part whose grade was chosen (else the first's)."""
    judged: dict[str, Judged] = {}
    failed: dict[str, str] = {}
    for result_id in ids:
        missing = [(by, why.get(result_id)) for by, _, got, why in parts if result_id not in got]
        if missing:
            by, why = missing[0]
            failed[result_id] = f"{by}: {why or 'no grade'}"
            continue
        votes = [Vote(by, got[result_id].grade, judge) for by, judge, got, _ in parts]
        grades = [vote.grade for vote in votes]
        chosen = _chosen(grades, rule, scale_grades, weights)
        if chosen is None:
            split = ", ".join(f"{vote.by} {vote.grade}" for vote in votes)
            failed[result_id] = f"the panel is split ({split}): left for people"
            continue
        reasons = [got[result_id].reason for _, _, got, _ in parts]
        at = grades.index(chosen) if chosen in grades else 0
        judged[result_id] = Judged(
            chosen,
            reasons[at],
            _mean_confidence([got[result_id].confidence for _, _, got, _ in parts]),
            agreement=agreement(grades, chosen),
            votes=tuple(vote.as_json() for vote in votes),
        )
    return Combined(judged, failed)


def _chosen(
    grades: list[int], rule: str, scale_grades: Sequence[int], weights: Sequence[float]
) -> int | None:
    if rule == MEDIAN:
        return median_grade(grades)
    if rule == MAJORITY:
        return majority_grade(grades)
    if rule == FITTED:
        return weighted_grade(grades, weights, scale_grades)
    if rule == SAMPLES:
        return sampled_grade(grades)
    raise ValueError(f"no rule {rule!r}")


def _mean_confidence(confidences: list[float | None]) -> float | None:
    """The confidences the models reported, averaged; None unless every one said."""
    if not confidences or any(c is None for c in confidences):
        return None
    return sum(c for c in confidences if c is not None) / len(confidences)


# --- Fitting a panel's weights ----------------------------------------------------------


@dataclass(frozen=True)
class Fit:
    """Weights (non-negative, summing to 1), one per member, and how well they fit."""

    weights: tuple[float, ...]
    squared_error: float  # the mean of (target - weighted grade)^2 over the items
    items: int


def fit_weights(member_grades: Sequence[Sequence[float]], targets: Sequence[float]) -> Fit:
    """The weights whose weighted mean of the members' grades comes nearest people's
    grades (least squares), each weight at least 0 and together 1: a panel trusts its
    better members more, and its grade stays on the scale. `member_grades[i][j]`: member
    j's grade of item i. Every subset of members is solved with the others at 0 (a
    panel has at most a handful), and the feasible solution with least error is kept."""
    if not targets or len(member_grades) != len(targets):
        raise ValueError("fit_weights needs one row of member grades per target, at least one")
    members = len(member_grades[0])
    best: Fit | None = None
    for size in range(1, members + 1):
        for chosen in combinations(range(members), size):
            weights = _constrained_least_squares(member_grades, targets, chosen)
            if weights is None or min(weights) < -1e-12:
                continue
            full = [0.0] * members
            for index, weight in zip(chosen, weights, strict=True):
                full[index] = max(weight, 0.0)
            error = _mean_squared_error(member_grades, targets, full)
            if best is None or error < best.squared_error - 1e-12:
                best = Fit(tuple(full), error, len(targets))
    assert best is not None  # a single member is always feasible
    return best


def _mean_squared_error(
    rows: Sequence[Sequence[float]], targets: Sequence[float], weights: Sequence[float]
) -> float:
    total = 0.0
    for row, target in zip(rows, targets, strict=True):
        total += (target - sum(g * w for g, w in zip(row, weights, strict=True))) ** 2
    return total / len(targets)


def _constrained_least_squares(
    rows: Sequence[Sequence[float]], targets: Sequence[float], chosen: tuple[int, ...]
) -> list[float] | None:
    """Minimise the squared error over the `chosen` members' weights with their sum 1
    (the Lagrange system of the normal equations); None when it is singular."""
    size = len(chosen)
    # [X'X 1; 1' 0] [w; l] = [X'y; 1]
    matrix = [[0.0] * (size + 1) for _ in range(size + 1)]
    right = [0.0] * (size + 1)
    for row, target in zip(rows, targets, strict=True):
        picked = [row[j] for j in chosen]
        for a in range(size):
            right[a] += picked[a] * target
            for b in range(size):
                matrix[a][b] += picked[a] * picked[b]
    for a in range(size):
        matrix[a][size] = matrix[size][a] = 1.0
    right[size] = 1.0
    solved = _solve(matrix, right)
    return None if solved is None else solved[:size]


def _solve(matrix: list[list[float]], right: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting; None for a singular system."""
    size = len(right)
    rows = [list(row) + [value] for row, value in zip(matrix, right, strict=True)]
    for column in range(size):
        pivot = max(range(column, size), key=lambda r: abs(rows[r][column]))
        if abs(rows[pivot][column]) < 1e-12:
            return None
        rows[column], rows[pivot] = rows[pivot], rows[column]
        for r in range(size):
            if r != column:
                factor = rows[r][column] / rows[column][column]
                rows[r] = [x - factor * y for x, y in zip(rows[r], rows[column], strict=True)]
    return [rows[r][size] / rows[r][r] for r in range(size)]
