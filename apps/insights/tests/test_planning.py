"""Planning an evaluation's size from the team's earlier evaluations."""

import math
from datetime import UTC, datetime

import pytest

from apps.evaluations.models import Evaluation
from apps.scoring.models import KeywordMetric
from apps.stats.power import keywords_needed
from tests.comparison_data import imported_evaluation
from tests.factories import client_for

from .lead_pages import text

pytestmark = pytest.mark.django_db

URL = "/evaluations/plan/"


def finished(evaluation, day):
    Evaluation.objects.filter(id=evaluation.id).update(
        status="finished", finished_at=datetime(2026, 11, day, 9, tzinfo=UTC)
    )
    return evaluation


def ranking(team, name, shift, keywords=12):
    """Each keyword ranks five results; `shift` rotates them, so nDCG@5 moves by
    keyword-dependent amounts between two rankings."""
    lists = {}
    for number in range(keywords):
        grades = [3, 2, 1, 0, (number % 3)]
        turn = (number + shift) % 5
        rotated = grades[turn:] + grades[:turn]
        lists[f"query {number}"] = [(f"q{number}-{i}", grade) for i, grade in enumerate(rotated)]
    return imported_evaluation(team, name, lists, metrics=[("ndcg", 5)])


def ndcg_by_keyword(evaluation):
    return dict(
        KeywordMetric.objects.filter(evaluation=evaluation, metric="ndcg").values_list(
            "keyword__text", "value"
        )
    )


def test_a_lead_learns_how_many_keywords_a_change_needs_from_earlier_pairs(team_a, owner):
    first = finished(ranking(team_a, "Week 1", 0), 1)
    second = finished(ranking(team_a, "Week 2", 1), 2)
    third = finished(ranking(team_a, "Week 3", 3), 3)
    # Each pair's differences, about their own mean, pooled.
    squares, freedom = 0.0, 0
    for earlier, later in ((first, second), (second, third)):
        a, b = ndcg_by_keyword(earlier), ndcg_by_keyword(later)
        differences = [b[text] - a[text] for text in a]
        mean = sum(differences) / len(differences)
        squares += sum((d - mean) ** 2 for d in differences)
        freedom += len(differences) - 1
    sd = math.sqrt(squares / freedom)

    response = client_for(owner).get(URL, {"metric": "NDCG@5", "change": "0.05", "power": "0.8"})

    plan = response.context["plan"]
    assert response.status_code == 200
    assert plan.spread.sd == pytest.approx(sd)
    assert plan.keywords == keywords_needed(change=0.05, sd=sd, power=0.8)
    assert [pair[:2] for pair in plan.pairs] == [("Week 2", "Week 3"), ("Week 1", "Week 2")]
    assert f'data-testid="keywords-needed">{plan.keywords}</strong>' in text(response)


def test_without_two_finished_evaluations_the_plan_says_why(team_a, owner):
    finished(ranking(team_a, "Only one", 0), 1)

    response = client_for(owner).get(URL, {"metric": "ndcg@5", "change": "0.05", "power": "0.8"})

    assert response.context["plan"].spread is None
    assert "nothing to learn the noise from" in text(response)


def test_another_teams_evaluations_never_inform_the_plan(team_a, team_b, owner):
    finished(ranking(team_b, "Theirs 1", 0), 1)
    finished(ranking(team_b, "Theirs 2", 2), 2)

    response = client_for(owner).get(URL, {"metric": "ndcg@5", "change": "0.05", "power": "0.8"})

    assert response.context["plan"].spread is None


@pytest.mark.parametrize(
    ("asked", "problem"),
    [
        ({"metric": "ndcg@ten", "change": "0.1", "power": "0.8"}, "metric:"),
        ({"metric": "nope@5", "change": "0.1", "power": "0.8"}, "metric:"),
        ({"metric": "ndcg@5", "change": "0", "power": "0.8"}, "change:"),
        ({"metric": "ndcg@5", "change": "nan", "power": "0.8"}, "change:"),
        ({"metric": "ndcg@5", "change": "1" * 50, "power": "0.8"}, "change:"),
        ({"metric": "ndcg@5", "change": "0.1", "power": "1"}, "power:"),
    ],
)
def test_bad_input_is_refused_naming_the_field(team_a, owner, asked, problem):
    response = client_for(owner).get(URL, asked)

    assert response.status_code == 400
    assert problem in text(response)


def test_evaluators_may_not_plan(evaluator):
    assert client_for(evaluator).get(URL).status_code == 403
