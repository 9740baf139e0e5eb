"""Kendall's tau and rank-biased overlap of result lists, on plain lists."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from apps.insights.comparison.ranking import kendall_tau, rank_agreement, rank_biased_overlap


def tau(a, b) -> float:
    return float(kendall_tau([list(a)], [list(b)])[0])


def rbo(a, b, p=0.9) -> float:
    return float(rank_biased_overlap([list(a)], [list(b)], p)[0])


def rbo_by_definition(a, b, p=0.9) -> float:
    """Webber, Moffat and Zobel (2010), equation 32, term by term with sets."""
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    s, l = len(short), len(long)  # noqa: E741 (the paper's names)

    def overlap(d):
        return len(set(short[:d]) & set(long[:d]))

    seen = sum(overlap(d) / d * p**d for d in range(1, l + 1))
    beyond = sum(overlap(s) * (d - s) / (s * d) * p**d for d in range(s + 1, l + 1))
    extrapolated = ((overlap(l) - overlap(s)) / l + overlap(s) / s) * p**l
    return (1 - p) / p * (seen + beyond) + extrapolated


# --- Kendall's tau ----------------------------------------------------------------------


def test_tau_is_one_for_the_same_order_and_minus_one_reversed():
    assert tau("abcd", "abcd") == 1.0
    assert tau("abcd", "dcba") == -1.0


def test_tau_of_one_swapped_pair_among_three():
    # (a,b) and (a,c) keep their order, (b,c) is swapped: (2 - 1) / 3.
    assert tau("abc", "acb") == pytest.approx(1 / 3)


def test_tau_counts_only_the_documents_both_lists_share():
    # Shared: a, b, c in the same order; x and y are ignored.
    assert tau("axbyc", "abc") == 1.0
    assert tau("abxc", "cyba") == -1.0


def test_tau_needs_two_shared_documents():
    assert math.isnan(tau("abc", "xyz"))
    assert math.isnan(tau("abc", "xay"))
    assert math.isnan(tau("", ""))


def test_a_document_listed_twice_keeps_its_first_position():
    assert tau("aab", "ab") == 1.0
    assert tau("abca", "cab") == tau("abc", "cab")


lists = st.lists(st.sampled_from("abcdefghijklmnop"), max_size=14)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(lists, lists), min_size=1, max_size=8))
def test_tau_equals_scipys_kendalltau_over_the_shared_documents(pairs):
    answers = kendall_tau([a for a, _ in pairs], [b for _, b in pairs])

    for (a, b), answer in zip(pairs, answers, strict=True):
        first_a = list(dict.fromkeys(a))
        first_b = list(dict.fromkeys(b))
        shared = [doc for doc in first_a if doc in first_b]
        if len(shared) < 2:
            assert math.isnan(answer)
            continue
        expected = scipy_stats.kendalltau(
            [first_a.index(doc) for doc in shared], [first_b.index(doc) for doc in shared]
        ).statistic
        assert answer == pytest.approx(expected, abs=1e-12)


# --- Rank-biased overlap ----------------------------------------------------------------


def test_rbo_of_identical_lists_is_one_and_of_disjoint_lists_zero():
    assert rbo("abcdefg", "abcdefg") == pytest.approx(1.0)
    assert rbo("abc", "xyz") == 0.0


def test_rbo_of_two_swapped_documents():
    # X1 = 0, X2 = 2: (1-p)/p * (2/2 p^2) + (2/2) p^2 = 0.09 + 0.81.
    assert rbo("ab", "ba") == pytest.approx(0.9)


def test_rbo_of_a_hand_worked_example_of_three():
    # X1 = 1, X2 = 1, X3 = 2:
    # (0.1/0.9) * (1*0.9 + 1/2*0.81 + 2/3*0.729) + 2/3*0.729 = 0.199 + 0.486.
    assert rbo("abc", "axb") == pytest.approx(0.685)


def test_rbo_of_lists_of_different_lengths():
    # s = 1, l = 2; X1 = 0, X2 = |{a} & {b, a}| = 1:
    # (0.1/0.9) * (1/2 * 0.81) + ((1 - 0)/2 + 0/1) * 0.81 = 0.045 + 0.405.
    assert rbo("a", "ba") == pytest.approx(0.45)
    # A prefix of the other list agrees with all of it as far as it goes.
    assert rbo("ab", "abcd") == pytest.approx(1.0)


def test_rbo_weights_the_top_more():
    top_differs = rbo("xbcdefgh", "abcdefgh")
    bottom_differs = rbo("abcdefgx", "abcdefgh")

    assert top_differs < bottom_differs < 1


def test_rbo_with_empty_lists():
    assert rbo("", "abc") == 0.0
    assert rbo("abc", "") == 0.0
    assert math.isnan(rbo("", ""))


def test_rbo_persistence_must_be_between_zero_and_one():
    with pytest.raises(ValueError, match="persistence"):
        rbo("ab", "ab", p=1.0)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(lists, lists), min_size=1, max_size=8),
    st.sampled_from([0.5, 0.8, 0.9, 0.98]),
)
def test_rbo_equals_equation_32_term_by_term_and_is_symmetric_and_bounded(pairs, p):
    a_lists = [a for a, _ in pairs]
    b_lists = [b for _, b in pairs]
    forward = rank_biased_overlap(a_lists, b_lists, p)
    backward = rank_biased_overlap(b_lists, a_lists, p)

    for (a, b), answer, mirrored in zip(pairs, forward, backward, strict=True):
        first_a = list(dict.fromkeys(a))
        first_b = list(dict.fromkeys(b))
        if not first_a and not first_b:
            assert math.isnan(answer)
            continue
        if not first_a or not first_b:
            assert answer == 0.0
            continue
        assert answer == pytest.approx(rbo_by_definition(first_a, first_b, p), abs=1e-12)
        assert mirrored == pytest.approx(answer, abs=1e-12)
        assert -1e-12 <= answer <= 1 + 1e-12


def test_rank_agreement_gives_both_measures_for_each_keyword():
    taus, rbos = rank_agreement(["abc", "ab", ""], ["acb", "ba", "x"])

    assert list(taus[:2]) == [pytest.approx(1 / 3), -1.0]
    assert math.isnan(taus[2])
    assert list(rbos) == [pytest.approx(rbo("abc", "acb")), pytest.approx(0.9), 0.0]


def test_rank_agreement_of_no_keywords_is_empty():
    taus, rbos = rank_agreement([], [])

    assert (len(taus), len(rbos)) == (0, 0)
