"""The short names that tell compared evaluations apart in Compare's column headers."""

from apps.insights.comparison.naming import short_names


def test_names_alike_keep_what_differs_with_the_word_before_a_bare_number():
    names = ["Default ranking, week 2", "Default ranking, week 3"]
    assert short_names(names) == ["week 2", "week 3"]


def test_a_bare_letter_keeps_its_word_too():
    assert short_names(["Ranking A", "Ranking B"]) == ["Ranking A", "Ranking B"]


def test_names_with_nothing_in_common_are_cut_to_the_column():
    names = ["Catalogue search, binary 1", "Live catalogue search"]
    assert short_names(names) == ["Catalogue searc…", "Live catalogue…"]


def test_a_name_that_is_the_others_beginning_stays_whole():
    assert short_names(["Shoes", "Shoes 2"]) == ["Shoes", "Shoes 2"]


def test_names_that_cut_alike_are_lettered():
    names = ["Ranking with-synonyms-from-the-catalogue", "Ranking with-synonyms-from-the-log"]
    assert short_names(names) == ["A", "B"]
    assert short_names([*names, "Ranking plain"]) == ["A", "B", "C"]
