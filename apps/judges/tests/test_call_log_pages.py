"""The call log in the page: a run's (and a calibration's) calls with what was asked, what
came back, the grades read, tokens, latency and error; filtered by outcome, paged, every
text escaped; leads of the team only."""

import re

import pytest

from apps.judges import calibration
from apps.judges.call_log import CALLS_PER_PAGE
from apps.judges.gold_sets import gold_set_create
from apps.judges.models import JudgeCall, JudgeRun
from apps.judges.services import judge_create
from tests.factories import client_for, make_evaluation

from .test_calibration import people_grade

pytestmark = pytest.mark.django_db


def _judge(team, name="Logged"):
    return judge_create(
        team=team, name=name, protocol="openai", base_url="https://x.example/v1", model_name="m"
    )


def _run(team):
    evaluation = make_evaluation(team=team, scale="binary", keywords={"red shoes": 2})
    return JudgeRun.objects.create(
        judge=_judge(team), evaluation=evaluation, prompt_version="default-binary-v2"
    )


def _call(run=None, *, calibration_run=None, failure="", **given):
    fields = {
        "model_name": "m",
        "prompt_version": "default-binary-v2",
        "system_prompt": "Judge the results.",
        "user_prompt": "Keyword: red shoes",
        "answer": '{"judgements": [{"id": "r1", "grade": 1}]}',
        "parsed": {"r1": {"grade": 1, "reason": "Red shoes, as asked."}},
        "input_tokens": 321,
        "output_tokens": 45,
        "latency_ms": 987,
        "failure": failure,
        **given,
    }
    return JudgeCall.objects.create(run=run, calibration=calibration_run, **fields)


def _shown_calls(page: str) -> list[str]:
    return re.findall(r"Call (\d+) ·", page)


def test_a_run_s_page_lists_each_call_with_its_prompt_answer_grades_tokens_latency_and_error(
    owner, team_a
):
    run = _run(team_a)
    answered = _call(run)
    failed = _call(
        run,
        failure="rate_limited",
        answer="",
        parsed={"r1": {"failed": "rate limited (429)"}},
        error="429 Too Many Requests: slow down",
        latency_ms=12,
    )
    lead = client_for(owner)
    assert f"/judges/runs/{run.id}/log/" in lead.get(f"/judges/runs/{run.id}/").content.decode()

    page = lead.get(f"/judges/runs/{run.id}/log/").content.decode()
    assert _shown_calls(page) == [str(answered.id), str(failed.id)]
    assert "Judge the results." in page and "Keyword: red shoes" in page
    assert (
        "{&quot;judgements&quot;: [{&quot;id&quot;: &quot;r1&quot;, &quot;grade&quot;: 1}]}" in page
    )
    assert "<strong>1</strong>, Red shoes, as asked." in page  # the grade read, its reason
    assert "321 in, 45 out tokens" in page and "987 ms" in page
    assert "failed: rate limited" in page and "429 Too Many Requests: slow down" in page
    assert "not read: rate limited (429)" in page
    assert f'href="/judges/runs/{run.id}/calls/"' in page  # the JSON Lines download stays


def test_the_call_log_filters_by_outcome_and_kind_of_failure(owner, team_a):
    run = _run(team_a)
    answered = [_call(run) for _ in range(3)]
    limited = _call(run, failure="rate_limited", error="429")
    timed_out = _call(run, failure="timeout", error="no answer in 60 s")
    lead = client_for(owner)
    url = f"/judges/runs/{run.id}/log/"

    every = lead.get(url).content.decode()
    assert len(_shown_calls(every)) == 5
    assert "Succeeded (3)" in every and "Failed (2)" in every
    assert "Rate limited (1)" in every and "Timeout (1)" in every
    assert "Rejected" not in every  # a kind no call failed with is not offered

    succeeded = lead.get(url, {"outcome": "succeeded"}).content.decode()
    assert _shown_calls(succeeded) == [str(call.id) for call in answered]
    failed = lead.get(url, {"outcome": "failed"}).content.decode()
    assert _shown_calls(failed) == [str(limited.id), str(timed_out.id)]
    one_kind = lead.get(url, {"outcome": "timeout"}).content.decode()
    assert _shown_calls(one_kind) == [str(timed_out.id)]
    unknown = lead.get(url, {"outcome": "<script>"}).content.decode()
    assert len(_shown_calls(unknown)) == 5 and "<script>" not in unknown


def test_the_call_log_is_paged_and_a_page_keeps_its_filter(owner, team_a):
    run = _run(team_a)
    calls = [_call(run) for _ in range(CALLS_PER_PAGE + 2)]
    _call(run, failure="timeout")
    lead = client_for(owner)
    url = f"/judges/runs/{run.id}/log/"

    first = lead.get(url, {"outcome": "succeeded"}).content.decode()
    assert _shown_calls(first) == [str(call.id) for call in calls[:CALLS_PER_PAGE]]
    assert "Page 1 of 2" in first and "?outcome=succeeded&amp;page=2" in first
    second = lead.get(url, {"outcome": "succeeded", "page": "2"}).content.decode()
    assert _shown_calls(second) == [str(call.id) for call in calls[CALLS_PER_PAGE:]]
    past_the_end = lead.get(url, {"outcome": "succeeded", "page": "99"}).content.decode()
    assert _shown_calls(past_the_end) == _shown_calls(second)  # the last page


def test_html_in_a_prompt_answer_or_error_is_shown_as_text(owner, team_a):
    run = _run(team_a)
    hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    _call(
        run,
        user_prompt=f"RESULTS BEGIN {hostile} RESULTS END",
        answer=hostile,
        parsed={"r1": {"grade": 0, "reason": hostile}, "<b>r2</b>": {"failed": hostile}},
        error=hostile,
        failure="malformed",
    )
    page = client_for(owner).get(f"/judges/runs/{run.id}/log/").content.decode()
    assert "<script>alert(2)" not in page and "<img src=x" not in page and "<b>r2" not in page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page
    assert "&lt;b&gt;r2&lt;/b&gt;" in page


def test_a_calibration_s_calls_read_in_the_page_too(owner, team_a):
    evaluation = make_evaluation(team=team_a, strategy=3, keywords={"keyword 0": 2, "keyword 1": 2})
    people_grade(evaluation, lambda keyword, number: 1)
    gold = gold_set_create(team=team_a, name="Gold", baseline=evaluation.id, seed=1)
    run = calibration.calibration_create(gold_set=gold, judge=_judge(team_a))
    call = _call(calibration_run=run, user_prompt="Keyword: keyword 0, for calibration")
    lead = client_for(owner)
    assert (
        f"/judges/calibrations/{run.id}/log/"
        in lead.get(f"/judges/calibration/{gold.id}/").content.decode()
    )
    page = lead.get(f"/judges/calibrations/{run.id}/log/").content.decode()
    assert _shown_calls(page) == [str(call.id)] and "Keyword: keyword 0, for calibration" in page
    assert f'href="/judges/calibrations/{run.id}/calls/"' in page


def test_another_team_s_call_log_answers_404_and_a_grader_gets_403(
    owner, evaluator, team_a, team_b
):
    theirs = _run(team_b)
    _call(theirs)
    assert client_for(owner).get(f"/judges/runs/{theirs.id}/log/").status_code == 404
    assert client_for(owner).get("/judges/calibrations/999999/log/").status_code == 404
    ours = _run(team_a)
    assert client_for(evaluator).get(f"/judges/runs/{ours.id}/log/").status_code == 403
    assert client_for(owner).get(f"/judges/runs/{ours.id}/log/").status_code == 200
