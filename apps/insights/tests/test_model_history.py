"""A search model's history: each metric across its finished evaluations, oldest first."""

import json
import re
from datetime import UTC, datetime

import pytest
from django.test import override_settings

from apps.evaluations.models import Evaluation
from apps.insights import model_history
from tests.factories import client_for, make_evaluation

from .lead_pages import finish, make_model, text

pytestmark = pytest.mark.django_db


def day(number: int) -> datetime:
    return datetime(2026, 4, number, 16, 0, tzinfo=UTC)


@pytest.fixture
def model(team_a):
    return make_model(team_a)


@pytest.fixture
def history(team_a, model):
    """Three finished evaluations of the model (finished out of creation order), one
    running, one of another model; the third measures RR@3 as well."""
    late = finish(
        make_evaluation(team=team_a),
        day(9),
        model=model,
        values={"ndcg@10": 0.7, "precision@5": 0.5},
    )
    early = finish(
        make_evaluation(team=team_a),
        day(1),
        model=model,
        values={"ndcg@10": 0.4, "precision@5": 0.3},
    )
    middle = finish(
        make_evaluation(team=team_a, metrics=[("ndcg", 10), ("rr", 3)]),
        day(5),
        model=model,
        values={"ndcg@10": 0.55, "rr@3": 0.8},
    )
    running = make_evaluation(team=team_a)
    Evaluation.objects.filter(id=running.id).update(search_model=model)
    finish(make_evaluation(team=team_a), day(2), model=make_model(team_a, "Other"))
    return [early, middle, late]


def url(model) -> str:
    return f"/models/{model.id}/history/"


def test_the_metrics_across_finished_evaluations_from_oldest_to_newest(history, model):
    result = model_history.model_history(search_model_id=model.id)

    assert [row.evaluation.id for row in result.rows] == [e.id for e in history]
    assert [column.key for column in result.columns] == ["ndcg@10", "precision@5", "rr@3"]
    assert [row.values for row in result.rows] == [
        [0.4, 0.3, None],
        [0.55, None, 0.8],
        [0.7, 0.5, None],
    ]
    assert not result.more


@pytest.mark.parametrize("lead", ["owner", "admin"])
def test_a_lead_reads_the_history_as_charts_and_a_table(lead, request, history, model):
    response = client_for(request.getfixturevalue(lead)).get(url(model))

    page = text(response)
    assert response.status_code == 200
    table = page.split('data-testid="model-history"')[1].split("</table>")[0]
    assert re.findall(r'<tr data-evaluation="(\d+)">', table) == [str(e.id) for e in history]
    assert '<td class="number" title="0.55">0.5500</td>' in table
    charts = dict(
        re.findall(r'<script id="(model-history-\d+)" type="application/json">(.*?)</script>', page)
    )
    assert len(charts) == 3
    ndcg = json.loads(charts["model-history-0"])
    assert ndcg["labels"] == [
        f"{e.name} · 2026-04-0{d} 16:00" for e, d in zip(history, (1, 5, 9), strict=True)
    ]
    assert ndcg["series"][0]["values"] == [0.4, 0.55, 0.7]
    assert json.loads(charts["model-history-1"])["series"][0]["values"] == [0.3, None, 0.5]


def test_each_evaluation_stands_on_the_time_axis_where_it_finished(history, model):
    [ndcg, *_] = model_history.model_history(search_model_id=model.id).charts()

    # Milliseconds of the wall clock (UTC here): four days apart, then four again.
    assert ndcg[2]["times"] == [day(number).timestamp() * 1000 for number in (1, 5, 9)]


@override_settings(TIME_ZONE="America/New_York")
def test_the_time_axis_reads_the_wall_clock_of_the_pages_time_zone(history, model):
    [ndcg, *_] = model_history.model_history(search_model_id=model.id).charts()

    # 16:00 UTC on 1 April is noon in New York (daylight time): the axis says noon.
    assert ndcg[2]["times"][0] == datetime(2026, 4, 1, 12, 0, tzinfo=UTC).timestamp() * 1000
    assert ndcg[2]["labels"][0].endswith("· 2026-04-01 12:00")


def test_evaluations_not_finished_are_listed_apart_not_drawn(history, model, owner):
    running = Evaluation.objects.get(search_model=model, status="active")

    result = model_history.model_history(search_model_id=model.id)
    page = text(client_for(owner).get(url(model)))

    assert result.unfinished == [running]
    assert running.id not in [row.evaluation.id for row in result.rows]
    listed = page.split('data-testid="model-history-unfinished"')[1].split("</ul>")[0]
    assert f'data-evaluation="{running.id}"' in listed
    assert "Active" in listed


def test_the_models_page_and_the_model_list_link_to_its_history(history, model, owner):
    client = client_for(owner)

    assert f'href="{url(model)}"' in text(client.get(f"/models/{model.id}/"))
    assert f'href="{url(model)}"' in text(client.get("/models/"))


def test_a_model_with_no_finished_evaluation_says_so(team_a, owner):
    model = make_model(team_a)

    response = client_for(owner).get(url(model))

    assert 'data-testid="model-history-empty"' in text(response)


def test_only_the_latest_evaluations_are_drawn_when_there_are_very_many(team_a, model, monkeypatch):
    monkeypatch.setattr(model_history, "MODEL_HISTORY_LIMIT", 2)
    for number in range(1, 4):
        finish(make_evaluation(team=team_a), day(number), model=model, values={"ndcg@10": number})

    result = model_history.model_history(search_model_id=model.id)

    assert [row.values[0] for row in result.rows] == [2, 3]
    assert result.more


def test_the_evaluation_page_links_to_its_models_history(history, model, owner):
    page = text(client_for(owner).get(f"/evaluations/{history[0].id}/"))

    assert f'href="{url(model)}"' in page


def test_an_evaluator_is_refused_model_history(history, model, evaluator):
    assert client_for(evaluator).get(url(model)).status_code == 403


def test_the_outsider_gets_not_found(history, model, outsider):
    assert client_for(outsider).get(url(model)).status_code == 404


def test_a_missing_model_is_not_found(owner):
    assert client_for(owner).get("/models/999999/history/").status_code == 404


def test_model_history_costs_the_same_queries_for_many_evaluations(
    team_a, model, owner, django_assert_max_num_queries
):
    for number in range(1, 25):
        finish(make_evaluation(team=team_a), day(number), model=model, values={"ndcg@10": 0.5})
    client = client_for(owner)
    client.get("/")

    with django_assert_max_num_queries(7):
        assert client.get(url(model)).status_code == 200
