"""The AI judges' card on an evaluation's page, as Chromium draws it: its heading sits at
the card's top padding, with no empty band above it, and its costs name their currency."""

import pytest

from apps.accounts.services import team_create
from apps.judges.models import JudgeRun
from apps.judges.services import judge_create
from tests.browser.people import PASSWORD, log_in
from tests.factories import make_evaluation

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_ai_judges_card_starts_with_its_heading(live_server, page, screenshot):
    team = team_create(name="Shop", owner_email="lead@shop.test", owner_password=PASSWORD)
    evaluation = make_evaluation(team=team, keywords={"red shoes": 2})
    judge = judge_create(
        team=team,
        name="Overlap",
        protocol="openai",
        base_url="https://x.example/v1",
        model_name="m",
    )
    JudgeRun.objects.create(judge=judge, evaluation=evaluation, prompt_version="v")
    log_in(page, live_server.url, "lead@shop.test")

    page.goto(f"{live_server.url}/evaluations/{evaluation.id}/")
    card = page.get_by_test_id("judge-panel")
    heading = card.get_by_role("heading", name="AI judges")
    heading.wait_for()

    band = heading.bounding_box()["y"] - card.bounding_box()["y"]
    padding = card.evaluate("card => parseFloat(getComputedStyle(card).paddingTop)")
    assert band == pytest.approx(padding, abs=1)
    assert card.get_by_role("cell", name="US$0.0000").is_visible()
    screenshot("ai-judges-card")
