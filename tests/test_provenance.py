"""Who judged it: every grade records its source with it (a person, an AI judge with its
model and prompt version, an import), reuse copies people's grades unless the lead asks
for a judge's too, a copy keeps its original's source through copies of copies, the
source survives an export and an import, and every page and answer that shows the
numbers says whose grades they rest on."""

import json
import re

import pytest
from django.test import Client

from apps.accounts.api_tokens import api_token_create
from apps.evaluations.models import Evaluation, FeedbackSlot, Source
from apps.judges import controls, runs
from apps.judges.calibration import gate_set
from apps.judges.models import Judge, JudgeRun
from apps.judges.services import judge_create
from apps.judges.tests.fake_provider import FakeProvider, Reply
from apps.judging.judgements import Action, Giver, slot_judge
from apps.scoring.services import recompute_marked
from tests.factories import (
    client_for,
    finish,
    make_evaluation,
    make_grader,
    make_search_model,
    slots_of,
)

pytestmark = pytest.mark.django_db

JUDGE = "Quick"
KEYWORDS = {"red shoes": 2}


def owner_of(team):
    return team.memberships.get(role="owner").user


def finished(evaluation: Evaluation) -> Evaluation:
    """The evaluation finished: by its last grade, or else by the lead's hand."""
    evaluation.refresh_from_db()
    return evaluation if evaluation.status == "finished" else finish(evaluation)


def graded_by_judge(evaluation: Evaluation, answer: dict, *, steps: int) -> Judge:
    """The team's AI judge "Quick" on a real local model server answering `answer` to
    every call, its run on the evaluation making `steps` steps (a keyword a step)."""
    with FakeProvider() as server:
        server.script(Reply.openai(json.dumps(answer)))
        judge = judge_create(
            team=evaluation.team,
            name=JUDGE,
            protocol="openai",
            base_url=server.openai_url,
            model_name="gpt-test",
            api_key="not-a-real-key",
        )
        run = controls.run_start(judge=judge, evaluation=evaluation)
        for _step in range(steps):
            runs.run_step(run_id=run.id)
    return judge


def judged_by_ai(team, settings, keywords: dict[str, int] = KEYWORDS) -> tuple[Evaluation, Judge]:
    """A finished evaluation whose results (two a keyword) an AI judge graded (2 and 0)."""
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    evaluation = make_evaluation(team=team, keywords=keywords)
    answer = {
        "judgements": [
            {"id": "r1", "grade": 2, "reason": "on topic"},
            {"id": "r2", "grade": 0, "reason": "off topic"},
        ]
    }
    judge = graded_by_judge(evaluation, answer, steps=len(keywords))
    recompute_marked()  # the metrics, as the worker would compute them
    return finished(evaluation), judge


def graded_slots(evaluation: Evaluation) -> list[FeedbackSlot]:
    return list(
        FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=False)
        .select_related("source_detail", "reused_from")
        .order_by("snapshot_position", "index")
    )


def api_client(team) -> Client:
    _token, text = api_token_create(team=team, name="provenance")
    return Client(headers={"Authorization": f"Bearer {text}"})


def test_a_judges_grade_records_the_judge_its_model_and_prompt_version(team_a, settings):
    evaluation, judge = judged_by_ai(team_a, settings)
    prompt_version = JudgeRun.objects.get(evaluation=evaluation).prompt_version

    for slot in graded_slots(evaluation):
        assert slot.source == Source.JUDGE
        made = slot.source_detail
        assert (made.judge_id, made.name, made.model_name) == (judge.id, JUDGE, "gpt-test")
        assert made.prompt_version == prompt_version
    assert FeedbackSlot.objects.filter(evaluation=evaluation).by_judges().count() == 2
    assert not FeedbackSlot.objects.filter(evaluation=evaluation).by_people().exists()


def test_a_persons_grade_is_a_persons_and_a_cleared_grade_keeps_no_source(team_a):
    evaluation = make_evaluation(team=team_a, keywords=KEYWORDS)
    ann = make_grader(team_a, "ann@a.test")
    slot = slots_of(evaluation)[0]

    slot_judge(slot_id=slot.id, giver=Giver.recorded(ann), grade=3)
    slot.refresh_from_db()
    assert (slot.source, slot.source_detail_id) == (Source.PERSON, None)

    slot_judge(slot_id=slot.id, giver=Giver.lead(owner_of(team_a)), action=Action.CLEAR)
    slot.refresh_from_db()
    assert (slot.grade, slot.source, slot.source_detail_id) == (None, "", None)


def test_a_lead_who_edits_a_judges_grade_becomes_its_giver(team_a, settings):
    evaluation, _judge = judged_by_ai(team_a, settings)
    lead = owner_of(team_a)
    slot = graded_slots(evaluation)[0]

    slot_judge(slot_id=slot.id, giver=Giver.lead(lead), grade=3, team_id=team_a.id)

    slot.refresh_from_db()
    assert (slot.grade, slot.source, slot.source_detail_id) == (3, Source.PERSON, None)
    assert slot.grader_id == lead.id


def test_reuse_copies_no_ai_grade_into_an_evaluation_meant_for_people(team_a, settings):
    judged_by_ai(team_a, settings)
    pending = make_evaluation(team=team_a, keywords=KEYWORDS, reuse="keyword_doc", start=False)

    page = client_for(owner_of(team_a)).get(f"/evaluations/{pending.id}/")
    assert "Starting copies no earlier grade" in page.content.decode()

    again = make_evaluation(team=team_a, keywords=KEYWORDS, reuse="keyword_doc")
    assert again.status == "active" and again.graded_slots == 0


def test_a_lead_who_ticks_it_copies_a_judges_grades_which_say_where_they_came_from(
    team_a, settings
):
    earlier, judge = judged_by_ai(team_a, settings)
    pending = make_evaluation(
        team=team_a, keywords=KEYWORDS, reuse="keyword_doc", reuse_judges=True, start=False
    )

    page = client_for(owner_of(team_a)).get(f"/evaluations/{pending.id}/")
    assert "Starting copies <strong>2</strong> earlier grades: 2 by AI judges." in (
        page.content.decode()
    )
    again = make_evaluation(team=team_a, keywords=KEYWORDS, reuse="keyword_doc", reuse_judges=True)

    copies = graded_slots(again)
    assert [slot.grade for slot in copies] == [2, 0]
    for slot in copies:
        assert slot.reused and slot.reused_from_id == earlier.id
        assert slot.source == Source.JUDGE and slot.source_detail.judge_id == judge.id
        assert slot.source_detail.model_name == "gpt-test"


def test_a_judge_that_fails_the_teams_calibration_rule_is_not_copied(team_a, settings):
    judged_by_ai(team_a, settings)
    gate_set(team=team_a, min_alpha=0.8)  # the judge was never calibrated

    again = make_evaluation(team=team_a, keywords=KEYWORDS, reuse="keyword_doc", reuse_judges=True)

    assert again.graded_slots == 0


def test_a_copy_of_a_copy_keeps_the_original_source_and_names_the_evaluation_it_came_from(
    team_a, settings
):
    first, judge = judged_by_ai(team_a, settings)
    second = make_evaluation(team=team_a, keywords=KEYWORDS, reuse="keyword_doc", reuse_judges=True)
    finish(second)

    third = make_evaluation(team=team_a, keywords=KEYWORDS, reuse="keyword_doc", reuse_judges=True)

    copies = graded_slots(third)
    assert len(copies) == 2
    for slot in copies:
        assert slot.source == Source.JUDGE and slot.source_detail.name == JUDGE
        assert slot.reused_from_id in (first.id, second.id)
    assert {slot.reused_from_id for slot in copies} == {second.id}


def test_an_exported_judges_grade_imports_back_as_that_judges(team_a, team_b, settings):
    evaluation, _judge = judged_by_ai(team_a, settings)
    response = api_client(team_a).get(f"/api/v1/evaluations/{evaluation.id}/export/?format=json")
    document = b"".join(response.streaming_content).decode()

    imported = api_client(team_b).post(
        "/api/v1/evaluations/import/", document, content_type="application/json"
    )

    assert imported.status_code == 201, imported.content
    copies = graded_slots(Evaluation.objects.get(id=imported.json()["id"]))
    assert [slot.source for slot in copies] == [Source.JUDGE, Source.JUDGE]
    made = copies[0].source_detail
    assert (made.team_id, made.judge_id, made.name, made.model_name) == (
        team_b.id,
        0,
        JUDGE,
        "gpt-test",
    )


def test_the_api_names_each_grades_source(team_a, settings):
    evaluation, judge = judged_by_ai(team_a, settings)

    listed = api_client(team_a).get(f"/api/v1/evaluations/{evaluation.id}/judgements/?graded=1")

    assert listed.status_code == 200
    source = listed.json()["results"][0]["source"]
    assert source["kind"] == "judge" and source["judge"] == judge.id
    assert (source["name"], source["model"], source["reused_from"]) == (JUDGE, "gpt-test", None)


def test_every_page_and_answer_says_whose_grades_the_numbers_rest_on(team_a, settings):
    by_ai, _judge = judged_by_ai(team_a, settings)
    by_people = make_evaluation(team=team_a, keywords=KEYWORDS)
    ann = make_grader(team_a, "ann@a.test")
    for slot in slots_of(by_people):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(ann), grade=1)
    mixed = make_evaluation(team=team_a, keywords=KEYWORDS, reuse="keyword_doc", reuse_judges=True)
    slot_judge(slot_id=slots_of(mixed)[0].id, giver=Giver.lead(owner_of(team_a)), grade=3)
    lead = client_for(owner_of(team_a))

    page = lead.get(f"/evaluations/{by_ai.id}/").content.decode()
    assert 'data-kind="ai"' in page
    assert "These numbers rest on 2 grades: AI judge Quick 2 (100 %)." in page
    people_page = lead.get(f"/evaluations/{by_people.id}/").content.decode()
    assert "These numbers rest on 2 grades: people 2 (100 %)." in people_page
    mixed_page = lead.get(f"/evaluations/{mixed.id}/").content.decode()
    assert "people 1 (50 %), AI judge Quick 1 (50 %); 1 copied" in mixed_page

    listing = lead.get("/evaluations/").content.decode()
    for evaluation, badge in ((by_ai, "AI"), (by_people, "People"), (mixed, "Mixed")):
        row = listing[listing.index(f'data-evaluation="{evaluation.id}"') :]
        row = row[: row.index("</tr>")]
        assert f">{badge}</span>" in row

    answers = {
        item["id"]: item["judged_by"]
        for item in api_client(team_a).get("/api/v1/evaluations/").json()["results"]
    }
    assert answers[by_ai.id]["kind"] == "ai"
    assert answers[by_ai.id]["judges"] == [{"name": JUDGE, "graded": 2}]
    assert answers[by_people.id]["kind"] == "people"
    assert (answers[mixed.id]["kind"], answers[mixed.id]["copied"]) == ("mixed", 1)

    keyword = by_ai.keywords.get()
    keyword_page = lead.get(f"/evaluations/{by_ai.id}/keywords/{keyword.id}/").content.decode()
    assert "AI judge Quick 2 (100 %)" in keyword_page


def half_judged(team, settings, keywords: dict[str, int]) -> Evaluation:
    """A finished evaluation whose first keyword an AI judge graded and whose others a
    person graded."""
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    evaluation = make_evaluation(team=team, keywords=keywords)
    answer = {"judgements": [{"id": "r1", "grade": 3, "reason": "a"}, {"id": "r2", "grade": 0}]}
    graded_by_judge(evaluation, answer, steps=1)
    ann = make_grader(team, "ann@a.test")
    for slot in FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=True):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(ann), grade=1)
    recompute_marked()  # the metrics, as the worker would compute them
    return finished(evaluation)


def test_compare_warns_when_the_sides_were_judged_by_different_sources_and_offers_people_only(
    team_a, settings
):
    keywords = {"red shoes": 2, "blue hat": 2}
    by_people = make_evaluation(team=team_a, keywords=keywords)
    bob = make_grader(team_a, "bob@a.test")
    for slot in slots_of(by_people):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(bob), grade=2)
    recompute_marked()
    finished(by_people)
    mixed = half_judged(team_a, settings, keywords)
    lead = client_for(owner_of(team_a))
    both = f"?e={by_people.id}&e={mixed.id}"

    page = lead.get(f"/evaluations/compare/{both}").content.decode()
    assert 'data-testid="sources-differ"' in page
    assert "the 1 common keyword no AI judge or click model graded on any side" in page
    people_only = lead.get(f"/evaluations/compare/{both}&people=1").content.decode()
    assert 'data-testid="people-only"' in people_only
    assert 'data-testid="common-keywords"><strong>1</strong> keyword ' in people_only
    assert lead.get(f"/evaluations/compare/{both}&people=maybe").status_code == 400

    api = api_client(team_a)
    compared = api.get(f"/api/v1/comparisons/?evaluations={by_people.id},{mixed.id}").json()
    assert (compared["sources_differ"], compared["common_keywords"]) == (True, 2)
    asked = f"/api/v1/comparisons/?evaluations={by_people.id},{mixed.id}&people_only=true"
    assert api.get(asked).json()["common_keywords"] == 1

    gate = f"/api/v1/gate/?baseline={by_people.id}&candidate={mixed.id}"
    undecided = api.get(gate).json()
    assert (undecided["exit_code"], undecided["sources_differ"]) == (3, True)
    assert undecided["reason"].startswith("Not decided: judged by different sources")
    assert (undecided["baseline_judged_by"], undecided["candidate_judged_by"]) == (
        "People",
        "Mixed",
    )
    decided = api.get(f"{gate}&sources=people").json()
    assert (
        decided["exit_code"] in (0, 1)
        and "1 common keywords no AI judge or click model graded" in (decided["reason"])
    )
    assert api.get(f"{gate}&sources=all").status_code == 400


def graded_by_people(team, keywords: dict[str, int], grade: int) -> Evaluation:
    """A finished evaluation a person graded whole, every result `grade`."""
    evaluation = make_evaluation(team=team, keywords=keywords)
    bob = make_grader(team, "bob@a.test")
    for slot in slots_of(evaluation):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(bob), grade=grade)
    recompute_marked()
    return finished(evaluation)


def test_model_history_draws_people_and_ai_points_as_lines_of_their_own(team_a, settings):
    keywords = {"red shoes": 2, "blue hat": 2}
    by_people = graded_by_people(team_a, keywords, 3)
    by_ai, _judge = judged_by_ai(team_a, settings, keywords)
    model = make_search_model(team_a, "http://127.0.0.1:9")
    Evaluation.objects.filter(id__in=[by_people.id, by_ai.id]).update(search_model=model)

    page = client_for(owner_of(team_a)).get(f"/models/{model.id}/history/").content.decode()

    assert 'data-testid="sources-split"' in page
    charts = re.findall(
        r'<script id="model-history-0" type="application/json">(.*?)</script>', page
    )
    series = json.loads(charts[0])["series"]
    assert [line["name"] for line in series] == ["nDCG@10 · People", "nDCG@10 · AI"]
    assert series[0]["values"][1] is None and series[1]["values"][0] is None


def test_planning_learns_the_noise_only_from_evaluations_judged_alike(team_a, settings):
    keywords = {"red shoes": 2, "blue hat": 2, "green bag": 2}
    graded_by_people(team_a, keywords, 1)
    judged_by_ai(team_a, settings, keywords)
    graded_by_people(team_a, keywords, 3)
    lead = client_for(owner_of(team_a))
    plan = "/evaluations/plan/?metric=ndcg@10&change=0.1&power=0.8"

    people = lead.get(plan).content.decode()
    assert people.count("common keywords</li>") == 1  # the two people evaluations alone
    assert "pooled over 1 pair of evaluations judged by people alone" in people
    by_ai = lead.get(f"{plan}&judged_by=ai").content.decode()
    assert "no two finished evaluations in a row judged by AI judges alone" in by_ai
    assert lead.get(f"{plan}&judged_by=robots").status_code == 400
