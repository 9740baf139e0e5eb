"""A lead reads an evaluation in Chromium: metric cards with their change and history
chart, the keyword table sorted by a metric, a reset grade, and progress that moves by
itself when a grader's grade lands; then the leaderboard, model history and dashboard."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from apps.accounts.services import member_add, team_create
from apps.endpoints.models import SearchEndpoint, SearchModel
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    EvaluationMetricPoint,
    FeedbackSlot,
    Keyword,
    Status,
)
from apps.evaluations.services import Document, evaluation_create, keywords_add, snapshots_add
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.steps import evaluation_start
from tests.browser.conftest import SCREENSHOTS
from tests.browser.people import PASSWORD, log_in

pytestmark = pytest.mark.django_db(transaction=True)
KEYWORDS = ["trail shoes", "rain jacket", "wool socks", "tent"]
# Grades per keyword, for its three results; "tent" is left for the grader.
GRADES = {"trail shoes": [3, 2, 0], "rain jacket": [1, 1, 0], "wool socks": [3, 3, 2]}


def make_evaluation(team, model, name: str) -> Evaluation:
    evaluation = evaluation_create(
        team=team, name=name, scale="graded", metrics=[("cg", 3), ("ndcg", 3)]
    )
    for keyword in keywords_add(evaluation=evaluation, texts=KEYWORDS):
        snapshots_add(
            keyword=keyword,
            documents=[Document(f"{keyword.text}-{i}", f"{keyword.text} {i}") for i in (1, 2, 3)],
        )
    evaluation = evaluation_start(evaluation=evaluation)
    Evaluation.objects.filter(id=evaluation.id).update(search_model=model)
    return evaluation


def grade(evaluation, keyword: str, position: int, value: int, grader) -> FeedbackSlot:
    slot = FeedbackSlot.objects.get(
        evaluation=evaluation, keyword__text=keyword, snapshot__position=position
    )
    slot_judge(slot_id=slot.id, giver=Giver.recorded(grader), grade=value, reason="checked by hand")
    return slot


@pytest.fixture
def shop():
    """A model with a finished evaluation and a running one, graded but for one keyword,
    with a history of several minutes; one metric and the running evaluation pinned."""
    team = team_create(name="Outdoor shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    grader = member_add(team=team, email="grader@shop.test", role="evaluator", password=PASSWORD)
    endpoint = SearchEndpoint.objects.create(team=team, name="Catalogue", url="https://x.test/")
    model = SearchModel.objects.create(team=team, endpoint=endpoint, name="Catalogue BM25")
    previous = make_evaluation(team, model, "Outdoor 1")
    for keyword, grades in GRADES.items():
        for position, value in enumerate(grades, start=1):
            grade(previous, keyword, position, max(value - 1, 0), grader.user)
    Evaluation.objects.filter(id=previous.id).update(
        status=Status.FINISHED, finished_at=timezone.now() - timedelta(days=3)
    )
    current = make_evaluation(team, model, "Outdoor 2")
    for keyword, grades in GRADES.items():
        for position, value in enumerate(grades, start=1):
            grade(current, keyword, position, value, grader.user)
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=30)
    for metric in EvaluationMetric.objects.filter(evaluation=current):
        EvaluationMetricPoint.objects.bulk_create(
            EvaluationMetricPoint(
                evaluation_metric=metric,
                minute=start + timedelta(minutes=3 * i),
                value=(metric.value or 0) * (0.5 + i / 16),
                progress=0.075 * i,
            )
            for i in range(1, 9)
        )
    Evaluation.objects.filter(id=current.id).update(pinned=True)
    EvaluationMetric.objects.filter(evaluation=current, metric="ndcg").update(pinned=True)
    return {"current": current, "previous": previous, "model": model, "grader": grader.user}


def keyword_order(page) -> list[str]:
    return page.locator("[data-testid=keyword-table] tbody tr").evaluate_all(
        "rows => rows.map(row => row.dataset.keyword)"
    )


def charts_drawn(page) -> int:
    """How many canvases Chart.js has drawn a chart on, once charts.js has been through
    them all (it marks each data-drawn; after a click the page may still be loading)."""
    expect(page.locator("canvas[data-chart]:not([data-drawn])")).to_have_count(0)
    return page.evaluate(
        "() => [...document.querySelectorAll('canvas[data-chart]')]"
        ".filter(c => Chart.getChart(c) && c.width > 0).length"
    )


def save(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"lead-pages-{name}.png"), full_page=True)


def test_a_lead_reads_sorts_resets_and_watches_progress_move(live_server, page, shop):
    current = shop["current"]
    log_in(page, live_server.url, "lead@shop.test")
    page.goto(f"{live_server.url}/evaluations/{current.id}/")

    cards = page.get_by_test_id("metric-cards")
    cg = cards.locator("[data-metric='cg@3']")
    assert cg.locator(".metric-value").inner_text() == "5.0000"  # (5 + 2 + 8) / 3
    # The previous evaluation had every grade one lower: CG@3 (3 + 0 + 5) / 3.
    assert cg.get_by_test_id("change").inner_text() == "+2.3333"
    assert "Outdoor 1" in cg.locator(".metric-change").inner_text()
    assert charts_drawn(page) == 2
    # Hovering a point of the chart shows its value.
    canvas = cg.locator("canvas")
    canvas.scroll_into_view_if_needed()  # the mouse reaches only what the window shows
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + box["width"] - 4, box["y"] + box["height"] / 2)
    page.wait_for_function(
        "c => Chart.getChart(c).tooltip.getActiveElements().length > 0",
        arg=canvas.element_handle(),
    )
    assert keyword_order(page) == KEYWORDS

    page.locator("[data-testid=keyword-table] th a[data-sort='cg@3']").click()
    page.wait_for_url("**sort=cg%403**")
    assert keyword_order(page) == ["rain jacket", "trail shoes", "wool socks", "tent"]
    page.locator("[data-testid=keyword-table] th a[data-sort='cg@3']").click()
    page.wait_for_url("**sort=-cg%403**")
    assert keyword_order(page) == ["wool socks", "trail shoes", "rain jacket", "tent"]
    save(page, "evaluation")

    # A lead resets the top result of "wool socks".
    page.get_by_role("link", name="wool socks").click()
    # Reset is swapped in place by htmx, which starts when the page has loaded (before,
    # the form posts and the page reloads).
    page.wait_for_load_state()
    first = page.locator("tr[data-position='1']")
    assert "checked by hand" in first.inner_text()
    page.once("dialog", lambda dialog: dialog.accept())
    first.get_by_role("button", name="Reset").click()
    page.wait_for_selector("tr[data-position='1'] [role=status]")
    assert "back in the queue" in first.inner_text()
    assert "checked by hand" not in first.inner_text()
    slot = FeedbackSlot.objects.get(
        evaluation=current, keyword__text="wool socks", snapshot__position=1
    )
    assert (slot.grade, slot.grader_id) == (None, None)
    # The keyword's own values follow: CG@3 was 3 + 3 + 2.
    assert page.locator("#keyword-values [data-metric='cg@3'] dd.value").inner_text() == "5.0000"
    save(page, "keyword-after-reset")

    # Back on the evaluation page, a grade lands while the lead watches.
    page.goto(f"{live_server.url}/evaluations/{current.id}/")
    progress = page.locator("#live-progress .progress-text")
    assert progress.inner_text() == "66.7% · 8 of 12 grades"
    grade(current, "tent", 1, 3, shop["grader"])
    page.wait_for_function(
        "() => document.querySelector('#live-progress .progress-text')"
        ".innerText.includes('9 of 12 grades')",
        timeout=10_000,
    )
    # The metric values are swapped in with the progress: CG@3 now counts "tent" too.
    ndcg_value = EvaluationMetric.objects.get(evaluation=current, metric="cg").value
    assert cg.locator(".metric-value").inner_text() == f"{ndcg_value:.4f}"


def test_a_lead_clicks_a_keywords_value_and_reads_how_it_was_computed(live_server, page, shop):
    current = shop["current"]
    log_in(page, live_server.url, "lead@shop.test")
    page.goto(f"{live_server.url}/evaluations/{current.id}/")

    # nDCG@3 of "trail shoes" (graded 3, 2, 0): in the table, a link.
    row = page.locator("[data-testid=keyword-table] tr[data-keyword='trail shoes']")
    row.get_by_role("link", name="1.0000").click()

    page.wait_for_url("**/explain/?metric=ndcg&k=3")
    expect(page.get_by_role("heading", level=1)).to_have_text("nDCG@3 of “trail shoes” = 1.0000")
    ranks = page.get_by_test_id("explained-ranks")
    expect(ranks.locator("tbody tr")).to_have_count(3)
    assert "trail shoes 1" in ranks.locator("tr[data-rank='1']").inner_text()
    expect(page.get_by_test_id("explained-ideal").locator("tbody tr")).to_have_count(3)
    expect(page.get_by_test_id("other-profile")).to_contain_text("would be 1.0000: the same.")
    save(page, "metric-explainer")


def test_a_reset_clicked_before_htmx_has_started_is_asked_first(live_server, page, shop):
    current = shop["current"]
    keyword = Keyword.objects.get(evaluation=current, text="wool socks")
    log_in(page, live_server.url, "lead@shop.test")
    page.route("**/htmx-2.min.js", lambda route: route.abort())  # htmx not started yet
    page.goto(
        f"{live_server.url}{reverse('insights:keyword_detail', args=[current.id, keyword.id])}"
    )
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))

    page.locator("tr[data-position='1']").get_by_role("button", name="Reset").click()

    assert asked == ["Reset this grade? The result goes back to the queue."]
    slot = FeedbackSlot.objects.get(evaluation=current, keyword=keyword, snapshot__position=1)
    assert slot.grade == 3  # dismissed: the grade stays


def test_screenshots_of_the_leaderboard_model_history_and_dashboard(live_server, page, shop):
    log_in(page, live_server.url, "lead@shop.test")

    page.get_by_role("link", name="Leaderboard").click()
    rows = page.locator("[data-testid=leaderboard] tbody tr")
    assert rows.first.get_attribute("data-grader") == "grader@shop.test"
    assert "18" in rows.first.inner_text()  # nine grades in each evaluation
    assert charts_drawn(page) == 1
    save(page, "leaderboard")

    page.goto(f"{live_server.url}/models/{shop['model'].id}/history/")
    assert page.locator("[data-testid=model-history] tbody tr").count() == 1
    assert charts_drawn(page) == 2
    save(page, "model-history")

    page.get_by_role("link", name="Dashboard").click()
    pinned = page.get_by_test_id("pins").locator(f"[data-evaluation='{shop['current'].id}']")
    assert "Outdoor 2" in pinned.inner_text()
    assert pinned.locator("[data-metric='ndcg@3'] .pinned-value").is_visible()
    assert pinned.get_by_test_id("change").is_visible()
    save(page, "dashboard")
