"""/api/v1/comparisons/: evaluations compared over their common keywords, with a token."""

import math

import pytest

from apps.accounts.api_tokens import api_token_create
from apps.scoring.models import KeywordMetric
from apps.stats import paired as stats
from tests.comparison_data import (
    imported_evaluation,
    same_keywords_pair,
    shop_pair,
)
from tests.factories import client_for, make_evaluation

pytestmark = pytest.mark.django_db

URL = "/api/v1/comparisons/"


@pytest.fixture
def pair(team_a):
    return shop_pair(team_a)


def ids(*evaluations) -> str:
    return ",".join(str(e.id) for e in evaluations)


def test_a_comparison_answers_means_difference_interval_p_value_and_counts(api, pair):
    first, second = pair

    response = api.get(f"{URL}?evaluations={ids(first, second)}")

    assert response.status_code == 200
    body = response.json()
    people = {
        "kind": "people",
        "graded": 100,
        "people": 0,
        "imported": 100,
        "judges": [],
        "clicks": [],
    }
    judged_by = {**people, "copied": 0, "stale": 0}
    assert body["baseline"] == {
        "id": first.id,
        "name": "Ranking A",
        "keywords": 20,
        "judged_by": judged_by,
    }
    assert body["common_keywords"] == 20
    assert (body["sources_differ"], body["people_only"], body["people_keywords"]) == (
        False,
        False,
        20,
    )
    [compared] = body["comparisons"]
    assert compared["evaluation"]["judged_by"] == judged_by
    assert compared["evaluation"]["id"] == second.id and compared["evaluation"]["keywords"] == 20
    ndcg, precision = compared["metrics"]
    a = list(KeywordMetric.objects.filter(evaluation=first, metric="ndcg").values_list("value"))
    b = list(KeywordMetric.objects.filter(evaluation=second, metric="ndcg").values_list("value"))
    assert (ndcg["metric"], ndcg["k"], ndcg["label"]) == ("ndcg", 10, "nDCG@10")
    assert ndcg["baseline_mean"] == pytest.approx(math.fsum(v for (v,) in a) / 20)
    assert ndcg["mean"] == pytest.approx(math.fsum(v for (v,) in b) / 20)
    assert ndcg["difference"] == pytest.approx(ndcg["mean"] - ndcg["baseline_mean"])
    assert ndcg["ci_low"] <= ndcg["difference"] <= ndcg["ci_high"]
    assert ndcg["p_value"] == pytest.approx(1 / (stats.PERMUTATIONS + 1))
    assert (ndcg["p_exact"], ndcg["significant"]) == (False, True)
    assert (ndcg["wins"], ndcg["ties"], ndcg["losses"]) == (20, 0, 0)
    assert (ndcg["keywords_compared"], ndcg["keywords_excluded"]) == (20, 0)
    assert ndcg["summary"] == "Ranking B is better than Ranking A on nDCG@10 (p < 0.001)"
    # Every result of both is judged: full coverage, nothing to warn about.
    assert (ndcg["baseline_judged"], ndcg["judged"]) == (1.0, 1.0)
    assert (ndcg["baseline_unjudged"], ndcg["unjudged"], ndcg["coverage_warning"]) == (0, 0, "")
    assert 0 < ndcg["detectable_change"] < 1  # the page's test checks it against statsmodels
    assert precision["baseline_mean"] == pytest.approx(0.6)
    assert precision["mean"] == pytest.approx(0.9)
    correlation = compared["rank_correlation"]
    assert -1 <= correlation["kendall_tau_mean"] < 0
    assert (correlation["kendall_tau_keywords"], correlation["rbo_keywords"]) == (20, 20)
    assert 0 < correlation["rbo_mean"] < 1
    assert "keywords" not in compared
    assert body["method"] == {
        "bootstrap_samples": 10_000,
        "permutations": 10_000,
        "confidence": 0.95,
        "significance": 0.05,
        "seed": stats.SEED,
        "tie_tolerance": stats.TIE_TOLERANCE,
        "rbo_persistence": 0.9,
    }


def test_the_api_and_the_page_give_the_same_numbers(api, owner, pair):
    body = api.get(f"{URL}?evaluations={ids(*pair)}").json()
    page = client_for(owner).get(f"/evaluations/compare/?e={pair[0].id}&e={pair[1].id}")

    shown = page.context["comparison"].pairs[0].metrics
    answered = body["comparisons"][0]["metrics"]
    assert [(m["ci_low"], m["ci_high"], m["p_value"]) for m in answered] == [
        (m.result.ci_low, m.result.ci_high, m.result.p_value) for m in shown
    ]


def test_keywords_true_lists_each_common_keyword_with_values_and_differences(api, team_a):
    first = imported_evaluation(team_a, "A", {"hat": [("a", 3), ("b", 0)], "cap": [("c", None)]})
    second = imported_evaluation(team_a, "B", {"cap": [("c", 2)], "hat": [("b", 0), ("a", 3)]})

    body = api.get(f"{URL}?evaluations={ids(first, second)}&keywords=true").json()

    hat, cap = body["comparisons"][0]["keywords"]
    assert hat["keyword"] == "hat"
    ndcg = hat["metrics"][0]
    assert (ndcg["metric"], ndcg["k"], ndcg["baseline"]) == ("ndcg", 10, 1.0)
    assert ndcg["difference"] == pytest.approx(ndcg["value"] - 1.0)
    assert ndcg["value"] < 1.0
    assert (hat["kendall_tau"], hat["rbo"]) == (-1.0, pytest.approx(0.9))
    assert cap["metrics"][0]["baseline"] is None  # not graded in A
    assert cap["metrics"][0]["difference"] is None
    assert cap["kendall_tau"] is None  # a single shared document: no pair to order
    assert cap["rbo"] == 1.0
    assert body["comparisons"][0]["metrics"][0]["keywords_excluded"] == 1


def test_metric_limits_the_comparison_to_the_metrics_named(api, pair):
    body = api.get(f"{URL}?evaluations={ids(*pair)}&metric=precision@5").json()

    assert [m["metric"] for m in body["comparisons"][0]["metrics"]] == ["precision"]


def test_three_evaluations_are_each_compared_with_the_first(api, team_a, pair):
    third = imported_evaluation(team_a, "C", {"query 1": [("x", 1)], "query 2": [("y", 2)]})

    body = api.get(f"{URL}?evaluations={ids(*pair, third)}").json()

    assert body["common_keywords"] == 2
    assert [c["evaluation"]["name"] for c in body["comparisons"]] == ["Ranking B", "C"]


def test_another_teams_evaluations_are_404(api, pair, team_b):
    theirs = make_evaluation(team=team_b)

    response = api.get(f"{URL}?evaluations={ids(pair[0], theirs)}")

    assert response.status_code == 404
    assert response.json() == {"detail": "No such evaluation in this team.", "errors": []}


def test_another_teams_token_sees_404_for_our_evaluations(pair, team_b):
    _token, text = api_token_create(team=team_b, name="theirs")
    client = client_for(None, headers={"Authorization": f"Bearer {text}"})

    assert client.get(f"{URL}?evaluations={ids(*pair)}").status_code == 404


def test_without_a_token_the_answer_is_401(pair):
    assert client_for(None).get(f"{URL}?evaluations={ids(*pair)}").status_code == 401


def test_a_logged_in_person_without_a_token_is_refused(owner, pair):
    assert client_for(owner).get(f"{URL}?evaluations={ids(*pair)}").status_code in (401, 403)


@pytest.mark.parametrize(
    ("asked", "field", "message"),
    [
        ("", "evaluations", "choose at least two evaluations to compare"),
        ("evaluations={a}", "evaluations", "choose at least two evaluations to compare"),
        ("evaluations={a},x1", "evaluations", "'x1' is not an evaluation id"),
        ("evaluations={a},,{b}", "evaluations", "'' is not an evaluation id"),
        ("evaluations={a},{a}", "evaluations", "evaluation {a} is chosen twice"),
        ("evaluations=1,2,3,4,5,6,7", "evaluations", "compare at most 6 evaluations at once"),
        (
            "evaluations={a},{b}&metric=ndcg@x",
            "metric",
            "'ndcg@x' is not metric@k (e.g. ndcg@10) or a metric alone",
        ),
        ("evaluations={a},{b}&metric=ndcg", "metric", "ndcg is not reported by Ranking A"),
        ("evaluations={a},{b}&metric=err@10", "metric", "err@10 is not reported by Ranking A"),
        ("evaluations={a},{b}&keywords=maybe", "keywords", "'maybe' is not true or false"),
        ("evaluations={a},{b}%00", "evaluations", "must not contain NUL (0x00) characters"),
    ],
)
def test_bad_input_is_refused_naming_the_field(api, pair, asked, field, message):
    first, second = pair

    response = api.get(f"{URL}?{asked.format(a=first.id, b=second.id)}")

    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": field, "message": message.format(a=first.id)}]


def test_a_metric_only_the_baseline_reports_is_refused(api, team_a):
    first = imported_evaluation(team_a, "A", {"x": [("d", 1)]}, metrics=[("ndcg", 10), ("cg", 3)])
    second = imported_evaluation(team_a, "B", {"x": [("d", 2)]}, metrics=[("ndcg", 10)])

    response = api.get(f"{URL}?evaluations={ids(first, second)}&metric=cg@3")

    assert response.json()["errors"] == [
        {"field": "metric", "message": "cg@3 is not reported by any other evaluation"}
    ]


# Token (2: look-up and its team), then the evaluations, their metrics, keywords, metric
# values, coverage and result lists (6): the same for 2 and 40 keywords.
API_QUERIES = 8


@pytest.mark.parametrize("size", [2, 40])
def test_a_comparison_reads_a_fixed_number_of_queries(
    api, team_a, size, django_assert_max_num_queries
):
    first, second = same_keywords_pair(team_a, size)

    with django_assert_max_num_queries(API_QUERIES):
        response = api.get(f"{URL}?evaluations={ids(first, second)}&keywords=true")

    assert len(response.json()["comparisons"][0]["keywords"]) == size
