"""The text trec_eval prints, from values per query.

Each line is `measure<TAB>query<TAB>value`, the name padded to 22 characters as
trec_eval pads it so that `diff` lines up line for line. With per-query lines (-q), one
block per query in trec_eval's order (ids sorted as text), measures in its order within
a block; then the `all` block: the run id, the number of queries (`num_q`), and each
measure over them: counts summed and printed whole, gm_map as exp of the mean log AP
(and only there), the rest their mean with four decimals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from apps.engine import metric_mean

from .measures import COUNTS, SUMMARY_ONLY, measure_name, sort_key

MetricKey = tuple[str, int]


class Writer(Protocol):
    """Where the text goes: a file, a string buffer, a command's stdout."""

    def write(self, text: str, /) -> object: ...


@dataclass(frozen=True)
class Report:
    """What to print. ``per_query`` holds the queries trec_eval evaluates, and only them;
    ``means`` may give the `all` value of a measure (else its mean over ``per_query``)."""

    run_id: str
    profile: str
    metrics: Sequence[MetricKey]
    per_query: Mapping[str, Mapping[MetricKey, float | None]]
    means: Mapping[MetricKey, float | None] = field(default_factory=dict)


def write_report(report: Report, out: Writer, *, per_query_lines: bool = True) -> None:
    names = {key: measure_name(*key, report.profile) for key in report.metrics}
    ordered = sorted(names.items(), key=lambda item: sort_key(item[1]))
    if per_query_lines:
        for query in sorted(report.per_query):
            of_query = report.per_query[query]
            for key, name in ordered:
                value = of_query.get(key)
                if value is not None and key[0] not in SUMMARY_ONLY:
                    out.write(_line(name, query, _shown(key, value)))
    out.write(_line("runid", "all", report.run_id))
    out.write(_line("num_q", "all", str(len(report.per_query))))
    for key, name in ordered:
        values = [value for v in report.per_query.values() if (value := v.get(key)) is not None]
        if key[0] in COUNTS:
            if values:
                out.write(_line(name, "all", _shown(key, math.fsum(values))))
            continue
        summary = report.means[key] if key in report.means else metric_mean(key[0], values)
        if summary is not None:
            out.write(_line(name, "all", _shown(key, summary)))


def _line(measure: str, query: str, value: str) -> str:
    return f"{measure:<22}\t{query}\t{value}\n"


def _shown(key: MetricKey, value: float) -> str:
    return str(round(value)) if key[0] in COUNTS else f"{value:6.4f}"
