"""The verdict reads the paired comparison only when both sides are judged enough."""

from apps.stats.paired import PairedResult
from apps.tries.verdict import MIN_JUDGED, Verdict, verdict_of


def paired(difference, p, wins, losses, compared=10):
    return PairedResult(
        compared, 0.5, 0.5 + difference, difference, difference - 0.1, difference + 0.1,
        p, True, wins, compared - wins - losses, losses, p_adjusted=p,
    )  # fmt: skip


def test_a_significant_drop_is_worse_and_a_rise_better():
    assert verdict_of(paired(-0.2, 0.01, 0, 10), judged_try=1, judged_baseline=1) == Verdict.WORSE
    assert verdict_of(paired(0.2, 0.01, 10, 0), judged_try=1, judged_baseline=1) == Verdict.BETTER


def test_no_query_moving_is_no_change_and_a_noisy_move_not_significant():
    assert verdict_of(paired(0.0, 1.0, 0, 0), judged_try=1, judged_baseline=1) == Verdict.NO_CHANGE
    noisy = paired(0.01, 0.6, 5, 4)
    assert verdict_of(noisy, judged_try=1, judged_baseline=1) == Verdict.NOT_SIGNIFICANT


def test_too_little_judged_on_either_side_decides_nothing():
    drop = paired(-0.2, 0.01, 0, 10)
    below = MIN_JUDGED - 0.01
    assert verdict_of(drop, judged_try=below, judged_baseline=1) == Verdict.NOT_ENOUGH_JUDGED
    assert verdict_of(drop, judged_try=1, judged_baseline=None) == Verdict.NOT_ENOUGH_JUDGED


def test_without_a_baseline_there_is_no_verdict():
    assert verdict_of(None, judged_try=1, judged_baseline=None) == Verdict.NO_BASELINE
