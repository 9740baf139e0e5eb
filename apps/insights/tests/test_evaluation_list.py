"""The evaluation list: each evaluation's model, headline metrics, progress and date;
search, filters, sort and pages kept in the query string; bad input named by its field;
only the team's evaluations; a fixed number of queries."""

import re
from datetime import UTC, datetime

import pytest
from django.core.cache import cache

from apps.accounts.models import Tag
from apps.evaluations.models import Evaluation, Status
from tests.factories import client_for, make_evaluation

from .lead_pages import make_model, set_metric_values, text

pytestmark = pytest.mark.django_db

URL = "/evaluations/"


def evaluation_named(team, name: str, *, metrics=(("ndcg", 10), ("precision", 5)), **fields):
    """An evaluation with this name, without keywords; `fields` are set on its row
    (status, search_model, archived, progress, created_at...)."""
    evaluation = make_evaluation(team=team, metrics=list(metrics), keywords={}, start=False)
    Evaluation.objects.filter(id=evaluation.id).update(name=name, **fields)
    evaluation.refresh_from_db()
    return evaluation


def created(day: int) -> datetime:
    return datetime(2026, 5, day, 9, 0, tzinfo=UTC)


@pytest.fixture
def shop(team_a):
    """Three evaluations of two models and one with no model, made on different days;
    nDCG@10 0.8, 0.6, none yet and (the last does not measure it) none; one tagged."""
    bm25, vectors = make_model(team_a, "BM25"), make_model(team_a, "Vectors")
    alpha = evaluation_named(
        team_a, "Alpha shoes", search_model=bm25, status=Status.FINISHED, progress=1.0,
        created_at=created(1),
    )  # fmt: skip
    beta = evaluation_named(
        team_a, "Beta jackets", search_model=vectors, status=Status.ACTIVE, progress=0.5,
        created_at=created(3),
    )  # fmt: skip
    gamma = evaluation_named(
        team_a, "Gamma SHOES", search_model=bm25, status=Status.PENDING, created_at=created(2)
    )
    delta = evaluation_named(
        team_a, "Delta imported", metrics=[("rr", 3)], status=Status.ACTIVE, progress=0.25,
        created_at=created(4),
    )  # fmt: skip
    set_metric_values(alpha, {"ndcg@10": 0.8, "precision@5": 0.4})
    set_metric_values(beta, {"ndcg@10": 0.6, "precision@5": 0.9})
    set_metric_values(delta, {"rr@3": 0.5})
    beta.tags.add(Tag.objects.create(team=team_a, name="apparel"))
    return {"alpha": alpha, "beta": beta, "gamma": gamma, "delta": delta, "bm25": bm25}


def listed(response) -> list[str]:
    return re.findall(
        r'<tr data-evaluation="\d+">\s*<td><input [^>]*aria-label="Compare ([^"]+)"', text(response)
    )


def row_of(response, evaluation) -> str:
    return text(response).split(f'<tr data-evaluation="{evaluation.id}">')[1].split("</tr>")[0]


def get(client, query: str = ""):
    return client.get(f"{URL}?{query}")


def test_each_evaluation_shows_its_model_headline_metrics_progress_and_date(shop, owner):
    response = get(client_for(owner))

    assert response.status_code == 200
    alpha = row_of(response, shop["alpha"])
    assert f'<a href="/models/{shop["bm25"].id}/">BM25</a>' in alpha
    assert 'data-metric="ndcg@10">nDCG@10 <span title="0.8">0.8000</span>' in alpha
    assert 'data-metric="precision@5">P@5 <span title="0.4">0.4000</span>' in alpha
    assert "100.0% · 0 of 0 grades" in alpha
    assert "<td>2026-05-01</td>" in alpha
    assert "none</span>" in row_of(response, shop["delta"])  # results without a model


def test_the_newest_comes_first_until_asked_otherwise(shop, owner):
    assert listed(get(client_for(owner))) == [
        "Delta imported",
        "Beta jackets",
        "Gamma SHOES",
        "Alpha shoes",
    ]


def test_only_an_evaluations_first_three_metrics_are_its_headline(team_a, owner):
    many = evaluation_named(
        team_a, "Many", metrics=[("ndcg", 10), ("precision", 5), ("rr", 10), ("ap", 10)]
    )
    set_metric_values(many, {"ap@10": 0.3, "rr@10": 0.7})

    row = row_of(get(client_for(owner)), many)

    assert re.findall(r'data-metric="([^"]+)"', row) == ["ndcg@10", "precision@5", "rr@10"]


def test_search_finds_any_part_of_the_name_ignoring_case(shop, owner):
    response = get(client_for(owner), "q=shoes")

    assert listed(response) == ["Gamma SHOES", "Alpha shoes"]
    assert 'data-testid="evaluation-count">2 evaluations<' in text(response)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("status=active", ["Delta imported", "Beta jackets"]),
        ("status=finished", ["Alpha shoes"]),
        ("model={bm25}", ["Gamma SHOES", "Alpha shoes"]),
        ("tag={apparel}", ["Beta jackets"]),
        ("status=pending&model={bm25}", ["Gamma SHOES"]),
    ],
)
def test_filters_narrow_the_list(query, expected, shop, owner):
    ids = {"bm25": shop["bm25"].id, "apparel": Tag.objects.get(name="apparel").id}

    assert listed(get(client_for(owner), query.format(**ids))) == expected


def test_archived_evaluations_show_only_when_asked(shop, owner):
    Evaluation.objects.filter(id=shop["alpha"].id).update(archived=True)
    client = client_for(owner)

    assert "Alpha shoes" not in listed(get(client))
    assert "Alpha shoes" in listed(get(client, "archived=1"))
    assert "(archived)" in row_of(get(client, "archived=1"), shop["alpha"])


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("name", ["Alpha shoes", "Beta jackets", "Delta imported", "Gamma SHOES"]),
        ("-name", ["Gamma SHOES", "Delta imported", "Beta jackets", "Alpha shoes"]),
        ("status", ["Gamma SHOES", "Delta imported", "Beta jackets", "Alpha shoes"]),
        ("-status", ["Alpha shoes", "Delta imported", "Beta jackets", "Gamma SHOES"]),
        ("model", ["Gamma SHOES", "Alpha shoes", "Beta jackets", "Delta imported"]),
        ("progress", ["Gamma SHOES", "Delta imported", "Beta jackets", "Alpha shoes"]),
        ("created", ["Alpha shoes", "Gamma SHOES", "Beta jackets", "Delta imported"]),
        # Without a value (none yet, or not measured) last either way.
        ("ndcg@10", ["Beta jackets", "Alpha shoes", "Delta imported", "Gamma SHOES"]),
        ("-ndcg@10", ["Alpha shoes", "Beta jackets", "Delta imported", "Gamma SHOES"]),
    ],
)
def test_the_list_sorts_by_any_column_or_metric_either_way(sort, expected, shop, owner):
    assert listed(get(client_for(owner), f"sort={sort}")) == expected


def test_sorting_by_a_metric_shows_its_value_and_its_heading_reverses_the_sort(shop, owner):
    response = get(client_for(owner), "sort=-precision%405&status=active")

    page = text(response)
    assert '<th aria-sort="descending"><a href="?sort=precision%405&amp;status=active"' in page
    assert 'data-testid="sorted-value" title="0.9">0.9000<' in row_of(response, shop["beta"])
    assert "does not measure it" in row_of(response, shop["delta"])
    assert '<option value="-precision@5" selected>P@5, highest first</option>' in page


def test_pages_keep_the_search_filters_and_sort_in_their_links(team_a, owner):
    for number in range(30):
        evaluation_named(team_a, f"Run {number:02d}", status=Status.ACTIVE)
    client = client_for(owner)

    first = get(client, "q=run&status=active&sort=name")
    second = get(client, "q=run&status=active&sort=name&page=2")
    bigger = get(client, "q=run&status=active&sort=name&size=50")

    assert listed(first) == [f"Run {number:02d}" for number in range(25)]
    assert 'href="?q=run&amp;status=active&amp;sort=name&amp;page=2" rel="next"' in text(first)
    assert listed(second) == [f"Run {number:02d}" for number in range(25, 30)]
    assert len(listed(bigger)) == 30


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ("status=closed", "status: Select a valid choice. closed is not one of"),
        ("model=abc", "model: Select a valid choice. abc is not one of"),
        ("tag=999999", "tag: Select a valid choice. 999999 is not one of"),
        ("sort=mrr@3", "sort: cannot sort by &#x27;mrr@3&#x27;; sort by one of name, status"),
        ("size=7", "size: Select a valid choice. 7 is not one of"),
        ("page=0", "page: Ensure this value is greater than or equal to 1."),
        ("q=" + "x" * 201, "q: Ensure this value has at most 200 characters"),
    ],
)
def test_bad_input_is_refused_naming_the_field_above_the_whole_list(query, problem, shop, owner):
    response = get(client_for(owner), query)

    assert response.status_code == 400
    assert problem in text(response)
    assert len(listed(response)) == 4


def test_another_teams_model_is_no_filter_and_its_evaluations_never_show(shop, owner, team_b):
    theirs = make_model(team_b, "Their model")
    evaluation_named(team_b, "Their shoes", search_model=theirs)
    client = client_for(owner)

    assert get(client, f"model={theirs.id}").status_code == 400
    assert "Their shoes" not in listed(get(client, "q=shoes&archived=1"))
    assert "Their model" not in text(get(client))


def test_an_outsider_sees_only_their_own_teams_evaluations(shop, outsider, team_b):
    evaluation_named(team_b, "Their shoes")

    assert listed(get(client_for(outsider))) == ["Their shoes"]


def test_an_evaluator_is_refused_the_list(shop, evaluator):
    assert client_for(evaluator).get(URL).status_code == 403


# The session with its person and teams (1); the team's models, tags and measured metrics
# for the filters (3); the count, the page with its models, and its metric values (3);
# whose grades each rests on, for those not read since their grades changed (1).
LIST_QUERIES = 8


@pytest.mark.parametrize("count", [2, 60])
def test_the_list_reads_a_fixed_number_of_queries_whatever_it_shows(
    count, team_a, owner, django_assert_num_queries
):
    model = make_model(team_a)
    tag = Tag.objects.create(team=team_a, name="apparel")
    for number in range(count):
        evaluation = evaluation_named(
            team_a, f"Run {number}", search_model=model, status=Status.ACTIVE
        )
        set_metric_values(evaluation, {"ndcg@10": number / 100})
        evaluation.tags.add(tag)
    client = client_for(owner)
    get(client)  # the session is warm
    cache.clear()  # and no evaluation's sources were read yet
    query = f"q=run&status=active&model={model.id}&tag={tag.id}&sort=-ndcg@10&size=100"

    with django_assert_num_queries(LIST_QUERIES):
        response = get(client, query)

    assert len(listed(response)) == count
