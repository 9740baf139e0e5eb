"""What a lead reads about one metric's comparison: p-values and a plain sentence."""

from apps import engine
from apps.stats.paired import CONFIDENCE, SIGNIFICANCE, PairedResult

from ..coverage import Coverage, uneven


def p_text(p_value: float | None) -> str:
    """'p = 0.003', or 'p < 0.001' below what three decimals can show; '' without one."""
    if p_value is None:
        return ""
    if p_value < 0.001:
        return "p < 0.001"
    return f"p = {p_value:.3f}"


def p_texts(result: PairedResult) -> str:
    """The p-value, and the Holm-adjusted one when adjusting changed how it reads."""
    shown, adjusted = p_text(result.p_value), p_text(result.p_adjusted)
    return shown if adjusted in ("", shown) else f"{shown}, Holm-adjusted {adjusted}"


def verdict(
    *, baseline: str, candidate: str, label: str, result: PairedResult, ranks: bool = True
) -> str:
    """'B is better than A on nDCG@10 (p = 0.003)', or that no difference was found.
    A measure that does not rate a ranking (``ranks`` false: a count, a residual) is only
    ever higher or lower: 'B is higher than A on num_ret (p = 0.003)'."""
    if result.compared == 0:
        return f"No keyword has a {label} value in both {candidate} and {baseline}."
    if result.significant and result.difference is not None and result.difference != 0:
        if ranks:
            direction = "better" if result.difference > 0 else "worse"
        else:
            direction = "higher" if result.difference > 0 else "lower"
        return f"{candidate} is {direction} than {baseline} on {label} ({p_texts(result)})"
    return (
        f"No significant difference between {candidate} and {baseline} on {label} "
        f"({p_texts(result)}, significance at p < {SIGNIFICANCE})"
    )


def methods_disagree(result: PairedResult, *, geometric: bool = False) -> str:
    """Why the interval and the test part, when they do: the interval leaves out no
    change but the test finds no significant difference, or the other way round ('' when
    they agree). They are two methods, and the verdict follows the test."""
    if result.ci_low is None or result.ci_high is None or result.p_adjusted is None:
        return ""
    leaves_out = result.ci_low > 0 or result.ci_high < 0
    if leaves_out == result.significant:
        return ""
    no_change = "×1 (no change)" if geometric else "0"
    p = p_text(result.p_adjusted)
    if result.p_adjusted != result.p_value:
        p = f"the Holm-adjusted {p}"
    if leaves_out:
        parting = f"leaves out {no_change}, yet {p} is not below {SIGNIFICANCE}"
    else:
        parting = f"includes {no_change}, yet {p} is below {SIGNIFICANCE}"
    return (
        f"The {CONFIDENCE * 100:.0f}% interval {parting}. They are two methods: the "
        "interval resamples the keywords (a bootstrap, not adjusted for the other metrics "
        "compared), the test gives each keyword's difference a random sign; with few "
        "keywords, or near the line, they can part, and the verdict follows the p-value."
    )


def coverage_warning(
    metric: str,
    k: int,
    baseline: tuple[str, Coverage | None],
    candidate: tuple[str, Coverage | None],
    *,
    many_keywords: bool = True,
) -> str:
    """What a lead must know when two evaluations' top k are judged unevenly: the less
    judged one is held down on this metric by results nobody judged ('' when even, and
    for a condensed metric or a coverage measure, which unjudged results do not hold down).
    """
    (baseline_name, baseline_coverage), (candidate_name, candidate_coverage) = baseline, candidate
    base, condensed = engine.split_condensed(metric)
    if condensed or base in engine.COVERAGE or not engine.get_metric(metric).ranks:
        return ""
    if baseline_coverage is None or candidate_coverage is None:
        return ""
    if not uneven(baseline_coverage, candidate_coverage):
        return ""
    shares = f"{_judged_at(k)} is {_percent(baseline_coverage.judged)} for {baseline_name}"
    shares += f" and {_percent(candidate_coverage.judged)} for {candidate_name}"
    less_name, less = (
        (candidate_name, candidate_coverage)
        if (candidate_coverage.judged or 0) < (baseline_coverage.judged or 0)
        else (baseline_name, baseline_coverage)
    )
    label = engine.metric_label(metric, k, many_keywords=many_keywords)
    twin = engine.metric_label(base + engine.CONDENSED, k, many_keywords=many_keywords)
    return (
        f"Coverage differs: {shares}. A metric counts an unjudged result as not relevant, "
        f"so {less_name}'s {label} is held down by its {less.unjudged} unjudged "
        f"result{'s' if less.unjudged != 1 else ''}. Judge them, or compare {twin} "
        f"({base}{engine.CONDENSED}{'' if k == engine.WHOLE_LIST else f'@{k}'}), "
        "which leaves them out."
    )


def _judged_at(k: int) -> str:
    return "judged" if k == engine.WHOLE_LIST else f"judged@{k}"


def _percent(share: float | None) -> str:
    return "–" if share is None else f"{share * 100:.1f} %"
