"""How a result list moved against the baseline's, on plain lists (no database)."""

from apps.insights.comparison.movement import Dropped, Kind, dropped_from, moves_against


def ranked(*doc_ids: str) -> list[tuple[int, str]]:
    return list(enumerate(doc_ids, start=1))


def markers(baseline, other) -> list[str]:
    return [move.marker for move in moves_against(ranked(*baseline), ranked(*other))]


def test_a_document_higher_than_in_the_baseline_moved_up_by_the_places_it_gained():
    [first, *_rest] = moves_against(ranked("a", "b", "c", "d"), ranked("d", "a", "b", "c"))

    assert first.kind is Kind.UP
    assert first.places == 3
    assert first.marker == "↑3"
    assert first.description == "up 3 (was at 4 in the baseline)"


def test_a_document_lower_than_in_the_baseline_moved_down():
    moves = moves_against(ranked("a", "b", "c"), ranked("b", "c", "a"))

    assert [move.marker for move in moves] == ["↑1", "↑1", "↓2"]
    assert moves[2].kind is Kind.DOWN and moves[2].places == -2
    assert moves[2].description == "down 2 (was at 1 in the baseline)"


def test_a_document_at_its_baseline_position_stayed_the_same():
    assert markers("abc", "abc") == ["=", "=", "="]
    assert markers("abc", "cba") == ["↑2", "=", "↓2"]


def test_a_document_the_baseline_does_not_list_is_new():
    moves = moves_against(ranked("a", "b"), ranked("x", "a", "b"))

    assert [move.marker for move in moves] == ["new", "↓1", "↓1"]
    assert moves[0].kind is Kind.NEW and moves[0].baseline_position is None
    assert moves[0].places == 0


def test_the_baselines_documents_this_list_does_not_show_are_dropped_with_where_they_went():
    baseline = ranked("a", "b", "c", "d")
    other = ranked("a", "x", "y", "c", "b")  # b fell below the part shown, d is gone

    assert dropped_from(baseline, other, shown=4) == [
        Dropped("b", baseline_position=2, now_at=5),
        Dropped("d", baseline_position=4, now_at=None),
    ]


def test_only_the_part_shown_of_the_baseline_can_be_dropped():
    assert dropped_from(ranked("a", "b", "c"), ranked("a"), shown=1) == []
    assert dropped_from(ranked("a", "b", "c"), ranked("a"), shown=3) == [
        Dropped("b", 2, None),
        Dropped("c", 3, None),
    ]


def test_a_document_below_the_part_shown_that_comes_up_moved_up_and_is_not_new():
    moves = moves_against(ranked("a", "b", "c", "d", "e"), ranked("e", "a"))

    assert [move.marker for move in moves] == ["↑4", "↓1"]


def test_a_document_listed_twice_moves_by_its_first_position_and_the_repeat_says_so():
    moves = moves_against(ranked("a", "b", "c"), ranked("c", "a", "c"))

    assert [move.marker for move in moves] == ["↑2", "↓1", "repeat"]
    assert moves[2].kind is Kind.REPEAT and moves[2].first_position == 1
    assert moves[2].description == "listed again: first at 1"


def test_a_document_the_baseline_lists_twice_is_measured_from_its_first_position():
    assert markers("abab", "ba") == ["↑1", "↓1"]
    assert dropped_from(ranked("a", "a", "b"), ranked("b", "c"), shown=3) == [Dropped("a", 1, None)]


def test_documents_that_trade_places_move_by_the_same_amount_both_ways():
    assert markers("abcd", "badc") == ["↑1", "↓1", "↑1", "↓1"]


def test_positions_with_gaps_are_compared_as_positions_not_as_places_in_the_list():
    baseline = [(1, "a"), (5, "b")]
    other = [(1, "b"), (2, "a")]

    assert [move.marker for move in moves_against(baseline, other)] == ["↑4", "↓1"]


def test_empty_lists_have_no_moves_and_drop_everything_or_nothing():
    assert moves_against([], []) == []
    assert markers("", "ab") == ["new", "new"]
    assert dropped_from(ranked("a"), [], shown=10) == [Dropped("a", 1, None)]
    assert dropped_from([], ranked("a"), shown=10) == []
