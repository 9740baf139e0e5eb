"""A lead finds evaluations on the list in Chromium: narrows it to the active ones, sorts
them by a metric, then goes from an evaluation's model to the model's history and reads
its chart, whose points stand along a time axis labelled with dates."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from apps.accounts.services import team_create
from apps.endpoints.models import SearchEndpoint, SearchModel
from apps.evaluations.models import Evaluation, Status
from apps.evaluations.services import evaluation_create
from apps.insights.tests.lead_pages import set_metric_values
from tests.browser.conftest import SCREENSHOTS
from tests.browser.people import PASSWORD, log_in

pytestmark = pytest.mark.django_db(transaction=True)
# When each of the model's evaluations finished, in days before now: a gap of one day,
# then one of eight, which a time axis shows and evenly spaced labels would not.
FINISHED_DAYS_AGO = {"Catalogue 1": 10, "Catalogue 2": 9, "Catalogue 3": 1}


def evaluation(team, name: str, model, status: str, ndcg: float, **fields) -> Evaluation:
    made = evaluation_create(team=team, name=name, metrics=[("ndcg", 10), ("precision", 5)])
    Evaluation.objects.filter(id=made.id).update(search_model=model, status=status, **fields)
    set_metric_values(made, {"ndcg@10": ndcg, "precision@5": ndcg / 2})
    return made


@pytest.fixture
def shop():
    """A model with three finished evaluations and two active ones, one of another model."""
    team = team_create(name="Outdoor shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    endpoint = SearchEndpoint.objects.create(team=team, name="Catalogue", url="https://x.test/")
    model = SearchModel.objects.create(team=team, endpoint=endpoint, name="Catalogue BM25")
    other = SearchModel.objects.create(team=team, endpoint=endpoint, name="Catalogue vectors")
    now = timezone.now()
    for (name, days_ago), ndcg in zip(FINISHED_DAYS_AGO.items(), (0.5, 0.55, 0.7), strict=True):
        evaluation(
            team, name, model, Status.FINISHED, ndcg, finished_at=now - timedelta(days=days_ago)
        )
    evaluation(team, "Catalogue 4", model, Status.ACTIVE, 0.62)
    evaluation(team, "Vectors 1", other, Status.ACTIVE, 0.81)
    return {"model": model}


def listed(page) -> list[str]:
    return page.locator(
        "[data-testid=evaluation-table] tbody tr a[href^='/evaluations/']"
    ).all_inner_texts()


def save(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"evaluation-list-{name}.png"), full_page=True)


def test_a_lead_filters_and_sorts_the_list_then_reads_a_models_history_over_time(
    live_server, page, shop
):
    log_in(page, live_server.url, "lead@shop.test")
    page.goto(f"{live_server.url}/evaluations/")
    assert len(listed(page)) == 5

    filters = page.get_by_test_id("evaluation-filters")
    filters.locator("select[name=status]").select_option("active")
    filters.locator("select[name=sort]").select_option(label="nDCG@10, highest first")
    filters.get_by_role("button", name="Apply").click()
    page.wait_for_url(re.compile(r"status=active.*sort=-ndcg%4010"))
    assert listed(page) == ["Vectors 1", "Catalogue 4"]
    assert page.get_by_test_id("sorted-value").all_inner_texts() == ["0.8100", "0.6200"]
    # The heading of the metric sorted by reverses the sort and keeps the filter.
    page.locator("th a[data-sort='ndcg@10']").click()
    page.wait_for_url(re.compile(r"status=active.*sort=ndcg%4010"))
    assert listed(page) == ["Catalogue 4", "Vectors 1"]
    save(page, "active-by-ndcg")

    row = page.locator("[data-testid=evaluation-table] tbody tr", has_text="Catalogue 4")
    row.get_by_role("link", name="Catalogue BM25").click()
    page.get_by_test_id("model-history-link").click()
    page.wait_for_url(f"**/models/{shop['model'].id}/history/")

    assert page.locator("[data-testid=model-history] tbody tr").count() == 3
    expect(page.get_by_test_id("model-history-unfinished")).to_contain_text("Catalogue 4")
    canvas = page.locator("[data-metric='ndcg@10'] canvas")
    expect(canvas).to_have_attribute("data-drawn", "1")
    axis = canvas.evaluate(
        """canvas => {
          const chart = Chart.getChart(canvas);
          const points = chart.getDatasetMeta(0).data.map(point => point.x);
          return {ticks: chart.scales.x.ticks.map(tick => tick.label), points};
        }"""
    )
    # Days as month-day: the table and the tooltips give the year.
    assert axis["ticks"] and all(re.fullmatch(r"\d\d-\d\d", t) for t in axis["ticks"])
    first, second, third = axis["points"]
    # Eight days between the second and third, one between the first and second.
    assert (third - second) / (second - first) == pytest.approx(8, rel=0.05)
    save(page, "model-history")
