"""The evaluation page's keyword table: search, sort by any metric, filters, pages, all
kept in the query string; bad input named by its field; a fixed number of queries."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.evaluations.models import Keyword
from apps.evaluations.services import Document, keywords_add, snapshots_add
from apps.scoring.models import KeywordMetric
from tests.factories import client_for, make_evaluation

from .lead_pages import grade_slots, text

pytestmark = pytest.mark.django_db


@pytest.fixture
def evaluation(team_a):
    """Four keywords of two results each, graded so that CG@2 is 6, 3, 1 and none."""
    evaluation = make_evaluation(
        team=team_a,
        metrics=[("cg", 2), ("ndcg", 2)],
        keywords={"apple": 2, "banana": 2, "cherry": 2, "damson": 2},
    )
    grade_slots(evaluation, {"apple": [1, 0], "banana": [3, 3], "cherry": [2, 1], "damson": [0]})
    return evaluation


def shown_keywords(response) -> list[str]:
    return re.findall(r'<tr data-keyword="([^"]+)">', text(response))


def table_of(client, evaluation, query: str = ""):
    return client.get(f"/evaluations/{evaluation.id}/?{query}")


def test_the_table_lists_keywords_in_order_with_their_values_and_grading(evaluation, owner):
    response = table_of(client_for(owner), evaluation)

    assert shown_keywords(response) == ["apple", "banana", "cherry", "damson"]
    row = text(response).split('<tr data-keyword="banana">')[1].split("</tr>")[0]
    assert "<td>2 / 2</td>" in row
    # Each value links to how it was computed.
    link = r'<a class="explain-link" href="[^"]+\?metric=cg&amp;k=\d+"[^>]*>6.0000</a>'
    assert re.search(rf'<td title="6.0">{link}</td>', row)
    damson = text(response).split('<tr data-keyword="damson">')[1].split("</tr>")[0]
    assert "<td>1 / 2</td>" in damson


def test_search_narrows_the_table_ignoring_case(evaluation, owner):
    response = table_of(client_for(owner), evaluation, "q=AN")

    assert shown_keywords(response) == ["banana"]
    assert 'data-testid="keyword-count">1 keyword<' in text(response)


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("cg@2", ["apple", "cherry", "banana", "damson"]),
        ("-cg@2", ["banana", "cherry", "apple", "damson"]),
        ("keyword", ["apple", "banana", "cherry", "damson"]),
        ("-keyword", ["damson", "cherry", "banana", "apple"]),
        ("-position", ["damson", "cherry", "banana", "apple"]),
    ],
)
def test_sorting_by_a_metric_either_way_puts_keywords_without_a_value_last(
    sort, expected, evaluation, owner
):
    # damson, half graded, is made a keyword without a value.
    KeywordMetric.objects.filter(keyword__text="damson").update(value=None)

    assert shown_keywords(table_of(client_for(owner), evaluation, f"sort={sort}")) == expected


def test_the_sorted_heading_says_so_and_its_link_reverses_the_sort(evaluation, owner):
    page = text(table_of(client_for(owner), evaluation, "sort=cg%402&q=a"))

    assert '<th aria-sort="ascending"><a href="?sort=-cg%402&amp;q=a#keywords"' in page
    # Another heading sorts by its own metric, keeping the search.
    assert '<a href="?sort=ndcg%402&amp;q=a#keywords" data-sort="ndcg@2">' in page


def test_filtering_to_failed_keywords(evaluation, owner):
    Keyword.objects.filter(evaluation=evaluation, text="cherry").update(
        failed=True, http_status=502, execution_message="bad gateway"
    )

    response = table_of(client_for(owner), evaluation, "only=failed")

    assert shown_keywords(response) == ["cherry"]
    assert '<span class="error">failed</span>' in text(response)


def test_filtering_to_keywords_with_results_still_to_grade(evaluation, owner):
    assert shown_keywords(table_of(client_for(owner), evaluation, "only=ungraded")) == ["damson"]


def test_pages_keep_the_search_sort_and_filter_in_their_links(team_a, owner):
    evaluation = make_evaluation(team=team_a, keywords={f"shoe {n:02}": 1 for n in range(60)})
    client = client_for(owner)

    first = table_of(client, evaluation, "q=shoe&sort=-keyword&only=ungraded&size=25")

    assert shown_keywords(first)[:2] == ["shoe 59", "shoe 58"]
    assert len(shown_keywords(first)) == 25
    assert "Page 1 of 3" in text(first)
    next_link = re.search(r'<a href="([^"]+)" rel="next">', text(first)).group(1)
    assert next_link == (
        "?q=shoe&amp;sort=-keyword&amp;only=ungraded&amp;size=25&amp;page=2#keywords"
    )
    second = table_of(client, evaluation, next_link[1:].replace("&amp;", "&").split("#")[0])
    assert shown_keywords(second)[0] == "shoe 34"


def test_a_page_past_the_last_shows_the_last(evaluation, owner):
    response = table_of(client_for(owner), evaluation, "size=25&page=9")

    assert response.status_code == 200
    assert shown_keywords(response) == ["apple", "banana", "cherry", "damson"]


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ("sort=mrr@3", "sort: cannot sort by &#x27;mrr@3&#x27;"),
        ("sort=--cg@2", "sort: cannot sort by"),
        ("only=everything", "only: Select a valid choice."),
        ("size=7", "size: Select a valid choice."),
        ("page=0", "page: Ensure this value is greater than or equal to 1."),
        ("page=two", "page: Enter a whole number."),
        (f"q={'x' * 501}", "q: Ensure this value has at most 500 characters"),
    ],
)
def test_bad_table_input_is_refused_naming_the_field(query, problem, evaluation, owner):
    response = table_of(client_for(owner), evaluation, query)

    assert response.status_code == 400
    assert problem in text(response)
    # The page still shows, with the table unfiltered.
    assert shown_keywords(response) == ["apple", "banana", "cherry", "damson"]


def test_the_tables_query_count_does_not_grow_with_the_page_size(team_a, owner):
    evaluation = make_evaluation(team=team_a, keywords={f"kw {n:03}": 2 for n in range(260)})
    grade_slots(evaluation, {f"kw {n:03}": [1, 0] for n in range(0, 260, 3)})
    client = client_for(owner)
    client.get("/")  # a warm session
    table_of(client, evaluation, "size=25")  # and the coverage, read once per change

    counts = []
    for size in (25, 250):
        with CaptureQueriesContext(connection) as queries:
            response = table_of(client, evaluation, f"size={size}&sort=-ndcg@10&only=ungraded")
        assert response.status_code == 200
        counts.append(len(queries))

    assert counts[0] == counts[1]
    assert counts[0] <= 12


def test_the_table_of_a_keyword_with_no_results_shows_none_graded(team_a, owner):
    evaluation = make_evaluation(team=team_a, keywords={"empty": 0})
    [keyword] = keywords_add(evaluation=evaluation, texts=["later"])
    snapshots_add(keyword=keyword, documents=[Document("d1", "One")])

    response = table_of(client_for(owner), evaluation)

    assert shown_keywords(response) == ["empty", "later"]
    assert "<td>0 / 0</td>" in text(response) and "<td>0 / 1</td>" in text(response)
