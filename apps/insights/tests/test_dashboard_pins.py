"""Pinning a metric from its card, and the lead's dashboard showing what is pinned."""

import re
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.evaluations.models import Evaluation, EvaluationMetric
from apps.insights.services import metric_pin
from tests.factories import client_for, make_evaluation

from .lead_pages import HTMX, finish, make_model, set_metric_values, text

pytestmark = pytest.mark.django_db


@pytest.fixture
def evaluation(team_a):
    evaluation = make_evaluation(team=team_a, keywords={"shoes": 2, "hats": 1})
    set_metric_values(evaluation, {"ndcg@10": 0.625, "precision@5": 0.2})
    return evaluation


def ndcg_of(evaluation) -> EvaluationMetric:
    return EvaluationMetric.objects.get(evaluation=evaluation, metric="ndcg")


def pin_url(evaluation, metric) -> str:
    return f"/evaluations/{evaluation.id}/metrics/{metric.id}/pin/"


def pins_section(response) -> str:
    page = text(response)
    assert "<h2>Pinned</h2>" in page, page
    return page.split("<h2>Pinned</h2>")[1].split("<h2>")[0]


# --- Pinning from the card ----------------------------------------------------------------


def test_a_lead_pins_a_metric_with_htmx_and_gets_the_unpin_button(evaluation, owner):
    metric = ndcg_of(evaluation)

    response = client_for(owner).post(pin_url(evaluation, metric), {"pinned": "1"}, headers=HTMX)

    fragment = text(response)
    assert response.status_code == 200
    assert fragment.lstrip().startswith('<form class="pin-form"')
    assert 'name="pinned" value="0"' in fragment and "★ Pinned" in fragment
    metric.refresh_from_db()
    assert metric.pinned


def test_unpinning_without_htmx_returns_to_the_evaluation(evaluation, admin):
    metric = ndcg_of(evaluation)
    metric_pin(evaluation_metric=metric, pinned=True)

    response = client_for(admin).post(pin_url(evaluation, metric), {"pinned": "0"})

    assert response.status_code == 302 and response.url == f"/evaluations/{evaluation.id}/"
    metric.refresh_from_db()
    assert not metric.pinned


def test_the_card_offers_pin_or_unpin_as_the_metric_is(evaluation, owner):
    metric_pin(evaluation_metric=ndcg_of(evaluation), pinned=True)

    page = text(client_for(owner).get(f"/evaluations/{evaluation.id}/"))

    ndcg = page.split('data-metric="ndcg@10"')[1].split("</form>")[0]
    precision = page.split('data-metric="precision@5"')[1].split("</form>")[0]
    assert 'value="0"' in ndcg and "★ Pinned" in ndcg
    assert 'value="1"' in precision and "☆ Pin" in precision


@pytest.mark.parametrize("value", ["", "yes", "2"])
def test_a_pin_with_a_bad_value_is_refused_naming_the_field(value, evaluation, owner):
    metric = ndcg_of(evaluation)

    response = client_for(owner).post(pin_url(evaluation, metric), {"pinned": value}, headers=HTMX)

    assert response.status_code == 400
    assert "pinned: must be 1 (pin) or 0 (unpin)" in text(response)
    metric.refresh_from_db()
    assert not metric.pinned


def test_pinning_needs_the_csrf_token(evaluation, owner):
    metric = ndcg_of(evaluation)
    client = client_for(owner, enforce_csrf_checks=True)

    assert client.post(pin_url(evaluation, metric), {"pinned": "1"}).status_code == 403
    metric.refresh_from_db()
    assert not metric.pinned
    page = text(client.get(f"/evaluations/{evaluation.id}/"))
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    form = {"pinned": "1", "csrfmiddlewaretoken": token}
    assert client.post(pin_url(evaluation, metric), form).status_code == 302


def test_an_evaluator_cannot_pin(evaluation, evaluator):
    metric = ndcg_of(evaluation)

    assert (
        client_for(evaluator).post(pin_url(evaluation, metric), {"pinned": "1"}).status_code == 403
    )
    metric.refresh_from_db()
    assert not metric.pinned


def test_the_outsider_cannot_pin_a_team_a_metric(evaluation, outsider):
    metric = ndcg_of(evaluation)

    assert (
        client_for(outsider).post(pin_url(evaluation, metric), {"pinned": "1"}).status_code == 404
    )


def test_a_metric_of_another_evaluation_under_this_ones_address_is_not_found(
    evaluation, team_a, owner
):
    other = ndcg_of(make_evaluation(team=team_a))

    assert client_for(owner).post(pin_url(evaluation, other), {"pinned": "1"}).status_code == 404


def test_pinning_by_get_is_refused(evaluation, owner):
    assert client_for(owner).get(pin_url(evaluation, ndcg_of(evaluation))).status_code == 405


# --- The dashboard --------------------------------------------------------------------------


def test_the_dashboard_shows_pinned_evaluations_with_progress_and_pinned_metrics(
    team_a, evaluation, owner
):
    model = make_model(team_a)
    previous = finish(
        make_evaluation(team=team_a),
        datetime(2026, 1, 5, tzinfo=UTC),
        model=model,
        values={"ndcg@10": 0.5},
    )
    Evaluation.objects.filter(id=evaluation.id).update(pinned=True, search_model=model)
    metric_pin(evaluation_metric=ndcg_of(evaluation), pinned=True)

    pins = pins_section(client_for(owner).get("/"))

    card = pins.split(f'data-evaluation="{evaluation.id}"')[1]
    assert f'<a href="/evaluations/{evaluation.id}/">{evaluation.name}</a>' in card
    assert "0 of 3 grades" in card
    assert '<div data-metric="ndcg@10"><dt>nDCG@10</dt>' in card
    assert ">0.6250</strong>" in card
    assert re.search(r'data-testid="change"[^>]*>\+0\.1250</span>', card)
    assert previous.name in card
    assert 'data-metric="precision@5"' not in card  # not pinned


def test_an_evaluation_with_a_pinned_metric_shows_even_when_not_pinned_itself(evaluation, admin):
    metric_pin(evaluation_metric=ndcg_of(evaluation), pinned=True)

    pins = pins_section(client_for(admin).get("/"))

    assert f'data-evaluation="{evaluation.id}"' in pins and "nDCG@10" in pins


def test_a_pinned_evaluation_without_pinned_metrics_says_how_to_pin_one(evaluation, owner):
    Evaluation.objects.filter(id=evaluation.id).update(pinned=True)

    pins = pins_section(client_for(owner).get("/"))

    assert "No metric pinned" in pins


def test_nothing_pinned_says_how_to_pin(evaluation, owner):
    assert 'data-testid="pins-none"' in pins_section(client_for(owner).get("/"))


def test_archived_evaluations_leave_the_dashboard(evaluation, owner):
    Evaluation.objects.filter(id=evaluation.id).update(pinned=True, archived=True)

    assert 'data-testid="pins-none"' in pins_section(client_for(owner).get("/"))


def test_evaluators_see_no_pins(evaluation, evaluator):
    Evaluation.objects.filter(id=evaluation.id).update(pinned=True)
    metric_pin(evaluation_metric=ndcg_of(evaluation), pinned=True)

    assert "<h2>Pinned</h2>" not in text(client_for(evaluator).get("/"))


def test_the_outsider_sees_none_of_team_as_pins(evaluation, outsider):
    Evaluation.objects.filter(id=evaluation.id).update(pinned=True)

    pins = pins_section(client_for(outsider).get("/"))

    assert evaluation.name not in pins and 'data-testid="pins-none"' in pins


def test_the_dashboards_queries_do_not_grow_with_the_pins(team_a, owner):
    model = make_model(team_a)
    finish(make_evaluation(team=team_a), datetime(2026, 1, 5, tzinfo=UTC), model=model)
    client = client_for(owner)
    client.get("/")

    counts = []
    for _round in range(2):
        for _ in range(3):
            pinned = make_evaluation(team=team_a)
            Evaluation.objects.filter(id=pinned.id).update(pinned=True, search_model=model)
            metric_pin(evaluation_metric=ndcg_of(pinned), pinned=True)
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/").status_code == 200
        counts.append(len(queries))

    assert counts[0] == counts[1]
