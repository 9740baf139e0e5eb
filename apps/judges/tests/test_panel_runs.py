"""A panel and a sampled judge grading an evaluation against a real local server: each
member or sample is a call of its own (logged, counted, paid at its own price), their
grades made one by the rule, with the votes and agreement kept beside the grade."""

import itertools
import json

import pytest

from apps.core.errors import InvalidInput, InvalidState
from apps.evaluations.models import FeedbackSlot
from apps.judges import controls, runs
from apps.judges.claims import claim
from apps.judges.models import CachedJudgement, JudgeCall, JudgeFailure, JudgeGrade, RunStatus
from apps.judges.panels import panel_create, panel_update
from apps.judges.services import judge_create, judge_delete, judge_update
from tests.factories import make_evaluation

from .fake_provider import Reply

pytestmark = pytest.mark.django_db


def member(evaluation, server, name, model, *, price="1.00", **extra):
    return judge_create(
        team=evaluation.team,
        name=name,
        protocol="openai",
        base_url=server.openai_url,
        model_name=model,
        api_key="not-a-real-key",
        price_input_per_million=price,
        price_output_per_million="0",
        **extra,
    )


def grades_by_model(grades: dict[str, list[int]]):
    """A responder: each model answers its own grades for the call's results."""

    def respond(seen):
        ids = [
            line.split('"')[3]
            for line in seen.body["messages"][-1]["content"].splitlines()
            if '"id"' in line
        ]
        given = grades[seen.body["model"]]
        judgements = [
            {"id": i, "grade": g, "reason": f"{seen.body['model']} on {i}"}
            for i, g in zip(ids, given, strict=False)
        ]
        return Reply.openai(json.dumps({"judgements": judgements}), tokens=(1000, 0))

    return respond


def pair(evaluation, server, rule):
    """GPT and Claude, and a panel of the two named Pair."""
    gpt = member(evaluation, server, "GPT", "gpt-test")
    claude = member(evaluation, server, "Claude", "claude-test")
    panel = panel_create(team=evaluation.team, name="Pair", members=[gpt.id, claude.id], rule=rule)
    return gpt, claude, panel


@pytest.fixture
def evaluation(settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    return make_evaluation(scale="graded", strategy=1, keywords={"red shoes": 3})


def graded(evaluation, judge):
    slots = FeedbackSlot.objects.filter(evaluation=evaluation, grader=judge.user).order_by(
        "snapshot_position"
    )
    return [slot.grade for slot in slots]


def test_a_median_panel_grades_each_result_with_its_members_votes(server, evaluation):
    gpt = member(evaluation, server, "GPT", "gpt-test", price="1.00")
    claude = member(evaluation, server, "Claude", "claude-test", price="3.00")
    gemini = member(evaluation, server, "Gemini", "gemini-test", price="2.00")
    panel = panel_create(
        team=evaluation.team, name="Panel", members=[gpt.id, claude.id, gemini.id], rule="median"
    )
    assert panel.model_name == "panel (median): gpt-test, claude-test, gemini-test"
    server.respond_with(
        grades_by_model({"gpt-test": [3, 0, 1], "claude-test": [1, 0, 2], "gemini-test": [2, 0, 2]})
    )
    run = controls.run_start(judge=panel, evaluation=evaluation)
    assert runs.run_step(run_id=run.id) == runs.GO
    assert graded(evaluation, panel) == [2, 0, 2]
    first = JudgeGrade.objects.filter(run=run).order_by("slot__snapshot_position").first()
    assert first.agreement == pytest.approx(1 / 3)
    assert [vote["grade"] for vote in first.votes] == [3, 1, 2]
    assert [vote["judge"] for vote in first.votes] == [gpt.id, claude.id, gemini.id]
    run.refresh_from_db()
    # Three members, one call each; each paid at its own price (1,000 input tokens).
    assert run.calls == 3 and run.input_tokens == 3000
    assert str(run.cost) == "0.006000"
    calls = JudgeCall.objects.filter(run=run).order_by("id")
    assert sorted(calls.values_list("model_name", flat=True)) == [
        "claude-test",
        "gemini-test",
        "gpt-test",
    ]
    assert first.call_id in {call.id for call in calls}


def test_a_split_majority_leaves_the_result_for_people_and_no_judge_takes_it_again(
    server, evaluation
):
    gpt, claude, panel = pair(evaluation, server, "majority")
    server.respond_with(grades_by_model({"gpt-test": [3, 0, 1], "claude-test": [3, 1, 1]}))
    run = controls.run_start(judge=panel, evaluation=evaluation)
    runs.run_step(run_id=run.id)
    assert graded(evaluation, panel) == [3, 1]
    failure = JudgeFailure.objects.get(run=run)
    assert failure.reason == "the panel is split (GPT 0, Claude 1): left for people"
    assert failure.slot.grade is None and failure.slot.grader_id is None  # open to people
    assert claim(run, 10) == []  # the panel does not take it again


def test_a_panel_with_a_member_that_failed_makes_the_whole_ask_again(server, evaluation):
    gpt, claude, panel = pair(evaluation, server, "median")
    answers = grades_by_model({"gpt-test": [3, 0, 1], "claude-test": [3, 1, 1]})

    def claude_down(seen):
        if seen.body["model"] == "claude-test":
            return Reply.error(503, "overloaded")
        return answers(seen)

    server.respond_with(claude_down)
    run = controls.run_start(judge=panel, evaluation=evaluation)
    step = runs.run_step(run_id=run.id)
    assert step.action == "wait" and "claude-test: " in step.why and "overloaded" in step.why
    assert graded(evaluation, panel) == []
    run.refresh_from_db()
    assert run.calls == 2  # both calls were made; GPT's is paid for
    assert not JudgeFailure.objects.filter(run=run).exists()


def test_a_panels_judgement_is_reused_from_the_cache_with_its_votes(server, evaluation, settings):
    gpt, claude, panel = pair(evaluation, server, "median")
    server.respond_with(grades_by_model({"gpt-test": [3, 0, 1], "claude-test": [2, 0, 1]}))
    run = controls.run_start(judge=panel, evaluation=evaluation)
    runs.run_step(run_id=run.id)
    assert CachedJudgement.objects.filter(team=evaluation.team).count() == 3
    again = make_evaluation(
        team=evaluation.team, scale="graded", strategy=1, keywords={"red shoes": 3}
    )
    rerun = controls.run_start(judge=panel, evaluation=again)
    requests = len(server.requests)
    runs.run_step(run_id=rerun.id)
    assert len(server.requests) == requests  # nothing asked
    reused = JudgeGrade.objects.filter(run=rerun).order_by("slot__snapshot_position").first()
    assert reused.cached and reused.agreement == 0.5
    assert [vote["grade"] for vote in reused.votes] == [3, 2]


def test_a_change_of_members_is_a_new_judgement_not_a_cache_hit(server, evaluation):
    gpt = member(evaluation, server, "GPT", "gpt-test")
    claude = member(evaluation, server, "Claude", "claude-test")
    gemini = member(evaluation, server, "Gemini", "gemini-test")
    panel = panel_create(
        team=evaluation.team, name="Pair", members=[gpt.id, claude.id], rule="median"
    )
    from apps.judges.asking import model_identity

    before = model_identity(panel)
    panel = panel_update(panel=panel, members=[gpt.id, gemini.id])
    assert model_identity(panel) != before
    assert panel.model_name == "panel (median): gpt-test, gemini-test"


def test_a_sampled_judge_asks_n_times_and_keeps_the_grade_given_most_often(server, evaluation):
    judge = member(evaluation, server, "GPT x3", "gpt-test", temperature=0.8, samples=3)
    rounds = itertools.cycle([[3, 0, 1], [3, 1, 1], [2, 0, 1]])

    def respond(seen):
        assert seen.body["temperature"] == 0.8
        grades = next(rounds)
        judgements = [{"id": f"r{n}", "grade": g, "reason": ""} for n, g in enumerate(grades, 1)]
        return Reply.openai(json.dumps({"judgements": judgements}), tokens=(1000, 0))

    server.respond_with(respond)
    run = controls.run_start(judge=judge, evaluation=evaluation)
    runs.run_step(run_id=run.id)
    assert graded(evaluation, judge) == [3, 0, 1]
    agreements = list(
        JudgeGrade.objects.filter(run=run)
        .order_by("slot__snapshot_position")
        .values_list("agreement", flat=True)
    )
    assert agreements == pytest.approx([2 / 3, 2 / 3, 1.0])
    run.refresh_from_db()
    assert run.calls == 3 and len(server.requests) == 3


def test_a_call_budget_counts_each_sample(server, evaluation, settings):
    judge = member(
        evaluation,
        server,
        "GPT x3",
        "gpt-test",
        temperature=0.8,
        samples=3,
        budget_calls=5,
        results_per_call=2,
    )
    server.respond_with(grades_by_model({"gpt-test": [1, 1]}))
    run = controls.run_start(judge=judge, evaluation=evaluation)
    assert runs.run_step(run_id=run.id) == runs.GO
    step = runs.run_step(run_id=run.id)
    assert step.action == "stop"
    assert step.why == "the budget of 5 calls is reached: the next ask makes 3 calls, 2 are left"
    run.refresh_from_db()
    assert run.status == RunStatus.BUDGET_REACHED and run.calls == 3


def test_samples_need_a_temperature_above_zero(server, evaluation):
    with pytest.raises(InvalidInput) as refused:
        member(evaluation, server, "GPT x3", "gpt-test", samples=3)
    assert "samples: asking more than once needs a temperature above 0" in refused.value.problems[0]
    judge = member(evaluation, server, "GPT", "gpt-test", temperature=0.5)
    with pytest.raises(InvalidInput):
        judge_update(judge=judge, temperature=0, samples=4)


def test_a_panel_is_checked_member_by_member(server, evaluation):
    gpt = member(evaluation, server, "GPT", "gpt-test")
    pair = panel_create(
        team=evaluation.team,
        name="Pair",
        members=[gpt.id, member(evaluation, server, "C", "c").id],
        rule="median",
    )
    with pytest.raises(InvalidInput) as refused:
        panel_create(
            team=evaluation.team,
            name="Bad",
            members=[gpt.id, gpt.id, pair.id, 999999],
            rule="vote",
            api_key="x",
        )
    problems = refused.value.problems
    assert "members: GPT is given twice" in problems
    assert "members: Pair is a panel; a member is a judge of one model" in problems
    assert "members: the team has no judge '999999'" in problems
    assert "rule: one of median, majority, fitted" in problems
    assert any(p.startswith("api_key: not a setting of a panel") for p in problems)
    with pytest.raises(InvalidInput) as alone:
        panel_create(team=evaluation.team, name="Alone", members=[gpt.id], rule="median")
    assert alone.value.problems == ["members: from 2 to 5 judges, got 1"]
    with pytest.raises(InvalidState):
        judge_delete(judge=gpt)  # it sits on Pair


def test_a_member_changing_its_model_renames_its_panels_judgements(server, evaluation):
    gpt, claude, panel = pair(evaluation, server, "median")
    judge_update(judge=claude, model_name="claude-next")
    panel.refresh_from_db()
    assert panel.model_name == "panel (median): gpt-test, claude-next"


def test_a_fitted_panel_grades_only_once_its_weights_are_fitted(server, evaluation):
    gpt, claude, panel = pair(evaluation, server, "fitted")
    with pytest.raises(InvalidInput) as refused:
        controls.run_assign(judge=panel, evaluation=evaluation)
    assert "weights are not fitted yet" in refused.value.problems[0]
    panel.panel_fit = {"weights": {str(gpt.id): 0.8, str(claude.id): 0.2}}
    panel.save()
    server.respond_with(grades_by_model({"gpt-test": [3, 0, 1], "claude-test": [0, 0, 3]}))
    run = controls.run_assign(judge=panel, evaluation=evaluation)
    runs.run_step(run_id=run.id)
    # 0.8x3 + 0.2x0 = 2.4 -> 2; 0 -> 0; 0.8x1 + 0.2x3 = 1.4 -> 1
    assert graded(evaluation, panel) == [2, 0, 1]


def test_a_panel_grades_now_only(server, evaluation):
    gpt, claude, panel = pair(evaluation, server, "median")
    with pytest.raises(InvalidInput) as refused:
        controls.run_assign(judge=panel, evaluation=evaluation, urgent=False)
    assert refused.value.problems[0].startswith(
        "urgent: a panel, or a judge that asks more than once"
    )


def test_a_panel_whose_member_samples_asks_each_sample_and_counts_every_call(server, evaluation):
    sampled = member(evaluation, server, "GPT x3", "gpt-test", temperature=0.7, samples=3)
    claude = member(evaluation, server, "Claude", "claude-test")
    panel = panel_create(
        team=evaluation.team, name="Mixed", members=[sampled.id, claude.id], rule="median"
    )
    server.respond_with(grades_by_model({"gpt-test": [3, 0, 1], "claude-test": [1, 0, 1]}))
    run = controls.run_start(judge=panel, evaluation=evaluation)
    assert runs.run_step(run_id=run.id) == runs.GO
    assert graded(evaluation, panel) == [1, 0, 1]  # the lower of 3 and 1, 0, 1
    run.refresh_from_db()
    assert run.calls == 4 and len(server.requests) == 4  # three samples and Claude
