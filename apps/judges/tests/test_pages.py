"""The lead's pages for AI judges: add one through the form (the key stored, never shown
again), see every problem beside its field, assign a judge from the evaluation page,
watch its run, pause and resume it, read what it could not grade, download its log."""

from decimal import Decimal

import pytest

from apps.judges import runs
from apps.judges.models import Judge, JudgeRun, RunStatus
from apps.judges.services import judge_create
from tests.factories import client_for, finish, make_evaluation

from .fake_provider import FakeProvider, Reply

pytestmark = pytest.mark.django_db

API_KEY = "not-a-real-key-page-WXYZ"
FORM = {
    "name": "GPT grader",
    "protocol": "openai",
    "base_url": "https://api.openai.com/v1",
    "model_name": "gpt-4o-mini",
    "api_key": API_KEY,
    "temperature": "",
    "timeout_seconds": "60",
    "results_per_call": "10",
    "calls_at_once": "4",
    "max_output_tokens": "2000",
    "structured_output": "on",
    "budget_calls": "",
    "budget_tokens": "",
    "budget_cost": "5",
    "price_input_per_million": "0.15",
    "price_output_per_million": "0.60",
}


def test_a_lead_adds_a_judge_and_the_key_is_never_shown_again(owner, team_a):
    lead = client_for(owner)
    added = lead.post("/judges/new/", FORM)
    assert added.status_code == 302
    judge = Judge.objects.get(team=team_a)
    assert judge.api_key_hint == "…WXYZ" and API_KEY not in judge.api_key_encrypted
    for page in ("/judges/", f"/judges/{judge.id}/edit/"):
        shown = lead.get(page)
        assert shown.status_code == 200 and API_KEY not in shown.content.decode()
        assert "…WXYZ" in shown.content.decode()
    # Saving the edit form with the key's field left empty keeps the key.
    kept = lead.post(f"/judges/{judge.id}/edit/", {**FORM, "api_key": "", "calls_at_once": "2"})
    assert kept.status_code == 302
    judge.refresh_from_db()
    assert judge.calls_at_once == 2 and judge.api_key_hint == "…WXYZ"


def test_every_problem_shows_beside_its_field(owner):
    page = client_for(owner).post(
        "/judges/new/", {**FORM, "results_per_call": "50", "base_url": "ftp://x", "name": ""}
    )
    assert page.status_code == 200
    text = page.content.decode()
    assert "Must be from 1 to 20, got 50." in text
    assert "Must be an http:// or https:// URL with a host" in text
    assert "Required." in text
    assert API_KEY not in text
    assert not Judge.objects.exists()


def test_judges_are_for_leads_of_their_team(evaluator, owner, team_b):
    theirs = judge_create(
        team=team_b,
        **{k: v for k, v in FORM.items() if k in ("name", "protocol", "base_url", "model_name")},
    )
    assert client_for(evaluator).get("/judges/").status_code == 403
    assert client_for(owner).get(f"/judges/{theirs.id}/edit/").status_code == 404
    assert client_for(owner).post(f"/judges/{theirs.id}/delete/").status_code == 404
    assert Judge.objects.filter(id=theirs.id).exists()


@pytest.fixture
def server(settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    with FakeProvider() as fake:
        yield fake


def test_a_lead_assigns_a_judge_from_the_evaluation_page_and_watches_it(owner, team_a, server):
    evaluation = make_evaluation(team=team_a, scale="binary", keywords={"red shoes": 2})
    judge = judge_create(
        team=team_a,
        name="Local",
        protocol="openai",
        base_url=server.openai_url,
        model_name="llama",
        api_key=API_KEY,
    )
    lead = client_for(owner)
    page = lead.get(f"/evaluations/{evaluation.id}/").content.decode()
    panel_url = f"/evaluations/{evaluation.id}/judges/panel/"
    assert panel_url in page  # the open evaluation's panel loads after the page
    panel = lead.get(panel_url, HTTP_HX_REQUEST="true").content.decode()
    assert "Let a judge grade" in panel and "Local (llama)" in panel

    assigned = lead.post(f"/evaluations/{evaluation.id}/judges/", {"judge": judge.id})
    assert assigned.status_code == 302
    run = JudgeRun.objects.get(judge=judge, evaluation=evaluation)
    assert run.status == RunStatus.RUNNING
    server.script(
        Reply.openai(
            '{"judgements": [{"id": "r1", "grade": 1, "reason": "Red shoes, as asked."},'
            ' {"id": "r2", "grade": 5}]}'
        )
    )
    runs.run_step(run_id=run.id)

    panel = lead.get(panel_url, HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-trigger="every' in panel  # polls while the judge runs
    assert "Running" in panel
    detail = lead.get(f"/judges/runs/{run.id}/").content.decode()
    assert "5 is not a binary grade" in detail and "red shoes" in detail
    log = lead.get(f"/judges/runs/{run.id}/calls/")
    text = b"".join(log.streaming_content).decode()
    assert "Keyword: red shoes" in text and API_KEY not in text

    keyword = evaluation.keywords.get()
    results = lead.get(f"/evaluations/{evaluation.id}/keywords/{keyword.id}/").content.decode()
    assert "Local" in results and "ai-badge" in results  # the judge's name, badged
    assert "ai-judges.relevo.invalid" not in results  # not its grader address
    assert "Red shoes, as asked." in results  # its reason beside its grade
    board = lead.get("/leaderboard/").content.decode()
    people, judges = board.split('data-testid="judge-leaderboard"')
    assert "Local" in judges and "Local" not in people  # counted apart from people

    assert lead.post(f"/judges/runs/{run.id}/pause/").status_code == 302
    run.refresh_from_db()
    assert run.status == RunStatus.PAUSED
    lead.post(f"/judges/runs/{run.id}/resume/", {"back": "evaluation"})
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING
    assert lead.post(f"/judges/runs/{run.id}/explode/").status_code == 404
    assert lead.get(f"/judges/runs/{run.id}/pause/").status_code == 405


def test_a_finished_evaluations_page_shows_its_judges_with_the_page(owner, team_a):
    evaluation = make_evaluation(team=team_a, keywords={"q": 1})
    judge = judge_create(
        team=team_a,
        name="Done",
        protocol="openai",
        base_url="https://x.example/v1",
        model_name="m",
    )
    JudgeRun.objects.create(judge=judge, evaluation=evaluation, prompt_version="v", graded=1)
    finish(evaluation)
    page = client_for(owner).get(f"/evaluations/{evaluation.id}/").content.decode()
    assert 'data-testid="judge-panel"' in page and "Done" in page


def test_costs_show_their_currency_the_us_dollar_of_the_providers_price_lists(owner, team_a):
    evaluation = make_evaluation(team=team_a, keywords={"q": 1})
    judge = judge_create(
        team=team_a,
        name="Priced",
        protocol="openai",
        base_url="https://x.example/v1",
        model_name="m",
    )
    run = JudgeRun.objects.create(
        judge=judge, evaluation=evaluation, prompt_version="v", cost=Decimal("0.4217")
    )
    lead = client_for(owner)

    panel = lead.get(f"/evaluations/{evaluation.id}/judges/panel/").content.decode()
    detail = lead.get(f"/judges/runs/{run.id}/").content.decode()
    form = lead.get(f"/judges/{judge.id}/edit/").content.decode()

    assert "US$0.4217" in panel and "US$0.4217" in detail
    assert "Price per million input tokens (US$)" in form
    assert "Budget: cost per run (US$)" in form
