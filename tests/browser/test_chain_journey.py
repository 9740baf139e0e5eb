"""A lead sets up a chain in Chromium: a first judge on a real local model server (it
answers at once, unsure of three results), then people. A grader on Give feedback is
offered exactly the three results the chain sent on, and the evaluation stays Active
until the last of them is graded; then the lead's page says Finished, and whose grades
its numbers rest on."""

import pytest

from apps.accounts.services import member_add, team_create
from apps.evaluations.models import Evaluation, FeedbackSlot, Status
from apps.judges.models import ChainStep, JudgeChain, StepStatus
from apps.judges.services import judge_create
from apps.judges.tests.fake_provider import FakeProvider
from tests.browser.conftest import SCREENSHOTS
from tests.browser.people import PASSWORD, log_in
from tests.browser.test_grading_journey import press_and_wait_for_next
from tests.factories import make_evaluation
from tests.unsure_model import UNSURE, unsure_of_three

pytestmark = pytest.mark.django_db(transaction=True)

KEYWORDS = {"red shoes": 4, "blue hat": 4}


@pytest.fixture
def model_server(settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    with FakeProvider() as server:
        server.respond_with(unsure_of_three)
        yield server


def status_shown(page) -> str:
    return page.get_by_test_id("lifecycle").get_by_test_id("status").inner_text()


def shot(page, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"chain-journey-{name}.png"), full_page=True)


def test_a_lead_sets_up_a_chain_people_grade_exactly_what_it_sent_and_only_then_it_finishes(
    live_server, browser, page, model_server
):
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    member_add(team=team, email="grader@shop.test", role="evaluator", password=PASSWORD)
    judge_create(
        team=team,
        name="Quick",
        protocol="openai",
        base_url=model_server.openai_url,
        model_name="quick-model",
        api_key="not-a-real-key-chain-wxyz",
    )
    evaluation = make_evaluation(team=team, scale="graded", strategy=1, keywords=KEYWORDS)
    evaluation_url = f"{live_server.url}/evaluations/{evaluation.id}/"

    # The lead sets up the chain on the evaluation's page.
    log_in(page, live_server.url, "lead@shop.test")
    page.goto(evaluation_url)
    assert status_shown(page) == "Active"
    panel = page.get_by_test_id("judge-panel")  # swapped in by htmx after the page
    panel.wait_for()
    panel.get_by_text("Set up a chain").click()
    form = panel.get_by_test_id("chain-form")
    form.get_by_label("First judge").select_option(label="Quick (quick-model)")
    form.get_by_label("Sent on to").select_option(label="People")
    form.get_by_label("When its confidence is below").fill("0.6")
    form.get_by_label("Audit sample").fill("0")
    shot(page, "chain-form")
    form.get_by_role("button", name="Start the chain").click()
    assert page.get_by_text("The chain is grading this evaluation.").is_visible()

    # The first judge answered at once and the chain looked at every result in the
    # request (tasks run in-process): three went to people, the evaluation stays open.
    chain = JudgeChain.objects.get(evaluation=evaluation)
    sent = ChainStep.objects.filter(chain=chain, status=StepStatus.AWAITING_PEOPLE)
    assert set(sent.values_list("slot__snapshot__doc_id", flat=True)) == UNSURE
    assert len(model_server.requests) == 2  # one call a keyword
    page.reload()
    summary = page.get_by_test_id("chain-summary")
    summary.wait_for()
    assert summary.get_by_test_id("chain-saved-people").inner_text() == (
        "5 (3 sent to people, 0 graded so far)"
    )
    assert status_shown(page) == "Active"
    shot(page, "chain-set-up")

    # A grader opens Give feedback and is offered the three results, and no other.
    grader_context = browser.new_context(viewport={"width": 1280, "height": 900})
    grader = grader_context.new_page()
    grader.set_default_timeout(10_000)
    log_in(grader, live_server.url, "grader@shop.test")
    grader.get_by_role("link", name="Give feedback").first.click()
    offered = []
    for key in ["3", "0", "2"]:  # Perfect, Poor, Good: each key is its grade
        grader.wait_for_selector("#card[data-ready='1']")
        doc_id = grader.get_by_test_id("doc-name").locator("xpath=following-sibling::p[1]")
        offered.append(doc_id.inner_text().split(" · ")[0])
        if len(offered) == 1:
            shot(grader, "grader-first-result")
        if len(offered) == len(UNSURE):
            # Before the last is graded, the lead's page still says Active.
            page.reload()
            assert status_shown(page) == "Active"
            assert Evaluation.objects.get(id=evaluation.id).status == Status.ACTIVE
        press_and_wait_for_next(grader, key)
    assert grader.get_by_test_id("empty-state").is_visible()
    assert sorted(offered) == sorted(UNSURE)
    shot(grader, "grader-done")
    grader_context.close()

    # After the last grade, the lead's page says Finished, and whose grades these are.
    page.reload()
    assert status_shown(page) == "Finished"
    judged_by = page.get_by_test_id("judged-by").first
    assert judged_by.get_attribute("data-kind") == "mixed"
    assert judged_by.get_by_test_id("source-badge").inner_text() == "Mixed"
    assert "8 grades: people 3 (38 %), AI judge Quick 5 (62 %)" in judged_by.inner_text()
    assert page.get_by_test_id("chain-saved-people").inner_text() == (
        "5 (3 sent to people, 3 graded so far)"
    )
    shot(page, "finished")

    # The sent results hold the grader's grades (keys 4, 1, 3: Perfect, Poor, Good), the
    # others the first judge's Good.
    slots = FeedbackSlot.objects.filter(evaluation=evaluation).select_related("grader", "snapshot")
    by_people = {s.snapshot.doc_id: s.grade for s in slots if s.grader.email == "grader@shop.test"}
    assert set(by_people) == UNSURE and sorted(by_people.values()) == [0, 2, 3]
    assert {s.grade for s in slots if s.snapshot.doc_id not in UNSURE} == {2}
