"""A grade that fails to save (no network, or 503 while the database restarts) is kept by
the grading page, sent again until it is saved, and stored exactly once.

The failures are made in the browser: Playwright stands between the page and the live
server for the grade's POST, and fails it the first times (a dropped connection, a 503
as apps/core/unavailable.py answers it), or lets the server save it and then loses the
answer on its way back.
"""

import re

import pytest

from apps.accounts.services import member_add, team_create
from apps.evaluations.models import FeedbackSlot
from apps.evaluations.services import Document, evaluation_create, keywords_add, snapshots_add
from apps.lifecycle.steps import evaluation_start
from tests.browser.people import PASSWORD, log_in

pytestmark = pytest.mark.django_db(transaction=True)

GRADE_POSTS = re.compile(r".*/feedback/slots/\d+/grade/$")
NOT_SAVED = "Not saved yet — retrying…"
UNAVAILABLE = '<p class="error" role="alert">The database is briefly unavailable.</p>'


@pytest.fixture
def evaluation():
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    member_add(team=team, email="grader@shop.test", role="evaluator", password=PASSWORD)
    evaluation = evaluation_create(team=team, name="Shoes", scale="graded", metrics=[("cg", 5)])
    [keyword] = keywords_add(evaluation=evaluation, texts=["red shoes"])
    snapshots_add(
        keyword=keyword, documents=[Document(f"sku-{i}", f"Shoe {i}") for i in range(1, 4)]
    )
    return evaluation_start(evaluation=evaluation)


@pytest.fixture
def grader_page(live_server, page, evaluation):
    log_in(page, live_server.url, "grader@shop.test")
    page.goto(f"{live_server.url}/feedback/")
    page.wait_for_selector("#card[data-ready='1']")
    return page


def judgements(evaluation) -> dict[str, int]:
    graded = FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=False)
    return dict(graded.values_list("snapshot__doc_id", "grade"))


def wait_for_next_result(page, before: str) -> None:
    page.wait_for_function(
        "before => document.querySelector('#card')?.dataset.slot !== before",
        arg=before,
        timeout=20_000,
    )


def test_a_grade_that_fails_twice_is_resent_saved_once_and_the_grader_is_told(
    grader_page, evaluation, screenshot
):
    page = grader_page
    attempts: list[str] = []

    def first_two_fail(route):
        attempts.append(route.request.post_data or "")
        if len(attempts) == 1:
            route.abort("connectionreset")  # the network dropped it
        elif len(attempts) == 2:
            route.fulfill(status=503, headers={"Retry-After": "1"}, body=UNAVAILABLE)
        else:
            route.continue_()

    page.route(GRADE_POSTS, first_two_fail)
    first = page.locator("#card").get_attribute("data-slot")

    page.keyboard.press("3")  # Perfect

    notice = page.locator("#save-notice")
    notice.get_by_text(NOT_SAVED).wait_for()
    screenshot("not-saved-yet")
    assert page.locator("#card").get_attribute("data-slot") == first  # still this result
    page.keyboard.press("0")  # ignored: the kept grade is sent first, and only it

    wait_for_next_result(page, first)
    assert notice.inner_text() == "Saved"
    screenshot("saved")
    assert len(attempts) == 3
    assert all("grade=3" in body for body in attempts)  # the same grade every time
    assert judgements(evaluation) == {"sku-1": 3}
    assert page.evaluate("sessionStorage.getItem('relevo.unsavedGrade')") is None


def test_a_grade_saved_whose_answer_was_lost_is_sent_again_and_stored_once(grader_page, evaluation):
    page = grader_page
    attempts: list[int] = []

    def answer_lost_once(route):
        attempts.append(1)
        if len(attempts) == 1:
            route.fetch()  # the server saves the grade ...
            route.abort("connectionreset")  # ... and its answer never arrives
        else:
            route.continue_()

    page.route(GRADE_POSTS, answer_lost_once)
    first = page.locator("#card").get_attribute("data-slot")

    page.keyboard.press("2")  # Good

    wait_for_next_result(page, first)
    assert page.locator("#save-notice").inner_text() == "Saved"
    assert len(attempts) == 2
    # Sent twice, one judgement: the second send rewrote the same grade on the same slot,
    # and the grader is on the second result, not the third.
    assert judgements(evaluation) == {"sku-1": 2}
    assert page.get_by_test_id("doc-name").inner_text() == "Shoe 2"


def test_a_grade_not_saved_yet_is_kept_across_a_reload(grader_page, evaluation, live_server):
    page = grader_page
    database_down = [True]

    def fail_while_down(route):
        if database_down[0]:
            route.fulfill(status=503, headers={"Retry-After": "1"}, body=UNAVAILABLE)
        else:
            route.continue_()

    page.route(GRADE_POSTS, fail_while_down)
    page.on("dialog", lambda dialog: dialog.accept())  # "Leave site? ..." on the reload
    page.keyboard.press("1")  # Fair
    page.locator("#save-notice").get_by_text(NOT_SAVED).wait_for()

    page.reload()
    page.locator("#save-notice").get_by_text(NOT_SAVED).wait_for()  # still kept
    assert judgements(evaluation) == {}
    shown = page.locator("#card").get_attribute("data-slot")
    database_down[0] = False

    wait_for_next_result(page, shown)
    assert page.locator("#save-notice").inner_text() == "Saved"
    assert judgements(evaluation) == {"sku-1": 1}
