"""The pure parts of the lead's pages: which evaluation a change is measured against, and
what a chart draws. Plain values in, plain values out."""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from apps.insights.charts import chart, thin, wall_clock_ms
from apps.insights.reference import EvaluationKey, change, previous_finished, reference_for


def at(day: int) -> datetime:
    return datetime(2026, 3, day, 12, 0, tzinfo=UTC)


MODEL = 7
FINISHED = [
    EvaluationKey(1, MODEL, at(1)),
    EvaluationKey(2, MODEL, at(3)),
    EvaluationKey(3, MODEL, at(5)),
    EvaluationKey(4, 8, at(6)),  # another model
]


def test_a_running_evaluation_is_compared_with_its_models_last_finished_one():
    running = EvaluationKey(10, MODEL, None)

    assert previous_finished(running, FINISHED) == 3


def test_a_finished_evaluation_is_compared_with_the_one_that_finished_before_it():
    assert previous_finished(EvaluationKey(2, MODEL, at(3)), FINISHED) == 1
    assert previous_finished(EvaluationKey(3, MODEL, at(5)), FINISHED) == 2


def test_the_models_first_finished_evaluation_has_no_previous_one():
    assert previous_finished(EvaluationKey(1, MODEL, at(1)), FINISHED) is None


def test_evaluations_finished_in_the_same_instant_are_ordered_by_id():
    same_time = [EvaluationKey(5, MODEL, at(2)), EvaluationKey(6, MODEL, at(2))]

    assert previous_finished(EvaluationKey(6, MODEL, at(2)), same_time) == 5
    assert previous_finished(EvaluationKey(5, MODEL, at(2)), same_time) is None


def test_an_evaluation_without_a_model_has_no_previous_one():
    unmodelled = [EvaluationKey(1, None, at(1))]

    assert previous_finished(EvaluationKey(2, None, None), unmodelled) is None


def test_the_reference_is_the_previous_one_before_the_baseline():
    assert reference_for(EvaluationKey(10, MODEL, None), FINISHED, baseline_id=4) == (
        3,
        "previous",
    )


def test_without_a_previous_one_the_reference_is_the_team_baseline():
    assert reference_for(EvaluationKey(10, 99, None), FINISHED, baseline_id=4) == (4, "baseline")
    assert reference_for(EvaluationKey(10, None, None), FINISHED, baseline_id=4) == (
        4,
        "baseline",
    )


def test_the_baseline_is_not_compared_with_itself_and_nothing_means_no_reference():
    assert reference_for(EvaluationKey(4, 8, at(6)), FINISHED, baseline_id=4) == (None, "")
    assert reference_for(EvaluationKey(10, None, None), FINISHED, baseline_id=None) == (None, "")


def test_a_change_is_the_difference_and_missing_values_give_none():
    assert change(0.75, 0.5) == 0.25
    assert change(0.5, 0.75) == -0.25
    assert change(None, 0.5) is None
    assert change(0.5, None) is None


def test_a_short_series_is_kept_whole():
    assert thin([1, 2, 3], limit=5) == [1, 2, 3]


def test_a_long_series_is_thinned_evenly_keeping_the_first_and_the_last():
    points = list(range(1000))

    thinned = thin(points, limit=10)

    assert len(thinned) == 10
    assert thinned[0] == 0 and thinned[-1] == 999
    steps = {b - a for a, b in zip(thinned, thinned[1:], strict=False)}
    assert steps <= {110, 111}


def test_thinning_to_fewer_than_two_points_is_refused():
    with pytest.raises(ValueError):
        thin([1, 2, 3], limit=1)


def test_a_chart_carries_its_labels_and_named_series():
    drawn = chart("bar", ["a", "b"], [("grades", [3, None])], axis="grades")

    assert drawn == {
        "kind": "bar",
        "labels": ["a", "b"],
        "series": [{"name": "grades", "values": [3, None]}],
        "axis": "grades",
        "compact": False,
    }


def test_a_chart_refuses_a_series_of_the_wrong_length_or_an_unknown_kind():
    with pytest.raises(ValueError, match="2 values for 3 labels"):
        chart("line", ["a", "b", "c"], [("x", [1, 2])])
    with pytest.raises(ValueError, match="unknown chart kind"):
        chart("pie", [], [])


def test_a_line_over_time_carries_each_points_wall_clock_in_milliseconds():
    moments = [datetime(2026, 3, 1, 12, 0, tzinfo=UTC), datetime(2026, 3, 9, 18, 30, tzinfo=UTC)]

    drawn = chart("line", ["first", "second"], [("nDCG@10", [0.4, 0.6])], times=moments)

    assert drawn["times"] == [1772366400000, 1773081000000]
    # Eight days and six and a half hours apart, as the axis spaces them.
    assert drawn["times"][1] - drawn["times"][0] == (8 * 24 + 6.5) * 3600 * 1000


def test_a_wall_clock_is_read_as_shown_whatever_its_time_zone():
    noon_in_new_york = datetime(2026, 4, 1, 12, 0, tzinfo=ZoneInfo("America/New_York"))

    assert wall_clock_ms(noon_in_new_york) == wall_clock_ms(datetime(2026, 4, 1, 12, 0, tzinfo=UTC))


def test_a_time_axis_needs_a_line_and_a_moment_for_every_label():
    with pytest.raises(ValueError, match="only a line chart has a time axis"):
        chart("bar", ["a"], [("x", [1])], times=[datetime(2026, 3, 1, tzinfo=UTC)])
    with pytest.raises(ValueError, match="1 times for 2 labels"):
        chart("line", ["a", "b"], [("x", [1, 2])], times=[datetime(2026, 3, 1, tzinfo=UTC)])
