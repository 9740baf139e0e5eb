"""A run's call log as JSON Lines: one call a line, in the order they were made.

Each line holds what was asked (both messages), what came back (the raw answer, the
grades read from it or why each result failed), tokens, latency, cost and any error:
what a lead needs to audit a judge. Never the API key: it is not in the log at all
(providers.py keeps it out of error messages). Streamed a page of calls at a time, so
a run of a hundred thousand calls exports in flat memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from .models import JudgeCall, JudgeRun

PAGE = 500


def call_log_lines(run: JudgeRun) -> Iterator[str]:
    last = 0
    while True:
        calls = list(JudgeCall.objects.filter(run=run, id__gt=last).order_by("id")[:PAGE])
        if not calls:
            return
        for call in calls:
            yield json.dumps(_line(run, call), ensure_ascii=False) + "\n"
        last = calls[-1].id


def _line(run: JudgeRun, call: JudgeCall) -> dict[str, object]:
    return {
        "call": call.id,
        "run": run.id,
        "judge": run.judge.name,
        "evaluation": run.evaluation_id,
        "model": call.model_name,
        "prompt_version": call.prompt_version,
        "made_at": call.made_at.isoformat(),
        "system_prompt": call.system_prompt,
        "user_prompt": call.user_prompt,
        "answer": call.answer,
        "parsed": call.parsed,
        "input_tokens": call.input_tokens,
        "output_tokens": call.output_tokens,
        "latency_ms": call.latency_ms,
        "cost": str(call.cost),
        "failure": call.failure or None,
        "error": call.error or None,
    }
