"""The comparison page and its CSV downloads, through real URLs."""

import csv
import io
import math

import pytest
from django.core.cache import cache

from apps.evaluations.models import Keyword
from apps.scoring.models import KeywordMetric
from apps.stats import paired as stats
from tests.comparison_data import imported_evaluation, same_keywords_pair, shop_pair
from tests.factories import client_for, make_evaluation

pytestmark = pytest.mark.django_db

URL = "/evaluations/compare/"
EXPORT = "/evaluations/compare/export/"


def query(*evaluations, **more) -> str:
    parts = [f"e={e.id}" for e in evaluations] + [f"{k}={v}" for k, v in more.items()]
    return "?" + "&".join(parts)


@pytest.fixture
def pair(team_a):
    return shop_pair(team_a)


def stored(evaluation, metric, k):
    return {
        row.keyword.text: row.value
        for row in KeywordMetric.objects.filter(evaluation=evaluation, metric=metric, k=k)
        .select_related("keyword")
        .order_by("keyword__position")
    }


# --- Works, for the owner and an admin -------------------------------------------------


def test_a_lead_reads_that_b_is_significantly_better_with_means_interval_and_counts(owner, pair):
    first, second = pair

    response = client_for(owner).get(URL + query(first, second))

    assert response.status_code == 200
    page = response.content.decode()
    comparison = response.context["comparison"]
    [each] = comparison.pairs
    ndcg = next(m for m in each.metrics if m.key == "ndcg@10")
    a, b = stored(first, "ndcg", 10), stored(second, "ndcg", 10)
    differences = [b[text] - a[text] for text in a]
    assert ndcg.result.compared == 20
    assert ndcg.result.baseline_mean == pytest.approx(math.fsum(a.values()) / 20)
    assert ndcg.result.candidate_mean == pytest.approx(math.fsum(b.values()) / 20)
    assert ndcg.result.difference == pytest.approx(math.fsum(differences) / 20)
    assert ndcg.result.ci_low <= ndcg.result.difference <= ndcg.result.ci_high
    assert (ndcg.result.wins, ndcg.result.ties, ndcg.result.losses) == (20, 0, 0)
    # Every keyword gains, so only all signs alike are as extreme (chance 2 in 2^20 per
    # draw): none of the 10,000 draws is, and p = 1 / 10,001.
    assert ndcg.result.p_value == pytest.approx(1 / (stats.PERMUTATIONS + 1))
    assert "Ranking B is better than Ranking A on nDCG@10 (p &lt; 0.001)" in page
    assert "Ranking B is better than Ranking A on P@5 (p &lt; 0.001)" in page
    assert 'class="verdict significant better"' in page
    assert "20 / 0 / 0" in page
    assert "<svg" in page and "difference-bar" in page
    assert f"{ndcg.result.difference:.4f}" in page
    assert "20</strong> keywords common to all 2 evaluations" in page


def test_uneven_coverage_is_shown_beside_each_metric_and_warned_about(owner, team_a):
    # Both rank five results of each keyword; B's last two nobody has judged yet.
    graded = {f"query {n}": [(f"q{n}-{i}", i % 4) for i in range(5)] for n in range(10)}
    half = {
        text: [
            (doc, grade if position < 3 else None) for position, (doc, grade) in enumerate(results)
        ]
        for text, results in graded.items()
    }
    first = imported_evaluation(team_a, "Judged A", graded)
    second = imported_evaluation(team_a, "Half-judged B", half)

    response = client_for(owner).get(URL + query(first, second))

    page = response.content.decode()
    [each] = response.context["comparison"].pairs
    precision = next(m for m in each.metrics if m.key == "precision@5")
    assert precision.baseline_coverage.judged == 1.0
    assert precision.candidate_coverage.judged == pytest.approx(0.6)
    assert precision.candidate_coverage.unjudged == 20
    assert "100.0&nbsp;% / 60.0&nbsp;%" in page
    assert precision.coverage_warning == (
        "Coverage differs: judged@5 is 100.0 % for Judged A and 60.0 % for Half-judged B. "
        "A metric counts an unjudged result as not relevant, so Half-judged B's P@5 is held "
        "down by its 20 unjudged results. Judge them, or compare P′@5 (precision_cond@5), "
        "which leaves them out."
    )
    assert 'data-testid="coverage-warning"' in page


def test_gmap_compares_log_ap_and_reads_as_geometric_means_and_their_ratio(owner, team_a):
    gmap = [("gm_ap", 0)]
    # A finds the relevant document at rank 2 (AP 1/2), B at rank 1 (AP 1), for all 8.
    a = {f"q{n}": [(f"q{n}-x", 0), (f"q{n}-y", 2)] for n in range(8)}
    b = {f"q{n}": [(f"q{n}-y", 2), (f"q{n}-x", 0)] for n in range(8)}
    first = imported_evaluation(team_a, "A", a, metrics=gmap)
    second = imported_evaluation(team_a, "B", b, metrics=gmap)

    response = client_for(owner).get(URL + query(first, second))

    [each] = response.context["comparison"].pairs
    [compared] = each.metrics
    assert compared.result.difference == pytest.approx(math.log(2))  # mean of log(1) - log(1/2)
    assert compared.shown_means == pytest.approx((0.5, 1.0))
    page = response.content.decode()
    assert "×2.0000" in page and ">0.5000<" in page and ">1.0000<" in page
    assert "B is better than A on GMAP (p = 0.008)" in page  # 2 of 2^8 sign patterns


def test_each_metric_says_how_small_a_change_its_keywords_could_detect(owner, pair):
    from statsmodels.stats.power import TTestPower

    first, second = pair
    response = client_for(owner).get(URL + query(first, second))

    [each] = response.context["comparison"].pairs
    ndcg = next(m for m in each.metrics if m.key == "ndcg@10")
    a, b = stored(first, "ndcg", 10), stored(second, "ndcg", 10)
    differences = [b[text] - a[text] for text in a]
    mean = sum(differences) / len(differences)
    spread = math.sqrt(sum((d - mean) ** 2 for d in differences) / (len(differences) - 1))
    effect = TTestPower().solve_power(nobs=20, alpha=0.05, power=0.8, alternative="two-sided")
    assert ndcg.detectable == pytest.approx(effect * spread, rel=1e-4)
    assert f"±{ndcg.detectable:.4f}" in response.content.decode()


def test_even_coverage_says_nothing(owner, pair):
    response = client_for(owner).get(URL + query(*pair))

    assert 'data-testid="coverage-warning"' not in response.content.decode()
    [each] = response.context["comparison"].pairs
    assert all(metric.coverage_warning == "" for metric in each.metrics)


def test_an_admin_may_compare_too(admin, pair):
    response = client_for(admin).get(URL + query(*pair))

    assert response.status_code == 200


def test_the_same_request_gives_the_same_interval_and_p_value(owner, pair):
    client = client_for(owner)

    first = client.get(URL + query(*pair)).context["comparison"].pairs[0].metrics
    again = client.get(URL + query(*pair)).context["comparison"].pairs[0].metrics

    assert [m.result for m in first] == [m.result for m in again]


def test_no_difference_reads_as_not_significant(owner, team_a):
    results = {f"q{i}": [(f"d{i}", i % 4), (f"e{i}", 1)] for i in range(8)}
    first = imported_evaluation(team_a, "Monday", results)
    second = imported_evaluation(team_a, "Tuesday", results)

    page = client_for(owner).get(URL + query(first, second)).content.decode()

    assert "No significant difference between Tuesday and Monday on nDCG@10 (p = 1.000" in page
    assert "significant better" not in page and "significant worse" not in page


def test_a_worse_evaluation_is_called_worse(owner, pair):
    first, second = pair

    page = client_for(owner).get(URL + query(second, first)).content.decode()

    assert "Ranking A is worse than Ranking B on nDCG@10 (p &lt; 0.001)" in page
    assert 'class="verdict significant worse"' in page


# --- Common keywords, missing values, metrics -----------------------------------------


def test_only_keywords_both_have_are_compared_and_ungraded_ones_are_left_out_and_counted(
    owner, team_a
):
    first = imported_evaluation(
        team_a,
        "Old",
        {
            "hat": [("h1", 3), ("h2", 0)],
            "scarf": [("s1", 1), ("s2", 1)],
            "boots": [("b1", None), ("b2", None)],  # not graded: no values
            "only in old": [("o1", 3)],
        },
    )
    second = imported_evaluation(
        team_a,
        "New",
        {
            "boots": [("b1", 3), ("b2", 3)],
            "scarf": [("s2", 2), ("s1", 0)],
            "hat": [("h1", 3), ("h2", 1)],
            "only in new": [("n1", 0)],
        },
    )

    response = client_for(owner).get(URL + query(first, second))

    comparison = response.context["comparison"]
    assert comparison.keywords == ["hat", "scarf", "boots"]  # the baseline's order
    assert comparison.keyword_counts == {first.id: 4, second.id: 4}
    precision = next(m for m in comparison.pairs[0].metrics if m.key == "precision@5")
    assert (precision.result.compared, precision.excluded) == (2, 1)
    # hat: 1/2 -> 2/2; scarf: 2/2 -> 1/2.
    assert precision.result.baseline_mean == pytest.approx(0.75)
    assert precision.result.candidate_mean == pytest.approx(0.75)
    assert (precision.result.wins, precision.result.ties, precision.result.losses) == (1, 0, 1)
    assert "(1 left out)" in response.content.decode()


def test_only_metrics_both_report_are_compared(owner, team_a):
    keywords = {"hat": [("h1", 3), ("h2", 0)], "scarf": [("s1", 1)]}
    first = imported_evaluation(team_a, "A", keywords, metrics=[("ndcg", 10), ("dcg", 5)])
    second = imported_evaluation(team_a, "B", keywords, metrics=[("dcg", 5), ("err", 10)])

    comparison = client_for(owner).get(URL + query(first, second)).context["comparison"]

    assert [m.key for m in comparison.pairs[0].metrics] == ["dcg@5"]


def test_three_evaluations_are_each_compared_with_the_first(owner, team_a, pair):
    first, second = pair
    third = imported_evaluation(
        team_a, "Ranking C", {f"query {i}": [(f"q{i}-best", 3)] for i in range(20)}
    )

    response = client_for(owner).get(URL + query(first, second, third, vs=third.id))

    comparison = response.context["comparison"]
    assert [p.candidate.name for p in comparison.pairs] == ["Ranking B", "Ranking C"]
    assert response.context["pair"].candidate == third
    page = response.content.decode()
    assert "Ranking C against Ranking A" in page
    assert "Per keyword: Ranking C against Ranking A" in page


def test_rank_correlation_of_the_result_lists_is_shown_per_keyword_and_on_average(owner, team_a):
    first = imported_evaluation(
        team_a, "A", {"hat": [("a", 3), ("b", 2), ("c", 1)], "cap": [("x", 1), ("y", 1)]}
    )
    second = imported_evaluation(
        team_a, "B", {"hat": [("a", 3), ("c", 1), ("b", 2)], "cap": [("z", 1), ("w", 1)]}
    )

    response = client_for(owner).get(URL + query(first, second))

    each = response.context["comparison"].pairs[0]
    # hat: pairs (a,b) (a,c) agree, (b,c) swapped -> tau 1/3; cap shares nothing.
    assert each.kendall_tau[0] == pytest.approx(1 / 3)
    assert math.isnan(each.kendall_tau[1])
    assert each.rbo[1] == 0.0
    assert (each.kendall_tau_mean, each.kendall_tau_count) == (pytest.approx(1 / 3), 1)
    hat, cap = response.context["rows"]
    assert (hat.text, hat.kendall_tau) == ("hat", pytest.approx(1 / 3))
    assert cap.kendall_tau is None
    assert "0.333" in response.content.decode()


# --- The per-keyword table: sorting and pages -----------------------------------------


def test_the_keyword_table_sorts_by_any_metrics_difference_both_ways(owner, team_a):
    gains = {"small gain": (1, 2), "loss": (3, 1), "big gain": (0, 3), "same": (2, 2)}
    first = imported_evaluation(
        team_a, "A", {text: [("d", a)] for text, (a, _b) in gains.items()}, metrics=[("cg", 1)]
    )
    second = imported_evaluation(
        team_a, "B", {text: [("d", b)] for text, (_a, b) in gains.items()}, metrics=[("cg", 1)]
    )
    client = client_for(owner)

    ascending = client.get(URL + query(first, second, sort="cg@1")).context["rows"]
    descending = client.get(URL + query(first, second, sort="-cg@1")).context["rows"]
    by_text = client.get(URL + query(first, second, sort="keyword")).context["rows"]

    assert [r.text for r in ascending] == ["loss", "same", "small gain", "big gain"]
    assert [r.text for r in descending] == ["big gain", "small gain", "same", "loss"]
    assert [r.cells[0].difference for r in descending] == [3.0, 1.0, 0.0, -2.0]
    assert [r.text for r in by_text] == ["big gain", "loss", "same", "small gain"]


def test_keywords_without_a_value_sort_last_either_way(owner, team_a):
    first = imported_evaluation(
        team_a, "A", {"x": [("d", 1)], "ungraded": [("d", None)], "y": [("d", 0)]}
    )
    second = imported_evaluation(
        team_a, "B", {"x": [("d", 0)], "ungraded": [("d", 3)], "y": [("d", 3)]}
    )
    client = client_for(owner)

    for sort in ("ndcg@10", "-ndcg@10"):
        rows = client.get(URL + query(first, second, sort=sort)).context["rows"]
        assert rows[-1].text == "ungraded"
        assert rows[-1].cells[0].difference is None


def test_the_keyword_table_is_paged(owner, team_a):
    keywords = {f"q{i:03}": [("d", i % 4)] for i in range(120)}
    first = imported_evaluation(team_a, "A", keywords)
    second = imported_evaluation(team_a, "B", keywords)
    client = client_for(owner)

    third = client.get(URL + query(first, second, page=3))

    assert [r.text for r in third.context["rows"]] == [f"q{i:03}" for i in range(100, 120)]
    assert "Page 3 of 3" in third.content.decode()


# --- CSV --------------------------------------------------------------------------------


def test_the_csv_has_a_row_per_common_keyword_with_values_differences_and_rank_correlation(
    owner, pair
):
    first, second = pair

    response = client_for(owner).get(EXPORT + query(first, second))

    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == [
        "keyword",
        "ndcg@10 Ranking A",
        "ndcg@10 Ranking B",
        "ndcg@10 difference (Ranking B - Ranking A)",
        "precision@5 Ranking A",
        "precision@5 Ranking B",
        "precision@5 difference (Ranking B - Ranking A)",
        "kendall_tau (Ranking B vs Ranking A)",
        "rbo (Ranking B vs Ranking A)",
    ]
    assert len(rows) == 21
    a, b = stored(first, "ndcg", 10), stored(second, "ndcg", 10)
    line = rows[1]
    assert line[0] == "query 0"
    # Twelve significant digits: no float noise (apps/core/spreadsheet.py).
    assert float(line[1]) == pytest.approx(a["query 0"], rel=1e-11)
    assert float(line[2]) == pytest.approx(b["query 0"], rel=1e-11)
    assert float(line[3]) == pytest.approx(b["query 0"] - a["query 0"], rel=1e-11)
    assert all(len(cell.lstrip("-0.").replace(".", "")) <= 12 for cell in line[1:4])
    # Shared documents: fair, poor-1, good, best; B reverses their order.
    assert float(line[7]) == -1.0
    assert 0 < float(line[8]) < 1


def test_csv_keywords_a_spreadsheet_would_run_as_formulas_are_written_as_text(owner, team_a):
    first = imported_evaluation(team_a, "A", {"=cmd|x": [("a", 3), ("b", 0)]})
    second = imported_evaluation(team_a, "B", {"=cmd|x": [("b", 0), ("a", 3)]})

    response = client_for(owner).get(EXPORT + query(first, second))

    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[1][0] == "'=cmd|x"


def test_the_summary_csv_has_a_row_per_metric(owner, pair):
    response = client_for(owner).get(EXPORT + query(*pair, part="summary"))

    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [(r["metric"], r["k"]) for r in rows] == [("ndcg", "10"), ("precision", "5")]
    comparison = client_for(owner).get(URL + query(*pair)).context["comparison"]
    for row, metric in zip(rows, comparison.pairs[0].metrics, strict=True):
        assert float(row["p_value"]) == pytest.approx(metric.result.p_value, rel=1e-11)
        assert float(row["ci_low"]) == pytest.approx(metric.result.ci_low, rel=1e-11)
        assert (row["significant"], row["wins"], row["losses"]) == ("true", "20", "0")


# --- Who may, bad input ---------------------------------------------------------------


def test_an_evaluator_may_not_compare(evaluator, pair):
    client = client_for(evaluator)

    assert client.get(URL + query(*pair)).status_code == 403
    assert client.get(EXPORT + query(*pair)).status_code == 403


def test_someone_logged_out_is_sent_to_log_in(pair):
    response = client_for(None).get(URL + query(*pair))

    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_another_teams_evaluation_is_404(owner, outsider, team_b, pair):
    first, _second = pair
    theirs = make_evaluation(team=team_b)

    assert client_for(owner).get(URL + query(first, theirs)).status_code == 404
    assert client_for(owner).get(EXPORT + query(first, theirs)).status_code == 404
    assert client_for(outsider).get(URL + query(*pair)).status_code == 404


@pytest.mark.parametrize(
    ("asked", "problem"),
    [
        ("", "e: choose at least two evaluations to compare"),
        ("?e={a}", "e: choose at least two evaluations to compare"),
        ("?e={a}&e=abc", "e: &#x27;abc&#x27; is not an evaluation id"),
        ("?e={a}&e=-3", "e: &#x27;-3&#x27; is not an evaluation id"),
        ("?e={a}&e=99999999999999999999999", "is not an evaluation id"),
        ("?e={a}&e={a}", "e: evaluation {a} is chosen twice"),
        ("?e={a}&e={b}&sort=nonsense", "sort: &#x27;nonsense&#x27; is not one of position"),
        ("?e={a}&e={b}&vs=12345", "vs: &#x27;12345&#x27; is not one of the compared"),
    ],
)
def test_bad_input_is_refused_naming_the_field(owner, pair, asked, problem):
    first, second = pair

    response = client_for(owner).get(URL + asked.format(a=first.id, b=second.id))

    assert response.status_code == 400
    assert problem.format(a=first.id) in response.content.decode()


def test_more_than_six_evaluations_are_refused(owner, team_a):
    ids = "&".join(f"e={make_evaluation(team=team_a, start=False).id}" for _ in range(7))

    response = client_for(owner).get(f"{URL}?{ids}")

    assert response.status_code == 400
    assert "e: compare at most 6 evaluations at once" in response.content.decode()


def test_an_unknown_csv_part_is_refused(owner, pair):
    response = client_for(owner).get(EXPORT + query(*pair, part="everything"))

    assert response.status_code == 400
    assert "part: &#x27;everything&#x27; is not one of keywords, summary" in (
        response.content.decode()
    )


# --- The evaluation list leads here ----------------------------------------------------


def test_the_evaluation_list_has_a_compare_form_with_a_box_per_evaluation(owner, pair):
    page = client_for(owner).get("/evaluations/").content.decode()

    assert 'action="/evaluations/compare/"' in page
    for evaluation in pair:
        assert f'name="e" value="{evaluation.id}"' in page
    assert ">Compare</button>" in page


# --- Bounded queries -------------------------------------------------------------------

# Session, user and membership (one query), then the evaluations, their metrics,
# keywords, metric values, coverage and result lists (6): the same for 2 and 40 keywords.
PAGE_QUERIES = 8


@pytest.mark.parametrize("size", [2, 40])
def test_the_page_reads_a_fixed_number_of_queries(
    owner, team_a, size, django_assert_max_num_queries
):
    first, second = same_keywords_pair(team_a, size)
    client = client_for(owner)
    client.get("/evaluations/")  # the session is warm

    with django_assert_max_num_queries(PAGE_QUERIES):
        response = client.get(URL + query(first, second))
    with django_assert_max_num_queries(PAGE_QUERIES):
        client.get(EXPORT + query(first, second))

    assert len(response.context["rows"]) == size


def test_a_keyword_changed_after_import_is_compared_by_text(owner, team_a, pair):
    first, second = pair
    Keyword.objects.filter(evaluation=second, text="query 3").update(text="query three")

    comparison = client_for(owner).get(URL + query(first, second)).context["comparison"]

    assert len(comparison.keywords) == 19
    assert "query 3" not in comparison.keywords


def test_doc_ids_with_any_character_are_compared_exactly(owner, team_a):
    # \x1f is the separator the PostgreSQL read joins doc ids with; such an id is read
    # again as an array.
    odd = "a\x1fb"
    first = imported_evaluation(team_a, "A", {"hat": [(odd, 3), ("c", 1), ("a", 0)]})
    second = imported_evaluation(team_a, "B", {"hat": [("c", 1), (odd, 3), ("a", 0)]})

    each = client_for(owner).get(URL + query(first, second)).context["comparison"].pairs[0]

    # (odd, c) swapped, (odd, a) and (c, a) kept: (2 - 1) / 3.
    assert each.kendall_tau[0] == pytest.approx(1 / 3)
    assert each.rbo[0] == pytest.approx(
        0.1 / 0.9 * (0 * 0.9 + 2 / 2 * 0.81 + 3 / 3 * 0.729) + 0.729
    )


def test_sorting_and_paging_reuse_the_statistics_and_changed_values_are_compared_afresh(
    owner, pair, monkeypatch
):
    first, second = pair
    client = client_for(owner)
    cache.clear()  # another test may have compared the same values
    computed = []
    compare = stats.compare_paired
    monkeypatch.setattr(
        stats, "compare_paired", lambda *a, **k: computed.append(1) or compare(*a, **k)
    )

    before = client.get(URL + query(first, second)).context["comparison"].pairs[0].metrics[0]
    client.get(URL + query(first, second, sort="-ndcg@10", page=1))
    assert len(computed) == 1
    row = KeywordMetric.objects.get(evaluation=second, keyword__text="query 0", metric="ndcg")
    KeywordMetric.objects.filter(id=row.id).update(value=row.value - 0.5)
    after = client.get(URL + query(first, second)).context["comparison"].pairs[0].metrics[0]

    assert len(computed) == 2
    assert after.result.difference == pytest.approx(before.result.difference - 0.5 / 20)
    assert after.result.ci_low < before.result.ci_low


def test_evaluations_without_common_keywords_compare_to_nothing_and_say_so(owner, team_a):
    first = imported_evaluation(team_a, "A", {"hat": [("d", 3)]})
    second = imported_evaluation(team_a, "B", {"scarf": [("d", 3)]})

    response = client_for(owner).get(URL + query(first, second, sort="-ndcg@10"))

    assert response.status_code == 200
    [metric, _precision] = response.context["comparison"].pairs[0].metrics
    assert (metric.result.compared, metric.result.p_value, metric.bar) == (0, None, None)
    page = response.content.decode()
    assert "0</strong> keywords common to all 2 evaluations" in page
    assert "No keyword has a nDCG@10 value in both B and A." in page
    assert "No keyword is common to these evaluations." in page


def test_the_sorted_column_says_so_to_screen_readers(owner, pair):
    page = client_for(owner).get(URL + query(*pair, sort="-ndcg@10")).content.decode()

    assert page.count('aria-sort="descending"') == 1
    assert 'aria-sort="ascending"' not in page
