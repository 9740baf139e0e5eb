"""The demo's pages on a phone-sized screen and in the header a lead uses every day.

A page that scrolls sideways on a phone hides its own controls; wide tables scroll inside
their own box instead. The team's settings (members, tags, API tokens) sit under one
"Team" menu, so the header stays one line on a laptop.
"""

import pytest
from playwright.sync_api import expect

from apps.demo.seed import LEAD, PASSWORD, seed_demo
from apps.demo.tour import demo_tour

pytestmark = pytest.mark.django_db(transaction=True)
PHONE = {"width": 390, "height": 844}


def log_in_to_the_demo(page, base_url: str, email: str = LEAD) -> None:
    page.goto(f"{base_url}/accounts/login/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{base_url}/")


def sideways_overflow(page) -> int:
    """How many pixels the page is wider than the window (0: it fits)."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


@pytest.fixture
def demo():
    seed_demo()


def test_no_page_of_the_demo_scrolls_sideways_on_a_phone(demo, live_server, browser):
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.set_default_timeout(10_000)
    log_in_to_the_demo(page, live_server.url)
    wider = {}
    for stop in demo_tour():
        response = page.goto(live_server.url + stop.path)
        assert response is not None and response.status == 200, stop.path
        page.wait_for_load_state("load")
        if (extra := sideways_overflow(page)) > 0:
            wider[stop.path] = extra
    context.close()
    assert wider == {}, f"pages wider than a 390 px screen (extra pixels): {wider}"


def test_a_wide_table_scrolls_inside_its_box_on_a_phone(demo, live_server, browser):
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    log_in_to_the_demo(page, live_server.url)
    page.goto(live_server.url + "/judges/")
    table = page.locator("table.table").first
    assert table.evaluate("t => t.scrollWidth > t.clientWidth"), "the judges' table is wide"
    assert sideways_overflow(page) == 0
    context.close()


def test_a_lead_finds_the_api_tokens_under_the_team_menu(demo, live_server, page):
    log_in_to_the_demo(page, live_server.url)
    header = page.locator("header.topbar")
    assert header.bounding_box()["height"] < 70, "the header is one line at 1280 px"
    menu_item = page.get_by_role("link", name="API tokens")
    expect(menu_item).to_be_hidden()
    page.get_by_text("Team", exact=True).click()
    expect(menu_item).to_be_visible()
    page.keyboard.press("Escape")
    expect(menu_item).to_be_hidden()
    page.get_by_text("Team", exact=True).click()
    menu_item.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("API tokens")


def test_a_checkbox_sits_before_its_words_on_one_line(demo, live_server, page):
    log_in_to_the_demo(page, live_server.url)
    page.goto(live_server.url + "/team/members/")
    box = page.get_by_role("checkbox", name="apparel").bounding_box()
    words = page.locator("label", has_text="apparel").last.bounding_box()
    assert box["x"] - words["x"] < 10, "the box starts the label"
    assert words["height"] < 2 * box["height"] + 10, "box and words share one line"
