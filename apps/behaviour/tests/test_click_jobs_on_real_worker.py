"""Judgements from clicks on real parts: asked for over the API, then made by the worker
production runs (two processes, on Redis), which was handed the job twice, as a sweep
that thought its task lost would: one process makes the list, the other finds the job
taken, and the job's URL gives the judgements."""

import time
from pathlib import Path

import pytest
from django.test import Client

from apps.accounts.api_tokens import api_token_create
from apps.behaviour.models import ClickJudgementJob, JobStatus
from apps.behaviour.tasks import make_click_judgements
from apps.core.queueing import queue_now
from apps.library.models import JudgementList
from tests.factories import make_team
from tests.worker import start_worker, stop_worker, wait_for

from .click_logs import log_with_rates


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_handed_a_job_twice_makes_its_list_once(
    postgres, real_broker, tmp_path: Path
):
    team = make_team()
    log = log_with_rates(team, {("shoes", "a"): 0.7, ("shoes", "b"): 0.05})
    _token, text = api_token_create(team=team, name="ci")
    api = Client(headers={"Authorization": f"Bearer {text}"})
    broker_url, queue = real_broker

    answer = api.post(
        f"/api/v1/click-logs/{log.id}/judgements/",
        {"model": "pbm", "scale": "binary", "thresholds": [0.3]},
        content_type="application/json",
    )
    assert answer.status_code == 202, answer.content
    assert answer.json()["status"] == "queued"  # no worker yet
    job_id = answer.json()["id"]
    assert queue_now(make_click_judgements, job_id)

    output = tmp_path / "worker.log"
    worker = start_worker(broker_url, queue, prefork=True, output=output)
    try:
        finished = wait_for(
            lambda: ClickJudgementJob.objects.get(id=job_id).status == JobStatus.DONE,
            seconds=45,
        )
        if finished:
            time.sleep(1.0)  # the other process, had it taken the job too, would be storing
    finally:
        stop_worker(worker)
    printed = output.read_text(errors="replace")
    assert finished, printed[-5000:]
    assert printed.count("make_click_judgements[") == 2  # both tasks reached the worker

    body = api.get(answer["Location"]).json()
    assert (body["status"], body["problems"]) == ("done", [])
    assert body["judgement_set"]["judgements"] == 2
    assert ClickJudgementJob.objects.get(id=job_id).attempts == 1
    assert JudgementList.objects.filter(team=team).count() == 1
    assert "Traceback" not in printed
