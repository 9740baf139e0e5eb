"""A grader clicks a grade and skips a result with a reason in Chromium; the lead opens
the keyword and reads the grade labelled as the grader's button was ("3 · Perfect") and
why the other result was skipped."""

import pytest

from apps.accounts.services import member_add, team_create
from apps.evaluations.services import Document, evaluation_create, keywords_add, snapshots_add
from apps.lifecycle.steps import evaluation_start
from tests.browser.people import PASSWORD, log_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def evaluation():
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    member_add(team=team, email="grader@shop.test", role="evaluator", password=PASSWORD)
    evaluation = evaluation_create(team=team, name="Shoes 1", scale="graded", metrics=[("cg", 2)])
    [keyword] = keywords_add(evaluation=evaluation, texts=["red running shoes"])
    snapshots_add(
        keyword=keyword, documents=[Document("sku-1", "Red runner"), Document("sku-2", "Sandal")]
    )
    return evaluation_start(evaluation=evaluation)


def test_the_lead_reads_the_graders_label_and_skip_reason_on_the_keyword(
    live_server, browser, evaluation
):
    grader = browser.new_context()
    page = grader.new_page()
    log_in(page, live_server.url, "grader@shop.test")
    page.get_by_role("link", name="Give feedback").first.click()
    assert page.get_by_test_id("doc-name").inner_text() == "Red runner"
    page.get_by_role("button", name="3 · Perfect").click()
    page.get_by_test_id("doc-name").filter(has_text="Sandal").wait_for()
    page.get_by_placeholder("Why can't you judge it? (optional)").fill("no picture of it")
    page.get_by_role("button", name="Skip").click()
    page.get_by_test_id("empty-state").wait_for()
    grader.close()

    lead = browser.new_context()
    page = lead.new_page()
    log_in(page, live_server.url, "lead@shop.test")
    keyword = evaluation.keywords.get()
    page.goto(f"{live_server.url}/evaluations/{evaluation.id}/keywords/{keyword.id}/")
    first, second = page.locator("table[data-testid='snapshots'] tbody tr").all()
    assert "3 · Perfect" in first.locator(".grade").first.inner_text()
    skips = second.get_by_test_id("skips")
    assert skips.inner_text() == "skipped: no picture of it by grader@shop.test"
    lead.close()
