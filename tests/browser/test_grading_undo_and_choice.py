"""A grader's first week in Chromium: the key of a grade is its own number, each grade is
confirmed in a live region with Undo, the chosen grade is pressed for screen readers, a
skip comes back from the history, the grader picks which evaluation to grade from the
dashboard or a lead's link, and a touch screen shows no keyboard hints. The lead's form
warns when the guidelines name grades the scale lacks."""

import pytest
from playwright.sync_api import expect

from apps.accounts.services import member_add, team_create
from apps.evaluations.models import Evaluation, FeedbackSlot, SnapshotSkip
from apps.evaluations.services import Document, evaluation_create, keywords_add, snapshots_add
from apps.lifecycle.steps import evaluation_start
from tests.browser.people import PASSWORD, log_in

pytestmark = pytest.mark.django_db(transaction=True)


def started(team, name: str, query: str, documents: int) -> Evaluation:
    evaluation = evaluation_create(team=team, name=name, scale="graded", metrics=[("cg", 10)])
    [keyword] = keywords_add(evaluation=evaluation, texts=[query])
    snapshots_add(
        keyword=keyword,
        documents=[
            Document(f"{query}-{i}", f"{query.title()} {i}") for i in range(1, documents + 1)
        ],
    )
    return evaluation_start(evaluation=evaluation)


@pytest.fixture
def team():
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    member_add(team=team, email="grader@shop.test", role="evaluator", password=PASSWORD)
    return team


@pytest.fixture
def shoes(team):
    """The team's oldest evaluation: a grader's own queue starts with it."""
    return started(team, "Shoes 1", "red shoes", 3)


@pytest.fixture
def hats(team, shoes):
    return started(team, "Hats 1", "winter hat", 2)


def grader_page(browser, base_url: str, **context):
    page = browser.new_context(**context).new_page()
    page.set_default_timeout(10_000)
    log_in(page, base_url, "grader@shop.test")
    return page


def ready(page) -> str:
    """Wait until the card listens to keys again; the slot it shows."""
    page.wait_for_selector("#card[data-ready='1']")
    return page.locator("#card").get_attribute("data-slot")


def press_and_wait(page, key: str) -> None:
    before = ready(page)
    page.keyboard.press(key)
    page.wait_for_function(
        "before => document.querySelector('#card')?.dataset.slot !== before", arg=before
    )


def grades_of(evaluation) -> dict[str, int | None]:
    return dict(
        FeedbackSlot.objects.filter(evaluation=evaluation).values_list("snapshot__doc_id", "grade")
    )


def test_each_key_grades_its_own_number_and_zero_grades_poor(live_server, browser, shoes):
    page = grader_page(browser, live_server.url)
    page.goto(f"{live_server.url}/feedback/")
    expect(page.get_by_role("button", name="0 · Poor")).to_contain_text("0")

    press_and_wait(page, "0")
    press_and_wait(page, "2")

    assert grades_of(shoes) == {"red shoes-1": 0, "red shoes-2": 2, "red shoes-3": None}
    page.context.close()


def test_a_grade_is_confirmed_in_a_live_region_and_undo_gives_the_result_back(
    live_server, browser, shoes
):
    page = grader_page(browser, live_server.url)
    page.goto(f"{live_server.url}/feedback/")
    first = ready(page)

    press_and_wait(page, "2")

    region = page.get_by_role("status").filter(has_text="Graded 2 · Good")
    expect(region).to_be_visible()
    assert region.get_attribute("aria-live") == "polite"
    assert page.get_by_test_id("doc-name").inner_text() == "Red Shoes 2"
    region.get_by_role("button", name="Undo").click()

    page.wait_for_function(
        "first => document.querySelector('#card')?.dataset.slot === first", arg=first
    )
    expect(page.get_by_test_id("doc-name")).to_have_text("Red Shoes 1")
    expect(page.get_by_role("status").filter(has_text="Grade taken back")).to_be_visible()
    assert grades_of(shoes)["red shoes-1"] is None

    press_and_wait(page, "3")  # graded anew, and the queue goes on where it was
    assert grades_of(shoes)["red shoes-1"] == 3
    expect(page.get_by_test_id("doc-name")).to_have_text("Red Shoes 2")
    page.context.close()


def test_going_back_the_chosen_grade_is_pressed_and_a_change_can_be_undone(
    live_server, browser, shoes
):
    page = grader_page(browser, live_server.url)
    page.goto(f"{live_server.url}/feedback/")
    press_and_wait(page, "1")

    press_and_wait(page, "Backspace")

    expect(page.get_by_role("button", name="1 · Fair", pressed=True)).to_be_visible()
    expect(page.get_by_role("button", name="3 · Perfect", pressed=False)).to_be_visible()
    press_and_wait(page, "3")
    expect(
        page.get_by_role("status").filter(has_text="Changed 1 · Fair to 3 · Perfect")
    ).to_be_visible()
    assert grades_of(shoes)["red shoes-1"] == 3

    page.get_by_role("button", name="Undo").click()
    expect(page.get_by_role("button", name="1 · Fair", pressed=True)).to_be_visible()
    assert grades_of(shoes)["red shoes-1"] == 1
    page.context.close()


def test_a_skip_is_undone_from_the_history_and_the_result_graded(live_server, browser, shoes):
    page = grader_page(browser, live_server.url)
    page.goto(f"{live_server.url}/feedback/")
    ready(page)
    page.get_by_placeholder("Why can't you judge it? (optional)").fill("no picture")
    page.get_by_role("button", name="Skip").click()
    expect(page.get_by_test_id("doc-name")).to_have_text("Red Shoes 2")

    press_and_wait(page, "Backspace")

    expect(page.get_by_text("you skipped this result")).to_be_visible()
    expect(page.get_by_test_id("skip-reason")).to_contain_text("no picture")
    page.get_by_role("button", name="Undo the skip").click()
    expect(page.get_by_role("status").filter(has_text="Skip taken back")).to_be_visible()
    expect(page.get_by_test_id("doc-name")).to_have_text("Red Shoes 1")
    assert not SnapshotSkip.objects.exists()
    press_and_wait(page, "2")
    assert grades_of(shoes)["red shoes-1"] == 2
    page.context.close()


def test_a_grader_chooses_an_evaluation_from_the_dashboard_and_from_a_leads_link(
    live_server, browser, shoes, hats
):
    page = grader_page(browser, live_server.url)

    page.get_by_role("link", name="Hats 1").click()  # its card on the dashboard

    expect(page.get_by_text("“winter hat”")).to_be_visible()
    press_and_wait(page, "1")
    expect(page.get_by_text("“winter hat”")).to_be_visible()  # still in that queue
    assert grades_of(hats)["winter hat-1"] == 1

    # The link a lead shares from the evaluation page opens the same queue, not a 404.
    response = page.goto(f"{live_server.url}/feedback/?evaluation={shoes.id}")
    assert response.status == 200
    expect(page.get_by_text("“red shoes”")).to_be_visible()
    page.context.close()


def test_a_touch_screen_shows_no_keyboard_hints(live_server, browser, shoes):
    desktop = grader_page(browser, live_server.url)
    desktop.goto(f"{live_server.url}/feedback/")
    expect(desktop.locator("#card kbd").first).to_be_visible()
    desktop.context.close()

    phone = grader_page(
        browser,
        live_server.url,
        viewport={"width": 390, "height": 844},
        has_touch=True,
        is_mobile=True,
    )
    phone.goto(f"{live_server.url}/feedback/")
    ready(phone)

    for hint in phone.locator("#card kbd").all():
        expect(hint).to_be_hidden()
    phone.get_by_role("button", name="2 · Good").tap()
    expect(phone.get_by_role("status").filter(has_text="Graded 2 · Good")).to_be_visible()
    phone.context.close()


def test_the_lead_is_warned_that_the_guidelines_name_grades_binary_lacks(
    live_server, browser, team
):
    page = browser.new_context().new_page()
    page.set_default_timeout(10_000)
    log_in(page, live_server.url, "lead@shop.test")
    page.goto(f"{live_server.url}/evaluations/new/")
    page.get_by_label("Name", exact=True).fill("Binary shoes")
    page.get_by_label("Scale").select_option("binary")
    page.get_by_label("Metrics").fill("precision@5")
    page.get_by_label("Scoring guidelines").fill("3 · Perfect: exactly what was asked.")

    page.get_by_role("button", name="Create evaluation").click()

    expect(page.locator(".message.warning")).to_contain_text(
        "The scoring guidelines name grade 3, which the binary scale (0, 1) does not have"
    )
    page.get_by_role("link", name="Edit").first.click()
    expect(page.get_by_test_id("guidelines-warning")).to_be_visible()
    page.context.close()
