"""The main pages under the Content-Security-Policy, in Chromium: nothing is refused (no
inline script, handler, style block or eval left anywhere), and what moved from inline
handlers to static/js/form-actions.js still works: the team switcher and Reset's question.
"""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from apps.accounts.models import User
from apps.accounts.services import member_add, team_create
from apps.evaluations.models import EvaluationMetric, EvaluationMetricPoint, FeedbackSlot
from apps.evaluations.services import Document, evaluation_create, keywords_add, snapshots_add
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.steps import evaluation_start
from tests.browser.people import PASSWORD, log_in
from tests.comparison_data import shop_pair

pytestmark = pytest.mark.django_db(transaction=True)
LEAD = "lead@shop.test"
RESET_QUESTION = "Reset this grade? The result goes back to the queue."

# Chromium logs a refused script or style to the console ("Refused to execute inline
# script because it violates the following Content Security Policy directive..."). The
# page's securitypolicyviolation event says the same in a line of our own, so a refusal
# is heard even if Chromium's wording changes.
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  const what = event.blockedURI || "inline code";
  const where = `${event.sourceFile}:${event.lineNumber}`;
  console.error(`Content Security Policy: ${event.violatedDirective} refused ${what} at ${where}`);
});
"""


def watch_for_refusals(context) -> list[str]:
    """Every console line and page error, in any page of the context, that tells of a
    refusal by the Content-Security-Policy."""
    refusals: list[str] = []

    def heard(text: str) -> None:
        if "Content Security Policy" in text or "Refused to" in text:
            refusals.append(text)

    def watch(page) -> None:
        page.on("console", lambda message: heard(message.text))
        page.on("pageerror", lambda error: heard(str(error)))

    context.add_init_script(REPORT_VIOLATIONS)
    context.on("page", watch)
    for page in context.pages:
        watch(page)
    return refusals


@pytest.fixture
def shop():
    """A lead of two teams (Outdoor shop, first by name, is the one shown after log-in);
    an evaluation with a metric history (a chart) and a grade to reset; two imported
    evaluations to compare."""
    team = team_create(name="Outdoor shop", owner_email=LEAD, owner_password=PASSWORD)
    grader = member_add(team=team, email="grader@shop.test", role="evaluator", password=PASSWORD)
    ski = team_create(name="Ski shop", owner_email="owner@ski.test", owner_password=PASSWORD)
    member_add(team=ski, email=LEAD, role="admin")
    lead = User.objects.get(email=LEAD)
    lead.is_staff = lead.is_superuser = True  # for the admin's pages
    lead.save(update_fields=["is_staff", "is_superuser"])

    evaluation = evaluation_create(
        team=team, name="Outdoor 1", scale="graded", metrics=[("cg", 3), ("ndcg", 3)]
    )
    for keyword in keywords_add(evaluation=evaluation, texts=["trail shoes", "tent"]):
        snapshots_add(
            keyword=keyword,
            documents=[Document(f"{keyword.text}-{i}", f"{keyword.text} {i}") for i in (1, 2, 3)],
        )
    evaluation = evaluation_start(evaluation=evaluation)
    graded = FeedbackSlot.objects.get(
        evaluation=evaluation, keyword__text="trail shoes", snapshot__position=1
    )
    slot_judge(
        slot_id=graded.id, giver=Giver.recorded(grader.user), grade=3, reason="checked by hand"
    )
    # Two minutes of history or more: each metric card draws its chart.
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=10)
    for metric in EvaluationMetric.objects.filter(evaluation=evaluation):
        EvaluationMetricPoint.objects.bulk_create(
            EvaluationMetricPoint(
                evaluation_metric=metric,
                minute=start + timedelta(minutes=i),
                value=0.1 * i,
                progress=0.1 * i,
            )
            for i in range(1, 4)
        )
    first, second = shop_pair(team)
    return {
        "team": team,
        "ski": ski,
        "evaluation": evaluation,
        "graded": graded,
        "compare": (first, second),
    }


def test_the_main_pages_run_under_the_policy_with_nothing_refused(live_server, page, shop):
    refusals = watch_for_refusals(page.context)
    evaluation = shop["evaluation"]
    url = live_server.url

    log_in(page, url, LEAD)
    expect(page.get_by_role("link", name="Dashboard")).to_be_visible()

    page.goto(f"{url}{reverse('insights:evaluation_list')}")
    expect(page.get_by_label("Compare Ranking A")).to_be_visible()

    page.goto(f"{url}{reverse('insights:evaluation_detail', args=[evaluation.id])}")
    expect(page.locator("canvas[data-chart]:not([data-drawn])")).to_have_count(0)
    drawn = page.evaluate(
        "() => [...document.querySelectorAll('canvas[data-chart]')]"
        ".filter(c => Chart.getChart(c) && c.width > 0).length"
    )
    assert drawn == 2  # Chart.js ran: one history chart per metric card

    # The grading page, and one grade by keyboard (htmx swaps in the next card).
    page.goto(f"{url}{reverse('judging:feedback')}")
    page.wait_for_selector("#card[data-ready='1']")
    before = page.locator("#card").get_attribute("data-slot")
    page.keyboard.press("3")
    page.wait_for_function(
        "before => document.querySelector('#card')?.dataset.slot !== before", arg=before
    )

    first, second = shop["compare"]
    page.goto(f"{url}{reverse('insights:evaluation_comparison')}?e={first.id}&e={second.id}")
    expect(page.locator(".verdict").first).to_be_visible()

    # The API docs: Swagger UI starts (its script comes from ?script, not inline).
    page.goto(f"{url}/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Relevo API")
    expect(page.locator(".opblock").first).to_be_visible()

    # The admin: its login page, then the pages behind it.
    admin = page.context.browser.new_context()
    admin_refusals = watch_for_refusals(admin)
    admin_page = admin.new_page()
    admin_page.goto(f"{url}/admin/login/")
    admin_page.fill("input[name=username]", LEAD)
    admin_page.fill("input[name=password]", PASSWORD)
    admin_page.click("input[type=submit]")
    admin_page.locator("tr.model-evaluation th a").click()
    admin_page.get_by_role("link", name="Outdoor 1").click()
    expect(admin_page.locator("#id_name")).to_have_value("Outdoor 1")
    admin.close()

    assert refusals == []
    assert admin_refusals == []


def test_an_inline_script_is_refused_and_heard(live_server, page, shop):
    # The watch above does hear a refusal: without the policy, this script would run.
    refusals = watch_for_refusals(page.context)
    log_in(page, live_server.url, LEAD)
    expect(page.get_by_role("link", name="Dashboard")).to_be_visible()

    page.evaluate(
        """() => {
          const script = document.createElement("script");
          script.textContent = "window.inlineRan = true";
          document.body.append(script);
        }"""
    )

    assert page.evaluate("() => window.inlineRan === true") is False
    for _ in range(40):  # console events arrive while Playwright waits
        if refusals:
            break
        page.wait_for_timeout(50)
    assert any("script-src" in refusal for refusal in refusals), refusals


def test_the_team_switcher_switches_team_without_an_inline_handler(live_server, page, shop):
    log_in(page, live_server.url, LEAD)
    switcher = page.locator("#team-select")
    assert switcher.get_attribute("onchange") is None
    assert switcher.locator("option:checked").inner_text() == "Outdoor shop"

    with page.expect_navigation():
        switcher.select_option(label="Ski shop")

    expect(page.locator("#team-select option:checked")).to_have_text("Ski shop")


def test_reset_asks_first_and_resets_only_once_the_lead_says_yes(live_server, page, shop):
    evaluation, graded = shop["evaluation"], shop["graded"]
    log_in(page, live_server.url, LEAD)
    keyword_page = reverse("insights:keyword_detail", args=[evaluation.id, graded.keyword_id])
    page.goto(f"{live_server.url}{keyword_page}")
    page.wait_for_load_state()
    row = page.locator("tr[data-position='1']")
    asked: list[str] = []

    # Cancelled: the grade stays.
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    row.get_by_role("button", name="Reset").click()
    assert asked == [RESET_QUESTION]
    graded.refresh_from_db()
    assert graded.grade == 3

    # Accepted: htmx posts the reset and swaps the row.
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    row.get_by_role("button", name="Reset").click()
    page.wait_for_selector("tr[data-position='1'] [role=status]")
    assert asked == [RESET_QUESTION, RESET_QUESTION]
    graded.refresh_from_db()
    assert (graded.grade, graded.grader_id) == (None, None)
