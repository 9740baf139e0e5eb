"""Whole numbers from what a request sends: ASCII digits within the column's range, and
nothing else."""

import pytest

from apps.core.typed import (
    ID_MAX,
    SMALLINT_MAX,
    SMALLINT_MIN,
    parse_id,
    parse_int,
)


@pytest.mark.parametrize(
    ("given", "expected"),
    [("0", 0), ("7", 7), (" 42 ", 42), ("-3", -3), ("007", 7), (12, 12), ("32767", 32767)],
)
def test_ascii_digits_and_json_numbers_within_the_range_are_read(given, expected):
    assert parse_int(given, SMALLINT_MIN, SMALLINT_MAX) == expected


@pytest.mark.parametrize(
    "given",
    [
        "²",  # a digit to str.isdigit, not to int
        "١٢",  # Arabic-Indic digits: int reads them, a person typing an id does not mean them
        "1_000",  # int reads the underscore
        "+1",
        "1.5",
        "1e3",
        "",
        "   ",
        "-",
        "a\x00b",
        "1\n2",
        "x" * 100_000,
        "9" * 20,  # past any column, refused before int() reads it
        True,  # an int to Python, not a number anyone sent
        1.0,
        None,
        ["1"],
    ],
)
def test_anything_else_is_none(given):
    assert parse_int(given, SMALLINT_MIN, SMALLINT_MAX) is None


@pytest.mark.parametrize("given", ["32768", "-32769", str(2**63), 2**15])
def test_a_number_past_the_column_is_none(given):
    assert parse_int(given, SMALLINT_MIN, SMALLINT_MAX) is None


def test_an_id_is_from_1_to_the_largest_bigint():
    assert parse_id("1") == 1
    assert parse_id(str(ID_MAX)) == ID_MAX == 2**63 - 1
    assert parse_id(str(2**63)) is None
    assert parse_id("0") is None
    assert parse_id("-1") is None
    assert parse_id("²") is None
