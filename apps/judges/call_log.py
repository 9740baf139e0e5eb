"""Every call to a judge's model is logged (log_call), and a run's or a calibration's
log exports as JSON Lines: one call a line, in the order they were made.

Each line holds what was asked (both messages), what came back (the raw answer, the
grades read from it or why each result failed), tokens, latency, cost and any error:
what a lead needs to audit a judge. Never the API key: it is not in the log at all
(providers.py keeps it out of error messages). Streamed a page of calls at a time, so
a run of a hundred thousand calls exports in flat memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Count, Q, QuerySet

from .asking import Asked
from .models import CalibrationRun, Judge, JudgeCall, JudgeRun
from .providers import Failure

PAGE = 500
CALLS_PER_PAGE = 25


def log_call(
    asked: Asked,
    judge: Judge,
    prompt_version: str,
    *,
    run: JudgeRun | None = None,
    calibration: CalibrationRun | None = None,
) -> JudgeCall:
    """Log one ask of a run or a calibration, with what was read from its answer: its
    calls (a panel's or a sampled judge's several); the first of them."""
    calls = [
        _logged(call, judge, prompt_version, run=run, calibration=calibration)
        for call in asked.calls
    ]
    JudgeCall.objects.bulk_create(calls, batch_size=1)
    return calls[0]


def log_calls(
    asked: list[Asked], judge: Judge, prompt_version: str, *, run: JudgeRun
) -> list[JudgeCall]:
    """Log several asks of a run made at once, in their order; the first call of each
    (the one its grades name)."""
    # A statement a call: as one, the prompts would travel as text arrays, which the
    # driver escapes character by character in Python (4 calls: 9.8 ms, against 2.6 ms
    # as four statements whose strings libpq escapes).
    logged = [
        [_logged(call, judge, prompt_version, run=run, calibration=None) for call in each.calls]
        for each in asked
    ]
    JudgeCall.objects.bulk_create([call for calls in logged for call in calls], batch_size=1)
    return [calls[0] for calls in logged]


def _logged(
    asked: Asked,
    judge: Judge,
    prompt_version: str,
    *,
    run: JudgeRun | None,
    calibration: CalibrationRun | None,
) -> JudgeCall:
    outcome = asked.outcome
    return JudgeCall(
        run=run,
        calibration=calibration,
        model_name=asked.model_name or judge.model_name,
        prompt_version=prompt_version,
        system_prompt=asked.system,
        user_prompt=asked.user,
        answer=outcome.text,
        parsed=parsed_for_log(asked),
        input_tokens=outcome.input_tokens,
        cached_input_tokens=outcome.cached_input_tokens,
        output_tokens=outcome.output_tokens,
        cost=asked.cost,
        latency_ms=outcome.latency_ms,
        failure=outcome.failure.value if outcome.failure else "",
        error=outcome.error,
    )


def parsed_for_log(asked: Asked) -> dict[str, Any]:
    """Per result id: the grade and reason read, or why there is none."""
    return {
        **{rid: {"grade": j.grade, "reason": j.reason} for rid, j in asked.judged.items()},
        **{rid: {"failed": why} for rid, why in asked.failed.items()},
    }


def call_log_lines(run: JudgeRun) -> Iterator[str]:
    about = {"run": run.id, "judge": run.judge.name, "evaluation": run.evaluation_id}
    return _lines(JudgeCall.objects.filter(run=run), about)


def calibration_log_lines(calibration: CalibrationRun) -> Iterator[str]:
    about = {
        "calibration": calibration.id,
        "judge": calibration.graded_by,
        "gold_set": calibration.gold_set_id,
    }
    return _lines(JudgeCall.objects.filter(calibration=calibration), about)


def _lines(calls: QuerySet[JudgeCall], about: dict[str, Any]) -> Iterator[str]:
    last = 0
    while True:
        page = list(calls.filter(id__gt=last).order_by("id")[:PAGE])
        if not page:
            return
        for call in page:
            yield json.dumps(_line(about, call), ensure_ascii=False) + "\n"
        last = page[-1].id


def _line(about: dict[str, Any], call: JudgeCall) -> dict[str, object]:
    return {
        "call": call.id,
        **about,
        "model": call.model_name,
        "prompt_version": call.prompt_version,
        "made_at": call.made_at.isoformat(),
        "system_prompt": call.system_prompt,
        "user_prompt": call.user_prompt,
        "answer": call.answer,
        "parsed": call.parsed,
        "input_tokens": call.input_tokens,
        "cached_input_tokens": call.cached_input_tokens,
        "output_tokens": call.output_tokens,
        "latency_ms": call.latency_ms,
        "cost": str(call.cost),
        "failure": call.failure or None,
        "error": call.error or None,
    }


# --- Read in the page ------------------------------------------------------------------

# What the page's filter offers: every call, the calls answered, those that failed
# (whatever the failure), and each kind of failure on its own.
ALL, SUCCEEDED, FAILED = "all", "succeeded", "failed"
OUTCOMES = (ALL, SUCCEEDED, FAILED, *(failure.value for failure in Failure))


@dataclass(frozen=True)
class CallLogPage:
    outcome: str  # the filter applied (one of OUTCOMES)
    counts: dict[str, int]  # outcome -> how many calls, for every outcome that has some
    page: Page[JudgeCall]


def call_log_page(calls: QuerySet[JudgeCall], *, outcome: str, page_number: Any) -> CallLogPage:
    """One page of `calls` (a run's or a calibration's) with the given outcome, in the
    order they were made; an outcome that is none of OUTCOMES shows every call."""
    chosen = outcome if outcome in OUTCOMES else ALL
    by_failure: dict[str, int] = dict(
        calls.order_by()
        .values("failure")
        .annotate(count=Count("id"))
        .values_list("failure", "count")
    )
    counts = {
        ALL: sum(by_failure.values()),
        SUCCEEDED: by_failure.get("", 0),
        FAILED: sum(count for failure, count in by_failure.items() if failure),
        **{failure: count for failure, count in by_failure.items() if failure},
    }
    shown = calls.filter(_outcome_filter(chosen)).order_by("id")
    page = Paginator(shown, CALLS_PER_PAGE).get_page(page_number)
    return CallLogPage(chosen, counts, page)


def _outcome_filter(outcome: str) -> Q:
    if outcome == ALL:
        return Q()
    if outcome == SUCCEEDED:
        return Q(failure="")
    if outcome == FAILED:
        return ~Q(failure="")
    return Q(failure=outcome)
