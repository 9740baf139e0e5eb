"""A lead turns clicks into judgements, in Chromium: opens Behaviour logs from the Team
menu, imports a CSV click log, makes judgements from it with a click model, then grades an
open evaluation with them from the evaluation's page, which then says its numbers rest
on clicks. Thresholds out of order are refused, naming the field. While a worker makes
judgements the log's page follows them until their list is there."""

import pytest

from apps.accounts.services import team_create
from apps.behaviour.click_job_running import click_job_run
from apps.behaviour.models import ClickJudgementJob
from apps.behaviour.tests.click_logs import log_with_rates
from apps.evaluations.models import FeedbackSlot, Source
from apps.library.models import JudgementList
from tests.browser.people import PASSWORD, log_in
from tests.factories import make_evaluation

pytestmark = pytest.mark.django_db(transaction=True)

# Shoes' first result clicked 16 times in 20, its second 2 in 20.
CLICKS = "query,document,position,clicked\n" + "".join(
    f"shoes,shoes-doc-{rank},{rank},{1 if n < clicked else 0}\n"
    for rank, clicked in ((1, 16), (2, 2))
    for n in range(20)
)


@pytest.fixture
def team():
    return team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)


def test_a_lead_makes_judgements_from_clicks_and_grades_an_evaluation_with_them(
    live_server, page, team, tmp_path, screenshot
):
    evaluation = make_evaluation(team=team, scale="binary", keywords={"shoes": 2})
    log_file = tmp_path / "week-40.csv"
    log_file.write_text(CLICKS)
    log_in(page, live_server.url, "lead@shop.test")
    page.get_by_text("Team", exact=True).click()
    page.get_by_role("link", name="Behaviour logs").click()

    page.get_by_label("Name").fill("Week 40")
    page.get_by_label("Format").select_option("csv")
    page.get_by_label("CSV click log (query, document").set_input_files(str(log_file))
    page.get_by_role("button", name="Import").click()
    page.get_by_text("Imported Week 40: 40 events read.").wait_for()

    form = page.get_by_test_id("click-judgements-form")
    form.get_by_label("Click model").select_option("ctr")
    form.get_by_label("Scale").select_option("binary")
    form.get_by_label("Thresholds").fill("0.9 0.1")
    form.get_by_role("button", name="Make judgements").click()
    page.get_by_test_id("judgement-problems").wait_for()
    assert "thresholds: 1 ascending numbers from 0" in page.inner_text("body")

    form = page.get_by_test_id("click-judgements-form")
    form.get_by_label("Click model").select_option("ctr")
    form.get_by_label("Scale").select_option("binary")
    form.get_by_label("Thresholds").fill("0.5")
    form.get_by_role("button", name="Make judgements").click()
    page.get_by_text("Made 2 judgements from clicks: clicks: CTR, Week 40").wait_for()
    assert page.get_by_test_id("click-judgement-set").count() == 1
    screenshot("judgements")
    listed = JudgementList.objects.get(team=team)

    page.goto(f"{live_server.url}/evaluations/{evaluation.id}/")
    panel = page.get_by_test_id("click-panel")
    panel.wait_for()
    panel.get_by_role("button", name="Grade").click()
    page.get_by_text(f"{listed.name} graded 2 results").wait_for()

    judged_by = page.get_by_test_id("judged-by")
    assert judged_by.get_attribute("data-kind") == "clicks"
    assert "clicks: CTR, Week 40 2 (100 %)" in judged_by.inner_text()
    screenshot("evaluation")
    grades = FeedbackSlot.objects.filter(evaluation_id=evaluation.id, source=Source.CLICKS)
    assert sorted(grades.values_list("snapshot__position", "grade")) == [(1, 1), (2, 0)]


def test_the_logs_page_follows_judgements_a_worker_makes_until_their_list_is_there(
    live_server, page, team, tmp_path, screenshot, broker_down
):
    """With the broker down the job waits, as it would for a busy worker; the page polls
    it, and shows the list once a worker has made it, without being reloaded."""
    log = log_with_rates(team, {("shoes", "shoes-doc-1"): 0.8, ("shoes", "shoes-doc-2"): 0.1})
    log_in(page, live_server.url, "lead@shop.test")
    page.goto(f"{live_server.url}/behaviour/{log.id}/")

    form = page.get_by_test_id("click-judgements-form")
    form.get_by_label("Click model").select_option("pbm")
    form.get_by_label("Scale").select_option("binary")
    form.get_by_label("Thresholds").fill("0.5")
    form.get_by_role("button", name="Make judgements").click()
    page.get_by_text("Making judgements with PBM in the background…").wait_for()
    job = page.get_by_test_id("click-job")
    assert job.get_attribute("data-status") == "queued"
    screenshot("waiting")

    assert click_job_run(job_id=ClickJudgementJob.objects.get(log=log).id) == "done"
    page.get_by_test_id("click-job-list").wait_for(timeout=10_000)
    assert job.get_attribute("data-status") == "done"
    assert page.get_by_test_id("click-judgement-set").count() == 1
    screenshot("made")
