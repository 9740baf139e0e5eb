"""A keyword's information need and the lead's notes, through real
URLs: the lead writes them on the keyword page, graders read the need on their card,
bounded, the lead's alone, the team's alone. (The exports: interchange's
test_keyword_notes_export.)"""

import pytest

from apps.evaluations.keyword_notes import INFORMATION_NEED_MAX_LENGTH
from apps.evaluations.models import Keyword, KeywordNotes
from tests.factories import client_for, make_evaluation

pytestmark = pytest.mark.django_db
NEED = "Red running shoes for trail, not road; any brand."


@pytest.fixture
def evaluation(team_a):
    return make_evaluation(team=team_a, keywords={"red shoes": 2})


def notes_url(keyword: Keyword) -> str:
    return f"/evaluations/{keyword.evaluation_id}/keywords/{keyword.id}/notes/"


def keyword_url(keyword: Keyword) -> str:
    return f"/evaluations/{keyword.evaluation_id}/keywords/{keyword.id}/"


def test_a_lead_writes_the_need_and_notes_and_reads_them_on_the_keyword_page(evaluation, owner):
    keyword = evaluation.keywords.get()
    lead = client_for(owner)

    saved = lead.post(notes_url(keyword), {"information_need": f"  {NEED} ", "notes": "Ask Ann."})

    assert saved.status_code == 302 and saved.url == keyword_url(keyword)
    notes = KeywordNotes.objects.get(keyword=keyword)
    assert (notes.information_need, notes.notes) == (NEED, "Ask Ann.")
    page = lead.get(keyword_url(keyword)).content.decode()
    assert NEED in page and "Ask Ann." in page
    assert "Saved the information need and notes." in page


def test_graders_read_the_need_beside_the_keyword_on_their_card(evaluation, owner, evaluator):
    keyword = evaluation.keywords.get()
    client_for(owner).post(notes_url(keyword), {"information_need": NEED, "notes": "lead only"})

    card = client_for(evaluator).get("/feedback/").content.decode()

    assert 'data-testid="information-need"' in card and NEED in card
    assert "lead only" not in card


def test_a_card_without_a_need_shows_none(evaluation, evaluator):
    card = client_for(evaluator).get("/feedback/").content.decode()

    assert 'data-testid="information-need"' not in card


def test_a_need_too_long_is_refused_beside_its_field_and_nothing_is_saved(evaluation, owner):
    keyword = evaluation.keywords.get()

    refused = client_for(owner).post(
        notes_url(keyword),
        {"information_need": "x" * (INFORMATION_NEED_MAX_LENGTH + 1), "notes": "kept?"},
    )

    assert refused.status_code == 400
    assert refused.context["notes_form"].errors == {
        "information_need": ["At most 2000 characters (2001 given)."]
    }
    assert not KeywordNotes.objects.exists()


def test_only_the_teams_leads_may_write_them(evaluation, evaluator, outsider):
    keyword = evaluation.keywords.get()
    data = {"information_need": NEED, "notes": ""}

    assert client_for(evaluator).post(notes_url(keyword), data).status_code == 403
    assert client_for(outsider).post(notes_url(keyword), data).status_code == 404
    assert not KeywordNotes.objects.exists()
