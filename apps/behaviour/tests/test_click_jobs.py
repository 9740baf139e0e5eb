"""Judgements from clicks are made by a job on a worker: the settings are checked at once,
the log's page polls while the job waits or runs and then links the list it made, or
says why it made none; a job runs once however many workers are handed it, and the sweep
restarts one whose task was lost or whose worker died, never making a list twice.

Transactional, as in production: what a commit queues runs then, in this process, unless
the broker is down (the job then waits, as it would for a busy worker)."""

import logging
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from apps.accounts.api_tokens import api_token_create
from apps.behaviour import click_job_running, click_judgements
from apps.behaviour.click_job_running import MAX_ATTEMPTS, click_job_run, stalled_click_jobs
from apps.behaviour.click_jobs import click_judgements_request
from apps.behaviour.models import ClickJudgementJob, JobStatus
from apps.behaviour.tasks import resume_stalled_click_jobs
from apps.core.errors import InvalidInput
from apps.library.models import JudgementList
from conftest import switch_broker
from tests.factories import client_for, make_team
from tests.worker import wait_for

from .click_logs import log_with_rates

pytestmark = pytest.mark.django_db(transaction=True)

RATES = {("shoes", "a"): 0.7, ("shoes", "b"): 0.05}
BINARY = {"model": "ctr", "scale": "binary", "thresholds": [0.3]}
NAME = "clicks: CTR, 2026-10-01 to 2026-10-31"


def api_for(team) -> Client:
    _token, text = api_token_create(team=team, name="clicks")
    return Client(headers={"Authorization": f"Bearer {text}"})


def asked(team, log, **settings) -> ClickJudgementJob:
    return click_judgements_request(team=team, user=None, log=log, **{**BINARY, **settings})


def job_of(job: ClickJudgementJob) -> ClickJudgementJob:
    return ClickJudgementJob.objects.get(id=job.id)


def worker_runs(job: ClickJudgementJob) -> str:
    """What a worker handed the job's task does."""
    return click_job_run(job_id=job.id)


def while_fitting(monkeypatch, meanwhile):
    """Run `meanwhile()` in the middle of the next fit, as if it happened on another
    worker while this one fits."""
    fit = click_judgements.log_fitted
    calls = []

    def fit_and_meanwhile(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            meanwhile()
        return fit(*args, **kwargs)

    monkeypatch.setattr(click_judgements, "log_fitted", fit_and_meanwhile)


# --- The page ----------------------------------------------------------------------------


def test_the_page_says_a_worker_makes_them_and_polls_until_the_list_is_made(
    team_a, owner, broker_down
):
    log = log_with_rates(team_a, RATES)
    client = client_for(owner)

    answer = client.post(
        f"/behaviour/{log.id}/judgements/",
        {"model": "pbm", "scale": "binary", "min_impressions": 10, "thresholds": "0.3"},
        follow=True,
    )
    page = answer.content.decode()
    progress_url = f"/behaviour/{log.id}/judgements/progress/"

    assert "Making judgements with PBM in the background…" in page
    assert 'data-status="queued"' in page
    assert f'hx-get="{progress_url}" hx-trigger="every 2s"' in page
    job = ClickJudgementJob.objects.get(log=log)
    assert worker_runs(job) == "done"
    polled = client.get(progress_url).content.decode()
    assert 'data-status="done"' in polled
    assert "hx-trigger" not in polled  # the polling stops
    assert 'data-testid="click-judgement-set"' in polled
    assert "made 2 judgements" in polled
    assert f"{job_of(job).result.judgement_list.name} in the library</a>" in polled


def test_a_failed_fit_shows_its_problems_on_the_page(team_a, owner):
    log = log_with_rates(team_a, RATES)
    client = client_for(owner)

    answer = client.post(
        f"/behaviour/{log.id}/judgements/",
        {"model": "ctr", "scale": "binary", "min_impressions": 500, "thresholds": "0.3"},
        follow=True,
    )
    page = answer.content.decode()

    assert 'data-status="failed"' in page
    assert 'data-testid="click-job-problems"' in page
    assert "min_impressions: no document of the log was shown 500 times or more" in page
    assert not JudgementList.objects.exists()


def test_another_teams_log_has_no_progress_to_show(team_a, outsider):
    log = log_with_rates(team_a, RATES)

    assert client_for(outsider).get(f"/behaviour/{log.id}/judgements/progress/").status_code == 404


# --- The API -----------------------------------------------------------------------------


def test_a_failed_fit_answers_with_its_problems_over_the_api(team_a):
    log = log_with_rates(team_a, RATES)
    api = api_for(team_a)

    # No thresholds, and no people's grades to fit them on.
    answer = api.post(
        f"/api/v1/click-logs/{log.id}/judgements/",
        {"model": "ctr", "scale": "graded"},
        content_type="application/json",
    )
    job = api.get(answer["Location"]).json()

    assert answer.status_code == 202
    assert (job["status"], job["judgement_set"]) == ("failed", None)
    [problem] = job["problems"]
    assert problem.startswith("thresholds: ") and problem.endswith("; set them by hand")


def test_bad_settings_are_refused_at_once_naming_the_field(team_a):
    log = log_with_rates(team_a, RATES)

    answer = api_for(team_a).post(
        f"/api/v1/click-logs/{log.id}/judgements/",
        {"model": "ctr", "scale": "binary", "min_impressions": 0},
        content_type="application/json",
    )

    assert answer.status_code == 400
    assert [error["field"] for error in answer.json()["errors"]] == ["min_impressions"]
    assert not ClickJudgementJob.objects.exists()


def test_another_teams_job_is_not_found(team_a):
    other = make_team("Other")
    theirs = asked(other, log_with_rates(other, RATES))

    answer = api_for(team_a).get(f"/api/v1/click-judgement-jobs/{theirs.id}/")

    assert answer.status_code == 404


# --- Running once ------------------------------------------------------------------------


def test_two_workers_handed_one_job_run_it_once(team_a, broker_down, monkeypatch):
    job = asked(team_a, log_with_rates(team_a, RATES))
    second_worker = []
    while_fitting(monkeypatch, lambda: second_worker.append(worker_runs(job)))

    first = worker_runs(job)

    assert (first, second_worker) == ("done", ["not runnable"])
    assert (job_of(job).status, job_of(job).attempts) == (JobStatus.DONE, 1)
    assert JudgementList.objects.filter(team=team_a).count() == 1
    assert worker_runs(job) == "not runnable"  # a done job is never run again


def test_a_worker_given_up_for_dead_does_not_make_a_second_list(team_a, broker_down, monkeypatch):
    job = asked(team_a, log_with_rates(team_a, RATES))

    def quiet_then_taken_over():
        # This worker's heartbeat looks stopped: the sweep queues the job again and
        # another worker makes the list while this one still fits.
        ClickJudgementJob.objects.filter(id=job.id).update(
            heartbeat_at=timezone.now() - timedelta(minutes=5)
        )
        assert stalled_click_jobs() == [job.id]
        assert worker_runs(job) == "done"

    while_fitting(monkeypatch, quiet_then_taken_over)

    worker_runs(job)

    done = job_of(job)
    assert (done.status, done.attempts, done.problems) == (JobStatus.DONE, 2, [])
    assert list(JudgementList.objects.filter(team=team_a)) == [done.result.judgement_list]


def test_a_second_job_for_a_list_being_made_is_refused_naming_the_name(team_a, broker_down):
    log = log_with_rates(team_a, RATES)
    asked(team_a, log)

    with pytest.raises(InvalidInput) as refused:
        asked(team_a, log, thresholds=[0.5])

    assert refused.value.problems == [
        f"name: judgements named {NAME} are being made already; give these another name"
    ]


def test_an_unexpected_error_fails_the_job_naming_its_class_and_is_logged(
    team_a, broker_down, monkeypatch, caplog
):
    job = asked(team_a, log_with_rates(team_a, RATES))

    def broken(*args, **kwargs):
        raise RuntimeError("out of luck")

    monkeypatch.setattr(click_judgements, "log_fitted", broken)
    with caplog.at_level(logging.ERROR, logger="apps.behaviour.click_job_running"):
        assert worker_runs(job) == "failed"

    assert job_of(job).problems == ["the worker failed: RuntimeError"]
    assert "out of luck" in caplog.text


def test_a_running_job_writes_its_heartbeat_while_it_fits(
    team_a, postgres, broker_down, monkeypatch
):
    job = asked(team_a, log_with_rates(team_a, RATES))
    monkeypatch.setattr(click_job_running, "HEARTBEAT_SECONDS", 0.05)
    beats = []

    def a_beat_comes():
        started = job_of(job).heartbeat_at
        beats.append(wait_for(lambda: job_of(job).heartbeat_at > started, seconds=5))

    while_fitting(monkeypatch, a_beat_comes)

    assert worker_runs(job) == "done"
    assert beats == [True]


# --- The sweep ---------------------------------------------------------------------------


def test_the_sweep_queues_again_a_job_whose_task_was_lost(team_a, broker_down):
    job = asked(team_a, log_with_rates(team_a, RATES))
    assert job_of(job).status == JobStatus.QUEUED
    assert stalled_click_jobs() == []  # a job just queued is given time for its worker

    ClickJudgementJob.objects.filter(id=job.id).update(
        queued_at=timezone.now() - timedelta(minutes=4)
    )
    switch_broker("memory://", eager=True)  # the broker is back (tasks run in-process)

    assert resume_stalled_click_jobs() == 1
    assert job_of(job).status == JobStatus.DONE
    assert resume_stalled_click_jobs() == 0


def test_the_sweep_restarts_a_job_whose_worker_went_quiet(team_a, broker_down):
    job = asked(team_a, log_with_rates(team_a, RATES))
    ClickJudgementJob.objects.filter(id=job.id).update(
        status=JobStatus.RUNNING, attempts=1, heartbeat_at=timezone.now() - timedelta(seconds=30)
    )
    assert stalled_click_jobs() == []  # a recent heartbeat: its worker is on it

    ClickJudgementJob.objects.filter(id=job.id).update(
        heartbeat_at=timezone.now() - timedelta(minutes=3)
    )
    switch_broker("memory://", eager=True)

    assert resume_stalled_click_jobs() == 1
    done = job_of(job)
    assert (done.status, done.attempts) == (JobStatus.DONE, 2)
    assert JudgementList.objects.filter(team=team_a).count() == 1


def test_the_sweep_never_remakes_a_list_already_made(team_a):
    job = asked(team_a, log_with_rates(team_a, RATES))
    made = job_of(job)
    assert made.status == JobStatus.DONE
    long_ago = timezone.now() - timedelta(hours=1)

    # Done long ago, or even left running with its list (an end that was never written):
    # the list is made, and the job is left alone.
    ClickJudgementJob.objects.filter(id=job.id).update(queued_at=long_ago, heartbeat_at=long_ago)
    assert stalled_click_jobs() == []
    ClickJudgementJob.objects.filter(id=job.id).update(status=JobStatus.RUNNING)
    assert stalled_click_jobs() == []
    ClickJudgementJob.objects.filter(id=job.id).update(status=JobStatus.QUEUED)
    assert worker_runs(job) == "not runnable"
    assert list(JudgementList.objects.filter(team=team_a)) == [made.result.judgement_list]


def test_a_job_whose_worker_keeps_dying_fails_naming_the_command(team_a, broker_down):
    job = asked(team_a, log_with_rates(team_a, RATES))
    ClickJudgementJob.objects.filter(id=job.id).update(
        status=JobStatus.RUNNING,
        attempts=MAX_ATTEMPTS,
        heartbeat_at=timezone.now() - timedelta(minutes=3),
    )

    assert stalled_click_jobs() == []

    failed = job_of(job)
    assert failed.status == JobStatus.FAILED
    assert failed.problems == [
        f"the worker stopped while making them, {MAX_ATTEMPTS} times; make them with "
        "manage.py click_judgements"
    ]


# --- The command -------------------------------------------------------------------------


def test_the_command_still_makes_them_in_its_own_process(team_a, capsys):
    log_with_rates(team_a, RATES, name="Week 40")

    call_command(
        "click_judgements",
        team=team_a.name,
        log="Week 40",
        model="ctr",
        scale="binary",
        thresholds="0.3",
    )

    assert "Made 2 judgements: clicks: CTR" in capsys.readouterr().out
    assert JudgementList.objects.filter(team=team_a).count() == 1
