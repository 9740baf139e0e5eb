"""How far a judge's grades can be trusted, on a gold set: its agreement with people's
consensus (Krippendorff's alpha, exact and within-one agreement, the confusion matrix),
people's agreement with each other as the ceiling, keywords ranked alike (nDCG@10,
Kendall's tau-b) and whether its grades would change a decision (apps/stats/paired.py).
Each figure has a 95% percentile bootstrap interval over keywords. Pure (numpy, the
engine, the statistics; no Django). What each figure rests on: docs/ai-judges.md,
"Calibration: can the team trust this judge?".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from apps import engine
from apps.engine.aggregate import binary_vote, mean_grade
from apps.stats.agreement import (
    Level,
    category_counts,
    krippendorff_alpha,
    observed_agreement,
)
from apps.stats.paired import PairedResult, compare_paired
from apps.stats.resampling import FloatArray, IntArray, bootstrap_interval, kendall_tau_b

SAMPLES = 1_000
SEED = 17_017
RANKING_METRIC = ("ndcg", 10)
BETTER, WORSE, SAME = "better", "worse", "no significant difference"


@dataclass(frozen=True)
class Pair:
    """One gold result: its keyword (0, 1, ...), people's grades, the judge's grade
    (None: none), and its position in the baseline's and the candidate's lists."""

    keyword: int
    people: tuple[int, ...]
    judge: int | None
    baseline_position: int | None = None
    candidate_position: int | None = None


@dataclass(frozen=True)
class Figure:
    """A value with its interval, or None and why; `n` is how many results (or
    keywords, for rankings) it rests on."""

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0
    reason: str = ""


@dataclass(frozen=True)
class Decision:
    """One metric's verdict on candidate against baseline, with people's grades and with
    the judge's."""

    metric: str
    people: str
    judge: str
    people_difference: float | None
    judge_difference: float | None

    @property
    def same(self) -> bool:
        return self.people == self.judge


@dataclass(frozen=True)
class JudgeFigures:
    compared: int
    alpha: Figure
    exact: Figure
    within_one: Figure
    confusion: list[list[int]]
    ranking_tau: Figure
    decisions: list[Decision] = field(default_factory=list)

    @property
    def changes_a_decision(self) -> bool:
        return any(not decision.same for decision in self.decisions)


@dataclass(frozen=True)
class Ceiling:
    alpha: Figure
    agreement: Figure


def consensus(people: Sequence[int], scale: engine.Scale) -> float | None:
    return binary_vote(people) if scale.name == "binary" else mean_grade(people)


def nearest_grade(value: float, scale: engine.Scale) -> int:
    """The scale's grade nearest to `value`, a half rounding up."""
    return min(scale.grades, key=lambda grade: (abs(grade - value), -grade))


# --- The judge against people --------------------------------------------------------


def judge_figures(
    pairs: Sequence[Pair],
    scale: engine.Scale,
    *,
    profile: str = "searchtweak",
    metrics: Sequence[tuple[str, int]] = (),
    samples: int = SAMPLES,
    seed: int = SEED,
) -> JudgeFigures:
    keywords = sorted({pair.keyword for pair in pairs})
    by_keyword = _by_keyword(_graded_pairs(pairs, scale), keywords, scale)

    def rows_of(drawn: IntArray) -> np.ndarray:
        chosen = [by_keyword[k] for k in drawn if len(by_keyword[k])]
        return np.concatenate(chosen) if chosen else np.empty((0, 3))

    everything = rows_of(np.arange(len(keywords)))
    units = len(keywords)
    return JudgeFigures(
        compared=len(everything),
        alpha=_figure(_alpha_of(scale), rows_of, units, samples, seed),
        exact=_figure(_exact, rows_of, units, samples, seed),
        within_one=(
            _figure(_within_one, rows_of, units, samples, seed)
            if len(scale.grades) > 2
            else Figure(None, reason="on a scale of two grades every grade is within one")
        ),
        confusion=_confusion(everything, scale),
        ranking_tau=_ranking_tau(pairs, keywords, scale, profile, samples, seed),
        decisions=_decisions(pairs, keywords, scale, profile, metrics) if metrics else [],
    )


def _graded_pairs(pairs: Sequence[Pair], scale: engine.Scale) -> list[tuple[int, float, int]]:
    """(keyword, consensus value, judge grade) of the results with both."""
    graded = []
    for pair in pairs:
        value = consensus(pair.people, scale)
        if value is not None and pair.judge is not None:
            graded.append((pair.keyword, value, pair.judge))
    return graded


def _by_keyword(
    graded: list[tuple[int, float, int]], keywords: list[int], scale: engine.Scale
) -> list[np.ndarray]:
    """Per keyword (in `keywords` order) an array of rows: the consensus value, its
    nearest grade, the judge's grade."""
    index = {keyword: position for position, keyword in enumerate(keywords)}
    rows: list[list[tuple[float, float, float]]] = [[] for _ in keywords]
    for keyword, value, judge in graded:
        rows[index[keyword]].append((value, float(nearest_grade(value, scale)), float(judge)))
    return [np.array(keyword_rows, dtype=np.float64).reshape(-1, 3) for keyword_rows in rows]


Statistic = Callable[[np.ndarray], float | None]


def _figure(
    statistic: Statistic,
    rows_of: Callable[[IntArray], np.ndarray],
    units: int,
    samples: int,
    seed: int,
) -> Figure:
    everything = rows_of(np.arange(units))
    if len(everything) == 0:
        return Figure(None, reason="no result has both people's consensus and a judge's grade")
    value = statistic(everything)
    if value is None:
        return Figure(None, n=len(everything), reason=UNDEFINED)

    def on_resample(drawn: IntArray) -> float | None:
        rows = rows_of(drawn)
        return statistic(rows) if len(rows) else None

    low, high = bootstrap_interval(on_resample, units, samples=samples, seed=seed)
    return Figure(value, low, high, len(everything))


UNDEFINED = (
    "every grade in it is the same, so agreement expected by chance is already complete "
    "and the statistic is undefined (0/0)"
)


def _alpha_of(scale: engine.Scale) -> Statistic:
    level = alpha_level(scale)

    def alpha(rows: np.ndarray) -> float | None:
        count = len(rows)
        items = np.concatenate([np.arange(count), np.arange(count)])
        grades = np.concatenate([rows[:, 1], rows[:, 2]]).astype(np.int64)
        return krippendorff_alpha(category_counts(items, grades, scale.grades), level).value

    return alpha


def _exact(rows: np.ndarray) -> float | None:
    return float(np.mean(rows[:, 1] == rows[:, 2]))


def _within_one(rows: np.ndarray) -> float | None:
    return float(np.mean(np.abs(rows[:, 0] - rows[:, 2]) <= 1.0 + 1e-9))


def _confusion(rows: np.ndarray, scale: engine.Scale) -> list[list[int]]:
    position = {grade: index for index, grade in enumerate(scale.grades)}
    matrix = [[0] * len(scale.grades) for _ in scale.grades]
    for _value, nearest, judged in rows:
        matrix[position[int(nearest)]][position[int(judged)]] += 1
    return matrix


# --- Rankings and decisions ----------------------------------------------------------


def _metric_values(
    pairs: Sequence[Pair],
    keywords: list[int],
    scale: engine.Scale,
    profile: str,
    metrics: Sequence[tuple[str, int]],
    *,
    list_of: str,
    grades_of: str,
) -> np.ndarray:
    """keywords x metrics: each keyword's metric values over the list `list_of`
    ("baseline" or "candidate") with `grades_of` ("people" or "judge") grades. A result
    the other side did not grade counts as unjudged on both, so that both rest on the
    same results. NaN: no value."""
    values = np.full((len(keywords), len(metrics)), np.nan)
    index = {keyword: position for position, keyword in enumerate(keywords)}
    lists: dict[int, dict[int, list[int]]] = {keyword: {} for keyword in keywords}
    for pair in pairs:
        position = pair.baseline_position if list_of == "baseline" else pair.candidate_position
        if position is None or pair.judge is None or consensus(pair.people, scale) is None:
            continue
        grades = list(pair.people) if grades_of == "people" else [pair.judge]
        lists[pair.keyword][position] = grades
    for keyword, ranked in lists.items():
        if not ranked:
            continue
        snapshot_grades = [ranked.get(p, []) for p in range(1, max(ranked) + 1)]
        score = engine.score_keyword(
            snapshot_grades, scale=scale, metrics=list(metrics), profile=profile
        )
        for column, metric in enumerate(metrics):
            value = score.metrics[metric]
            if value is not None:
                values[index[keyword], column] = value
    return values


def _ranking_tau(
    pairs: Sequence[Pair],
    keywords: list[int],
    scale: engine.Scale,
    profile: str,
    samples: int,
    seed: int,
) -> Figure:
    def ndcg(grades_of: str) -> FloatArray:
        values = _metric_values(
            pairs,
            keywords,
            scale,
            profile,
            [RANKING_METRIC],
            list_of="baseline",
            grades_of=grades_of,
        )
        return values[:, 0]

    people, judge = ndcg("people"), ndcg("judge")
    kept = ~np.isnan(people) & ~np.isnan(judge)
    people, judge = people[kept], judge[kept]
    if len(people) < 2:
        return Figure(
            None, n=len(people), reason="it needs two keywords with nDCG@10 on both sides"
        )
    value = kendall_tau_b(people, judge)
    if value is None:
        return Figure(None, n=len(people), reason="every keyword has the same nDCG@10 on one side")
    low, high = bootstrap_interval(
        lambda drawn: kendall_tau_b(people[drawn], judge[drawn]),
        len(people),
        samples=samples,
        seed=seed,
    )
    return Figure(value, low, high, len(people))


def _decisions(
    pairs: Sequence[Pair],
    keywords: list[int],
    scale: engine.Scale,
    profile: str,
    metrics: Sequence[tuple[str, int]],
) -> list[Decision]:
    def verdicts(grades_of: str) -> list[tuple[str, float | None]]:
        baseline, candidate = (
            _metric_values(
                pairs, keywords, scale, profile, metrics, list_of=side, grades_of=grades_of
            )
            for side in ("baseline", "candidate")
        )
        return [
            (_verdict(result), result.difference) for result in compare_paired(baseline, candidate)
        ]

    people, judge = verdicts("people"), verdicts("judge")
    return [
        Decision(f"{name}@{k}", people_verdict, judge_verdict, people_difference, judge_difference)
        for (name, k), (people_verdict, people_difference), (
            judge_verdict,
            judge_difference,
        ) in zip(metrics, people, judge, strict=True)
    ]


def _verdict(result: PairedResult) -> str:
    if result.compared == 0:
        return "no keyword to compare"
    if result.significant and result.difference:
        return BETTER if result.difference > 0 else WORSE
    return SAME


# --- People's ceiling ------------------------------------------------------------------


def people_ceiling(
    pairs: Sequence[Pair], scale: engine.Scale, *, samples: int = SAMPLES, seed: int = SEED
) -> Ceiling:
    """People's agreement with each other, over the results two people or more graded."""
    keywords = sorted({pair.keyword for pair in pairs})
    counts_of = _people_counts(pairs, keywords, scale)
    level = alpha_level(scale)

    def alpha(counts: np.ndarray) -> float | None:
        return krippendorff_alpha(counts, level).value if len(counts) else None

    def agreement(counts: np.ndarray) -> float | None:
        return observed_agreement(counts).value if len(counts) else None

    figures = []
    everything = counts_of(np.arange(len(keywords)))
    for statistic in (alpha, agreement):
        value = statistic(everything)
        if not len(everything):
            figures.append(Figure(None, reason=NO_TWO_PEOPLE))
            continue
        if value is None:
            figures.append(Figure(None, n=len(everything), reason=UNDEFINED))
            continue
        low, high = bootstrap_interval(
            _composed(statistic, counts_of),
            len(keywords),
            samples=samples,
            seed=seed,
        )
        figures.append(Figure(value, low, high, len(everything)))
    return Ceiling(*figures)


NO_TWO_PEOPLE = "no result has grades from two people"


def alpha_level(scale: engine.Scale) -> Level:
    """How Krippendorff's alpha weighs a disagreement on the scale: nominal on two grades,
    ordinal otherwise."""
    return "nominal" if len(scale.grades) == 2 else "ordinal"


def _people_counts(
    pairs: Sequence[Pair], keywords: list[int], scale: engine.Scale
) -> Callable[[IntArray], np.ndarray]:
    """The count table of people's grades on the results two people or more graded, of
    the drawn keywords (indices into `keywords`)."""
    index = {keyword: position for position, keyword in enumerate(keywords)}
    per_keyword: list[list[tuple[int, ...]]] = [[] for _ in keywords]
    for pair in pairs:
        if len(pair.people) >= 2:
            per_keyword[index[pair.keyword]].append(pair.people)

    def counts_of(drawn: IntArray) -> np.ndarray:
        results = [people for k in drawn for people in per_keyword[k]]
        items = [item for item, people in enumerate(results) for _ in people]
        grades = [grade for people in results for grade in people]
        return category_counts(items, grades, scale.grades)

    return counts_of


# --- The judge against the ceiling -----------------------------------------------------


def alpha_gap(
    pairs: Sequence[Pair], scale: engine.Scale, *, samples: int = SAMPLES, seed: int = SEED
) -> Figure:
    """The judge's alpha against people's consensus less people's alpha with each other,
    with its own interval: both are measured on the same resampled keywords, so the
    interval is that of the difference (two separate intervals overlap long after the
    difference is clear). Negative: the judge agrees with people less than they do."""
    keywords = sorted({pair.keyword for pair in pairs})
    by_keyword = _by_keyword(_graded_pairs(pairs, scale), keywords, scale)
    people_counts = _people_counts(pairs, keywords, scale)
    judge_alpha, level = _alpha_of(scale), alpha_level(scale)

    def gap(drawn: IntArray) -> float | None:
        chosen = [by_keyword[k] for k in drawn if len(by_keyword[k])]
        counts = people_counts(drawn)
        if not chosen or not len(counts):
            return None
        judge = judge_alpha(np.concatenate(chosen))
        people = krippendorff_alpha(counts, level).value
        return None if judge is None or people is None else judge - people

    value = gap(np.arange(len(keywords)))
    if value is None:
        return Figure(None, reason="the judge's alpha or people's is undefined")
    low, high = bootstrap_interval(gap, len(keywords), samples=samples, seed=seed)
    return Figure(value, low, high, len(keywords))


def _composed(
    statistic: Statistic, counts_of: Callable[[IntArray], np.ndarray]
) -> Callable[[IntArray], float | None]:
    def on_resample(drawn: IntArray) -> float | None:
        return statistic(counts_of(drawn))

    return on_resample
