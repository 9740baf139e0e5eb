"""A keyword's information need and notes over the API with a real team token: read with
the keyword, set with PUT on its notes at any status, bounded, the team's alone."""

import pytest
from django.test import Client

from apps.accounts.api_tokens import api_token_create
from apps.evaluations.models import KeywordNotes
from tests.factories import make_evaluation, make_team

pytestmark = pytest.mark.django_db
NEED = "Red running shoes for trail, not road."


@pytest.fixture
def keyword(team_a):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2})  # active
    return evaluation.keywords.get()


def notes_url(keyword) -> str:
    return f"/api/v1/evaluations/{keyword.evaluation_id}/keywords/{keyword.id}/notes/"


def put(client, keyword, body):
    return client.put(notes_url(keyword), body, content_type="application/json")


def test_a_keywords_notes_are_set_on_an_active_evaluation_and_read_with_it(api, keyword):
    written = put(api, keyword, {"information_need": f" {NEED} ", "notes": "Ask Ann."})

    assert written.status_code == 200
    assert (written.json()["information_need"], written.json()["notes"]) == (NEED, "Ask Ann.")
    listed = api.get(f"/api/v1/evaluations/{keyword.evaluation_id}/keywords/").json()
    [shown] = listed["results"]
    assert (shown["information_need"], shown["notes"]) == (NEED, "Ask Ann.")


def test_empty_texts_clear_them(api, keyword):
    put(api, keyword, {"information_need": NEED, "notes": "x"})

    cleared = put(api, keyword, {"information_need": "", "notes": ""})

    assert (cleared.json()["information_need"], cleared.json()["notes"]) == ("", "")


def test_too_long_a_need_is_refused_naming_it_and_nothing_is_saved(api, keyword):
    refused = put(api, keyword, {"information_need": "x" * 2001, "notes": ""})

    assert refused.status_code == 400
    assert "information_need" in refused.content.decode()
    assert not KeywordNotes.objects.exists()


def test_another_teams_keyword_answers_404(keyword):
    _token, text = api_token_create(team=make_team("Team B"), name="theirs")
    theirs = Client(headers={"Authorization": f"Bearer {text}"})

    assert put(theirs, keyword, {"information_need": NEED, "notes": ""}).status_code == 404
    assert not KeywordNotes.objects.exists()
