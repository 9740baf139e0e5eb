"""The per-keyword side of a comparison: the sortable, paged table and the CSV files."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np
from django.core.paginator import Page, Paginator

from apps import engine
from apps.core.errors import InvalidInput
from apps.core.spreadsheet import number_cell, text_cell

from .selectors import Comparison, PairComparison

KEYWORDS_PER_PAGE = 50
DEFAULT_SORT = "position"


def difference_tone(difference: float | None) -> str:
    """The tone of a difference: better, worse, or none ("") within float noise."""
    if difference is None or abs(difference) <= 1e-9:
        return ""
    return "better" if difference > 0 else "worse"


@dataclass(frozen=True)
class Cell:
    metric: str  # metric@k
    baseline: float | None
    candidate: float | None
    difference: float | None

    @property
    def tone(self) -> str:
        if not engine.get_metric(self.metric.partition("@")[0]).ranks:
            return ""  # a count or a residual: neither better nor worse
        return difference_tone(self.difference)


@dataclass(frozen=True)
class KeywordRow:
    position: int  # in the baseline's keyword order, from 1
    text: str
    cells: list[Cell]  # one per metric of the pair
    kendall_tau: float | None
    rbo: float | None


def _value(number: Any) -> float | None:
    return None if math.isnan(number) else float(number)


def sort_choices(pair: PairComparison) -> list[str]:
    """What the table sorts by: keyword order, text, any metric's difference, tau, RBO."""
    return ["position", "keyword", *(m.key for m in pair.metrics), "tau", "rbo"]


def parse_sort(text: str, pair: PairComparison, *, field: str = "sort") -> str:
    text = text.strip() or DEFAULT_SORT
    if text.removeprefix("-") not in sort_choices(pair):
        choices = ", ".join(sort_choices(pair))
        raise InvalidInput([f"{field}: {text[:40]!r} is not one of {choices} (- for descending)"])
    return text


def row_order(comparison: Comparison, pair: PairComparison, sort: str) -> list[int]:
    """Row indices in the order asked; rows without a value come last either way."""
    key = sort.removeprefix("-")
    descending = sort.startswith("-")
    if key in ("position", "keyword"):
        rows = range(len(comparison.keywords))
        if key == "position":
            return list(reversed(rows)) if descending else list(rows)
        texts = comparison.keywords
        return sorted(rows, key=lambda row: texts[row].casefold(), reverse=descending)
    if key == "tau":
        values = pair.kendall_tau
    elif key == "rbo":
        values = pair.rbo
    else:
        column = [m.key for m in pair.metrics].index(key)
        values = pair.differences[:, column]
    # NaN sorts last ascending; negating keeps it last descending. Stable: ties keep
    # the keyword order.
    return [int(row) for row in np.argsort(-values if descending else values, kind="stable")]


def keyword_page(
    comparison: Comparison, pair: PairComparison, *, sort: str, page_number: Any
) -> tuple[Page, list[KeywordRow]]:
    page = Paginator(row_order(comparison, pair, sort), KEYWORDS_PER_PAGE).get_page(page_number)
    return page, [_row(comparison, pair, row) for row in page.object_list]


def _row(comparison: Comparison, pair: PairComparison, row: int) -> KeywordRow:
    baseline = pair.baseline_values[row]
    candidate = pair.candidate_values[row]
    cells = [
        Cell(metric.key, _value(a), _value(b), _value(b - a))
        for metric, a, b in zip(pair.metrics, baseline, candidate, strict=True)
    ]
    return KeywordRow(
        row + 1,
        comparison.keywords[row],
        cells,
        _value(pair.kendall_tau[row]),
        _value(pair.rbo[row]),
    )


# --- CSV -------------------------------------------------------------------------------


def write_keywords_csv(comparison: Comparison, out: TextIO) -> None:
    """One row per common keyword: each pair's values, differences, tau and RBO."""
    writer = csv.writer(out, lineterminator="\n")
    base = comparison.baseline.name
    header = ["keyword"]
    for pair in comparison.pairs:
        other = pair.candidate.name
        for metric in pair.metrics:
            header += [
                f"{metric.key} {base}",
                f"{metric.key} {other}",
                f"{metric.key} difference ({other} - {base})",
            ]
        header += [f"kendall_tau ({other} vs {base})", f"rbo ({other} vs {base})"]
    writer.writerow(header)
    for row, text in enumerate(comparison.keywords):
        line: list[str] = [text_cell(text)]
        for pair in comparison.pairs:
            for a, b in zip(pair.baseline_values[row], pair.candidate_values[row], strict=True):
                line += [number_cell(_value(a)), number_cell(_value(b)), number_cell(_value(b - a))]
            line += [number_cell(_value(pair.kendall_tau[row])), number_cell(_value(pair.rbo[row]))]
        writer.writerow(line)


SUMMARY_HEADER = [
    "baseline",
    "evaluation",
    "metric",
    "k",
    "keywords_compared",
    "keywords_excluded",
    "baseline_mean",
    "mean",
    "difference",
    "ci_low",
    "ci_high",
    "p_value",
    "p_exact",
    "p_adjusted",
    "significant",
    "wins",
    "ties",
    "losses",
    "kendall_tau_mean",
    "rbo_mean",
]


def summary_rows(comparison: Comparison) -> Iterable[list[Any]]:
    for pair in comparison.pairs:
        for metric in pair.metrics:
            r = metric.result
            yield [
                text_cell(comparison.baseline.name),
                text_cell(pair.candidate.name),
                metric.metric,
                metric.k,
                r.compared,
                metric.excluded,
                number_cell(r.baseline_mean),
                number_cell(r.candidate_mean),
                number_cell(r.difference),
                number_cell(r.ci_low),
                number_cell(r.ci_high),
                number_cell(r.p_value),
                str(r.exact).lower(),
                number_cell(r.p_adjusted),
                str(r.significant).lower(),
                r.wins,
                r.ties,
                r.losses,
                number_cell(pair.kendall_tau_mean),
                number_cell(pair.rbo_mean),
            ]


def write_summary_csv(comparison: Comparison, out: TextIO) -> None:
    """One row per (evaluation, metric) against the baseline."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(SUMMARY_HEADER)
    writer.writerows(summary_rows(comparison))
