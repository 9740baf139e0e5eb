"""Clicks where they meet the rest: a grade a click model gave stays the clicks' through
an export and an import, Compare and the gate treat an evaluation graded partly by
clicks as judged by other sources and compare on people's grades alone when asked, and
model history draws the clicks' points as a line of their own."""

import pytest

from apps.behaviour.click_judgements import click_judgements_make
from apps.behaviour.grading import evaluation_grade_with_clicks
from apps.behaviour.models import ClickCount, ClickLog
from apps.evaluations.models import Evaluation, FeedbackSlot, Source
from apps.insights.model_history import model_history
from apps.judging.judgements import Giver, slot_judge
from apps.scoring.services import recompute_marked
from tests.factories import make_evaluation, make_grader, make_search_model, slots_of
from tests.test_provenance import api_client, finished, graded_by_people

pytestmark = pytest.mark.django_db

KEYWORDS = {"red shoes": 2, "blue hat": 2}


def clicks_on(team, pairs):
    """The team's click judgements: each (query, document) clicked at the rate given."""
    log = ClickLog.objects.create(
        team=team,
        name="October",
        file_format="csv",
        first_event_at="2026-10-01T00:00:00Z",
        last_event_at="2026-10-31T00:00:00Z",
    )
    ClickCount.objects.bulk_create(
        ClickCount(log=log, query=q, doc_id=d, rank=1, impressions=100, clicks=round(100 * rate))
        for (q, d), rate in pairs.items()
    )
    return click_judgements_make(
        team=team, user=None, log=log, model="ctr", scale="graded", thresholds=[0.1, 0.3, 0.5]
    ).judgement_list


def half_by_clicks(team) -> Evaluation:
    """A finished evaluation: people graded "red shoes", clicks "blue hat"."""
    evaluation = make_evaluation(team=team, keywords=KEYWORDS)
    bob = make_grader(team, "carl@a.test")
    for slot in slots_of(evaluation, "red shoes"):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(bob), grade=2)
    rates = {("blue hat", "blue hat-doc-1"): 0.6, ("blue hat", "blue hat-doc-2"): 0.2}
    listed = clicks_on(team, rates)
    evaluation_grade_with_clicks(evaluation=evaluation, judgement_list=listed, user=None)
    recompute_marked()
    return finished(evaluation)


def test_an_exported_click_grade_imports_back_as_the_clicks(team_a, team_b):
    evaluation = half_by_clicks(team_a)
    response = api_client(team_a).get(f"/api/v1/evaluations/{evaluation.id}/export/?format=json")
    document = b"".join(response.streaming_content).decode()

    imported = api_client(team_b).post(
        "/api/v1/evaluations/import/", document, content_type="application/json"
    )

    assert imported.status_code == 201, imported.content
    copies = FeedbackSlot.objects.filter(
        evaluation_id=imported.json()["id"], keyword__text="blue hat", grade__isnull=False
    ).select_related("source_detail")
    assert [slot.source for slot in copies] == [Source.CLICKS, Source.CLICKS]
    made = copies[0].source_detail
    assert (made.team_id, made.name) == (team_b.id, "clicks: CTR, 2026-10-01 to 2026-10-31")


def test_compare_and_the_gate_do_not_read_clicks_as_people(team_a):
    by_people = graded_by_people(team_a, KEYWORDS, grade=2)
    mixed = half_by_clicks(team_a)
    api = api_client(team_a)

    compared = api.get(f"/api/v1/comparisons/?evaluations={by_people.id},{mixed.id}").json()
    people_only = api.get(
        f"/api/v1/comparisons/?evaluations={by_people.id},{mixed.id}&people_only=true"
    ).json()
    gate = api.get(f"/api/v1/gate/?baseline={by_people.id}&candidate={mixed.id}").json()

    assert (compared["sources_differ"], compared["common_keywords"]) == (True, 2)
    assert people_only["common_keywords"] == 1  # "blue hat" rests on clicks
    assert gate["exit_code"] == 3 and gate["candidate_judged_by"] == "Mixed"
    assert gate["reason"].startswith("Not decided: judged by different sources")


def test_model_history_draws_the_clicks_points_as_a_line_of_their_own(team_a):
    model = make_search_model(team_a, "http://127.0.0.1:9")
    by_people = graded_by_people(team_a, {"blue hat": 2}, grade=2)
    by_clicks = make_evaluation(team=team_a, keywords={"blue hat": 2})
    listed = clicks_on(team_a, {("blue hat", f"blue hat-doc-{n}"): 0.6 for n in (1, 2)})
    evaluation_grade_with_clicks(evaluation=by_clicks, judgement_list=listed, user=None)
    recompute_marked()
    finished(by_clicks)
    Evaluation.objects.filter(id__in=[by_people.id, by_clicks.id]).update(search_model=model)

    history = model_history(search_model_id=model.id)

    assert history.sources == ["People", "Clicks"]
