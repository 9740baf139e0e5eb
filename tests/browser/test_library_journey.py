"""A lead keeps the team's judgements in the library, in Chromium: opens it from the main
menu, imports a vendor's Quepid list, sees it beside the grades people gave in an
evaluation with whose each one is, keeps the documents they disagree on, and downloads
them as a judgement list. A list with a grade off the scale is refused whole, naming
its line."""

import pytest

from apps.accounts.services import team_create
from apps.judging.judgements import Giver, slot_judge
from apps.library.models import JudgementList
from tests.browser.people import PASSWORD, log_in
from tests.factories import make_evaluation, slots_of

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def team():
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    evaluation = make_evaluation(team=team, keywords={"boots": 2})
    for slot, grade in zip(slots_of(evaluation), [3, 0], strict=True):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(name="ann@shop.test"), grade=grade)
    return team


def open_library(page, live_server):
    log_in(page, live_server.url, "lead@shop.test")
    page.get_by_text("Team", exact=True).click()
    page.get_by_role("link", name="Judgement library").click()
    page.get_by_role("heading", name="Judgement library").wait_for()


def import_list(page, path, name):
    page.get_by_role("link", name="Import a judgement list").click()
    page.get_by_label("Judgement list").set_input_files(str(path))
    page.get_by_label("Format").select_option("quepid")
    page.get_by_label("Name").fill(name)
    page.get_by_role("button", name="Import").click()


def test_a_lead_imports_a_list_finds_the_disagreements_and_downloads_them(
    live_server, page, team, tmp_path, screenshot
):
    vendor = tmp_path / "vendor.csv"
    vendor.write_text("query,docid,rating\nboots,boots-doc-1,1\nboots,boots-doc-2,0\n")
    open_library(page, live_server)

    import_list(page, vendor, "Vendor 2025")

    page.get_by_text("Imported Vendor 2025: 2 judgements.").wait_for()
    assert page.get_by_test_id("judgement-list").count() == 1
    entries = page.get_by_test_id("library-entry")
    assert entries.count() == 2
    first = entries.first
    assert "Import: Vendor 2025" in first.inner_text()
    assert "ann@shop.test" in first.inner_text()
    screenshot("library")

    page.get_by_label("Disagreeing only").check()
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**disagreeing=on**")
    assert page.get_by_test_id("library-entry").count() == 1  # doc-1: 3 against 1

    with page.expect_download() as download:
        page.get_by_test_id("export-quepid").click()
    lines = download.value.path().read_text().splitlines()
    assert lines[0] == "query,docid,rating"
    assert lines[1:] == ["boots,boots-doc-1,1"]  # 3 and 1: a tie, which goes to the newest


def test_a_list_with_a_grade_off_the_scale_is_refused_naming_its_line(
    live_server, page, team, tmp_path
):
    bad = tmp_path / "bad.csv"
    bad.write_text("query,docid,rating\nboots,d1,1\nboots,d2,12\n")
    open_library(page, live_server)

    import_list(page, bad, "Bad list")

    problems = page.get_by_test_id("import-problems")
    problems.wait_for()
    assert "line 3" in problems.inner_text() and "grade 12" in problems.inner_text()
    assert not JudgementList.objects.exists()
