"""Judgements from clicks through real URLs: the API asks for them from a log (a job a
worker runs; here, with no broker, at the commit), calibrates them on a gold set and
grades an evaluation with them; the pages do the same for a lead, and say whose grades an
evaluation's numbers rest on."""

import io

import pytest
from django.test import Client

from apps.accounts.api_tokens import api_token_create
from apps.behaviour.click_judgements import click_judgements_make
from apps.behaviour.models import ClickJudgementJob, ClickJudgementSet, ClickLog
from apps.evaluations.models import FeedbackSlot, Source
from apps.judges.calibration import gate_set
from apps.judges.gold_sets import gold_set_create
from apps.library.models import JudgementList
from tests.factories import client_for, make_evaluation, make_team

from .click_logs import KEYWORDS, log_with_rates, rates_following_people

pytestmark = pytest.mark.django_db


def api_for(team) -> Client:
    _token, text = api_token_create(team=team, name="clicks")
    return Client(headers={"Authorization": f"Bearer {text}"})


# --- The API -----------------------------------------------------------------------------


# Transactional, as in production: the job queued at the commit runs then, in-process.
@pytest.mark.django_db(transaction=True)
def test_the_api_makes_judgements_from_a_log_in_a_job_and_lists_them(team_a):
    log = log_with_rates(team_a, {("shoes", "a"): 0.7, ("shoes", "b"): 0.05})
    api = api_for(team_a)
    url = f"/api/v1/click-logs/{log.id}/judgements/"

    asked = api.post(
        url,
        {"model": "pbm", "scale": "binary", "thresholds": [0.3], "min_impressions": 20},
        content_type="application/json",
    )

    assert asked.status_code == 202, asked.json()
    job = api.get(asked["Location"]).json()
    assert job == asked.json()
    assert (job["status"], job["problems"], job["log"]) == ("done", [], log.id)
    assert job["settings"] == {
        "model": "pbm",
        "scale": "binary",
        "min_impressions": 20,
        "thresholds": [0.3],
        "name": "clicks: PBM, 2026-10-01 to 2026-10-31",
    }
    made = job["judgement_set"]
    assert made["source"] == "clicks: PBM, 2026-10-01 to 2026-10-31"
    assert (made["model"], made["scale"], made["thresholds"]) == ("pbm", "binary", [0.3])
    assert (made["judgements"], made["fitted_on"]) == (2, 0)
    assert [each["judgement_list"] for each in api.get(url).json()] == [made["judgement_list"]]


def test_the_api_names_each_bad_field_and_hides_other_teams_logs(team_a):
    log = log_with_rates(team_a, {("shoes", "a"): 0.7})
    theirs = log_with_rates(make_team("Other"), {("shoes", "a"): 0.7})
    api = api_for(team_a)

    bad = api.post(
        f"/api/v1/click-logs/{log.id}/judgements/",
        {"model": "magic", "scale": "graded", "thresholds": [0.9, 0.1, 0.5], "colour": 1},
        content_type="application/json",
    )
    hidden = api.post(
        f"/api/v1/click-logs/{theirs.id}/judgements/",
        {"model": "ctr", "scale": "binary", "thresholds": [0.3]},
        content_type="application/json",
    )

    assert bad.status_code == 400
    assert [error["field"] for error in bad.json()["errors"]] == ["colour"]
    again = api.post(
        f"/api/v1/click-logs/{log.id}/judgements/",
        {"model": "magic", "scale": "graded", "thresholds": [0.9, 0.1, 0.5]},
        content_type="application/json",
    )
    assert {error["field"] for error in again.json()["errors"]} == {"model", "thresholds"}
    assert hidden.status_code == 404
    assert not ClickJudgementSet.objects.exists()
    assert not ClickJudgementJob.objects.exists()


def test_the_api_calibrates_a_click_list_and_then_grades_with_it(graded_by_people):
    team = graded_by_people.team
    gate_set(team=team, min_alpha=0.8)
    log = log_with_rates(team, rates_following_people(KEYWORDS))
    listed = click_judgements_make(
        team=team, user=None, log=log, model="ctr", scale="graded", thresholds=[0.1, 0.3, 0.5]
    ).judgement_list
    target = make_evaluation(team=team, scale="graded", keywords={"keyword 2": 4})
    gold = gold_set_create(team=team, name="Gold", baseline=graded_by_people.id, keywords=8, seed=1)
    api = api_for(team)
    grade_url = f"/api/v1/evaluations/{target.id}/click-grades/"

    refused = api.post(grade_url, {"judgement_list": listed.id}, content_type="application/json")
    calibrated = api.post(
        f"/api/v1/gold-sets/{gold.id}/calibrations/",
        {"judgement_list": listed.id},
        content_type="application/json",
    )
    graded = api.post(grade_url, {"judgement_list": listed.id}, content_type="application/json")

    assert refused.status_code == 409
    assert "it has no calibration" in refused.json()["detail"]
    assert calibrated.status_code == 201, calibrated.json()
    run = calibrated.json()
    assert (run["judge"], run["judgement_list"], run["judge_name"]) == (
        None,
        listed.id,
        listed.name,
    )
    assert (run["status"], run["alpha"]) == ("finished", pytest.approx(1.0))
    assert graded.json() == {"graded": 4, "unknown": 0, "taken": 0}
    detail = api.get(f"/api/v1/evaluations/{target.id}/").json()
    assert detail["judged_by"]["kind"] == "clicks"
    assert detail["judged_by"]["clicks"] == [{"name": listed.name, "graded": 4}]


def test_grading_with_a_list_of_another_team_answers_404(team_a):
    target = make_evaluation(team=team_a, scale="graded", keywords={"shoes": 2})
    other = make_team("Other")
    log = log_with_rates(other, {("shoes", "shoes-doc-1"): 0.7})
    theirs = click_judgements_make(
        team=other, user=None, log=log, model="ctr", scale="graded", thresholds=[0.1, 0.3, 0.5]
    ).judgement_list

    answer = api_for(team_a).post(
        f"/api/v1/evaluations/{target.id}/click-grades/",
        {"judgement_list": theirs.id},
        content_type="application/json",
    )

    assert answer.status_code == 404
    assert not FeedbackSlot.objects.filter(evaluation_id=target.id, source=Source.CLICKS).exists()


# --- The pages ---------------------------------------------------------------------------


CSV_LOG = "query,document,position,clicked\n" + "".join(
    f"shoes,{doc},{rank},{1 if n < clicks else 0}\n"
    for doc, rank, clicks in (("shoes-doc-1", 1, 8), ("shoes-doc-2", 2, 1))
    for n in range(20)
)


@pytest.mark.django_db(transaction=True)
def test_a_lead_imports_a_log_and_makes_judgements_on_the_pages(team_a, owner):
    client = client_for(owner)
    upload = io.BytesIO(CSV_LOG.encode())
    upload.name = "clicks.csv"

    imported = client.post(
        "/behaviour/", {"name": "Week 40", "file_format": "csv", "log": upload}, follow=True
    )
    log = ClickLog.objects.get(team=team_a)
    bad = client.post(
        f"/behaviour/{log.id}/judgements/",
        {"model": "ctr", "scale": "graded", "min_impressions": 10, "thresholds": "0.5 0.1 0.9"},
    )
    made = client.post(
        f"/behaviour/{log.id}/judgements/",
        {"model": "ctr", "scale": "binary", "min_impressions": 10, "thresholds": "0.3"},
        follow=True,
    )

    assert "Week 40" in imported.content.decode()
    assert "thresholds: 3 ascending numbers from 0" in bad.content.decode()
    page = made.content.decode()
    assert 'data-testid="click-judgement-set"' in page
    assert "Made 2 judgements from clicks: clicks: CTR, Week 40, in the library." in page
    assert 'data-status="done"' in page
    assert 'hx-trigger="every' not in page  # nothing left to wait for
    listed = JudgementList.objects.get(team=team_a)
    assert listed.source.kind == Source.CLICKS
    library = client.get("/library/").content.decode()
    assert listed.name in library


def test_graders_and_other_teams_do_not_reach_the_logs(team_a, evaluator, outsider):
    log = log_with_rates(team_a, {("shoes", "a"): 0.7})

    assert client_for(evaluator).get(f"/behaviour/{log.id}/").status_code in (302, 403)
    assert client_for(outsider).get(f"/behaviour/{log.id}/").status_code == 404
    assert client_for(outsider).post(f"/behaviour/{log.id}/delete/").status_code == 404
    assert ClickLog.objects.filter(id=log.id).exists()


def test_the_evaluation_page_grades_with_clicks_and_says_so(team_a, owner):
    evaluation = make_evaluation(team=team_a, scale="graded", keywords={"shoes": 2})
    log = log_with_rates(team_a, {("shoes", "shoes-doc-1"): 0.7, ("shoes", "shoes-doc-2"): 0.2})
    listed = click_judgements_make(
        team=team_a, user=None, log=log, model="ctr", scale="graded", thresholds=[0.1, 0.3, 0.5]
    ).judgement_list
    client = client_for(owner)
    panel_url = f"/evaluations/{evaluation.id}/clicks/"

    panel = client.get(panel_url).content.decode()
    client.post(panel_url, {"judgement_list": listed.id})
    page = client.get(f"/evaluations/{evaluation.id}/").content.decode()

    assert 'data-testid="click-grading-form"' in panel
    assert listed.name in panel
    assert "These numbers rest on 2 grades: clicks: CTR, 2026-10-01 to 2026-10-31 2 (100 %)" in page
    assert 'class="badge source-badge source-clicks"' in page


def test_the_panel_keeps_uncalibrated_clicks_out_under_the_teams_rule(team_a, owner):
    gate_set(team=team_a, min_alpha=0.5)
    evaluation = make_evaluation(team=team_a, scale="graded", keywords={"shoes": 2})
    log = log_with_rates(team_a, {("shoes", "shoes-doc-1"): 0.7})
    listed = click_judgements_make(
        team=team_a, user=None, log=log, model="ctr", scale="graded", thresholds=[0.1, 0.3, 0.5]
    ).judgement_list
    client = client_for(owner)

    panel = client.get(f"/evaluations/{evaluation.id}/clicks/").content.decode()
    client.post(f"/evaluations/{evaluation.id}/clicks/", {"judgement_list": listed.id})

    assert 'data-testid="click-grading-form"' not in panel
    assert "it has no calibration" in panel
    assert not FeedbackSlot.objects.filter(
        evaluation_id=evaluation.id, grade__isnull=False
    ).exists()


def test_the_gold_set_page_calibrates_a_click_list_beside_the_judges(graded_by_people):
    team = graded_by_people.team
    owner = client_for(team.memberships.get(role="owner").user)
    log = log_with_rates(team, rates_following_people(KEYWORDS))
    listed = click_judgements_make(
        team=team, user=None, log=log, model="ctr", scale="graded", thresholds=[0.1, 0.3, 0.5]
    ).judgement_list
    gold = gold_set_create(team=team, name="Gold", baseline=graded_by_people.id, keywords=8, seed=1)

    before = owner.get(f"/judges/calibration/{gold.id}/").content.decode()
    after = owner.post(
        f"/judges/calibration/{gold.id}/calibrate/", {"judgement_list": listed.id}, follow=True
    ).content.decode()

    assert 'data-testid="calibrate-list-form"' in before
    assert f"Calibrated {listed.name} on Gold." in after
    assert 'class="badge source-badge source-clicks">Clicks</span>' in after
    assert "none: read from the library" in after


def test_a_logs_page_leads_to_a_query_set_sampled_from_it(team_a, owner):
    log_with_rates(team_a, {("hats", "a"): 0.2}, name="Older")
    log = log_with_rates(team_a, {("shoes", "a"): 0.7}, name="Newest")
    client = client_for(owner)

    page = client.get(f"/behaviour/{log.id}/").content.decode()
    form = client.get(f"/query-sets/sample/?log={log.id}").content.decode()

    assert f'href="/query-sets/sample/?log={log.id}"' in page
    assert f'<option value="{log.id}" selected>' in form
