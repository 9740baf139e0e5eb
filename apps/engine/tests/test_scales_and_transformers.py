"""Scales (metrics.md section 1) and transformer rules (section 2)."""

import pytest

from apps.engine import (
    SCALES,
    EngineError,
    custom_scale,
    default_rules,
    get_scale,
    resolve_rules,
    score_keyword,
    snapshot_value,
    validate_rules,
)


def test_the_binary_scale_has_two_grades_irrelevant_and_relevant_on_keys_0_and_1():
    binary = get_scale("binary")
    assert binary.grades == (0, 1)
    assert binary.labels == ("Irrelevant", "Relevant")
    assert binary.keys == ("0", "1")


def test_the_graded_scale_runs_from_poor_to_perfect_each_on_its_own_number():
    graded = get_scale("graded")
    assert graded.grades == (0, 1, 2, 3)
    assert graded.labels == ("Poor", "Fair", "Good", "Perfect")
    assert graded.keys == ("0", "1", "2", "3")


def test_the_detail_scale_runs_from_1_to_10_and_10_is_typed_as_0():
    detail = get_scale("detail")
    assert detail.grades == tuple(range(1, 11))
    assert detail.labels == ("1", "2", "3", "4", "5", "6", "7", "8", "9", "10")
    assert detail.keys == ("1", "2", "3", "4", "5", "6", "7", "8", "9", "0")


def test_a_custom_scales_levels_are_keyed_by_their_own_digit_and_the_rest_have_no_key():
    assert custom_scale(0, 4).keys == ("0", "1", "2", "3", "4")
    assert custom_scale(1, 10, relevant_from=2).keys == (
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
        "7",
        "8",
        "9",
        "0",
    )
    assert custom_scale(-2, 4).keys == ("", "", "0", "1", "2", "3", "4")
    assert custom_scale(5, 12, relevant_from=6).keys == ("5", "6", "7", "8", "9", "0", "", "")
    assert custom_scale(-2, 1, keys=["q", "w", "e", "r"]).keys == ("q", "w", "e", "r")


def test_a_grade_is_labelled_by_its_value_and_its_name_on_every_scale():
    assert [get_scale("binary").label_of(g) for g in (0, 1)] == ["0 · Irrelevant", "1 · Relevant"]
    assert get_scale("graded").label_of(0) == "0 · Poor"
    assert get_scale("graded").label_of(3) == "3 · Perfect"


def test_a_level_named_by_its_own_number_is_labelled_by_the_number_alone():
    assert get_scale("detail").label_of(10) == "10"
    assert custom_scale(-2, 1).label_of(-2) == "-2"
    assert custom_scale(-2, 1, labels=["Spam", "No", "Yes", "Key"]).label_of(-2) == "-2 · Spam"


def test_a_value_off_the_scale_is_labelled_by_the_bare_number():
    assert get_scale("graded").label_of(7) == "7"


def test_there_are_exactly_three_scales_and_an_unknown_one_is_refused():
    assert list(SCALES) == ["binary", "graded", "detail"]
    with pytest.raises(EngineError, match="unknown scale 'stars'"):
        get_scale("stars")


def test_engine_errors_are_value_errors():
    assert issubclass(EngineError, ValueError)


@pytest.mark.parametrize(
    ("source", "target", "expected"),
    [
        ("binary", "graded", {0: 0, 1: 3}),
        ("binary", "detail", {0: 1, 1: 10}),
        ("graded", "binary", {0: 0, 1: 1, 2: 1, 3: 1}),
        ("graded", "detail", {0: 1, 1: 4, 2: 7, 3: 10}),
        ("detail", "binary", {1: 0, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 7: 1, 8: 1, 9: 1, 10: 1}),
        ("detail", "graded", {1: 0, 2: 1, 3: 1, 4: 1, 5: 2, 6: 2, 7: 2, 8: 3, 9: 3, 10: 3}),
    ],
)
def test_default_rules_follow_the_table_of_the_specification(source, target, expected):
    assert default_rules(source, target) == expected


@pytest.mark.parametrize("scale", ["binary", "graded", "detail"])
def test_default_rules_from_a_scale_to_itself_are_the_identity(scale):
    grades = get_scale(scale).grades
    assert default_rules(scale, scale) == {grade: grade for grade in grades}


def test_default_rules_are_a_fresh_copy_the_caller_may_change():
    default_rules("graded", "binary")[1] = 0
    assert default_rules("graded", "binary")[1] == 1


def test_no_rules_and_complete_rules_are_valid():
    assert validate_rules("graded", None) == []
    assert validate_rules("graded", {}) == []
    assert validate_rules("graded", {"binary": {"0": 0, "1": 0, "2": 1, "3": 1}}) == []
    assert validate_rules("graded", {"binary": {0: 0, 1: 0, 2: 1, 3: 1}}) == []


def test_a_source_grade_left_out_is_reported_missing():
    assert validate_rules("graded", {"binary": {"0": 0, "1": 1, "3": 1}}) == [
        "transformers.binary.2: missing"
    ]


def test_a_target_grade_off_the_destination_scale_is_reported_with_the_valid_grades():
    assert validate_rules("graded", {"binary": {"0": 0, "1": 1, "2": 1, "3": 5}}) == [
        "transformers.binary.3: 5 is not a binary grade (0, 1)"
    ]


def test_a_detail_grade_mapped_past_the_graded_scale_is_reported():
    rules = {"graded": {**default_rules("detail", "graded"), 7: 7}}
    assert validate_rules("detail", rules) == [
        "transformers.graded.7: 7 is not a graded grade (0, 1, 2, 3)"
    ]


def test_an_unknown_destination_scale_is_reported():
    assert validate_rules("graded", {"foo": {}}) == ["transformers.foo: unknown scale"]


def test_a_source_grade_that_is_not_on_the_native_scale_is_reported():
    rules = {"binary": {"0": 0, "1": 1, "2": 1, "3": 1, "4": 1, "x": 0}}
    assert validate_rules("graded", rules) == [
        "transformers.binary.4: there is no graded grade 4 to map (graded grades are 0, 1, 2, 3)",
        "transformers.binary.x: there is no graded grade x to map (graded grades are 0, 1, 2, 3)",
    ]


def test_the_same_source_grade_given_as_string_and_int_is_reported_twice_given():
    rules = {"graded": {"0": 0, 0: 3, "1": 3}}
    assert validate_rules("binary", rules) == ["transformers.graded.0: given twice"]


def test_target_grades_must_be_ints_not_strings_or_booleans():
    assert validate_rules("binary", {"graded": {"0": "0", "1": True}}) == [
        "transformers.graded.0: '0' is not a graded grade (0, 1, 2, 3)",
        "transformers.graded.1: True is not a graded grade (0, 1, 2, 3)",
    ]


def test_rules_that_are_not_mappings_are_reported():
    assert validate_rules("binary", ["graded"]) == [
        "transformers: must be an object keyed by destination scale"
    ]
    assert validate_rules("binary", {"graded": [3, 3]}) == [
        "transformers.graded: must map each binary grade to a graded grade"
    ]


def test_rules_for_the_native_scale_are_accepted_only_as_the_identity():
    assert validate_rules("binary", {"binary": {"0": 0, "1": 1}}) == []
    assert validate_rules("binary", {"binary": {"0": 1, "1": 1}}) == [
        "transformers.binary.0: binary is the evaluation's own scale, so 0 must stay 0"
    ]


def test_every_problem_is_reported_at_once():
    problems = validate_rules("graded", {"binary": {"0": 0, "3": 2}, "foo": {}})
    assert problems == [
        "transformers.binary.1: missing",
        "transformers.binary.2: missing",
        "transformers.binary.3: 2 is not a binary grade (0, 1)",
        "transformers.foo: unknown scale",
    ]


def test_validating_rules_for_an_unknown_native_scale_is_an_engine_error():
    with pytest.raises(EngineError):
        validate_rules("stars", None)


def test_resolved_rules_fill_in_defaults_and_the_identity_for_every_scale():
    resolved = resolve_rules("graded", {"binary": {"0": 0, "1": 0, "2": 1, "3": 1}})
    assert resolved == {
        "binary": {0: 0, 1: 0, 2: 1, 3: 1},
        "graded": {0: 0, 1: 1, 2: 2, 3: 3},
        "detail": {0: 1, 1: 4, 2: 7, 3: 10},
    }
    assert resolve_rules("graded", None) == {
        target: default_rules("graded", target) for target in SCALES
    }


def test_resolved_rules_validate_again_unchanged():
    resolved = resolve_rules("detail", None)
    assert validate_rules("detail", resolved) == []
    assert resolve_rules("detail", resolved) == resolved


def test_resolving_invalid_rules_raises_with_every_problem():
    with pytest.raises(EngineError, match=r"transformers\.binary\.2: missing"):
        resolve_rules("graded", {"binary": {"0": 0, "1": 1, "3": 1}})


def test_custom_rules_change_what_a_binary_metric_sees():
    strict = {"binary": {"0": 0, "1": 0, "2": 1, "3": 1}}
    grades = [[1], [2]]
    lenient_score = score_keyword(grades, scale="graded", metrics=[("precision", 2)])
    strict_score = score_keyword(grades, scale="graded", metrics=[("precision", 2)], rules=strict)
    assert lenient_score.metrics[("precision", 2)] == 1.0
    assert strict_score.metrics[("precision", 2)] == 0.5


def test_grades_are_transformed_before_the_vote_not_after_the_mean():
    # Mean 1.0 would map to relevant; the slots map to 0, 0, 1 and vote irrelevant.
    score = score_keyword([[0, 0, 3]], scale="graded", metrics=[("precision", 1)])
    assert score.snapshot_values == [1.0]
    assert score.metrics[("precision", 1)] == 0.0


def test_detail_grades_are_transformed_before_the_graded_mean():
    # 1, 4, 4 become graded 0, 1, 1 (mean 2/3); mapping the detail mean 3 would give 1.
    score = score_keyword([[1, 4, 4]], scale="detail", metrics=[("cg", 1)])
    assert score.snapshot_values == [3.0]
    assert score.metrics[("cg", 1)] == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("grades", "expected"),
    [
        ([1], 1.0),
        ([0], 0.0),
        ([1, 1, 0], 1.0),
        ([0, 0, 1], 0.0),
        ([1, 0], None),
        ([1, 0, None], None),
        ([None, None, None], None),
        ([], None),
    ],
)
def test_binary_snapshots_take_a_majority_vote_and_a_tie_is_null(grades, expected):
    assert snapshot_value(grades, "binary") == expected


def test_graded_and_detail_snapshots_take_the_mean_of_the_given_grades():
    assert snapshot_value([1, 2, None], "graded") == 1.5
    assert snapshot_value([3, 3, 2], "graded") == pytest.approx(8 / 3)
    assert snapshot_value([10, 1], "detail") == 5.5
    assert snapshot_value([None], "graded") is None


@pytest.mark.parametrize(
    ("grades", "scale"),
    [([2], "binary"), ([4], "graded"), ([0], "detail"), ([11], "detail"), ([True], "binary")],
)
def test_a_grade_off_the_scale_is_refused(grades, scale):
    with pytest.raises(EngineError, match="is not a"):
        snapshot_value(grades, scale)
