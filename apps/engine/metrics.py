"""The metric registry and the two convention profiles (metrics.md section 4).

This module says what each metric is called and which scale it is defined on; the
formulas live in ``formulas.py`` (one keyword) and ``batch.py`` (many keywords).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from .errors import EngineError
from .scales import Scale, get_scale

T = TypeVar("T")

# The scale of a measure read on the evaluation's own scale (coverage: whether a result
# has a value at all), whatever that scale is.
NATIVE = "native"

SEARCHTWEAK = "searchtweak"
TREC = "trec"
# `searchtweak` is the default; `trec` reproduces trec_eval / ir_measures numbers.
PROFILES: tuple[str, ...] = (SEARCHTWEAK, TREC)


@dataclass(frozen=True)
class MetricDef:
    """One metric: ``name`` is its label ("AP"), for one keyword and for the mean over
    several alike, so that a metric reads the same on every page; ``mean_name`` differs
    only where the evaluation's number is another quantity than its keywords' (a
    keyword's "log AP" makes the evaluation's "GMAP"); ``description`` is its one-line
    definition, shown where metrics are chosen (docs/metrics.md has the conventions).
    ``ranks`` is false for a measure that describes a list rather than rates it (a count,
    RBP's residual): a comparison says it differs, never that it is better or worse."""

    id: str
    name: str
    scale: str
    mean_name: str
    description: str = field(default="", compare=False)
    ranks: bool = field(default=True, compare=False)
    # How keyword values make the evaluation's value: their mean, or exp of their mean
    # for a metric whose keyword values are logarithms (GMAP).
    geometric: bool = field(default=False, compare=False)


def _metric(
    id: str,
    name: str,
    scale: str,
    mean_name: str | None = None,
    *,
    says: str = "",
    ranks: bool = True,
    geometric: bool = False,
) -> MetricDef:
    return MetricDef(
        id=id,
        name=name,
        scale=scale,
        mean_name=mean_name or name,
        description=says,
        ranks=ranks,
        geometric=geometric,
    )


# Interpolated precision is read at these recall levels, in per cent (trec_eval's
# iprec_at_recall_0.00 ... _1.00); 11pt_avg is their mean.
RECALL_LEVELS = tuple(range(0, 101, 10))
# Rank-biased precision: the searcher looks at the next result with probability p.
RBP_PERSISTENCES = {"rbp_50": 0.5, "rbp_80": 0.8, "rbp_95": 0.95}


def trec_eval_recall_name(level: int) -> str:
    """trec_eval's name of interpolated precision at recall `level` per cent."""
    return f"iprec_at_recall_{level / 100:.2f}"


def _interpolated_precision(level: int) -> MetricDef:
    recall = f"{level / 100:.1f}"
    return _metric(
        f"iprec_{level}",
        f"IPrec({recall})",
        "binary",
        says=f"Interpolated precision at recall {recall}: the best precision once "
        f"{level} % of the relevant documents are found (trec_eval's "
        f"{trec_eval_recall_name(level)}).",
    )


def _rank_biased_precision(metric: str, persistence: float) -> tuple[MetricDef, MetricDef]:
    p = f"{persistence:g}"
    return (
        _metric(
            metric,
            f"RBP({p})",
            "binary",
            says=f"Rank-biased precision: a searcher goes on to the next result with "
            f"probability {p}; the share of their attention spent on relevant results.",
        ),
        _metric(
            f"{metric}_res",
            f"RBP({p}) residual",
            "binary",
            ranks=False,
            says=f"How much RBP({p}) could still rise if the unjudged results, and those "
            "below the list, were relevant.",
        ),
    )


METRICS: dict[str, MetricDef] = {
    metric.id: metric
    for metric in (
        _metric("precision", "P", "binary", says="Relevant results among the top k."),
        _metric(
            "ap",
            "AP",
            "binary",
            says="Average precision: the mean of the precision at each relevant result.",
        ),
        _metric("rr", "RR", "binary", says="Reciprocal rank: 1 / the rank of the first relevant."),
        _metric("recall", "R", "binary", says="The share of the relevant found in the top k."),
        _metric("f1", "F1", "binary", says="The harmonic mean of precision and recall."),
        _metric(
            "gm_ap",
            "log AP",
            "binary",
            "GMAP",
            geometric=True,
            says="Geometric mean AP (trec_eval's gm_map): a keyword's value is log(AP), AP "
            "at least 0.00001; the evaluation's is exp of their mean, which a keyword near "
            "0 pulls down far more than the mean of AP.",
        ),
        _metric("success", "Success", "binary", says="1 when a relevant result is in the top k."),
        _metric(
            "rprec",
            "Rprec",
            "binary",
            says="R-precision: relevant results in the top R, R the number of relevant.",
        ),
        _metric(
            "bpref",
            "bpref",
            "binary",
            says="How rarely a judged non-relevant result is ranked above a relevant one; "
            "unjudged results count nowhere.",
        ),
        _metric(
            "infap",
            "infAP",
            "binary",
            says="Inferred AP: average precision estimated from a pool judged only in part; "
            "under trec, documents in the pool nobody judged (negative levels) are known "
            "(trec_eval's infAP).",
        ),
        _metric(
            "num_rel",
            "num_rel",
            "binary",
            ranks=False,
            says="The number of relevant documents (R).",
        ),
        _metric(
            "num_ret", "num_ret", "binary", ranks=False, says="The number of results in the top k."
        ),
        _metric("num_rel_ret", "num_rel_ret", "binary", says="The relevant results in the top k."),
        _metric(
            "judged",
            "Judged",
            NATIVE,
            ranks=False,
            says="Coverage: the share of the top k that has a judgement (a grade, or a lead's "
            "decision).",
        ),
        _metric(
            "unjudged",
            "Unjudged",
            NATIVE,
            ranks=False,
            says="The results in the top k that nobody has judged yet.",
        ),
        *(_interpolated_precision(level) for level in RECALL_LEVELS),
        _metric(
            "iprec_avg",
            "11pt-IPrec",
            "binary",
            says="The mean of interpolated precision at recall 0.0, 0.1 ... 1.0 "
            "(trec_eval's 11pt_avg).",
        ),
        *(
            definition
            for metric, persistence in RBP_PERSISTENCES.items()
            for definition in _rank_biased_precision(metric, persistence)
        ),
        _metric("cg", "CG", "graded", says="Cumulative gain: the sum of the grades in the top k."),
        _metric(
            "dcg",
            "DCG",
            "graded",
            says="Discounted cumulative gain: grades divided by log2(rank + 1), summed.",
        ),
        _metric("ndcg", "nDCG", "graded", says="DCG over the DCG of the ideal ranking."),
        _metric(
            "dcg_exp",
            "DCG-exp",
            "graded",
            says="DCG with the gain 2^grade - 1, rewarding the top grades.",
        ),
        _metric("ndcg_exp", "nDCG-exp", "graded", says="nDCG with the gain 2^grade - 1."),
        _metric(
            "err",
            "ERR",
            "graded",
            says="Expected reciprocal rank: where a searcher who stops at a good result stops.",
        ),
        _metric(
            "err_018", "ERR-0.18", "graded", says="ERR with a gentler discount, 1 / rank^0.18."
        ),
        _metric("cg_d", "CG(d)", "detail", says="CG on the detail scale (1 to 10)."),
        _metric("dcg_d", "DCG(d)", "detail", says="DCG on the detail scale."),
        _metric("ndcg_d", "nDCG(d)", "detail", says="nDCG on the detail scale."),
    )
}


# A metric id with this suffix is its base metric on the condensed list: the results
# nobody judged are removed first and the rest move up (Sakai's AP', nDCG'), which keeps
# unjudged results from counting as not relevant. Every rating metric has one.
CONDENSED = "_cond"


def _condensed_twin(metric: MetricDef) -> MetricDef:
    return _metric(
        metric.id + CONDENSED,
        metric.name + "′",
        metric.scale,
        metric.mean_name + "′",
        says=f"{metric.name} on the condensed list: unjudged results removed first.",
        geometric=metric.geometric,
    )


METRICS |= {
    twin.id: twin for twin in (_condensed_twin(m) for m in list(METRICS.values()) if m.ranks)
}


def split_condensed(metric: str) -> tuple[str, bool]:
    """(the base metric, whether on the condensed list): "ndcg_cond" -> ("ndcg", True)."""
    if metric.endswith(CONDENSED):
        return metric[: -len(CONDENSED)], True
    return metric, False


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
    if definition.scale == NATIVE:
        return native
    if native.custom and definition.scale != "binary":
        if split_condensed(metric)[0] in NOT_ON_CUSTOM_SCALES:
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
    """The display label, e.g. ``"AP@10"``, and ``"AP"`` over the whole list; the same for
    one keyword and for a mean over several, but for GMAP (see ``MetricDef``)."""
    definition = get_metric(metric)
    check_cutoff(k)
    name = definition.mean_name if many_keywords else definition.name
    return name if k == WHOLE_LIST else f"{name}@{k}"
