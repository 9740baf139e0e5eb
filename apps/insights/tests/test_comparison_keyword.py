"""One keyword of a comparison, its result lists side by side, through real URLs."""

from urllib.parse import urlencode

import pytest

from apps import engine
from apps.evaluations.models import Keyword
from apps.insights.comparison.side_by_side import MAX_SHOWN, grade_text
from tests.comparison_data import imported_evaluation, shop_pair
from tests.factories import client_for, make_evaluation

URL = "/evaluations/compare/keyword/"


def query(*evaluations, k: str | None = None) -> str:
    pairs = [("e", e.id) for e in evaluations] + ([("k", k)] if k is not None else [])
    return "?" + urlencode(pairs)


@pytest.fixture
def pair(team_a):
    return shop_pair(team_a)


def shown(result_list) -> list[tuple[int, str, str, str]]:
    """(position, doc id, grade, move marker or '') of each result shown."""
    return [
        (r.position, r.doc_id, r.grade, r.move.marker if r.move else "")
        for r in result_list.results
    ]


# --- Works -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_lead_sees_both_lists_with_grades_positions_moves_and_what_only_one_has(owner, pair):
    first, second = pair

    response = client_for(owner).get(URL + query(first, second, k="query 1"))

    assert response.status_code == 200
    keyword = response.context["keyword"]
    baseline, other = keyword.lists
    assert (baseline.evaluation, other.evaluation) == (first, second)
    # Ranking A shows query 1's results in its second rotation; B in the ideal order
    # with two new documents.
    assert shown(baseline) == [
        (1, "q1-fair", "1 · Fair", ""),
        (2, "q1-poor-2", "0 · Poor", ""),
        (3, "q1-good", "2 · Good", ""),
        (4, "q1-best", "3 · Perfect", ""),
        (5, "q1-poor-1", "0 · Poor", ""),
    ]
    assert shown(other) == [
        (1, "q1-best", "3 · Perfect", "↑3"),
        (2, "q1-good", "2 · Good", "↑1"),
        (3, "q1-new-good", "2 · Good", "new"),
        (4, "q1-fair", "1 · Fair", "↓3"),
        (5, "q1-new-fair", "1 · Fair", "new"),
    ]
    assert [
        (d.dropped.doc_id, d.dropped.baseline_position, d.dropped.now_at) for d in other.dropped
    ] == [
        ("q1-poor-2", 2, None),
        ("q1-poor-1", 5, None),
    ]
    page = response.content.decode()
    assert 'data-move="up" title="up 3 (was at 4 in the baseline)">↑3</td>' in page
    assert 'data-move="new"' in page and ">new</td>" in page
    assert "was 2, not listed" in page


@pytest.mark.django_db
def test_the_keywords_metric_values_and_their_change_against_the_baseline_are_on_top(owner, pair):
    first, second = pair

    response = client_for(owner).get(URL + query(first, second, k="query 1"))

    lines = {line.label: line.values for line in response.context["keyword"].metrics}
    assert list(lines) == ["nDCG@10", "P@5"]
    ndcg_a, ndcg_b = lines["nDCG@10"]
    stored = {
        k.evaluation_id: k.metric_values.get(metric="ndcg", k=10).value
        for k in Keyword.objects.filter(text="query 1")
    }
    assert ndcg_a.value == stored[first.id] and ndcg_b.value == stored[second.id] == 1.0
    assert ndcg_a.change is None
    assert ndcg_b.change == pytest.approx(1.0 - stored[first.id])
    precision_a, precision_b = lines["P@5"]
    assert (precision_a.value, precision_b.value) == (0.6, 1.0)
    assert precision_b.change == pytest.approx(0.4)
    page = response.content.decode()
    assert '<span class="difference better" data-testid="change">+0.4000</span>' in page


@pytest.mark.django_db
def test_each_keyword_of_the_comparison_table_opens_its_lists_side_by_side(owner, team_a):
    odd = "shoes & socks/size 40+"
    first = imported_evaluation(team_a, "Old", {odd: [("d1", 1)]})
    second = imported_evaluation(team_a, "New", {odd: [("d1", 2)]})
    client = client_for(owner)

    page = client.get(f"/evaluations/compare/?e={first.id}&e={second.id}").content.decode()

    link = f"{URL}?e={first.id}&amp;e={second.id}&amp;k=shoes%20%26%20socks%2Fsize%2040%2B"
    assert f'<a href="{link}"' in page
    opened = client.get(link.replace("&amp;", "&"))
    assert opened.status_code == 200
    assert opened.context["keyword"].text == odd


@pytest.mark.django_db
def test_three_evaluations_show_three_lists_baseline_first(owner, team_a, pair):
    first, second = pair
    third = imported_evaluation(team_a, "Ranking C", {"query 1": [("q1-best", 3)]})

    response = client_for(owner).get(URL + query(third, first, second, k="query 1"))

    lists = response.context["keyword"].lists
    assert [each.evaluation for each in lists] == [third, first, second]
    assert lists[0].results[0].move is None
    assert shown(lists[1])[3] == (4, "q1-best", "3 · Perfect", "↓3")
    assert [d.dropped.doc_id for d in lists[2].dropped] == []


@pytest.mark.django_db
def test_a_failed_search_is_said_beside_its_list(owner, pair):
    first, second = pair
    Keyword.objects.filter(evaluation=second, text="query 1").update(failed=True)

    page = client_for(owner).get(URL + query(first, second, k="query 1")).content.decode()

    assert "The search for this keyword failed in Ranking B." in page


# --- How much is shown -----------------------------------------------------------------


def long_list(prefix: str, size: int) -> list[tuple[str, int | None]]:
    return [(f"{prefix}{number}", 1) for number in range(size)]


@pytest.mark.django_db
def test_each_list_shows_down_to_the_deepest_cutoff_and_moves_count_what_lies_below(owner, team_a):
    first = imported_evaluation(team_a, "Old", {"q": long_list("d", 30)})
    # New brings the baseline's 25th result to the top and keeps the rest in order.
    second = imported_evaluation(team_a, "New", {"q": [("d24", 1), *long_list("d", 30)[:24]]})

    keyword = client_for(owner).get(URL + query(first, second, k="q")).context["keyword"]

    assert keyword.shown == 10  # nDCG@10 and P@5
    baseline, other = keyword.lists
    assert (len(baseline.results), baseline.count) == (10, 30)
    assert shown(other)[0] == (1, "d24", "1 · Fair", "↑24")
    assert [(d.dropped.doc_id, d.dropped.now_at) for d in other.dropped] == [("d9", 11)]


@pytest.mark.django_db
def test_a_metric_over_the_whole_list_shows_at_most_the_page_limit(owner, team_a):
    lists = {"q": long_list("d", MAX_SHOWN + 20)}
    first = imported_evaluation(team_a, "Old", lists, metrics=[("ap", 0)])
    second = imported_evaluation(team_a, "New", lists, metrics=[("ap", 0)])

    response = client_for(owner).get(URL + query(first, second, k="q"))

    keyword = response.context["keyword"]
    assert keyword.shown == MAX_SHOWN
    assert [len(each.results) for each in keyword.lists] == [MAX_SHOWN, MAX_SHOWN]
    assert f"{MAX_SHOWN + 20} results, the first {MAX_SHOWN} shown" in response.content.decode()


# --- Grades as the scale names them ----------------------------------------------------


def test_a_grade_reads_as_its_level_and_name_a_mean_as_its_number():
    assert grade_text(engine.get_scale("binary"), 1.0) == "1 · Relevant"
    assert grade_text(engine.get_scale("graded"), 2.0) == "2 · Good"
    assert grade_text(engine.get_scale("detail"), 7.0) == "7"
    assert grade_text(engine.get_scale("graded"), 5 / 3) == "1.67"
    assert grade_text(engine.get_scale("binary"), None) == "–"


# --- Who may, not found, bad input -----------------------------------------------------


@pytest.mark.django_db
def test_an_evaluator_may_not_open_a_keyword_and_someone_logged_out_is_sent_to_log_in(
    evaluator, pair
):
    assert client_for(evaluator).get(URL + query(*pair, k="query 1")).status_code == 403
    response = client_for(None).get(URL + query(*pair, k="query 1"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.django_db
def test_another_teams_evaluation_or_keyword_is_404(owner, outsider, team_b, pair):
    first, _second = pair
    theirs = imported_evaluation(team_b, "Theirs", {"query 1": [("q1-best", 3)]})

    assert client_for(owner).get(URL + query(first, theirs, k="query 1")).status_code == 404
    assert client_for(outsider).get(URL + query(*pair, k="query 1")).status_code == 404


@pytest.mark.django_db
def test_a_keyword_that_is_not_in_every_evaluation_is_404(owner, pair):
    first, second = pair
    Keyword.objects.filter(evaluation=second, text="query 2").update(text="query two")
    client = client_for(owner)

    assert client.get(URL + query(first, second, k="query 2")).status_code == 404
    assert client.get(URL + query(first, second, k="no such keyword")).status_code == 404
    assert client.get(URL + query(first, second, k="Query 1")).status_code == 404  # exact text


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("asked", "problem"),
    [
        ("?e={a}&e={b}", "k: choose a keyword"),
        ("?e={a}&e={b}&k=+", "k: choose a keyword"),
        ("?e={a}&e={b}&k=" + "x" * 501, "k: a keyword has at most 500 characters"),
        ("?e={a}&e={b}&k=a%00b", "k: a keyword cannot contain a NUL character"),
        ("?e={a}&k=query+1", "e: choose at least two evaluations to compare"),
        ("?e={a}&e=abc&k=query+1", "e: &#x27;abc&#x27; is not an evaluation id"),
    ],
)
def test_bad_input_is_refused_naming_the_field(owner, pair, asked, problem):
    first, second = pair

    response = client_for(owner).get(URL + asked.format(a=first.id, b=second.id))

    assert response.status_code == 400
    assert problem in response.content.decode()


# --- Bounded queries -------------------------------------------------------------------

# The session with its person and teams (1, apps/accounts/sessions.py), then the
# evaluations, their metrics, the keyword in each, its metric values and its results (5):
# the same for 1 and 300 results.
PAGE_QUERIES = 6


@pytest.mark.django_db
@pytest.mark.parametrize("size", [1, 300])
def test_the_page_reads_a_fixed_number_of_queries(owner, team_a, size, django_assert_num_queries):
    first = imported_evaluation(team_a, "Old", {"q": long_list("d", size)})
    second = imported_evaluation(team_a, "New", {"q": long_list("e", size)})
    third = make_evaluation(team=team_a, keywords={"q": size})
    client = client_for(owner)
    client.get("/evaluations/")  # the session is warm

    with django_assert_num_queries(PAGE_QUERIES):
        response = client.get(URL + query(first, second, third, k="q"))

    assert [each.count for each in response.context["keyword"].lists] == [size] * 3
