"""The regression gate's page through its real URLs: a lead chooses a baseline and a
candidate, reads pass or fail with the rule and the numbers, and the CI calls it offers
ask the same: the command, run as written, exits as the page says, and the API's URL
answers the same exit code. A model run now starts a candidate and the page follows it.
Bad input is named beside its field; graders are not let in."""

import io
import re
import shlex
from html import unescape

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from apps.accounts.api_tokens import api_token_create
from apps.evaluations.models import Evaluation, Status
from apps.evaluations.services import evaluation_create_with_keywords
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.steps import evaluation_start
from apps.schedules.models import ScheduledRun
from apps.schedules.runner import scheduled_runs_advance
from tests.comparison_data import shop_pair
from tests.factories import client_for, make_evaluation, make_grader, make_search_model, slots_of

pytestmark = pytest.mark.django_db(transaction=True)


def page_text(answer):
    return unescape(answer.content.decode())


def ci_call(text, number):
    """The CI call the page shows in its numbered box, as a person copies it."""
    found = re.search(rf'data-testid="gate-call-{number}">(.*?)</code>', text, re.S)
    return found.group(1)


def run_command(line):
    """Run `python manage.py relevance_gate ...` as a shell would split it."""
    words = shlex.split(line)
    assert words[:3] == ["python", "manage.py", "relevance_gate"]
    out = io.StringIO()
    try:
        call_command(*words[2:], stdout=out)
    except SystemExit as exit:
        return exit.code, out.getvalue()
    return 0, out.getvalue()


def test_a_worse_candidate_fails_with_its_rule_numbers_and_the_ci_calls_that_ask_the_same(
    team_a, owner
):
    worse, better = shop_pair(team_a)
    lead = client_for(owner)
    answer = lead.get(
        reverse("schedules:gate"),
        {"baseline": better.id, "candidate": worse.id, "min_change": "0.05", "sources": "same"},
    )
    assert answer.status_code == 200
    text = page_text(answer)
    assert '<span data-testid="gate-outcome">FAIL</span>: Ranking A against Ranking B' in text
    assert "Worse on nDCG@10, P@5, significantly and by at least 0.05" in text
    assert (
        "It fails when the candidate is worse than the baseline on a metric, significantly "
        "(Holm-adjusted p &lt; 0.05) and by at least 0.05" in answer.content.decode()
    )
    assert text.count("<strong>Regression</strong>") == 2

    command = ci_call(text, 1)
    assert command == (
        f"python manage.py relevance_gate --team 'Team A' --baseline {better.id} "
        f"--candidate {worse.id} --min-change 0.05"
    )
    code, report = run_command(command)
    assert code == 1 and report.startswith("FAIL: Ranking A against Ranking B")

    api = ci_call(text, 2)
    url = re.search(r"'(http://testserver/api/v1/gate/\?[^']*)'", api).group(1)
    assert url.endswith(f"?baseline={better.id}&candidate={worse.id}&min_change=0.05")
    _, token = api_token_create(team=team_a, name="CI")
    asked = Client().get(url, headers={"authorization": f"Bearer {token}"})
    assert asked.json()["exit_code"] == 1
    assert 'echo "$answer" | jq -r .report' in api


def test_a_better_candidate_passes_and_the_options_reach_the_command(team_a, owner):
    worse, better = shop_pair(team_a)
    answer = client_for(owner).get(
        reverse("schedules:gate"),
        {
            "baseline": worse.id,
            "candidate": better.id,
            "metric": "ndcg@10, precision@5",
            "min_change": "0",
            "sources": "any",
        },
    )
    text = page_text(answer)
    assert '<span data-testid="gate-outcome">PASS</span>' in text
    assert "It compares them as they are, whoever graded them." in text
    command = ci_call(text, 1)
    assert command.endswith("--metrics 'ndcg@10, precision@5' --sources any")
    assert run_command(command)[0] == 0
    assert "metric=ndcg@10,precision@5&sources=any'" in ci_call(text, 2)


def test_an_evaluation_still_being_graded_is_undecided(team_a, owner):
    done, _ = shop_pair(team_a)
    open_one = make_evaluation(team=team_a)
    answer = client_for(owner).get(
        reverse("schedules:gate"), {"baseline": done.id, "candidate": open_one.id}
    )
    text = page_text(answer)
    assert '<span data-testid="gate-outcome">UNDECIDED</span>' in text
    assert f"Not decided yet: {open_one.name} is 0.0% graded." in text


@pytest.mark.parametrize(
    ("fields", "field", "problem"),
    [
        ({"min_change": "-1"}, "min_change", "&#x27;-1&#x27; is not a number from 0 to 1000."),
        ({"min_change": "nan"}, "min_change", "is not a number from 0 to 1000."),
        ({"metric": "ndcg@0"}, "metric", "k starts at 1"),
        ({"sources": "judges"}, "sources", "Select a valid choice."),
        ({"candidate": "same"}, "candidate", "Choose an evaluation other than the baseline."),
        ({"candidate": "99999999999999999999"}, "candidate", "Select a valid choice."),
    ],
)
def test_bad_input_is_named_beside_its_field(team_a, owner, fields, field, problem):
    worse, better = shop_pair(team_a)
    asked = {"baseline": better.id, "candidate": worse.id, "min_change": "0", **fields}
    if asked["candidate"] == "same":
        asked["candidate"] = better.id
    answer = client_for(owner).get(reverse("schedules:gate"), asked)
    assert answer.status_code == 200
    content = answer.content.decode()
    errors = re.search(rf'<ul class="errorlist" id="id_{field}_error">(.*?)</ul>', content, re.S)
    assert errors and problem in errors.group(1), content
    assert "gate-outcome" not in content


def test_another_teams_evaluation_cannot_be_chosen(team_a, team_b, owner):
    mine, _ = shop_pair(team_a)
    theirs = make_evaluation(team=team_b, start=False)
    answer = client_for(owner).get(
        reverse("schedules:gate"), {"baseline": mine.id, "candidate": theirs.id}
    )
    content = answer.content.decode()
    assert 'id="id_candidate_error"' in content and "gate-outcome" not in content
    assert theirs.name not in content


def test_only_leads_see_the_gate_and_it_is_in_their_navigation(team_a, owner, evaluator):
    assert client_for(evaluator).get(reverse("schedules:gate")).status_code == 403
    assert client_for(evaluator).post(reverse("schedules:gate_run")).status_code == 403
    dashboard = client_for(owner).get(reverse("insights:dashboard")).content.decode()
    assert f'href="{reverse("schedules:gate")}">Regression gate</a>' in dashboard


def test_a_model_run_now_starts_a_candidate_the_page_follows_and_the_ci_calls_start_the_same(
    team_a, owner, search_server
):
    today = make_search_model(team_a, search_server.base_url, name="Today")
    baseline = evaluation_create_with_keywords(
        team=team_a,
        name="Today",
        metrics=[("precision", 5)],
        scale="binary",
        keywords=["red shoes", "blue shirt"],
        search_model=today,
    )
    evaluation_start(evaluation=baseline)
    grader = make_grader(team_a)
    for slot in slots_of(Evaluation.objects.get(id=baseline.id)):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(grader), grade=1)
    tomorrow = make_search_model(team_a, search_server.base_url, name="Tomorrow v2")
    tomorrow.params = [["q", "#query# v2"]]
    tomorrow.save(update_fields=["params"])

    lead = client_for(owner)
    refused = lead.post(reverse("schedules:gate_run"), {"run-baseline": baseline.id})
    assert 'id="id_run-model_error"' in refused.content.decode()
    assert not ScheduledRun.objects.exists()

    answer = lead.post(
        reverse("schedules:gate_run"),
        {"run-baseline": baseline.id, "run-model": tomorrow.id, "run-min_change": "0.1"},
        follow=True,
    )
    run = ScheduledRun.objects.get()
    text = page_text(answer)
    assert f"Started: the baseline's keywords run on {run.attempt} now" in text
    # The model has run as a try (tasks in-process); its results wait for beat's tick.
    assert "Tomorrow v2, try 1</a> is running on the baseline's keywords: 2 of 2" in text
    assert 'hx-trigger="every 3s"' in text  # the page follows the run
    scheduled_runs_advance()
    text = page_text(lead.get(answer.request["PATH_INFO"] + "?" + answer.request["QUERY_STRING"]))
    candidate = ScheduledRun.objects.get().evaluation
    assert candidate.search_model_id == tomorrow.id and candidate.status == Status.ACTIVE
    assert '<span data-testid="gate-outcome">UNDECIDED</span>' in text
    assert f"{candidate.graded_slots} of {candidate.total_slots} results graded" in text
    assert 'hx-trigger="every 3s"' in text  # ... until it is decided
    command = re.search(r'data-testid="run-call-1">(.*?)</code>', text, re.S).group(1)
    assert command == (
        "python manage.py relevance_gate --team 'Team A' "
        f"--baseline {baseline.id} --model 'Tomorrow v2' --wait 900 --min-change 0.1"
    )
    api = re.search(r'data-testid="run-call-2">(.*?)</code>', text, re.S).group(1)
    assert (
        f"""-d '{{"baseline": {baseline.id}, "model": "Tomorrow v2", "min_change": 0.1}}'""" in api
    )
