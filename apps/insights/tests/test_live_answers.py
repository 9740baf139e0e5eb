"""The live answers of the dashboard and the disagreement queue, through real URLs: the
page carries its live URL and ETag; the answer is 304 until something changes, then
the page's parts as they are now; other teams' answer 404.

(The evaluation page's live answer is tested with the page, in test_evaluation_page.)"""

import re

import pytest

from apps.core import live
from apps.insights.tests.test_agreement_pages import (  # the queue's data: ties to settle
    evaluation,  # noqa: F401 (a fixture)
    graders,  # noqa: F401 (a fixture)
    snapshot,
)
from apps.judging import decisions
from apps.lifecycle.steps import evaluation_pin, evaluation_stop
from apps.scoring.services import recompute_marked
from tests.factories import client_for, make_evaluation, make_team

pytestmark = pytest.mark.django_db


def live_settings(page: str) -> tuple[str, str]:
    """The live URL and ETag a page carries."""
    url = re.search(r'data-live-url="([^"]+)"', page).group(1).replace("&amp;", "&")
    etag = re.search(r'data-live-etag="([^"]*)"', page).group(1).replace("&quot;", '"')
    return url, etag


def test_the_dashboard_is_live_for_its_team(team_a, owner, django_capture_on_commit_callbacks):
    client = client_for(owner)
    url, etag = live_settings(client.get("/").content.decode())

    assert url == f"/live/team/{team_a.id}/dashboard/" and etag
    assert client.get(url, headers={"If-None-Match": etag}).status_code == 304

    with django_capture_on_commit_callbacks(execute=True):  # as when its change commits
        live.changed(team_id=team_a.id)
    changed = client.get(url, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed["ETag"] != etag
    assert 'id="dashboard-live"' in changed.content.decode()


def test_another_teams_dashboard_answers_404(team_a, owner):
    other = make_team("Team B", owner="owner@b.test")

    assert client_for(owner).get(f"/live/team/{other.id}/dashboard/").status_code == 404
    assert client_for(owner).get(f"/live/team/{team_a.id}/dashboard/").status_code == 200


def test_the_queue_is_live_and_a_settled_result_leaves_open_at_the_next_answer(
    evaluation,  # noqa: F811 (the fixture imported above)
    owner,
    admin,
    django_capture_on_commit_callbacks,
):
    client = client_for(owner)
    page = client.get(f"/evaluations/{evaluation.id}/disagreements/").content.decode()
    url, etag = live_settings(page)
    assert url == f"/live/evaluation/{evaluation.id}/disagreements/"
    assert "Open (2)" in page
    assert client.get(url, headers={"If-None-Match": etag}).status_code == 304

    tie = snapshot(evaluation, "red shoes", 1)
    decisions.snapshot_decide(
        membership=admin.memberships.get(), snapshot_id=tie.id, grade=1, reason="checked"
    )
    with django_capture_on_commit_callbacks(execute=True):  # as when the store commits
        recompute_marked()  # the pipeline's store renews the evaluation's token

    changed = client.get(url, headers={"If-None-Match": etag})
    parts = changed.content.decode()
    assert changed.status_code == 200
    assert "Open (1)" in parts and f'id="snapshot-{tie.id}"' not in parts
    assert 'id="disagreement-metrics"' in parts and 'id="disagreement-list"' in parts


def test_the_settled_view_stays_settled_in_its_live_answer(
    evaluation,  # noqa: F811
    owner,
):
    page = client_for(owner).get(f"/evaluations/{evaluation.id}/disagreements/?show=settled")
    url, _etag = live_settings(page.content.decode())

    assert url == f"/live/evaluation/{evaluation.id}/disagreements/?show=settled"
    assert "<strong>Settled (0)</strong>" in client_for(owner).get(url).content.decode()


def test_the_queues_live_answer_refuses_graders_and_other_teams(
    evaluation,  # noqa: F811
    evaluator,
    outsider,
):
    url = f"/live/evaluation/{evaluation.id}/disagreements/"

    assert client_for(evaluator).get(url).status_code == 403
    assert client_for(outsider).get(url).status_code == 404


def test_a_pause_and_a_pin_change_what_live_pages_show(
    team_a, owner, django_capture_on_commit_callbacks
):
    running = make_evaluation(team=team_a)
    page, team = live.evaluation_topic(running.id), live.team_topic(team_a.id)
    before = live.version(page), live.version(team)

    with django_capture_on_commit_callbacks(execute=True):
        evaluation_stop(evaluation=running)
    paused = live.version(page), live.version(team)
    assert paused[0] != before[0] and paused[1] != before[1]

    with django_capture_on_commit_callbacks(execute=True):
        evaluation_pin(evaluation=running)
    assert live.version(team) != paused[1] and live.version(page) == paused[0]
