"""What a lead reads about one metric's comparison: p-values and a plain sentence."""

from apps.stats.paired import SIGNIFICANCE, PairedResult


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
