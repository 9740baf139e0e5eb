"""Calibrating a judge: a gold set drawn from what people graded and frozen; the judge
grades it through a real local server; its agreement with people, people's own as the
ceiling, whether it would change a decision; the cache, retries and failures; a stale
mark after a prompt edit; and the team's gate on live grading."""

import json
import re

import pytest

from apps.core.errors import InvalidInput, InvalidState
from apps.evaluations.models import FeedbackSlot
from apps.judges import calibration, controls, prompts
from apps.judges.gold_sets import gold_set_create
from apps.judges.models import (
    CalibrationGrade,
    CalibrationStatus,
    GoldItem,
    JudgeCall,
)
from apps.judges.services import judge_create
from apps.judging.judgements import Giver, slot_judge
from tests.factories import make_evaluation, make_team, slots_of

from .fake_provider import Reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers_allowed")]

KEYWORDS = {f"keyword {n}": 4 for n in range(8)}


def PEOPLE(keyword: int, number: int) -> int:  # noqa: N802 (a rule, named as a constant)
    """People's grade of result `number` of keyword `keyword`: 0-3, shifted by keyword."""
    return (number - 1 + keyword) % 4


def people_grade(evaluation, grade_of) -> None:
    """Three people grade every result: `grade_of(keyword number, position)` each."""
    for slot in slots_of(evaluation):
        grader = ("ann", "bob", "cy")[slot.index]
        grade = grade_of(int(slot.keyword.text.split()[-1]), slot.snapshot.position)
        slot_judge(slot_id=slot.id, giver=Giver.recorded(None, grader), grade=grade)


@pytest.fixture
def graded_pair():
    """A baseline and a candidate of the same eight keywords, both graded by three people
    alike: result N of keyword K gets PEOPLE(K, N); the candidate's lists hold the same
    documents (so the same grades)."""
    baseline = make_evaluation(scale="graded", strategy=3, keywords=KEYWORDS)
    candidate = make_evaluation(team=baseline.team, scale="graded", strategy=3, keywords=KEYWORDS)
    for evaluation in (baseline, candidate):
        people_grade(evaluation, PEOPLE)
    return baseline, candidate


def judge_for(team, server, **given):
    return judge_create(
        team=team,
        name=given.pop("name", "GPT"),
        protocol="openai",
        base_url=server.openai_url,
        model_name="gpt-test",
        api_key="not-a-real-key-calibration",
        **given,
    )


def grades_by_title(rule):
    """A model that grades every result it is shown by `rule(keyword number, result
    number)`, read from the keyword and the result's title ("Result N")."""

    def respond(seen) -> Reply:
        user = seen.body["messages"][-1]["content"]
        keyword = int(re.search(r"Keyword: keyword (\d+)", user).group(1))
        shown = json.loads(re.search(r"RESULTS BEGIN\n(.*)\nRESULTS END", user, re.S).group(1))
        judgements = [
            {
                "id": result["id"],
                "grade": rule(keyword, int(result["title"].split()[-1])),
                "reason": "as the rule says",
            }
            for result in shown["results"]
        ]
        return Reply.openai(json.dumps({"judgements": judgements}), tokens=(500, 50))

    return respond


# --- Gold sets -----------------------------------------------------------------------------


def test_a_gold_set_is_a_seeded_sample_of_the_keywords_people_graded_frozen_with_their_grades(
    graded_pair,
):
    baseline, candidate = graded_pair
    gold = gold_set_create(
        team=baseline.team,
        name="Shop gold",
        baseline=baseline.id,
        candidate=candidate.id,
        keywords=5,
        seed=42,
    )
    again = gold_set_create(
        team=baseline.team,
        name="Same draw",
        baseline=baseline.id,
        candidate=candidate.id,
        keywords=5,
        seed=42,
    )
    keywords = sorted(set(gold.items.values_list("keyword", flat=True)))
    assert len(keywords) == 5
    assert keywords == sorted(set(again.items.values_list("keyword", flat=True)))
    item = gold.items.get(keyword=keywords[0], doc_id=f"{keywords[0]}-doc-3")
    grade = PEOPLE(int(keywords[0].split()[-1]), 3)
    assert item.people_grades == [grade] * 3
    assert (item.baseline_position, item.candidate_position) == (3, 3)
    assert gold.metrics == [["ndcg", 10], ["precision", 5]]
    # Frozen: people changing their minds later changes nothing in it.
    slot = next(s for s in slots_of(baseline, keywords[0]) if s.snapshot.position == 3)
    slot_judge(slot_id=slot.id, giver=Giver.lead(), grade=(grade + 1) % 4)
    assert GoldItem.objects.get(id=item.id).people_grades == [grade] * 3


def test_a_gold_set_refuses_what_it_cannot_draw_naming_the_field(graded_pair):
    baseline, candidate = graded_pair
    binary = make_evaluation(team=baseline.team, scale="binary", keywords={"x": 1})
    theirs = make_evaluation(team=make_team("Other"), keywords={"x": 1})
    with pytest.raises(InvalidInput) as refused:
        gold_set_create(team=baseline.team, name="", baseline=theirs.id, candidate=None, keywords=1)
    assert refused.value.problems == [
        "name: required",
        "keywords: a whole number from 2 to 500",
        f"baseline: the team has no evaluation '{theirs.id}'",
    ]
    with pytest.raises(InvalidInput) as scales:
        gold_set_create(team=baseline.team, name="g", baseline=baseline.id, candidate=binary.id)
    assert scales.value.problems[0].startswith("candidate: graded on Binary")
    ungraded = make_evaluation(team=baseline.team, keywords={"x": 2})
    with pytest.raises(InvalidInput) as nothing:
        gold_set_create(team=baseline.team, name="g", baseline=ungraded.id)
    assert nothing.value.problems == ["baseline: no keyword of it has people's grades yet"]


# --- Calibrating ---------------------------------------------------------------------------


def test_a_judge_grading_as_people_do_agrees_fully_and_changes_no_decision(server, graded_pair):
    baseline, candidate = graded_pair
    gold = gold_set_create(
        team=baseline.team, name="Gold", baseline=baseline.id, candidate=candidate.id, seed=1
    )
    judge = judge_for(baseline.team, server, results_per_call=3, calls_at_once=4)
    server.respond_with(grades_by_title(PEOPLE))
    slots_before = list(FeedbackSlot.objects.order_by("id").values_list("id", "grade", "grader"))

    run = calibration.calibration_create(gold_set=gold, judge=judge)
    calibration.calibration_execute(run_id=run.id)

    run.refresh_from_db()
    assert run.status == CalibrationStatus.FINISHED
    assert (run.graded, run.failed) == (32, 0)
    assert run.calls == 16  # 8 keywords x 4 results, 3 a call: 2 calls each
    assert run.alpha == pytest.approx(1.0)
    assert JudgeCall.objects.filter(calibration=run).count() == 16
    # Nothing written to any evaluation.
    assert list(FeedbackSlot.objects.order_by("id").values_list("id", "grade", "grader")) == (
        slots_before
    )
    report = calibration.gold_report(gold, samples=200)
    assert (report.keywords, report.items) == (8, 32)
    assert report.ceiling.alpha.value == pytest.approx(1.0)
    [figures] = [r.figures for r in report.runs]
    assert figures.exact.value == 1.0 and figures.ranking_tau.value == pytest.approx(1.0)
    assert [d.metric for d in figures.decisions] == ["ndcg@10", "precision@5"]
    assert not figures.changes_a_decision


def test_a_judge_off_by_one_agrees_less_and_within_one_fully(server, graded_pair):
    baseline, _ = graded_pair
    gold = gold_set_create(team=baseline.team, name="Gold", baseline=baseline.id, seed=3)
    judge = judge_for(baseline.team, server)
    # One grade above people's, 3 at most.
    server.respond_with(
        grades_by_title(lambda keyword, number: min(3, PEOPLE(keyword, number) + 1))
    )

    run = calibration.calibration_create(gold_set=gold, judge=judge)
    calibration.calibration_execute(run_id=run.id)

    [report] = calibration.gold_report(gold, samples=200).runs
    figures = report.figures
    assert figures.exact.value == pytest.approx(0.25)  # only where people gave 3
    assert figures.within_one.value == 1.0
    assert figures.alpha.value < 1.0
    assert figures.alpha.low <= figures.alpha.value <= figures.alpha.high
    # Rows: people's grade; columns: the judge's.
    assert figures.confusion == [[0, 8, 0, 0], [0, 0, 8, 0], [0, 0, 0, 8], [0, 0, 0, 8]]


def test_judgements_paid_for_once_come_from_the_cache_the_second_time(server, graded_pair):
    baseline, _ = graded_pair
    gold = gold_set_create(team=baseline.team, name="Gold", baseline=baseline.id, seed=3)
    judge = judge_for(baseline.team, server)
    server.respond_with(grades_by_title(PEOPLE))
    first = calibration.calibration_create(gold_set=gold, judge=judge)
    calibration.calibration_execute(run_id=first.id)
    calls_before = len(server.requests)

    second = calibration.calibration_create(gold_set=gold, judge=judge)
    calibration.calibration_execute(run_id=second.id)

    second.refresh_from_db()
    assert len(server.requests) == calls_before
    assert (second.graded, second.from_cache, second.calls) == (32, 32, 0)


def test_rate_limits_are_waited_out_and_outages_listed_with_why_then_retried(server, graded_pair):
    baseline, _ = graded_pair
    gold = gold_set_create(
        team=baseline.team, name="Gold", baseline=baseline.id, keywords=2, seed=5
    )
    judge = judge_for(baseline.team, server, results_per_call=4, calls_at_once=1)
    good = grades_by_title(PEOPLE)
    replies = iter(
        [Reply.error(429, "slow down", **{"Retry-After": "0"})]  # first call: waited out
        + [Reply.error(500, "down")] * 3  # second call: three tries, all failed
    )
    server.respond_with(lambda seen: next(replies, None) or good(seen))

    run = calibration.calibration_create(gold_set=gold, judge=judge)
    calibration.calibration_execute(run_id=run.id)

    run.refresh_from_db()
    assert (run.graded, run.failed, run.calls) == (4, 4, 5)
    failures = CalibrationGrade.objects.filter(run=run, grade__isnull=True)
    assert {f.failure.split(":")[0] for f in failures} == {"unavailable"}
    assert controls.calibration_retry(run=run) == 4
    calibration.calibration_execute(run_id=run.id)
    run.refresh_from_db()
    assert (run.status, run.graded, run.failed) == (CalibrationStatus.FINISHED, 8, 0)


def test_a_rejected_key_stops_the_calibration_with_the_reason(server, graded_pair):
    baseline, _ = graded_pair
    gold = gold_set_create(team=baseline.team, name="Gold", baseline=baseline.id, seed=5)
    judge = judge_for(baseline.team, server)
    server.script(Reply.error(401, "invalid api key"))
    run = calibration.calibration_create(gold_set=gold, judge=judge)
    calibration.calibration_execute(run_id=run.id)
    run.refresh_from_db()
    assert run.status == CalibrationStatus.STOPPED
    assert run.note.startswith("rejected")
    assert "not-a-real-key" not in run.note


def test_a_calibration_is_stale_once_the_judge_s_prompt_or_model_changed(server, graded_pair):
    baseline, _ = graded_pair
    gold = gold_set_create(team=baseline.team, name="Gold", baseline=baseline.id, seed=5)
    judge = judge_for(baseline.team, server)
    server.respond_with(grades_by_title(PEOPLE))
    calibration.calibration_execute(
        run_id=calibration.calibration_create(gold_set=gold, judge=judge).id
    )
    assert calibration.gold_report(gold, samples=0).runs[0].stale == ""

    prompt = prompts.prompt_create(team=baseline.team, name="Mine")
    judge.prompt = prompt
    judge.save()
    [report] = calibration.gold_report(gold, samples=0).runs
    assert report.stale == f"the judge's prompt is now prompt-{prompt.id}-v1"


# --- The team's gate -----------------------------------------------------------------------


def test_the_team_s_gate_lets_a_judge_grade_only_once_calibrated_well_enough(server, graded_pair):
    baseline, candidate = graded_pair
    judge = judge_for(baseline.team, server)
    calibration.gate_set(team=baseline.team, min_alpha="0.8")
    with pytest.raises(InvalidState, match="it has no calibration"):
        controls.run_start(judge=judge, evaluation=candidate)

    gold = gold_set_create(team=baseline.team, name="Gold", baseline=baseline.id, seed=5)
    server.respond_with(grades_by_title(lambda keyword, number: 3 - PEOPLE(keyword, number)))
    calibration.calibration_execute(
        run_id=calibration.calibration_create(gold_set=gold, judge=judge).id
    )
    with pytest.raises(InvalidState, match=r"its best is -"):
        controls.run_start(judge=judge, evaluation=candidate)

    server.respond_with(grades_by_title(PEOPLE))
    prompt = prompts.prompt_create(team=baseline.team, name="Better")
    judge.prompt = prompt
    judge.save()
    calibration.calibration_execute(
        run_id=calibration.calibration_create(gold_set=gold, judge=judge).id
    )
    run = controls.run_start(judge=judge, evaluation=candidate)
    assert run.prompt_version == f"prompt-{prompt.id}-v1"

    with pytest.raises(InvalidInput, match="min_alpha: a number from 0 to 1"):
        calibration.gate_set(team=baseline.team, min_alpha="1.5")
