"""A lead imports evaluations in Chromium: the page shows the fields of the kind of file
chosen; a refused import keeps the chosen file, so typing a new name and importing again
is enough (the name typed wins over the document's); a picture chosen by mistake gets one
line; a TREC import says what it did in one message, without the findings that are zero.
Without JavaScript every field shows and the page still imports."""

import io

import pytest
from playwright.sync_api import expect

from apps.accounts.services import team_create
from apps.evaluations.models import Evaluation
from apps.interchange.export import export_document
from tests.browser.people import PASSWORD, log_in
from tests.factories import make_evaluation

pytestmark = pytest.mark.django_db(transaction=True)

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10" + bytes(range(256)) * 8


@pytest.fixture
def team():
    return team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)


def open_import_page(page, live_server):
    log_in(page, live_server.url, "lead@shop.test")
    page.get_by_role("link", name="Evaluations").first.click()
    page.get_by_role("link", name="Import an evaluation").click()


def chosen_file(page, label):
    return page.get_by_label(label).evaluate("input => [...input.files].map(f => f.name)")


def test_the_page_shows_the_fields_of_the_kind_of_file_chosen(live_server, page, team):
    open_import_page(page, live_server)

    # The page's script hides the other kind's fields once it has loaded: wait for it.
    expect(page.get_by_label("JSON file")).to_be_visible()
    expect(page.get_by_label("Run file")).to_be_hidden()
    expect(page.get_by_label("Scale")).to_be_hidden()

    page.get_by_label("TREC run and qrels").check()
    expect(page.get_by_label("JSON file")).to_be_hidden()
    expect(page.get_by_label("Run file")).to_be_visible()
    expect(page.get_by_label("Scale")).to_be_visible()
    expect(page.get_by_label("Name")).to_be_visible()  # both kinds name the evaluation


def test_a_refused_document_stays_chosen_and_imports_under_the_name_typed(
    live_server, page, team, tmp_path, screenshot
):
    exported = make_evaluation(team=team, keywords={"red shoes": 2, "blue hat": 1})
    document = tmp_path / "holiday.json"
    out = io.StringIO()
    export_document(exported, out)
    document.write_text(out.getvalue())
    open_import_page(page, live_server)

    page.get_by_label("JSON file").set_input_files(str(document))
    page.get_by_role("button", name="Import").click()
    problems = page.get_by_test_id("import-problems")
    problems.get_by_text(f"An evaluation named '{exported.name}' already exists").wait_for()
    assert chosen_file(page, "JSON file") == ["holiday.json"]  # still chosen
    screenshot("refused-document")

    page.get_by_label("Name").fill("Holiday, again")
    page.get_by_role("button", name="Import").click()

    page.get_by_role("heading", name="Holiday, again").wait_for()
    assert page.get_by_text("Imported Holiday, again.").is_visible()
    copy = Evaluation.objects.get(team=team, name="Holiday, again")
    assert sorted(copy.keywords.values_list("text", flat=True)) == ["blue hat", "red shoes"]


def test_a_picture_gets_one_line_and_trec_files_one_message(live_server, page, team, tmp_path):
    picture = tmp_path / "photo.png"
    picture.write_bytes(PNG)
    run = tmp_path / "week-3.run"
    run.write_text("q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\nq2 Q0 d1 1 1.0 x\n")
    qrels = tmp_path / "week-3.qrels"
    qrels.write_text("q1 0 d1 2\nq1 0 d9 1\nq2 0 d1 0\n")
    open_import_page(page, live_server)

    page.get_by_label("JSON file").set_input_files(str(picture))
    page.get_by_role("button", name="Import").click()
    problems = page.get_by_test_id("import-problems").get_by_role("listitem")
    problems.first.wait_for()
    assert problems.all_inner_texts() == [
        "photo.png: this is not a text file (JSON and TREC files are UTF-8 text)"
    ]

    page.get_by_label("TREC run and qrels").check()
    page.get_by_label("Run file").set_input_files(str(run))
    page.get_by_label("Qrels file (optional)").set_input_files(str(qrels))
    page.get_by_label("Name").fill("Week 3")
    page.get_by_label("Metrics").fill("cg@2")
    page.get_by_role("button", name="Import").click()

    page.get_by_role("heading", name="Week 3").wait_for()
    assert page.locator(".messages li").all_inner_texts() == [
        "Imported Week 3: 2 keywords with 3 results; 1 result without judgements, "
        "1 judged document not retrieved."
    ]


def test_without_javascript_every_field_shows_and_the_page_still_imports(
    live_server, browser, team, tmp_path
):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.0 x\n")
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        open_import_page(page, live_server)
        assert page.get_by_label("JSON file").is_visible()
        assert page.get_by_label("Run file").is_visible()

        page.get_by_label("TREC run and qrels").check()
        page.get_by_label("Run file").set_input_files(str(run))
        page.get_by_label("Name").fill("Plain")
        page.get_by_label("Metrics").fill("cg@2")
        page.get_by_role("button", name="Import").click()

        assert page.get_by_role("heading", name="Plain").is_visible()
        assert Evaluation.objects.filter(team=team, name="Plain").exists()
    finally:
        context.close()


def test_an_answer_that_is_no_report_is_said_in_one_line_and_the_file_stays_chosen(
    live_server, page, team, tmp_path
):
    document = tmp_path / "holiday.json"
    document.write_text('{"format": "relevo.evaluation/1", "name": "Holiday", "keywords": []}')
    open_import_page(page, live_server)
    page.get_by_label("JSON file").set_input_files(str(document))
    page.context.clear_cookies()  # the form expires: a log-out in another tab

    page.get_by_role("button", name="Import").click()

    problems = page.get_by_test_id("import-problems")
    problems.get_by_text("this form has expired").wait_for()
    assert problems.inner_text().startswith("Nothing was imported: this form has expired")
    assert page.get_by_role("heading", name="This form has expired").count() == 0  # no page in it
    assert chosen_file(page, "JSON file") == ["holiday.json"]
