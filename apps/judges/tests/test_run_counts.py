"""What a judge's step writes to the run's row, and how few statements it takes: every
lane of a run writes that one row, and every statement of a step is paid a thousand
times in a run of ten thousand results (bench/judge_bench.py)."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.judges import controls, runs
from apps.judges.models import JudgeCall, RunStatus
from apps.judges.services import judge_create
from tests.factories import make_evaluation

from .fake_provider import Reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers_allowed")]


@pytest.fixture
def run(server):
    """A run of a judge talking to the tests' local server (conftest.py) on one keyword
    of three results."""
    evaluation = make_evaluation(scale="graded", strategy=1, keywords={"red shoes": 3})
    judge = judge_create(
        team=evaluation.team,
        name="GPT",
        protocol="openai",
        base_url=server.openai_url,
        model_name="gpt-test",
        price_input_per_million="1.00",
    )
    return controls.run_start(judge=judge, evaluation=evaluation)


def graded(*grades: int) -> Reply:
    judgements = [{"id": f"r{n}", "grade": g, "reason": "-"} for n, g in enumerate(grades, 1)]
    return Reply.openai(json.dumps({"judgements": judgements}), tokens=(1000, 100))


@pytest.mark.parametrize(
    "reply, status",
    [
        (graded(3, 1, 0), RunStatus.RUNNING),
        (Reply.error(429, "slow down"), RunStatus.RUNNING),  # waits, then again
        (Reply.error(401, "wrong key"), RunStatus.PAUSED),
        (Reply(body="not the protocol's JSON"), RunStatus.RUNNING),  # its results fail
    ],
    ids=["graded", "rate limited", "rejected", "malformed"],
)
def test_every_call_counts_on_the_run_whatever_came_back(server, run, reply, status):
    server.script(reply)

    runs.run_step(run_id=run.id)

    run.refresh_from_db()
    assert run.status == status
    assert run.calls == JudgeCall.objects.filter(run=run).count() == 1
    call = JudgeCall.objects.get(run=run)
    assert (run.input_tokens, run.output_tokens) == (call.input_tokens, call.output_tokens)
    assert run.cost == call.cost


def test_a_step_writes_the_runs_row_once_and_reads_its_results_once(server, run):
    server.script(graded(3, 1, 0))

    with CaptureQueriesContext(connection) as queries:
        runs.run_step(run_id=run.id)

    statements = [query["sql"] for query in queries.captured_queries]
    runs_row = [sql for sql in statements if sql.startswith('UPDATE "judges_judgerun"')]
    results_read = [
        sql for sql in statements if "JOIN evaluations_snapshot" in sql.replace('"', "")
    ]
    users_read = [sql for sql in statements if 'FROM "accounts_user"' in sql]
    assert len(runs_row) == 1, runs_row
    assert len(results_read) == 1, results_read  # the claim's, with what the prompt shows
    assert users_read == []  # the judge's user came with the run
