"""The note Compare adds when its interval and its test disagree on a metric."""

from apps.insights.comparison.wording import methods_disagree
from apps.stats.paired import PairedResult


def result(ci: tuple[float, float], p: float, p_adjusted: float | None = None) -> PairedResult:
    return PairedResult(
        compared=5,
        baseline_mean=0.5,
        candidate_mean=0.6,
        difference=0.1,
        ci_low=ci[0],
        ci_high=ci[1],
        p_value=p,
        exact=True,
        wins=5,
        ties=0,
        losses=0,
        p_adjusted=p if p_adjusted is None else p_adjusted,
    )


def test_an_interval_that_leaves_out_0_with_a_p_above_the_line_is_explained():
    note = methods_disagree(result((0.02, 0.18), 0.0625, 0.125))
    assert note.startswith(
        "The 95% interval leaves out 0, yet the Holm-adjusted p = 0.125 is not below 0.05. "
    )
    assert note.endswith("the verdict follows the p-value.")


def test_an_interval_that_includes_0_with_a_p_below_the_line_is_explained():
    note = methods_disagree(result((-0.01, 0.2), 0.03))
    assert note.startswith("The 95% interval includes 0, yet p = 0.030 is below 0.05. ")


def test_gmap_speaks_of_a_ratio_of_1():
    note = methods_disagree(result((0.01, 0.3), 0.2), geometric=True)
    assert note.startswith("The 95% interval leaves out ×1 (no change), yet p = 0.200")


def test_agreeing_methods_need_no_note():
    assert methods_disagree(result((0.02, 0.18), 0.001)) == ""
    assert methods_disagree(result((-0.02, 0.18), 0.4)) == ""
    assert methods_disagree(result((0.0, 0.18), 0.4)) == ""  # touching 0 is not leaving it out
