"""Keyword notes in Chromium: a lead writes a keyword's information need, a grader
reads it on the card and grades with a note, and the lead reads the note beside the
grade on the keyword page."""

import pytest
from playwright.sync_api import expect

from apps.accounts.services import member_add, team_create
from apps.evaluations.services import Document, evaluation_create, keywords_add, snapshots_add
from apps.lifecycle.steps import evaluation_start
from tests.browser.people import PASSWORD, log_in

pytestmark = pytest.mark.django_db(transaction=True)
NEED = "Trail shoes that grip on wet rock."


@pytest.fixture
def keyword():
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    member_add(team=team, email="grader@shop.test", role="evaluator", password=PASSWORD)
    evaluation = evaluation_create(team=team, name="Shoes 1", scale="graded", metrics=[("cg", 5)])
    [keyword] = keywords_add(evaluation=evaluation, texts=["trail shoes"])
    snapshots_add(keyword=keyword, documents=[Document("sku-1", "Rock runner")])
    evaluation_start(evaluation=evaluation)
    return keyword


def test_a_need_reaches_the_grader_and_a_note_reaches_the_lead(live_server, browser, keyword):
    keyword_page = f"{live_server.url}/evaluations/{keyword.evaluation_id}/keywords/{keyword.id}/"
    lead = browser.new_context().new_page()
    log_in(lead, live_server.url, "lead@shop.test")
    lead.goto(keyword_page)
    lead.get_by_text("Information need and notes").click()
    lead.get_by_label("Information need").fill(NEED)
    lead.get_by_role("button", name="Save").click()
    expect(lead.get_by_text("Saved the information need and notes.")).to_be_visible()

    grader = browser.new_context().new_page()
    log_in(grader, live_server.url, "grader@shop.test")
    grader.goto(f"{live_server.url}/feedback/")
    expect(grader.get_by_test_id("information-need")).to_contain_text(NEED)
    grader.get_by_label("A note with your grade (optional)").fill("Lugs look deep enough.")
    grader.get_by_role("button", name="3 · Perfect").click()
    expect(grader.get_by_test_id("empty-state")).to_be_visible()

    lead.goto(keyword_page)
    expect(lead.get_by_test_id("snapshots")).to_contain_text("Lugs look deep enough.")
    expect(lead.get_by_test_id("snapshots")).to_contain_text("3 · Perfect")
