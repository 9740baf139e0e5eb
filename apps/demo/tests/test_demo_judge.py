"""The demo judge: a word-overlap stand-in for a language model, served by the app in the
OpenAI protocol, so `make run` shows AI judging end to end without an API key."""

import json

import pytest
from django.core.management import call_command

from apps import engine
from apps.demo import seed as demo
from apps.demo.judge_api import overlap_grade
from apps.evaluations.models import Evaluation, FeedbackSlot, Status
from apps.judges import controls
from apps.judges.models import (
    CalibrationStatus,
    GoldSet,
    Judge,
    JudgeCall,
    JudgeGrade,
    RunStatus,
)
from apps.judges.prompting import JudgeTask, Result, answer_schema, default_prompt, messages_for

GRADED = engine.SCALES["graded"]


def test_the_grade_follows_the_share_of_the_keywords_words_in_the_result():
    grades = [0, 1, 2, 3]
    assert overlap_grade("red shoes", {"title": "Red running shoes"}, grades)[0] == 3
    assert overlap_grade("red shoes", {"title": "Red hat"}, grades)[0] == 2
    assert overlap_grade("red shoes", {"title": "Blue hat"}, grades)[0] == 0
    assert "1 of 2 keyword words" in overlap_grade("red shoes", {"title": "Red hat"}, grades)[1]


def post(client, body):
    return client.post(
        "/demo/llm/v1/chat/completions", json.dumps(body), content_type="application/json"
    )


@pytest.mark.django_db
def test_it_answers_a_judges_prompt_in_the_openai_protocol(client, settings):
    settings.DEMO_SEARCH_API = True
    task = JudgeTask("red shoes", [Result("r1", "Red shoes"), Result("r2", "Blue hat")], GRADED)
    system, user = messages_for(task, default_prompt(GRADED))
    answer = post(
        client,
        {
            "model": "word-overlap",
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"schema": answer_schema(task)},
            },
        },
    )
    assert answer.status_code == 200
    content = json.loads(answer.json()["choices"][0]["message"]["content"])
    assert [(j["id"], j["grade"]) for j in content["judgements"]] == [("r1", 3), ("r2", 0)]
    assert post(client, {"messages": []}).status_code == 400
    settings.DEMO_SEARCH_API = False
    assert post(client, {}).status_code == 404


@pytest.mark.django_db
def test_the_seeded_demo_judge_grades_a_demo_evaluation_through_the_app(
    live_server, settings, django_capture_on_commit_callbacks
):
    settings.DEMO_SEARCH_API = True
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    settings.DEMO_JUDGE_URL = f"{live_server.url}/demo/llm/v1"
    call_command("seed_demo", stdout=None)
    judge = Judge.objects.get(team__name=demo.TEAM_NAME, name=demo.DEMO_JUDGE)
    evaluation = Evaluation.objects.get(
        team__name=demo.TEAM_NAME, scale="detail", search_model=None
    )
    assert evaluation.status == Status.ACTIVE
    with django_capture_on_commit_callbacks(execute=True):
        run = controls.run_start(judge=judge, evaluation=evaluation)
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED, run.note
    graded = FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user)
    assert run.graded == graded.exclude(grade=None).count() > 0
    assert all(
        "Word overlap stand-in" in reason for reason in graded.values_list("reason", flat=True)
    )

    # The demo's gold set calibrates it too, against the three people's grades.
    gold = GoldSet.objects.get(team__name=demo.TEAM_NAME)
    assert gold.items.exists()
    with django_capture_on_commit_callbacks(execute=True):
        calibration = controls.calibration_start(gold_set=gold, judge=judge)
    calibration.refresh_from_db()
    assert calibration.status == CalibrationStatus.FINISHED, calibration.note
    assert calibration.graded == gold.items.count() and calibration.alpha is not None


@pytest.mark.django_db
def test_the_seeded_demo_panel_grades_with_the_median_of_its_two_stand_ins(
    live_server, settings, django_capture_on_commit_callbacks
):
    settings.DEMO_SEARCH_API = True
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    settings.DEMO_JUDGE_URL = f"{live_server.url}/demo/llm/v1"
    call_command("seed_demo", stdout=None)
    panel = Judge.objects.get(team__name=demo.TEAM_NAME, name=demo.DEMO_PANEL)
    assert [member.model_name for member in panel.members()] == ["word-overlap", "title-overlap"]
    evaluation = Evaluation.objects.get(
        team__name=demo.TEAM_NAME, scale="detail", search_model=None
    )
    with django_capture_on_commit_callbacks(execute=True):
        run = controls.run_start(judge=panel, evaluation=evaluation)
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED, run.note
    grades = JudgeGrade.objects.filter(run=run)
    assert grades.count() == run.graded > 0
    assert run.calls == 2 * JudgeCall.objects.filter(run=run, model_name="title-overlap").count()
    for grade in grades:
        members = [vote["grade"] for vote in grade.votes]
        assert grade.slot.grade == min(members)  # the lower middle of two
        assert grade.agreement == (1.0 if members[0] == members[1] else 0.5)
