"""The CI calls that ask the regression gate what the gate page asked: the management
command (`python manage.py relevance_gate ...`) and the API's curl, each quoted for a
POSIX shell, the defaults left out. Pure: no Django (docs/ci-gate.md documents both)."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from urllib.parse import urlencode

COMMAND = "python manage.py relevance_gate"
TOKEN_HEADER = '-H "Authorization: Bearer $RELEVO_TOKEN"'  # the shell reads the token
# How long the command waits for a model run's grading, as docs/ci-gate.md suggests.
MODEL_WAIT_SECONDS = 900


@dataclass(frozen=True)
class GateQuestion:
    """A baseline and a candidate evaluation, with the gate's options."""

    team: str
    baseline: int
    candidate: int
    metric: str = ""  # "ndcg@10, precision@5"; empty: every metric both report
    min_change: float = 0.0
    sources: str = "same"


@dataclass(frozen=True)
class ModelQuestion:
    """A baseline and a search model to run now on its keywords (and an AI judge)."""

    team: str
    baseline: int
    model: str
    judge: str = ""
    min_change: float = 0.0


def command_line(question: GateQuestion) -> str:
    parts = [COMMAND, "--team", question.team, "--baseline", str(question.baseline)]
    parts += ["--candidate", str(question.candidate)]
    if question.metric:
        parts += ["--metrics", question.metric]
    parts += _options(question.min_change, question.sources)
    return _shell(parts[:1], parts[1:])


def api_call(question: GateQuestion, api_url: str) -> str:
    """The GET a CI job sends, and how it turns the answer into its exit status."""
    params: dict[str, str] = {
        "baseline": str(question.baseline),
        "candidate": str(question.candidate),
    }
    if question.metric:
        params["metric"] = ",".join(part.strip() for part in question.metric.split(","))
    if question.min_change:
        params["min_change"] = f"{question.min_change:g}"
    if question.sources != "same":
        params["sources"] = question.sources
    url = f"{api_url}?{urlencode(params, safe='@,')}"
    return "\n".join(
        [
            f"answer=$(curl -sf {TOKEN_HEADER} {shlex.quote(url)})",
            'echo "$answer" | jq -r .report',
            'exit "$(echo "$answer" | jq -r .exit_code)"',
        ]
    )


def model_command_line(question: ModelQuestion) -> str:
    parts = [COMMAND, "--team", question.team, "--baseline", str(question.baseline)]
    parts += ["--model", question.model]
    if question.judge:
        parts += ["--judge", question.judge]
    parts += ["--wait", str(MODEL_WAIT_SECONDS)]
    parts += _options(question.min_change, "same")
    return _shell(parts[:1], parts[1:])


def model_api_call(question: ModelQuestion, api_url: str) -> str:
    """The POST that runs the model now; its answer names the run's URL, to poll while
    exit_code is 3."""
    body: dict[str, object] = {"baseline": question.baseline, "model": question.model}
    if question.judge:
        body["judge"] = question.judge
    if question.min_change:
        body["min_change"] = question.min_change
    return (
        f"curl -sf -X POST {TOKEN_HEADER} -H 'Content-Type: application/json' "
        f"-d {shlex.quote(json.dumps(body))} {shlex.quote(api_url)}"
    )


def _options(min_change: float, sources: str) -> list[str]:
    options = ["--min-change", f"{min_change:g}"] if min_change else []
    return options + (["--sources", sources] if sources != "same" else [])


def _shell(command: list[str], arguments: list[str]) -> str:
    """The command as written (it holds spaces on purpose), each argument quoted."""
    return " ".join(command + [shlex.quote(argument) for argument in arguments])
