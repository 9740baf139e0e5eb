"""A lead creates an evaluation from a search model in Chromium, starts it, and a grader
gets its results; pause and resume; and the "Running keywords" line that follows a start
until the evaluation opens."""

import re

import pytest
from playwright.sync_api import expect

from apps.accounts.services import member_add, team_create
from apps.evaluations.models import Evaluation, Snapshot, Status
from apps.evaluations.services import evaluation_create_with_keywords
from apps.lifecycle import fetching
from tests.factories import make_search_model

from .conftest import SCREENSHOTS
from .people import PASSWORD
from .people import log_in as log_in_as

HELD_BACK = "**/evaluation-form*.js"


def let_the_form_script_run(page, base_url: str) -> None:
    """Release the held-back script and load it, from its URL: the Content-Security-Policy
    refuses an inline copy (add_script_tag(path=...))."""
    page.unroute(HELD_BACK)
    page.add_script_tag(url=f"{base_url}/static/js/evaluation-form.js")


pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def model(search_server):
    """Team Shop, its lead and grader, and a model on the test search server (which the
    live server may call: the fixture allows loopback for this process)."""
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    member_add(team=team, email="grader@shop.test", role="evaluator", password=PASSWORD)
    return make_search_model(
        team, search_server.base_url, name="Catalogue", default_keywords="red shoes\nblue hat\n"
    )


def log_in(browser, base_url, email):
    """A page of its own for this person (lead and grader side by side), logged in."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    log_in_as(page, base_url, email)
    return page


def shoot(page, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"lifecycle-{name}.png"), full_page=True)


def lifecycle(page):
    return page.get_by_test_id("lifecycle")


def test_a_lead_creates_and_starts_an_evaluation_from_a_model_and_a_grader_gets_its_results(
    live_server, browser, model, search_server
):
    lead = log_in(browser, live_server.url, "lead@shop.test")
    lead.get_by_role("link", name="Evaluations").first.click()
    lead.get_by_role("link", name="New evaluation").click()

    lead.get_by_label("Search model").select_option(label="Catalogue")
    expect(lead.get_by_label("Name", exact=True)).to_have_value("Catalogue 1")
    keywords = lead.get_by_label("Keywords")
    expect(keywords).to_have_value("red shoes\nblue hat\n")
    expect(lead.locator("#keyword-count")).to_have_text("2")
    keywords.fill("red shoes\nblue hat\n  green socks \nred shoes\n")
    expect(lead.locator("#keyword-count")).to_have_text("3")
    lead.get_by_label("Scale").select_option("binary")
    expect(lead.get_by_label("Metrics")).to_have_value("precision@10, ap@10, rr@10")
    lead.get_by_label("Scoring guidelines").fill("**Relevant** means it is what was asked.")
    shoot(lead, "new-evaluation")
    lead.get_by_role("button", name="Create evaluation").click()

    expect(lead.get_by_role("heading", name="Catalogue 1")).to_be_visible()
    expect(lifecycle(lead).get_by_test_id("status")).to_have_text("Pending")
    evaluation = Evaluation.objects.get(name="Catalogue 1")
    assert list(evaluation.keywords.values_list("text", flat=True)) == [
        "red shoes",
        "blue hat",
        "green socks",
    ]

    lead.get_by_role("button", name="Start").click()  # the keywords run in-process

    expect(lifecycle(lead).get_by_test_id("status")).to_have_text("Active")
    expect(lead.get_by_text("Started: open for grading.")).to_be_visible()
    expect(lead.get_by_test_id("keyword-count")).to_have_text("3 keywords")
    expect(lead.locator("tr[data-keyword='green socks']")).to_contain_text("0 / 5")
    assert Snapshot.objects.filter(keyword__evaluation=evaluation).count() == 15
    assert search_server.keyword_calls == {"red shoes": 1, "blue hat": 1, "green socks": 1}
    shoot(lead, "started")

    grader = log_in(browser, live_server.url, "grader@shop.test")
    grader.get_by_role("link", name="Give feedback").first.click()
    expect(grader.get_by_test_id("doc-name")).to_have_text("red shoes result 1")
    expect(grader.get_by_text("what was asked")).to_be_visible()  # the guidelines
    shoot(grader, "grader-gets-a-result")

    lead.get_by_role("button", name="Pause").click()
    expect(lifecycle(lead).get_by_test_id("status")).to_have_text("Paused")
    expect(lifecycle(lead).get_by_role("button", name="Resume")).to_be_visible()
    assert Evaluation.objects.get(id=evaluation.id).status == Status.PENDING
    grader.reload()
    expect(grader.get_by_test_id("empty-state")).to_be_visible()
    shoot(lead, "paused")

    lead.get_by_role("link", name="Edit").click()  # paused: editable, grade rules locked
    expect(lead.get_by_label("Scale")).to_be_disabled()
    expect(lead.get_by_test_id("locked-note")).to_contain_text("has started")
    lead.get_by_label("Name", exact=True).fill("Catalogue 1, first try")
    shoot(lead, "edit-locked")
    lead.get_by_role("button", name="Save").click()
    expect(lead.get_by_role("heading", name="Catalogue 1, first try")).to_be_visible()

    lead.get_by_role("button", name="Resume").click()
    expect(lifecycle(lead).get_by_test_id("status")).to_have_text("Active")
    expect(lead.get_by_text("Resumed: open for grading again.")).to_be_visible()
    assert sum(search_server.keyword_calls.values()) == 3  # resuming ran nothing again
    grader.reload()
    expect(grader.get_by_test_id("doc-name")).to_have_text(re.compile(r"result \d"))


def test_a_model_chosen_before_the_form_script_runs_still_fills_the_name_and_keywords(
    live_server, browser, model
):
    lead = log_in(browser, live_server.url, "lead@shop.test")
    # Hold the form's script back, choose the model, then let the script run: a quick
    # hand on a slow connection does this.
    lead.route(HELD_BACK, lambda route: route.abort())
    lead.goto(f"{live_server.url}/evaluations/new/")
    lead.get_by_label("Search model").select_option(label="Catalogue")
    expect(lead.get_by_label("Name", exact=True)).to_have_value("")
    let_the_form_script_run(lead, live_server.url)

    expect(lead.get_by_label("Name", exact=True)).to_have_value("Catalogue 1")
    expect(lead.get_by_label("Keywords")).to_have_value("red shoes\nblue hat\n")
    expect(lead.locator("#keyword-count")).to_have_text("2")


def test_a_model_and_a_scale_changed_before_the_form_script_runs_bring_their_defaults(
    live_server, browser, model, search_server
):
    make_search_model(
        model.team, search_server.base_url, name="Outlet", default_keywords="green socks\n"
    )
    lead = log_in(browser, live_server.url, "lead@shop.test")
    lead.route(HELD_BACK, lambda route: route.abort())
    # The model page's "New evaluation": the form is drawn filled in for that model.
    lead.goto(f"{live_server.url}/evaluations/new/?model={model.id}")
    name = lead.get_by_label("Name", exact=True)
    expect(name).to_have_value("Catalogue 1")
    lead.get_by_label("Search model").select_option(label="Outlet")
    lead.get_by_label("Scale").select_option("binary")
    let_the_form_script_run(lead, live_server.url)

    expect(name).to_have_value("Outlet 1")
    expect(lead.get_by_label("Keywords")).to_have_value("green socks\n")
    expect(lead.locator("#keyword-count")).to_have_text("1")
    expect(lead.get_by_label("Metrics")).to_have_value("precision@10, ap@10, rr@10")


def test_the_page_follows_a_start_until_the_evaluation_opens(
    live_server, browser, model, broker_down
):
    evaluation = evaluation_create_with_keywords(
        team=model.team,
        name="Catalogue 1",
        metrics=[("ndcg", 10)],
        keywords=["red shoes", "blue hat"],
        search_model=model,
    )
    lead = log_in(browser, live_server.url, "lead@shop.test")
    lead.goto(f"{live_server.url}/evaluations/{evaluation.id}/")

    lead.get_by_role("button", name="Start").click()  # with the broker down, nothing runs yet

    expect(lead.get_by_test_id("fetch-progress")).to_contain_text("Running keywords: 0 of 2")
    expect(lifecycle(lead).get_by_test_id("status")).to_have_text("Starting")
    shoot(lead, "running-keywords")
    # The periodic sweep's work, done here right after a poll so the two never overlap on
    # SQLite's one shared in-memory connection.
    with lead.expect_response(re.compile(r"/lifecycle/$")):
        pass
    assert fetching.evaluation_fetch(evaluation_id=evaluation.id) == "opened"

    expect(lifecycle(lead).get_by_test_id("status")).to_have_text("Active")  # page reloaded
    expect(lead.get_by_test_id("fetch-progress")).to_have_count(0)
    expect(lead.locator("tr[data-keyword='blue hat']")).to_contain_text("0 / 5")
    shoot(lead, "opened")
