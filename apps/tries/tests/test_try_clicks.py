"""A try reads click models' judgements only when the lead asks: by default the holes
stay holes; asked (on the page, or ?clicks=true over the API) the clicks fill them and
the report says how many of its grades rest on clicks."""

import pytest
from django.test import Client

from apps.accounts.api_tokens import api_token_create
from apps.behaviour.click_judgements import click_judgements_make
from apps.behaviour.models import ClickCount, ClickLog
from apps.tries.models import Try
from apps.tries.report import try_report
from apps.tries.verdict import Verdict
from tests.factories import client_for

from .tuned import ASKED, doc_id

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def clicks_on_the_holes(team_a):
    """Click judgements grading documents 10 and 9 of every asked query Poor."""
    log = ClickLog.objects.create(
        team=team_a, name="October", file_format="csv", first_event_at="2026-10-01"
    )
    log.last_event_at = "2026-10-31"
    log.save()
    ClickCount.objects.bulk_create(
        ClickCount(
            log=log, query=query, doc_id=doc_id(query, rank), rank=1, impressions=50, clicks=0
        )
        for query in ASKED
        for rank in (9, 10)
    )
    return click_judgements_make(
        team=team_a, user=None, log=log, model="ctr", scale="graded", thresholds=[0.2, 0.4, 0.6]
    )


def test_a_tries_report_counts_clicks_only_when_asked(team_a, boost_down, clicks_on_the_holes):
    attempt = Try.objects.get(id=boost_down.id)

    without = try_report(attempt)
    with_clicks = try_report(attempt, with_clicks=True)

    assert without.unjudged == 2 * len(ASKED)
    assert without.verdict == Verdict.NOT_ENOUGH_JUDGED
    assert with_clicks.unjudged == 0
    assert with_clicks.bases == {"people": 3 * len(ASKED), "clicks": 2 * len(ASKED)}
    assert with_clicks.verdict == Verdict.WORSE


def test_the_try_page_offers_the_clicks_and_says_whose_grades_count(
    team_a, owner, boost_down, clicks_on_the_holes
):
    client = client_for(owner)
    url = f"/tries/{boost_down.id}/"

    page = client.get(url).content.decode()
    counted = client.get(url + "?clicks=1").content.decode()

    assert "Click models' judgements are left out." in page
    assert "by clicks" not in page
    assert f"{2 * len(ASKED)} grades by clicks" in counted
    assert "Leave them out" in counted


def test_the_api_counts_clicks_when_asked(team_a, boost_down, clicks_on_the_holes):
    _token, text = api_token_create(team=team_a, name="clicks")
    api_client = Client(headers={"Authorization": f"Bearer {text}"})
    url = f"/api/v1/tries/{boost_down.id}/"

    plain = api_client.get(url).json()
    counted = api_client.get(url + "?clicks=true").json()

    assert plain["verdict"] == Verdict.NOT_ENOUGH_JUDGED
    assert counted["judged_by"] == {"people": 3 * len(ASKED), "clicks": 2 * len(ASKED)}
