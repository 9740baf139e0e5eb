"""A newcomer lead reads the lead pages at 1366 px, in Chromium: Compare names its two
sides apart, fits its summary in its card and says why its interval and its test may
disagree; a metric has one name on every page; the keyword page's form looks like the
others; the disagreement queue shows what is judged and confirms what was decided."""

import pytest
from playwright.sync_api import expect

from apps.accounts.services import team_create
from apps.demo.seed import LEAD, seed_demo
from apps.endpoints.models import SearchModel
from apps.evaluations.models import Evaluation, Keyword
from tests.browser.people import PASSWORD, log_in
from tests.browser.test_narrow_screens import log_in_to_the_demo
from tests.browser.tied_shoes import NEED, tied_shoes
from tests.comparison_data import shop_pair

pytestmark = pytest.mark.django_db(transaction=True)
LAPTOP = {"width": 1366, "height": 768}


@pytest.fixture
def laptop(browser):
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


def demo_weeks() -> tuple[Evaluation, Evaluation]:
    """The demo's two latest weeks of its default ranking: names alike but for the end."""
    return (
        Evaluation.objects.get(name="Default ranking, week 2"),
        Evaluation.objects.get(name="Default ranking, week 3"),
    )


def test_compare_names_its_two_sides_apart_and_fits_its_summary_in_its_card(live_server, laptop):
    seed_demo()
    week_2, week_3 = demo_weeks()
    log_in_to_the_demo(laptop, live_server.url, LEAD)
    laptop.goto(f"{live_server.url}/evaluations/compare/?e={week_2.id}&e={week_3.id}")

    for table in ("metric-table", "keyword-table"):
        sides = laptop.get_by_test_id(table).locator("th[data-side]")
        names = sides.all_inner_texts()[:2]
        assert names[0] != names[1], f"{table}: both sides read {names[0]!r}"
        assert [sides.nth(i).get_attribute("title") for i in (0, 1)] == [week_2.name, week_3.name]

    card = laptop.get_by_test_id(f"pair-{week_3.id}")
    summary = card.get_by_test_id("metric-table")
    assert summary.evaluate("t => t.parentElement.scrollWidth <= t.parentElement.clientWidth")
    card_box, summary_box = card.bounding_box(), summary.bounding_box()
    assert summary_box["x"] + summary_box["width"] <= card_box["x"] + card_box["width"]


def test_compare_says_why_its_interval_and_its_test_disagree(live_server, laptop):
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    # Five keywords, each better in B: every resampled mean is above 0, but only 2 of the
    # 32 sign patterns are as extreme as all five positive (p = 0.0625).
    few_a, few_b = shop_pair(team, keywords=5)
    log_in(laptop, live_server.url, "lead@shop.test")
    laptop.goto(f"{live_server.url}/evaluations/compare/?e={few_a.id}&e={few_b.id}")

    verdict = laptop.locator(".verdict[data-metric='ndcg@10']").first
    expect(verdict).to_contain_text("No significant difference")
    note = laptop.locator("[data-testid=methods-disagree][data-metric='ndcg@10']")
    expect(note).to_be_visible()
    expect(note).to_contain_text("leaves out 0")
    expect(note).to_contain_text("the verdict follows the p-value")


def test_a_clear_difference_has_no_such_note(live_server, laptop):
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    first, second = shop_pair(team)  # 20 keywords: interval and test both say better
    log_in(laptop, live_server.url, "lead@shop.test")
    laptop.goto(f"{live_server.url}/evaluations/compare/?e={first.id}&e={second.id}")
    expect(laptop.locator(".verdict.significant[data-metric='ndcg@10']")).to_be_visible()
    expect(laptop.get_by_test_id("methods-disagree")).to_have_count(0)


def test_precision_at_5_has_one_name_on_every_page(live_server, laptop):
    seed_demo()
    week_2, week_3 = demo_weeks()
    keyword = Keyword.objects.filter(evaluation=week_3).order_by("position").first()
    model = SearchModel.objects.get(name="Demo catalogue, default ranking")
    log_in_to_the_demo(laptop, live_server.url, LEAD)
    url = live_server.url

    laptop.goto(f"{url}/evaluations/{week_3.id}/")
    card = laptop.get_by_test_id("metric-cards").locator("[data-metric='precision@5']")
    expect(card.locator(".metric-name")).to_have_text("P@5")

    laptop.goto(f"{url}/evaluations/compare/?e={week_2.id}&e={week_3.id}")
    row = laptop.get_by_test_id("metric-table").locator("tr[data-metric='precision@5']")
    expect(row.locator("td").first).to_have_text("P@5")
    expect(laptop.locator(".verdict[data-metric='precision@5']")).to_contain_text(" on P@5 (")

    laptop.goto(f"{url}/models/{model.id}/history/")
    headers = laptop.get_by_test_id("model-history").locator("thead th").all_inner_texts()
    assert "P@5" in [header.strip() for header in headers]

    laptop.goto(
        f"{url}/evaluations/{week_3.id}/keywords/{keyword.id}/explain/?metric=precision&k=5"
    )
    expect(laptop.get_by_role("heading", level=1)).to_contain_text("P@5 of “")

    for path in (f"/evaluations/{week_3.id}/", "/evaluations/", f"/models/{model.id}/history/"):
        laptop.goto(url + path)
        assert "MP@5" not in laptop.inner_text("body"), path


def test_the_keyword_pages_information_need_form_looks_like_every_other_form(live_server, laptop):
    seed_demo()
    week_3 = demo_weeks()[1]
    keyword = Keyword.objects.filter(evaluation=week_3).order_by("position").first()
    log_in_to_the_demo(laptop, live_server.url, LEAD)

    laptop.goto(f"{live_server.url}/evaluations/new/")
    other_help = laptop.locator(".field .helptext").first
    help_style = other_help.evaluate(
        "e => [getComputedStyle(e).color, getComputedStyle(e).fontSize]"
    )

    laptop.goto(f"{live_server.url}/evaluations/{week_3.id}/keywords/{keyword.id}/")
    laptop.get_by_text("Information need and notes").click()
    need = laptop.get_by_label("Information need")
    field = laptop.locator(".field", has=need)
    expect(field).to_have_count(1)
    helptext = field.locator(".helptext")
    assert (
        helptext.evaluate("e => [getComputedStyle(e).color, getComputedStyle(e).fontSize]")
        == help_style
    )
    form_width = laptop.locator("form", has=need).bounding_box()["width"]
    assert need.bounding_box()["width"] >= 0.95 * form_width, "the box spans its form"
    expect(laptop.get_by_role("button", name="Save")).to_have_class("primary")

    need.fill("running shoes in red, for a road runner")
    laptop.get_by_role("button", name="Save").click()
    expect(laptop.get_by_text("running shoes in red, for a road runner").first).to_be_visible()


@pytest.fixture
def tie():
    """A tied sandal with a picture and fields, its keyword with an information need."""
    return tied_shoes(["", "", "", "", "", ""])


def test_the_disagreement_queue_is_compact_shows_the_result_and_confirms_a_decision(
    live_server, laptop, tie
):
    log_in(laptop, live_server.url, "lead@shop.test")
    laptop.goto(f"{live_server.url}/evaluations/{tie.id}/disagreements/")
    laptop.wait_for_load_state()
    row = laptop.locator("[data-snapshot]")
    expect(row).to_have_count(1)

    buttons = row.get_by_role("group", name="Final grade").get_by_role("button")
    tops = {round(box["y"]) for box in (b.bounding_box() for b in buttons.all())}
    assert len(tops) == 1, "the grade buttons stand in one row"
    assert row.bounding_box()["height"] < 220, "a row is compact"
    expect(row).to_contain_text(f"Looking for: {NEED}")
    expect(row.get_by_test_id("attributes")).to_contain_text("colour")
    expect(row.get_by_test_id("attributes")).to_contain_text("39.90")
    expect(row.locator("img")).to_have_attribute("src", "https://img.shop.test/sku-1.jpg")

    laptop.get_by_role("button", name="Final grade 0 (Irrelevant)").click()
    confirmation = laptop.get_by_test_id("decision-confirmation")
    expect(confirmation).to_have_text(
        "Saved: final grade 0 · Irrelevant for “red running shoes”, Blue sandal."
    )
    # The live queue drops the settled result; the confirmation stays.
    expect(laptop.locator("[data-snapshot]")).to_have_count(0, timeout=3_000)
    expect(confirmation).to_be_visible()


def test_the_demo_queues_four_grades_stand_in_one_row_at_1366_px(live_server, laptop):
    seed_demo()
    graded = Evaluation.objects.get(name__startswith="Catalogue search, graded")
    log_in_to_the_demo(laptop, live_server.url, LEAD)
    laptop.goto(f"{live_server.url}/evaluations/{graded.id}/disagreements/")
    for row in laptop.locator("[data-snapshot]").all():
        buttons = row.get_by_role("group", name="Final grade").get_by_role("button")
        expect(buttons).to_have_count(4)
        assert len({round(b.bounding_box()["y"]) for b in buttons.all()}) == 1
