"""Benchmark "not urgent": the same results judged by a synchronous run and by a run sent
through the provider's batch interface, measured in one run, on PostgreSQL.

Run: .venv/bin/python bench/judge_batch_bench.py [--results 2000] [--per-call 10]
     [--protocol both|openai|anthropic]

It drops and recreates its own database (relevo_bench_judge_batches) and starts a local
server speaking both providers' synchronous and batch interfaces (the tests' fake
provider) that grades every result it is sent and reports tokens from what it was sent
(a quarter of the body's bytes in, 25 tokens a result out, half the input read from the
prompt cache), so the same call costs the same whichever way it is made. For each
protocol it loads two teams with the same active graded evaluation of `results` results
(10 a keyword, one slot each; two teams, so neither reuses the other's cache), lets a
judge of each grade it (prices US$2.50 in, US$1.25 cached in, US$10.00 out per million
tokens): one synchronously (its lanes in this process, 8 calls at once), the other not
urgent (its batches sent, polled and applied by batch_runs.batch_advance, as the sweep
does). It prints, for both: results graded, calls, tokens, the recorded cost and whether
every result got the same grade, and:

1. the batch run's recorded cost over the synchronous run's (target: 0.5,
   BATCH_PRICE_FACTOR, the providers' batch price, to within the rounding of costs
   stored to the millionth of a dollar: a millionth a call);
2. how long sending and applying the batches took.
"""

from __future__ import annotations

import argparse
import json
import time
from decimal import Decimal

import benchkit
from benchkit import progress_note, setup_django, verdict

benchkit.use_database("relevo_bench_judge_batches")
import os  # noqa: E402  (the settings read the environment once)

os.environ.pop("CELERY_BROKER_URL", None)  # no broker: the lanes run in this process
os.environ["AI_JUDGES_ALLOW_PRIVATE_ADDRESSES"] = "1"

from apps.judges.tests.fake_provider import FakeProvider, Reply  # noqa: E402

PER_KEYWORD = 10


def answer(body: dict) -> Reply:
    """The fake model's answer to one call's body (the same for a call and a line)."""
    anthropic = "output_config" in body
    schema = (
        body["output_config"]["format"]["schema"]
        if anthropic
        else body["response_format"]["json_schema"]["schema"]
    )
    ids = schema["properties"]["judgements"]["items"]["properties"]["id"]["enum"]
    judgements = [{"id": i, "grade": int(i[1:]) % 4, "reason": "bench"} for i in ids]
    text = json.dumps({"judgements": judgements})
    tokens = (len(json.dumps(body)) // 4, 25 * len(ids))
    if anthropic:
        # Anthropic counts cache reads apart from input_tokens; the reader adds them up.
        fresh = tokens[0] - tokens[0] // 2
        return Reply.anthropic(text, tokens=(fresh, tokens[1]), cache_read=tokens[0] // 2)
    return Reply.openai(text, tokens=tokens, cached=tokens[0] // 2)


def judged(team_name: str, protocol: str, base_url: str, results: int, per_call: int):
    """A team with the evaluation and a judge of it."""
    from apps.accounts.services import team_create
    from apps.evaluations.models import Keyword
    from apps.judges.services import judge_create

    team = team_create(
        name=team_name, owner_email=f"{team_name.lower()}@example.test", owner_password="x" * 12
    )
    shape = benchkit.Shape(results // PER_KEYWORD, PER_KEYWORD, 1, 0.0)
    grades = [[[None] for _ in range(PER_KEYWORD)] for _ in range(shape.keywords)]
    evaluation = benchkit.build_evaluation(team, "Judged", shape, grades, [("ndcg", 10)])
    Keyword.objects.filter(evaluation=evaluation).update(needs_scoring=False)
    judge = judge_create(
        team=team,
        name="Bench judge",
        protocol=protocol,
        base_url=base_url,
        model_name="bench",
        results_per_call=per_call,
        calls_at_once=8,
        price_input_per_million="2.50",
        price_cached_input_per_million="1.25",
        price_output_per_million="10.00",
    )
    return evaluation, judge


def grades_by_place(evaluation, judge) -> dict[tuple[int, int], int]:
    """The judge's grades by keyword and position (the same in both teams' copies)."""
    from apps.evaluations.models import FeedbackSlot

    slots = FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user)
    graded = slots.exclude(grade=None)
    rows = graded.values_list("keyword_position", "snapshot_position", "grade")
    return {(keyword, position): grade or 0 for keyword, position, grade in rows}


def measure(protocol: str, server, results: int, per_call: int) -> bool:
    from datetime import timedelta

    from apps.judges import batch_runs, controls
    from apps.judges.models import JudgeBatch, JudgeRun, RunStatus

    base_url = server.openai_url if protocol == "openai" else server.anthropic_url
    now_evaluation, now_judge = judged(f"Now{protocol}", protocol, base_url, results, per_call)
    later_evaluation, later_judge = judged(
        f"Later{protocol}", protocol, base_url, results, per_call
    )

    progress_note(f"{protocol}: the synchronous run")
    started = time.monotonic()
    now_run = controls.run_start(judge=now_judge, evaluation=now_evaluation)
    now_s = time.monotonic() - started
    now_run = JudgeRun.objects.get(id=now_run.id)

    progress_note(f"{protocol}: the not-urgent run")
    started = time.monotonic()
    later_run = controls.run_assign(judge=later_judge, evaluation=later_evaluation, urgent=False)
    sent_s = time.monotonic() - started
    started = time.monotonic()
    while JudgeRun.objects.get(id=later_run.id).status == RunStatus.RUNNING:
        batch_runs.batch_advance(run_id=later_run.id, poll_every=timedelta(0))
        if time.monotonic() - started > 600:
            raise SystemExit("the not-urgent run did not end within 600 s")
    applied_s = time.monotonic() - started
    later_run = JudgeRun.objects.get(id=later_run.id)
    batches = JudgeBatch.objects.filter(run=later_run)

    same = grades_by_place(now_evaluation, now_judge) == grades_by_place(
        later_evaluation, later_judge
    )
    for name, run in (("synchronous", now_run), ("not urgent", later_run)):
        print(
            f"{protocol} {name}: {run.status}, {run.graded} graded ({run.failed} failed), "
            f"{run.calls} calls, {run.input_tokens} tokens in ({run.cached_input_tokens} "
            f"cached), {run.output_tokens} out, cost US${run.cost}"
        )
    ratio = later_run.cost / now_run.cost if now_run.cost else Decimal("NaN")
    # Costs are stored to the millionth of a dollar: each call's and each addition to
    # the run's is rounded there, up to half a millionth each.
    off = abs(later_run.cost - now_run.cost / 2)
    rounding = Decimal("0.000001") * now_run.calls
    ok = (
        off <= rounding
        and same
        and later_run.graded == now_run.graded == results
        and (later_run.calls, later_run.input_tokens, later_run.output_tokens)
        == (now_run.calls, now_run.input_tokens, now_run.output_tokens)
    )
    print(
        f"{protocol}: not urgent / synchronous cost = {ratio:.6f} (US${later_run.cost} "
        f"against half of US${now_run.cost}: US${off:f} apart, the stored costs' rounding "
        f"allows US${rounding}); target 0.5 with the same grades and tokens "
        f"({'same' if same else 'different'} grades)   {verdict(ok)}"
    )
    requests = sum(batch.requests for batch in batches)
    print(
        f"{protocol}: synchronous run {now_s:.1f} s; not urgent: {batches.count()} batch(es) "
        f"of {requests} requests sent in {sent_s:.1f} s, polled and applied in "
        f"{applied_s:.1f} s ({later_run.graded / applied_s:.0f} results/s applied)"
    )
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=2_000)
    parser.add_argument("--per-call", type=int, default=10)
    parser.add_argument("--protocol", choices=["both", "openai", "anthropic"], default="both")
    args = parser.parse_args()
    if args.results % PER_KEYWORD:
        raise SystemExit(f"--results: a multiple of {PER_KEYWORD}")
    setup_django()

    protocols = ["openai", "anthropic"] if args.protocol == "both" else [args.protocol]
    with FakeProvider() as server:
        server.respond_with(lambda seen: answer(seen.body))
        passed = [measure(protocol, server, args.results, args.per_call) for protocol in protocols]
    print(f"every protocol at half the price: {verdict(all(passed))}")
    print(benchkit.machine_speed())


if __name__ == "__main__":
    main()
