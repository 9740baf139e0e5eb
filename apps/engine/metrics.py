"""The metric registry (metrics.md section 4): one definition per metric, and nothing
about a metric anywhere else.

A ``MetricDef`` carries everything the engine and the app know of a metric: its label,
its family (the scale it is defined on), both formulas (one keyword in ``formulas.py``,
many keywords in ``batch_formulas.py``), how the explainer shows its steps, whether it
is a sum of one share per result (``shares.py``, for decisive.py) and trec_eval's names
for it. Every other table of metrics (decisive's additive metrics, the trec_eval names,
the explainer's families, the coverage measures) is read from ``METRICS``; an id that
is not in it is an EngineError wherever it is used.

Adding a metric is one ``_metric(...)`` entry below, with its formulas written in
``formulas.py`` and ``batch_formulas.py``; ``test_metric_registry`` checks that every
definition has every part.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from . import batch_formulas as batch
from . import formulas
from .batch_formulas import BatchFormula
from .conventions import (
    CONDENSED,
    NATIVE,
    RBP_PERSISTENCES,
    RECALL_LEVELS,
    WHOLE_LIST,
    check_cutoff,
    split_condensed,
    trec_eval_recall_name,
)
from .errors import EngineError
from .formulas import Formula, ReadsUnjudgedPool, exponential_gain, linear_gain
from .scales import Scale, get_scale
from .shares import (
    Additive,
    Gain,
    discounted_weight,
    flat_weight,
    per_cutoff_weight,
    rank_biased_weight,
    relevant_gain,
)

# --- the parts of a definition -------------------------------------------------------


@dataclass(frozen=True)
class RelevanceSteps:
    """The explainer reads each rank as relevant or not. ``term``: what a relevant rank
    adds to a running sum, from its rank and the relevant results so far including it
    (None: the metric is no such sum); ``undefined_without_relevant``: searchtweak has no
    value when nothing is relevant, where trec_eval reports 0."""

    term: Callable[[int, int], float | None] | None = None
    undefined_without_relevant: bool = False


@dataclass(frozen=True)
class GainSteps:
    """The explainer reads each rank's gain, divided by its discount when ``discounted``,
    and for a ``normalised`` metric the ideal list's too."""

    gain: Gain
    discounted: bool = True
    normalised: bool = False


@dataclass(frozen=True)
class StopSteps:
    """The explainer reads each rank as where a searcher may stop (ERR): the chance to
    stop there, over the rank's ``rank_factor``."""

    rank_factor: Callable[[int], float]


Steps = RelevanceSteps | GainSteps | StopSteps


@dataclass(frozen=True)
class TrecEvalNames:
    """trec_eval's line names of a metric whose value it reproduces under the trec
    profile: at a cutoff (``"P_{k}"``) and over the whole list (``"set_P"``); None where
    trec_eval has no such measure."""

    at_cutoff: str | None = None
    whole_list: str | None = None


NO_TREC_EVAL = TrecEvalNames()


@dataclass(frozen=True)
class MetricDef:
    """One metric: ``name`` is its label ("AP"), for one keyword and for the mean over
    several alike, so that a metric reads the same on every page; ``mean_name`` differs
    only where the evaluation's number is another quantity than its keywords' (a
    keyword's "log AP" makes the evaluation's "GMAP"); ``scale`` is its family, the scale
    it is defined on (binary, graded, detail, or the evaluation's own for coverage);
    ``description`` is its one-line definition, shown where metrics are chosen
    (docs/metrics.md has the conventions). ``ranks`` is false for a measure that
    describes a list rather than rates it (a count, RBP's residual): a comparison says it
    differs, never that it is better or worse."""

    id: str
    name: str
    scale: str
    mean_name: str
    formula: Formula | ReadsUnjudgedPool = field(compare=False)
    batch_formula: BatchFormula = field(compare=False)
    steps: Steps = field(compare=False)
    # A sum of one share per result (decisive.py bounds it exactly), or None.
    additive: Additive | None = field(default=None, compare=False)
    trec_eval: TrecEvalNames = field(default=NO_TREC_EVAL, compare=False)
    description: str = field(default="", compare=False)
    ranks: bool = field(default=True, compare=False)
    # How keyword values make the evaluation's value: their mean, or exp of their mean
    # for a metric whose keyword values are logarithms (GMAP).
    geometric: bool = field(default=False, compare=False)

    @property
    def coverage(self) -> bool:
        """A measure of the judgements rather than of the ranking: it reads the nulls
        themselves, never skips them."""
        return self.scale == NATIVE


def _metric(
    id: str,
    name: str,
    scale: str,
    mean_name: str | None = None,
    *,
    formula: Formula | ReadsUnjudgedPool,
    batch_formula: BatchFormula,
    steps: Steps,
    additive: Additive | None = None,
    trec_eval: TrecEvalNames = NO_TREC_EVAL,
    says: str,
    ranks: bool = True,
    geometric: bool = False,
) -> MetricDef:
    return MetricDef(
        id=id,
        name=name,
        scale=scale,
        mean_name=mean_name or name,
        formula=formula,
        batch_formula=batch_formula,
        steps=steps,
        additive=additive,
        trec_eval=trec_eval,
        description=says,
        ranks=ranks,
        geometric=geometric,
    )


# --- what the explainer adds at a relevant rank ----------------------------------------


def _precision_here(rank: int, found: int) -> float:
    """AP's term: the precision at this relevant result."""
    return found / rank


def _first_relevant(rank: int, found: int) -> float | None:
    """RR's term: 1 / rank at the first relevant result, nothing after it."""
    return 1 / rank if found == 1 else None


def _rbp_term(persistence: float) -> Callable[[int, int], float]:
    return lambda rank, found: formulas.rbp_weight(rank, persistence)


# The binary metrics that divide by R: searchtweak has no value without a relevant one.
_DIVIDES_BY_R = RelevanceSteps(undefined_without_relevant=True)

# --- the families built from a parameter -----------------------------------------------


def _interpolated_precision(level: int) -> MetricDef:
    recall = f"{level / 100:.1f}"
    return _metric(
        f"iprec_{level}",
        f"IPrec({recall})",
        "binary",
        formula=formulas.interpolated_precision_at(level),
        batch_formula=batch.interpolated_precision_at(level),
        steps=_DIVIDES_BY_R,
        trec_eval=TrecEvalNames(whole_list=trec_eval_recall_name(level)),
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
            formula=formulas.rank_biased_precision(persistence),
            batch_formula=batch.rank_biased_precision(persistence),
            steps=RelevanceSteps(term=_rbp_term(persistence)),
            additive=Additive(relevant_gain, rank_biased_weight(persistence)),
            says=f"Rank-biased precision: a searcher goes on to the next result with "
            f"probability {p}; the share of their attention spent on relevant results.",
        ),
        _metric(
            f"{metric}_res",
            f"RBP({p}) residual",
            "binary",
            formula=formulas.rbp_residual(persistence),
            batch_formula=batch.rbp_residual(persistence),
            steps=RelevanceSteps(),
            ranks=False,
            says=f"How much RBP({p}) could still rise if the unjudged results, and those "
            "below the list, were relevant.",
        ),
    )


# --- the registry -----------------------------------------------------------------------

METRICS: dict[str, MetricDef] = {
    metric.id: metric
    for metric in (
        _metric(
            "precision",
            "P",
            "binary",
            formula=formulas.precision,
            batch_formula=batch.precision,
            steps=RelevanceSteps(),
            additive=Additive(relevant_gain, per_cutoff_weight, trec_only=True),
            trec_eval=TrecEvalNames("P_{k}", "set_P"),
            says="Relevant results among the top k.",
        ),
        _metric(
            "ap",
            "AP",
            "binary",
            formula=formulas.average_precision,
            batch_formula=batch.average_precision,
            steps=RelevanceSteps(term=_precision_here),
            trec_eval=TrecEvalNames("map_cut_{k}", "map"),
            says="Average precision: the mean of the precision at each relevant result.",
        ),
        _metric(
            "rr",
            "RR",
            "binary",
            formula=formulas.reciprocal_rank,
            batch_formula=batch.reciprocal_rank,
            steps=RelevanceSteps(term=_first_relevant),
            trec_eval=TrecEvalNames(whole_list="recip_rank"),
            says="Reciprocal rank: 1 / the rank of the first relevant.",
        ),
        _metric(
            "recall",
            "R",
            "binary",
            formula=formulas.recall,
            batch_formula=batch.recall,
            steps=_DIVIDES_BY_R,
            trec_eval=TrecEvalNames("recall_{k}", "set_recall"),
            says="The share of the relevant found in the top k.",
        ),
        _metric(
            "f1",
            "F1",
            "binary",
            formula=formulas.f1,
            batch_formula=batch.f1,
            steps=_DIVIDES_BY_R,
            trec_eval=TrecEvalNames(whole_list="set_F"),
            says="The harmonic mean of precision and recall.",
        ),
        _metric(
            "gm_ap",
            "log AP",
            "binary",
            "GMAP",
            formula=formulas.log_average_precision,
            batch_formula=batch.log_average_precision,
            steps=RelevanceSteps(term=_precision_here),
            trec_eval=TrecEvalNames(whole_list="gm_map"),
            geometric=True,
            says="Geometric mean AP (trec_eval's gm_map): a keyword's value is log(AP), AP "
            "at least 0.00001; the evaluation's is exp of their mean, which a keyword near "
            "0 pulls down far more than the mean of AP.",
        ),
        _metric(
            "success",
            "Success",
            "binary",
            formula=formulas.success,
            batch_formula=batch.success,
            steps=RelevanceSteps(),
            trec_eval=TrecEvalNames(at_cutoff="success_{k}"),
            says="1 when a relevant result is in the top k.",
        ),
        _metric(
            "rprec",
            "Rprec",
            "binary",
            formula=formulas.r_precision,
            batch_formula=batch.r_precision,
            steps=_DIVIDES_BY_R,
            trec_eval=TrecEvalNames(whole_list="Rprec"),
            says="R-precision: relevant results in the top R, R the number of relevant.",
        ),
        _metric(
            "bpref",
            "bpref",
            "binary",
            formula=formulas.bpref,
            batch_formula=batch.bpref,
            steps=_DIVIDES_BY_R,
            trec_eval=TrecEvalNames(whole_list="bpref"),
            says="How rarely a judged non-relevant result is ranked above a relevant one; "
            "unjudged results count nowhere.",
        ),
        _metric(
            "infap",
            "infAP",
            "binary",
            formula=ReadsUnjudgedPool(formulas.inferred_average_precision),
            batch_formula=batch.inferred_average_precision,
            steps=_DIVIDES_BY_R,
            trec_eval=TrecEvalNames(whole_list="infAP"),
            says="Inferred AP: average precision estimated from a pool judged only in part; "
            "under trec, documents in the pool nobody judged (negative levels) are known "
            "(trec_eval's infAP).",
        ),
        _metric(
            "num_rel",
            "num_rel",
            "binary",
            formula=formulas.relevant_count,
            batch_formula=batch.relevant_count,
            steps=RelevanceSteps(),
            trec_eval=TrecEvalNames(whole_list="num_rel"),
            ranks=False,
            says="The number of relevant documents (R).",
        ),
        _metric(
            "num_ret",
            "num_ret",
            "binary",
            formula=formulas.retrieved_count,
            batch_formula=batch.retrieved_count,
            steps=RelevanceSteps(),
            trec_eval=TrecEvalNames(whole_list="num_ret"),
            ranks=False,
            says="The number of results in the top k.",
        ),
        _metric(
            "num_rel_ret",
            "num_rel_ret",
            "binary",
            formula=formulas.relevant_retrieved_count,
            batch_formula=batch.relevant_retrieved_count,
            steps=RelevanceSteps(),
            additive=Additive(relevant_gain, flat_weight),
            trec_eval=TrecEvalNames(whole_list="num_rel_ret"),
            says="The relevant results in the top k.",
        ),
        _metric(
            "judged",
            "Judged",
            NATIVE,
            formula=formulas.judged_share,
            batch_formula=batch.judged_share,
            steps=RelevanceSteps(),
            ranks=False,
            says="Coverage: the share of the top k that has a judgement (a grade, or a lead's "
            "decision).",
        ),
        _metric(
            "unjudged",
            "Unjudged",
            NATIVE,
            formula=formulas.unjudged_count,
            batch_formula=batch.unjudged_count,
            steps=RelevanceSteps(),
            ranks=False,
            says="The results in the top k that nobody has judged yet.",
        ),
        *(_interpolated_precision(level) for level in RECALL_LEVELS),
        _metric(
            "iprec_avg",
            "11pt-IPrec",
            "binary",
            formula=formulas.eleven_point_average,
            batch_formula=batch.eleven_point_average,
            steps=_DIVIDES_BY_R,
            trec_eval=TrecEvalNames(whole_list="11pt_avg"),
            says="The mean of interpolated precision at recall 0.0, 0.1 ... 1.0 "
            "(trec_eval's 11pt_avg).",
        ),
        *(
            definition
            for metric, persistence in RBP_PERSISTENCES.items()
            for definition in _rank_biased_precision(metric, persistence)
        ),
        _metric(
            "cg",
            "CG",
            "graded",
            formula=formulas.cumulative_gain,
            batch_formula=batch.cumulative_gain,
            steps=GainSteps(linear_gain, discounted=False),
            additive=Additive(linear_gain, flat_weight),
            says="Cumulative gain: the sum of the grades in the top k.",
        ),
        _metric(
            "dcg",
            "DCG",
            "graded",
            formula=formulas.dcg,
            batch_formula=batch.dcg,
            steps=GainSteps(linear_gain),
            additive=Additive(linear_gain, discounted_weight),
            says="Discounted cumulative gain: grades divided by log2(rank + 1), summed.",
        ),
        _metric(
            "ndcg",
            "nDCG",
            "graded",
            formula=formulas.ndcg,
            batch_formula=batch.ndcg,
            steps=GainSteps(linear_gain, normalised=True),
            trec_eval=TrecEvalNames("ndcg_cut_{k}", "ndcg"),
            says="DCG over the DCG of the ideal ranking.",
        ),
        _metric(
            "dcg_exp",
            "DCG-exp",
            "graded",
            formula=formulas.dcg_exp,
            batch_formula=batch.dcg_exp,
            steps=GainSteps(exponential_gain),
            additive=Additive(exponential_gain, discounted_weight),
            says="DCG with the gain 2^grade - 1, rewarding the top grades.",
        ),
        _metric(
            "ndcg_exp",
            "nDCG-exp",
            "graded",
            formula=formulas.ndcg_exp,
            batch_formula=batch.ndcg_exp,
            steps=GainSteps(exponential_gain, normalised=True),
            says="nDCG with the gain 2^grade - 1.",
        ),
        _metric(
            "err",
            "ERR",
            "graded",
            formula=formulas.err,
            batch_formula=batch.err,
            steps=StopSteps(float),
            says="Expected reciprocal rank: where a searcher who stops at a good result stops.",
        ),
        _metric(
            "err_018",
            "ERR-0.18",
            "graded",
            formula=formulas.err_018,
            batch_formula=batch.err_018,
            steps=StopSteps(formulas.err_018_rank_factor),
            says="ERR with a gentler discount, 1 / rank^0.18.",
        ),
        # The detail metrics are the graded formulas applied to detail values.
        _metric(
            "cg_d",
            "CG(d)",
            "detail",
            formula=formulas.cumulative_gain,
            batch_formula=batch.cumulative_gain,
            steps=GainSteps(linear_gain, discounted=False),
            additive=Additive(linear_gain, flat_weight),
            says="CG on the detail scale (1 to 10).",
        ),
        _metric(
            "dcg_d",
            "DCG(d)",
            "detail",
            formula=formulas.dcg,
            batch_formula=batch.dcg,
            steps=GainSteps(linear_gain),
            additive=Additive(linear_gain, discounted_weight),
            says="DCG on the detail scale.",
        ),
        _metric(
            "ndcg_d",
            "nDCG(d)",
            "detail",
            formula=formulas.ndcg,
            batch_formula=batch.ndcg,
            steps=GainSteps(linear_gain, normalised=True),
            says="nDCG on the detail scale.",
        ),
    )
}


def _condensed_twin(metric: MetricDef) -> MetricDef:
    """The metric on the condensed list (conventions.CONDENSED): the same formulas and
    steps on fewer results; no longer a sum of per-result shares, nor trec_eval's."""
    return _metric(
        metric.id + CONDENSED,
        metric.name + "′",
        metric.scale,
        metric.mean_name + "′",
        formula=metric.formula,
        batch_formula=metric.batch_formula,
        steps=metric.steps,
        says=f"{metric.name} on the condensed list: unjudged results removed first.",
        geometric=metric.geometric,
    )


METRICS |= {
    twin.id: twin for twin in (_condensed_twin(m) for m in list(METRICS.values()) if m.ranks)
}


def get_metric(metric: str) -> MetricDef:
    """The metric with id ``metric``; EngineError if there is none."""
    try:
        return METRICS[metric]
    except (KeyError, TypeError):
        raise EngineError(
            f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}"
        ) from None


# --- tables read from the registry -------------------------------------------------------

# Measures of the judgements rather than of the ranking: they read nulls, never skip them.
COVERAGE = tuple(metric.id for metric in METRICS.values() if metric.coverage)

# ERR reads a grade as a probability out of the graded scale's top grade (3); a custom
# scale's levels are no such probability, so ERR is not offered on one.
NOT_ON_CUSTOM_SCALES = tuple(
    metric.id
    for metric in METRICS.values()
    if isinstance(metric.steps, StopSteps) and not split_condensed(metric.id)[1]
)


def trec_eval_metrics() -> list[MetricDef]:
    """The metrics trec_eval has a measure of, in the registry's order."""
    return [metric for metric in METRICS.values() if metric.trec_eval != NO_TREC_EVAL]


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


def metric_label(metric: str, k: int, many_keywords: bool = False) -> str:
    """The display label, e.g. ``"AP@10"``, and ``"AP"`` over the whole list; the same for
    one keyword and for a mean over several, but for GMAP (see ``MetricDef``)."""
    definition = get_metric(metric)
    check_cutoff(k)
    name = definition.mean_name if many_keywords else definition.name
    return name if k == WHOLE_LIST else f"{name}@{k}"
