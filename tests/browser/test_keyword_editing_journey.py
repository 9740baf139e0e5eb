"""A lead changes a pending evaluation's keywords on its edit page in Chromium: adds two,
renames one, removes one (after the confirmation), and the evaluation page then lists
exactly the keywords it now has."""

import pytest
from playwright.sync_api import expect

from apps.accounts.services import team_create
from apps.evaluations.models import Evaluation
from apps.evaluations.services import evaluation_create_with_keywords

from .people import PASSWORD, log_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def evaluation() -> Evaluation:
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    return evaluation_create_with_keywords(
        team=team,
        name="Spring catalogue",
        metrics=[("ndcg", 10)],
        keywords=["red shoes", "blue hat"],
    )


def keyword_row(page, text: str):
    """The edit page's row whose keyword field holds this text."""
    return page.get_by_test_id("keyword-row").filter(
        has=page.locator(f'input[data-testid="keyword-text"][value="{text}"]')
    )


def test_a_lead_adds_renames_and_removes_keywords_and_the_evaluation_page_shows_them(
    live_server, page, evaluation, screenshot
):
    log_in(page, live_server.url, "lead@shop.test")
    page.goto(f"{live_server.url}/evaluations/{evaluation.id}/")
    page.get_by_role("link", name="Edit", exact=True).click()
    editor = page.get_by_test_id("keyword-editor")
    expect(editor.get_by_test_id("keyword-total")).to_contain_text("2 keywords.")

    editor.get_by_label("Add keywords").fill("green socks\n\nwool scarf\nred shoes\n")
    editor.get_by_role("button", name="Add keywords").click()
    expect(page.get_by_role("status")).to_contain_text(
        "Added 2 keywords; 1 keyword already listed."
    )
    expect(page.get_by_test_id("keyword-row")).to_have_count(4)

    hat = keyword_row(page, "blue hat")
    hat.get_by_test_id("keyword-text").fill("blue cap")
    hat.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("status")).to_contain_text("Changed 'blue hat' to 'blue cap'.")

    keyword_row(page, "red shoes").get_by_role("link", name="Remove…").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Remove “red shoes”?")
    expect(page.get_by_test_id("remove-what")).to_contain_text("It has no results yet.")
    page.get_by_role("button", name="Remove the keyword").click()
    expect(page.get_by_role("status")).to_contain_text("Removed 'red shoes'.")
    expect(page.get_by_test_id("keyword-row")).to_have_count(3)
    screenshot("edited")

    page.goto(f"{live_server.url}/evaluations/{evaluation.id}/")
    table = page.get_by_test_id("keyword-table")
    for shown in ("blue cap", "green socks", "wool scarf"):
        expect(table).to_contain_text(shown)
    for gone in ("red shoes", "blue hat"):
        expect(table).not_to_contain_text(gone)
    assert list(evaluation.keywords.order_by("position").values_list("text", flat=True)) == [
        "blue cap",
        "green socks",
        "wool scarf",
    ]
