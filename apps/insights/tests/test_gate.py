"""The regression gate: its verdicts and exit codes on prepared
evaluations, through the command a CI job runs and through the API."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.comparison_data import imported_evaluation, shop_pair

pytestmark = pytest.mark.django_db


def run_gate(team, baseline, candidate, *more):
    """(exit code, printed report) of `manage.py relevance_gate`."""
    out = io.StringIO()
    arguments = ["--team", team.name, "--baseline", str(baseline.id)]
    arguments += ["--candidate", str(candidate.id), *more]
    try:
        call_command("relevance_gate", *arguments, stdout=out)
    except SystemExit as exit:
        return exit.code, out.getvalue()
    return 0, out.getvalue()


def nearly_the_same(team):
    """Two rankings of 20 keywords that differ on two keywords only, one each way."""
    keywords = {f"q{n}": [(f"q{n}-a", 3), (f"q{n}-b", 1), (f"q{n}-c", 0)] for n in range(20)}
    changed = dict(keywords)
    changed["q0"] = [("q0-b", 1), ("q0-a", 3), ("q0-c", 0)]
    changed["q1"] = [("q1-a", 3), ("q1-c", 0), ("q1-b", 1)]
    return imported_evaluation(team, "Today", keywords), imported_evaluation(
        team, "Tomorrow", changed
    )


def test_a_better_candidate_passes(team_a):
    worse, better = shop_pair(team_a)

    code, report = run_gate(team_a, worse, better)

    assert code == 0
    assert report.startswith("PASS: Ranking B against Ranking A")
    assert "No significant regression over 20 common keywords." in report


def test_a_significantly_worse_candidate_fails_naming_the_metrics(team_a):
    worse, better = shop_pair(team_a)

    code, report = run_gate(team_a, better, worse, "--min-change", "0.05")

    assert code == 1
    assert report.startswith("FAIL: Ranking A against Ranking B")
    assert (
        "Worse on nDCG@10, P@5, significantly and by at least 0.05, over 20 common keywords."
        in report
    )
    assert report.count("REGRESSION") == 2


def test_a_worse_candidate_by_less_than_what_matters_passes(team_a):
    worse, better = shop_pair(team_a)

    code, report = run_gate(team_a, better, worse, "--min-change", "0.5")

    assert code == 0 and "REGRESSION" not in report


def test_a_candidate_worse_but_not_significantly_passes(team_a):
    today, tomorrow = nearly_the_same(team_a)

    code, report = run_gate(team_a, today, tomorrow, "--metrics", "ndcg@10")

    # Worse on average (two keywords lost a little), but two keywords of 20 are no
    # evidence: the sign-flip test's p is 0.5.
    assert code == 0
    assert "nDCG@10: 1.0000 -> 0.9880 (difference -0.0120" in report
    assert "p (Holm) 0.498)" in report and "REGRESSION" not in report


def test_while_grading_is_not_done_the_gate_says_undecided(team_a):
    worse, _better = shop_pair(team_a)
    half = imported_evaluation(
        team_a,
        "Half graded",
        {f"query {n}": [(f"q{n}-best", 3), (f"q{n}-x", None)] for n in range(20)},
    )

    code, report = run_gate(team_a, worse, half)

    assert code == 3
    assert "Not decided yet: Half graded is 50.0% graded." in report


@pytest.mark.parametrize(
    ("more", "problem"),
    [
        (["--metrics", "ndcg@ten"], "--metrics"),
        (["--min-change", "-1"], "--min-change"),
        (["--metrics", "err@3"], "not reported"),
    ],
)
def test_usage_problems_exit_2_naming_the_option(team_a, more, problem):
    worse, better = shop_pair(team_a)

    with pytest.raises(CommandError, match=problem) as refused:
        run_gate(team_a, worse, better, *more)
    assert refused.value.returncode == 2


def test_another_teams_evaluation_is_a_usage_problem(team_a, team_b):
    worse, _ = shop_pair(team_a)
    _, theirs = shop_pair(team_b)

    with pytest.raises(CommandError, match="no such evaluation"):
        run_gate(team_a, worse, theirs)


def test_the_api_answers_the_same_verdict(team_a, team_b):
    from django.test import Client

    from apps.accounts.api_tokens import api_token_create

    worse, better = shop_pair(team_a)
    _token, text = api_token_create(team=team_a, name="ci")
    api = Client(headers={"Authorization": f"Bearer {text}"})

    failed = api.get("/api/v1/gate/", {"baseline": better.id, "candidate": worse.id}).json()
    passed = api.get("/api/v1/gate/", {"baseline": worse.id, "candidate": better.id}).json()
    refused = api.get(
        "/api/v1/gate/", {"baseline": worse.id, "candidate": better.id, "min_change": "x"}
    )
    _, theirs = shop_pair(team_b)
    elsewhere = api.get("/api/v1/gate/", {"baseline": worse.id, "candidate": theirs.id})

    assert (failed["outcome"], failed["exit_code"]) == ("fail", 1)
    assert [m["regression"] for m in failed["metrics"]] == [True, True]
    assert failed["report"].startswith("FAIL: Ranking A against Ranking B")
    assert (passed["outcome"], passed["exit_code"]) == ("pass", 0)
    assert refused.status_code == 400 and "min_change" in refused.json()["errors"][0]["field"]
    assert elsewhere.status_code == 404
