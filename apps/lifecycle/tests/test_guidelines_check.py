"""The grades scoring guidelines name, and those their evaluation's scale lacks."""

import pytest

from apps import engine
from apps.lifecycle.guidelines_check import (
    grades_named,
    grades_named_off_scale,
    off_scale_warning,
)

BINARY, GRADED, DETAIL = (engine.get_scale(name) for name in ("binary", "graded", "detail"))
GUIDELINES_FOR_GRADED = """
**3 · Perfect**: exactly what was asked.
2 · Good: the right kind of thing.
- 1 · Fair, 0 · Poor otherwise.
"""


def test_grades_labelled_as_pages_label_them_are_named():
    assert grades_named(GUIDELINES_FOR_GRADED) == [0, 1, 2, 3]


@pytest.mark.parametrize(
    "text, grades",
    [
        ("Give grade 4 only to exact matches.", [4]),
        ("Grades: 2 for close ones", [2]),
        ("use **grade** 3 sparingly", [3]),
        ("a grade -1 is spam; -2 · Junk", [-2, -1]),
        ("**10** · Exact", [10]),
    ],
)
def test_a_grade_after_the_word_grade_or_before_a_middle_dot_is_named(text, grades):
    assert grades_named(text) == grades


@pytest.mark.parametrize(
    "text",
    ["Look at the top 10 results.", "Position 3 matters.", "grade 2.5 is not a grade", "", None],
)
def test_other_numbers_are_not_grades(text):
    assert grades_named(text) == []


def test_guidelines_for_the_graded_scale_on_binary_name_two_grades_it_lacks():
    assert grades_named_off_scale(GUIDELINES_FOR_GRADED, BINARY) == [2, 3]
    assert grades_named_off_scale(GUIDELINES_FOR_GRADED, GRADED) == []
    assert grades_named_off_scale(GUIDELINES_FOR_GRADED, DETAIL) == [0]


def test_a_custom_scale_has_its_own_levels():
    levels = engine.custom_scale(-2, 4)
    assert grades_named_off_scale("-2 · Spam, grade 5 never", levels) == [5]


def test_the_warning_names_the_grades_and_the_scale():
    assert off_scale_warning(GUIDELINES_FOR_GRADED, BINARY) == (
        "The scoring guidelines name grades 2, 3, which the binary scale (0, 1) does not "
        "have: graders read them beside buttons that cannot give them."
    )
    assert off_scale_warning("grade 4", GRADED).startswith("The scoring guidelines name grade 4,")
    assert off_scale_warning(GUIDELINES_FOR_GRADED, GRADED) == ""
