"""The metric registry and the two convention profiles (metrics.md section 4).

This module says what each metric is called and which scale it is defined on; the
formulas live in ``formulas.py`` (one keyword) and ``batch.py`` (many keywords).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from .errors import EngineError
from .scales import Scale, get_scale

T = TypeVar("T")

SEARCHTWEAK = "searchtweak"
TREC = "trec"
# `searchtweak` is the default; `trec` reproduces trec_eval / ir_measures numbers.
PROFILES: tuple[str, ...] = (SEARCHTWEAK, TREC)


@dataclass(frozen=True)
class MetricDef:
    """One metric: ``name`` is the label for one keyword ("AP"), ``mean_name`` the label
    of its mean over several keywords ("MAP"; same as ``name`` for non-binary metrics,
    whose mean has no conventional name of its own)."""

    id: str
    name: str
    scale: str
    mean_name: str


def _metric(id: str, name: str, scale: str, mean_name: str | None = None) -> MetricDef:
    return MetricDef(id=id, name=name, scale=scale, mean_name=mean_name or name)


METRICS: dict[str, MetricDef] = {
    metric.id: metric
    for metric in (
        _metric("precision", "P", "binary", "MP"),
        _metric("ap", "AP", "binary", "MAP"),
        _metric("rr", "RR", "binary", "MRR"),
        _metric("recall", "R", "binary", "MR"),
        _metric("f1", "F1", "binary", "MF1"),
        _metric("cg", "CG", "graded"),
        _metric("dcg", "DCG", "graded"),
        _metric("ndcg", "nDCG", "graded"),
        _metric("dcg_exp", "DCG-exp", "graded"),
        _metric("ndcg_exp", "nDCG-exp", "graded"),
        _metric("err", "ERR", "graded"),
        _metric("err_018", "ERR-0.18", "graded"),
        _metric("cg_d", "CG(d)", "detail"),
        _metric("dcg_d", "DCG(d)", "detail"),
        _metric("ndcg_d", "nDCG(d)", "detail"),
    )
}


def get_metric(metric: str) -> MetricDef:
    """The metric with id ``metric``; EngineError if there is none."""
    try:
        return METRICS[metric]
    except (KeyError, TypeError):
        raise EngineError(
            f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}"
        ) from None


# ERR reads a grade as a probability out of the graded scale's top grade (3); a custom
# scale's levels are no such probability, so ERR is not offered on one.
NOT_ON_CUSTOM_SCALES = ("err", "err_018")


def metric_scale(metric: str, native: Scale) -> Scale:
    """The scale ``metric`` is computed on for an evaluation on ``native``: its own, or
    for a graded or detail metric of a custom scale the custom levels themselves (the
    gain is the level, as in trec_eval)."""
    definition = get_metric(metric)
    if native.custom and definition.scale != "binary":
        if metric in NOT_ON_CUSTOM_SCALES:
            raise EngineError(
                f"{definition.name} is defined on the graded scale's grades 0 to 3; "
                "it is not offered on a custom scale"
            )
        return native
    return get_scale(definition.scale)


def check_profile(profile: str) -> None:
    if profile not in PROFILES:
        raise EngineError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")


# k of a metric computed over the whole ranking, with no cutoff (trec_eval's `map`,
# `recip_rank`, `ndcg`). Stored as 0 so that (metric, k) stays a pair of plain values
# everywhere; shown as the bare name ("AP"), and as null in JSON.
WHOLE_LIST = 0
# The deepest cutoff a metric may ask for: real TREC runs are 1,000 results deep.
MAX_CUTOFF = 1000


def check_cutoff(k: int) -> None:
    # bool is an int subclass, and True is not a cutoff anyone meant.
    if type(k) is not int or k < 0:
        raise EngineError(
            f"cutoff k must be a whole number >= 1 (or {WHOLE_LIST} for the whole list), got {k!r}"
        )


def cut(values: Sequence[T], k: int) -> Sequence[T]:
    """The first k values, or all of them for the whole list."""
    return values if k == WHOLE_LIST else values[:k]


def metric_label(metric: str, k: int, many_keywords: bool = False) -> str:
    """The display label, e.g. ``"AP@10"`` for one keyword, ``"MAP@10"`` for a mean over
    several keywords, and ``"AP"`` / ``"MAP"`` over the whole list."""
    definition = get_metric(metric)
    check_cutoff(k)
    name = definition.mean_name if many_keywords else definition.name
    return name if k == WHOLE_LIST else f"{name}@{k}"
