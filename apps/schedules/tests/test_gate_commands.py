"""The gate's CI calls as a shell reads them: every argument comes back whole, whatever
the names hold, and the defaults are left out."""

import json
import shlex

from apps.schedules.gate_commands import (
    GateQuestion,
    ModelQuestion,
    api_call,
    command_line,
    model_api_call,
    model_command_line,
)

API = "https://relevo.example.com/api/v1/gate/"


def test_the_defaults_are_left_out():
    question = GateQuestion(team="Search", baseline=12, candidate=15)
    assert command_line(question) == (
        "python manage.py relevance_gate --team Search --baseline 12 --candidate 15"
    )
    assert f"'{API}?baseline=12&candidate=15'" in api_call(question, API)


def test_names_with_quotes_and_spaces_come_back_whole_from_the_shell():
    question = GateQuestion(
        team="Bob's $HOME team",
        baseline=1,
        candidate=2,
        metric="ndcg@10, precision@5",
        min_change=0.01,
        sources="people",
    )
    assert shlex.split(command_line(question))[3:] == [
        "--team",
        "Bob's $HOME team",
        "--baseline",
        "1",
        "--candidate",
        "2",
        "--metrics",
        "ndcg@10, precision@5",
        "--min-change",
        "0.01",
        "--sources",
        "people",
    ]
    url = shlex.split(api_call(question, API).splitlines()[0].removesuffix(")"))[-1]
    assert (
        url
        == f"{API}?baseline=1&candidate=2&metric=ndcg@10,precision@5&min_change=0.01&sources=people"
    )


def test_a_model_run_names_the_model_the_judge_and_the_wait():
    question = ModelQuestion(
        team="Search", baseline=12, model="Bob's ranker", judge="GPT", min_change=0.5
    )
    assert shlex.split(model_command_line(question))[3:] == [
        "--team",
        "Search",
        "--baseline",
        "12",
        "--model",
        "Bob's ranker",
        "--judge",
        "GPT",
        "--wait",
        "900",
        "--min-change",
        "0.5",
    ]
    words = shlex.split(model_api_call(question, API))
    body = json.loads(words[words.index("-d") + 1])
    assert body == {"baseline": 12, "model": "Bob's ranker", "judge": "GPT", "min_change": 0.5}
    assert words[-1] == API
