"""How one keyword's value of one metric was computed, step by step.

The explainer a lead opens from a value: the ranked list with each result's stage-1
value, what the metric reads from it at each rank (relevant or not, the gain, the
discount, the term added), the ideal list a normalised metric divides by, the arithmetic
in a few lines, and the value under the other profile with the reasons the two differ.

The value shown is always the engine's own (score_keyword); the steps are recomputed here
from the same stage-1 values with the same per-rank helpers, so they add up to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .conventions import RBP_PERSISTENCES, SEARCHTWEAK, TREC, WHOLE_LIST, cut, split_condensed
from .decisions import Decisions, with_decisions
from .errors import EngineError
from .formulas import ERR_MAX_GAIN, count_judged, count_relevant, exponential_gain, rank_discount
from .keyword import score_keyword, snapshot_values_on
from .metrics import (
    GainSteps,
    RelevanceSteps,
    Steps,
    StopSteps,
    get_metric,
    metric_label,
    metric_scale,
)
from .pool import take_out_unjudged_levels
from .scales import Scale, get_scale
from .transformers import resolve_rules


@dataclass(frozen=True)
class RankStep:
    """One rank of the list the metric reads (the top k)."""

    rank: int
    position: int  # the result's position in the keyword's list (differs when condensed)
    value: float | None  # stage 1 on the metric's scale; None: unjudged or a tie
    relevant: bool | None = None  # binary metrics
    gain: float | None = None  # graded metrics
    discount: float | None = None  # what the gain or the term is divided by
    term: float | None = None  # what this rank adds
    running: float | None = None  # the sum so far


@dataclass(frozen=True)
class Explanation:
    metric: str
    k: int
    profile: str
    label: str
    description: str
    value: float | None
    steps: list[RankStep]
    ideal: list[RankStep] = field(default_factory=list)
    arithmetic: list[str] = field(default_factory=list)
    other_profile: str = ""
    other_value: float | None = None
    differences: list[str] = field(default_factory=list)
    binary: bool = True  # read as relevant or not (else as gains)
    removed: int = 0  # unjudged results a condensed metric removed
    unretrieved: list[float] = field(default_factory=list)


def explain_keyword(
    snapshot_grades: Sequence[Sequence[int | None]],
    *,
    scale: str | Scale,
    metric: str,
    k: int,
    profile: str,
    rules: Mapping[str, Mapping[int, int]] | None = None,
    decisions: Decisions | None = None,
    unretrieved: Sequence[int] = (),
    zero_without_results: bool = False,
) -> Explanation:
    """Explain ``metric`` at ``k`` for one keyword, from what score_keyword takes."""

    def scored(under: str) -> float | None:
        score = score_keyword(
            snapshot_grades,
            scale=scale,
            metrics=[(metric, k)],
            profile=under,
            rules=rules,
            decisions=decisions,
            unretrieved=unretrieved,
            zero_without_results=zero_without_results,
        )
        return score.metrics[(metric, k)]

    definition = get_metric(metric)  # an unknown metric is an EngineError here
    other = TREC if profile == SEARCHTWEAK else SEARCHTWEAK
    native = get_scale(scale)
    base, condensed = split_condensed(metric)
    target = metric_scale(metric, native)
    resolved = resolve_rules(native, rules)
    # Under trec a negative level is a document of the pool nobody judged (pool.py).
    pooled = take_out_unjudged_levels(
        with_decisions(snapshot_grades, decisions, native), unretrieved, native, profile
    )
    graded, unretrieved = pooled.snapshot_grades, pooled.unretrieved
    native_values = snapshot_values_on(
        graded, source=native.name, target=native.name, mapping=resolved[native.name]
    )
    values = snapshot_values_on(
        graded, source=native.name, target=target.name, mapping=resolved[target.name]
    )
    positions = list(range(1, len(values) + 1))
    removed = 0
    if condensed:
        kept = [i for i, native_value in enumerate(native_values) if native_value is not None]
        removed = len(values) - len(kept)
        values = [values[i] for i in kept]
        positions = [positions[i] for i in kept]
    elsewhere = [float(resolved[target.name][grade]) for grade in unretrieved]
    steps, ideal, arithmetic = _steps(
        definition.steps, base, k, values, positions, elsewhere, profile
    )
    return Explanation(
        metric=metric,
        k=k,
        profile=profile,
        label=metric_label(metric, k),
        description=definition.description,
        value=scored(profile),
        steps=steps,
        ideal=ideal,
        arithmetic=arithmetic,
        other_profile=other,
        other_value=scored(other),
        differences=_differences(
            definition.steps, base, k, values, elsewhere, binary=target.name == "binary"
        ),
        binary=target.name == "binary",
        removed=removed,
        unretrieved=elsewhere,
    )


# --- per metric family: the definition's steps say which ---------------------------


def _steps(
    kind: Steps,
    metric: str,
    k: int,
    values: list[float | None],
    positions: list[int],
    elsewhere: list[float],
    profile: str,
) -> tuple[list[RankStep], list[RankStep], list[str]]:
    top = list(cut(values, k))
    pool = [*values, *elsewhere] if profile == TREC else values
    if isinstance(kind, GainSteps):
        return _graded_steps(kind, k, top, positions, pool, profile)
    if isinstance(kind, StopSteps):
        return _err_steps(kind, top, positions), [], []
    if isinstance(kind, RelevanceSteps):
        return (
            _binary_steps(kind, top, positions),
            [],
            _binary_arithmetic(metric, k, top, pool, profile),
        )
    raise EngineError(f"{metric!r} has no steps the explainer knows: {kind!r}")


def _binary_steps(
    kind: RelevanceSteps, top: list[float | None], positions: list[int]
) -> list[RankStep]:
    steps = []
    found = 0
    running = 0.0
    for rank, value in enumerate(top, start=1):
        relevant = None if value is None else value == 1
        term = None
        if relevant:
            found += 1
            if kind.term is not None:
                term = kind.term(rank, found)
        if term is not None:
            running += term
        steps.append(
            RankStep(
                rank,
                positions[rank - 1],
                value,
                relevant=relevant,
                term=term,
                # A metric that adds a term at some ranks shows its sum at every rank.
                running=running if kind.term is not None else None,
            )
        )
    return steps


def _binary_arithmetic(
    metric: str, k: int, top: list[float | None], pool: list, profile: str
) -> list[str]:
    relevant_top = count_relevant(top)
    relevant_all = count_relevant(pool)
    judged_top = count_judged(top)
    where = (
        "the pool (results and judged documents not retrieved)"
        if profile == TREC
        else ("the results")
    )
    lines = [
        f"Relevant in the top {len(top)}: {relevant_top}; judged there: {judged_top}.",
        f"Relevant documents R in {where}: {relevant_all}.",
    ]
    if metric == "precision":
        divisor = (len(top) if k == WHOLE_LIST else k) if profile == TREC else judged_top
        lines.append(f"P = {relevant_top} / {divisor}.")
    elif metric in ("ap", "gm_ap"):
        divisor = relevant_all if profile == TREC else relevant_top
        lines.append(
            f"AP = the sum of the precisions at the relevant results / {divisor} "
            f"({'R' if profile == TREC else 'the relevant results in the top k'})."
        )
        if metric == "gm_ap":
            lines.append("The keyword's value is log(max(AP, 0.00001)); GMAP is exp of their mean.")
    elif metric == "infap":
        lines.append(
            f"infAP = the sum of the precisions inferred at the relevant results / "
            f"{relevant_all} (R); above each, the judged share of the pool stands for the "
            "documents of the pool nobody judged."
        )
    elif metric == "recall":
        lines.append(f"R@k = {relevant_top} / {relevant_all}.")
    elif metric in RBP_PERSISTENCES:
        lines.append(
            "RBP = the sum of (1 - p) p^(rank - 1) at the relevant ranks, "
            f"p = {RBP_PERSISTENCES[metric]}."
        )
    return lines


def _graded_steps(
    kind: GainSteps,
    k: int,
    top: list[float | None],
    positions: list[int],
    pool: list[float | None],
    profile: str,
) -> tuple[list[RankStep], list[RankStep], list[str]]:
    gain_of = kind.gain
    discounted = kind.discounted
    normalised = kind.normalised
    positive = normalised and profile == TREC  # trec_eval adds no gain below 0

    def gain(value: float | None) -> float:
        g = gain_of(value)
        return max(g, 0.0) if positive else g

    steps, total = _discounted(
        [gain(value) for value in top], discounted, positions=positions, values=top
    )
    arithmetic = [f"{'DCG' if discounted else 'CG'} = {total:.4f}"]
    ideal: list[RankStep] = []
    if normalised:
        source = pool if profile == TREC else top
        ideal_gains = sorted(
            (gain(v) for v in source if v is not None or profile != TREC), reverse=True
        )
        ideal_gains = list(cut(ideal_gains, k))
        ideal, ideal_total = _discounted(ideal_gains, True)
        arithmetic.append(f"ideal DCG = {ideal_total:.4f}")
        arithmetic.append(
            f"nDCG = {total:.4f} / {ideal_total:.4f}"
            if ideal_total
            else "nDCG = 0 (the ideal list gains nothing)"
        )
    return steps, ideal, arithmetic


def _discounted(
    gains: list[float],
    discounted: bool,
    *,
    positions: list[int] | None = None,
    values: list[float | None] | None = None,
) -> tuple[list[RankStep], float]:
    steps = []
    total = 0.0
    for rank, gain in enumerate(gains, start=1):
        discount = rank_discount(rank) if discounted else 1.0
        term = gain / discount
        total += term
        steps.append(
            RankStep(
                rank,
                positions[rank - 1] if positions else rank,
                values[rank - 1] if values else gain,
                gain=gain,
                discount=discount,
                term=term,
                running=total,
            )
        )
    return steps, total


def _err_steps(kind: StopSteps, top: list[float | None], positions: list[int]) -> list[RankStep]:
    factor = kind.rank_factor
    steps = []
    total = 0.0
    trust = 1.0
    for rank, value in enumerate(top, start=1):
        stop = exponential_gain(value) / ERR_MAX_GAIN
        term = trust * stop / factor(rank)
        total += term
        steps.append(
            RankStep(
                rank,
                positions[rank - 1],
                value,
                gain=stop,
                discount=factor(rank),
                term=term,
                running=total,
            )
        )
        trust *= 1.0 - stop
    return steps


# --- the other profile -----------------------------------------------------------------


def _differences(
    kind: Steps,
    metric: str,
    k: int,
    values: list[float | None],
    elsewhere: list[float],
    *,
    binary: bool,
) -> list[str]:
    """Why the other profile may give another value, each reason only where it applies."""
    top = list(cut(values, k))
    reasons = []
    unjudged = len(top) - count_judged(top)
    if unjudged and metric in ("precision", "f1"):
        reasons.append(
            f"{unjudged} result{'s' if unjudged != 1 else ''} of the top k "
            f"{'is' if unjudged == 1 else 'are'} unjudged: searchtweak's P leaves them out "
            "of the divisor, trec's counts them as not relevant."
        )
    if not any(value is not None for value in top) and any(v is not None for v in values):
        reasons.append(
            "Nothing in the top k is judged: searchtweak has no value yet; trec scores it "
            "from the judgements below."
        )
    if metric == "precision" and k != WHOLE_LIST and len(top) < k:
        reasons.append(
            f"The list has {len(top)} results, fewer than k = {k}: trec's P@{k} divides by "
            f"{k}, searchtweak's by the judged results."
        )
    if elsewhere:
        if binary:
            what = f"{sum(1 for value in elsewhere if value == 1)} relevant"
        else:
            what = "graded " + ", ".join(f"{value:g}" for value in elsewhere)
        reasons.append(
            f"{len(elsewhere)} judged document{'s' if len(elsewhere) != 1 else ''} the "
            f"search did not return ({what}): trec counts them in R and in the ideal list, "
            "searchtweak knows only the results."
        )
    if metric in ("ap", "gm_ap") and count_relevant(values) > count_relevant(top):
        reasons.append(
            "Relevant results below the cutoff: trec's AP divides by every relevant "
            "document, searchtweak's by the relevant results in the top k."
        )
    if isinstance(kind, GainSteps) and kind.normalised:
        reasons.append(
            "searchtweak's ideal list is the top k sorted; trec's is every judged document "
            "sorted (below the cutoff and not retrieved too), cut at k."
        )
    divides_by_r = isinstance(kind, RelevanceSteps) and kind.undefined_without_relevant
    if divides_by_r and not count_relevant([*values, *elsewhere]):
        reasons.append("Nothing is relevant: searchtweak calls it undefined, trec reports 0.")
    return reasons
