"""The lead's calibration pages: draw a gold set (problems beside their fields), calibrate
a judge on it, read the figures side by side and the ceiling, download the call log,
set the team's rule; another team's gold set answers 404."""

import pytest

from apps.judges import calibration
from apps.judges.gold_sets import gold_set_create
from apps.judges.models import CalibrationRun, CalibrationStatus, GoldSet, JudgeGate, JudgeRun
from apps.judges.services import judge_create
from tests.factories import client_for, make_evaluation, make_team

from .test_calibration import KEYWORDS, PEOPLE, grades_by_title, people_grade

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers_allowed")]

API_KEY = "not-a-real-key-calibration-pages"


@pytest.fixture
def graded(team_a, settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    baseline = make_evaluation(team=team_a, scale="graded", strategy=3, keywords=KEYWORDS)
    candidate = make_evaluation(team=team_a, scale="graded", strategy=3, keywords=KEYWORDS)
    for evaluation in (baseline, candidate):
        people_grade(evaluation, PEOPLE)
    return baseline, candidate


def test_a_lead_draws_a_gold_set_calibrates_a_judge_and_reads_the_figures(
    owner, team_a, graded, server, django_capture_on_commit_callbacks
):
    baseline, candidate = graded
    judge = judge_create(
        team=team_a,
        name="Local",
        protocol="openai",
        base_url=server.openai_url,
        model_name="llama",
        api_key=API_KEY,
    )
    lead = client_for(owner)
    assert "Calibration" in lead.get("/judges/").content.decode()

    refused = lead.post(
        "/judges/calibration/",
        {"name": "", "baseline": str(baseline.id), "candidate": str(baseline.id), "keywords": "1"},
    )
    page = refused.content.decode()
    assert "A whole number from 2 to 500." in page
    assert "Choose an evaluation other than the baseline." in page
    assert not GoldSet.objects.exists()

    drawn = lead.post(
        "/judges/calibration/",
        {
            "name": "Shop gold",
            "baseline": str(baseline.id),
            "candidate": str(candidate.id),
            "keywords": "6",
            "seed": "11",
        },
    )
    gold = GoldSet.objects.get(name="Shop gold")
    assert drawn["Location"] == f"/judges/calibration/{gold.id}/"

    server.respond_with(grades_by_title(PEOPLE))
    with django_capture_on_commit_callbacks(execute=True):
        started = lead.post(f"/judges/calibration/{gold.id}/calibrate/", {"judge": judge.id})
    assert started.status_code == 302
    run = CalibrationRun.objects.get(gold_set=gold)
    assert run.status == CalibrationStatus.FINISHED  # in-process: the work ran after commit

    page = lead.get(f"/judges/calibration/{gold.id}/").content.decode()
    assert "Local" in page and "default-graded-v2" in page
    assert "6 keywords and 24 results people graded" in page
    assert 'data-testid="calibration-alpha">1.00 [1.00, 1.00]' in page
    assert "Would it change a decision?" in page
    assert 'hx-trigger="every' not in page  # nothing runs: no polling
    assert API_KEY not in page

    log = lead.get(f"/judges/calibrations/{run.id}/calls/")
    lines = b"".join(log.streaming_content).decode().splitlines()
    assert len(lines) == run.calls and API_KEY not in "".join(lines)


def test_the_team_s_rule_is_set_on_the_calibration_page_and_holds_on_the_evaluation_page(
    owner, team_a, graded, server
):
    baseline, candidate = graded
    judge = judge_create(
        team=team_a, name="Local", protocol="openai", base_url=server.openai_url, model_name="m"
    )
    lead = client_for(owner)
    bad = lead.post("/judges/calibration/gate/", {"min_alpha": "2"}, follow=True)
    assert "min_alpha: a number from 0 to 1" in bad.content.decode()
    lead.post("/judges/calibration/gate/", {"min_alpha": "0.7"})
    assert JudgeGate.objects.get(team=team_a).min_alpha == 0.7

    refused = lead.post(f"/evaluations/{candidate.id}/judges/", {"judge": judge.id}, follow=True)
    assert "it has no calibration" in refused.content.decode()
    assert not JudgeRun.objects.exists()


def test_a_running_calibration_polls_and_can_be_cancelled(owner, team_a, graded, server):
    baseline, _ = graded
    judge = judge_create(
        team=team_a, name="Local", protocol="openai", base_url=server.openai_url, model_name="m"
    )
    gold = gold_set_create(team=team_a, name="Gold", baseline=baseline.id, seed=2)
    run = calibration.calibration_create(gold_set=gold, judge=judge)
    lead = client_for(owner)
    page = lead.get(f"/judges/calibration/{gold.id}/").content.decode()
    assert 'hx-trigger="every 3s"' in page and "0 of 32 graded" in page
    lead.post(f"/judges/calibrations/{run.id}/cancel/")
    run.refresh_from_db()
    assert (run.status, run.note) == (CalibrationStatus.STOPPED, "cancelled by a lead")


def test_another_team_s_gold_set_and_calibration_answer_404(owner, server, settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    other = make_team("Other")
    evaluation = make_evaluation(team=other, strategy=3, keywords={"keyword 0": 2, "keyword 1": 2})
    people_grade(evaluation, lambda keyword, number: 1)
    gold = gold_set_create(team=other, name="Theirs", baseline=evaluation.id, seed=1)
    judge = judge_create(
        team=other, name="J", protocol="openai", base_url=server.openai_url, model_name="m"
    )
    run = calibration.calibration_create(gold_set=gold, judge=judge)
    lead = client_for(owner)
    assert lead.get(f"/judges/calibration/{gold.id}/").status_code == 404
    assert lead.post(f"/judges/calibration/{gold.id}/delete/").status_code == 404
    assert lead.post(f"/judges/calibrations/{run.id}/cancel/").status_code == 404
    assert lead.get(f"/judges/calibrations/{run.id}/calls/").status_code == 404


def test_a_gold_set_is_not_removed_while_a_calibration_on_it_runs(owner, team_a, graded, server):
    baseline, _ = graded
    judge = judge_create(
        team=team_a, name="Local", protocol="openai", base_url=server.openai_url, model_name="m"
    )
    gold = gold_set_create(team=team_a, name="Gold", baseline=baseline.id, seed=2)
    calibration.calibration_create(gold_set=gold, judge=judge)
    lead = client_for(owner)
    refused = lead.post(f"/judges/calibration/{gold.id}/delete/", follow=True)
    assert "a calibration on this gold set is running; cancel it first" in refused.content.decode()
    assert GoldSet.objects.filter(id=gold.id).exists()
