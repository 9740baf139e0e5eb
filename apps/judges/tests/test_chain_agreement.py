"""A chain escalates on agreement as it does on confidence: a result whose first judge is
a panel whose members split on it, or a sampled judge whose samples did, goes on to the
next link (people or a stronger judge) when fewer than `agreement_below` of them gave
its grade; either threshold sends a result on, the escalation budget still caps them,
and a chain's later links may be panels or sampled judges too."""

import json
import re
import threading
from collections import Counter

import pytest

from apps.core.errors import InvalidInput
from apps.judges import chains, controls
from apps.judges.models import ChainStep, JudgeChain, JudgeGrade, JudgeRun, StepStatus
from apps.judges.panels import panel_create
from apps.judges.services import judge_create
from tests.factories import client_for, make_evaluation

from .fake_provider import Reply
from .test_chains import KEYWORDS, advance, run_the_first_judge, values

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers_allowed")]


def in_turn(rules):
    """A server where each model grades by its rule(result number, turn) -> (grade,
    confidence), `turn` counting how often that model was asked the same about that
    result before: a sampled judge's samples are the same request, and answer in turn."""
    asked: Counter[tuple[str, str, str]] = Counter()
    lock = threading.Lock()  # the samples of one ask arrive at once

    def respond(seen) -> Reply:
        model = seen.body["model"]
        user = seen.body["messages"][-1]["content"]
        shown = json.loads(re.search(r"RESULTS BEGIN\n(.*)\nRESULTS END", user, re.S).group(1))
        judgements = []
        for result in shown["results"]:
            # A result's id is the call's own ("r1"): the same request is what repeats.
            same = (model, user, result["id"])
            with lock:
                turn = asked[same]
                asked[same] += 1
            grade, confidence = rules[model](int(result["title"].split()[-1]), turn)
            judgements.append(
                {"id": result["id"], "grade": grade, "confidence": confidence, "reason": model}
            )
        return Reply.openai(json.dumps({"judgements": judgements}), tokens=(1000, 100))

    return respond


def a_judge(evaluation, server, name, **settings):
    return judge_create(
        team=evaluation.team,
        name=name,
        protocol="openai",
        base_url=server.openai_url,
        model_name=name,
        price_input_per_million="1.00",
        **settings,
    )


def a_pair(evaluation, server, name="Pair"):
    """A median panel of two judges, gpt and claude."""
    members = [a_judge(evaluation, server, f"{name} gpt"), a_judge(evaluation, server, f"{name} c")]
    return panel_create(
        team=evaluation.team, name=name, members=[m.id for m in members], rule="median"
    )


def sampled(evaluation, server, name="sampler"):
    return a_judge(evaluation, server, name, temperature=0.7, samples=3)


def steps_of(chain):
    """Each result's step: (keyword, position) -> (status, why, first grade, agreement)."""
    return {
        (step.slot.keyword.text, step.slot.snapshot_position): (
            step.status,
            step.why,
            step.first_grade,
            step.first_agreement,
        )
        for step in ChainStep.objects.filter(chain=chain).select_related("slot__keyword")
    }


# Claude gives 0 where GPT gives 2 on results 2 and 4 of each keyword: the median of
# two is the lower grade, agreed by one member in two.
SPLIT_ON_2_AND_4 = {
    "Pair gpt": lambda n, turn: (2, 0.9),
    "Pair c": lambda n, turn: (0 if n in (2, 4) else 2, 0.9),
}


def test_a_panels_split_results_go_to_people_and_the_agreed_ones_are_kept(server, owner, team_a):
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=1, keywords=KEYWORDS)
    panel = a_pair(evaluation, server)
    server.respond_with(in_turn(SPLIT_ON_2_AND_4))
    lead = client_for(owner)
    lead.post(
        f"/evaluations/{evaluation.id}/judges/chain/",
        {"first": panel.id, "agreement_below": "1", "audit_percent": "0"},
    )
    chain = JudgeChain.objects.get(evaluation=evaluation)
    assert chain.agreement_below == 1.0 and chain.confidence_below is None
    run_the_first_judge(evaluation, panel)
    advance(chain)

    split, agreed = ("awaiting_people", "panel_split", 0, 0.5), ("kept", "", 2, 1.0)
    assert steps_of(chain) == {
        (keyword, n): split if n in (2, 4) else agreed for keyword in KEYWORDS for n in (1, 2, 3, 4)
    }
    # The split results are back in the people's queue, the first grade kept in the step.
    assert values(evaluation) == {
        (keyword, n): None if n in (2, 4) else 2 for keyword in KEYWORDS for n in (1, 2, 3, 4)
    }
    people = ChainStep.objects.filter(chain=chain, status=StepStatus.AWAITING_PEOPLE)
    assert not JudgeGrade.objects.filter(slot__in=people.values("slot")).exists()
    # Two keywords, one ask each, each ask one call per member.
    assert JudgeRun.objects.get(judge=panel, evaluation=evaluation).calls == 4

    summary = chains.chain_summary(chain)
    assert summary.by_reason == {"panel_split": 4}
    assert (summary.people_asked, summary.settled_without_people) == (4, 4)
    page = lead.get(f"/evaluations/{evaluation.id}/judges/panel/", HTTP_HX_REQUEST="true")
    shown = page.content.decode()
    assert "the share of the first judge's panel members that agree is below 1.0" in shown
    assert "4: panel members disagree" in shown


def test_a_result_the_samples_split_on_goes_to_the_next_judge_whose_grade_is_its_value(server):
    evaluation = make_evaluation(scale="graded", strategy=1, keywords={"red shoes": 4})
    sampler, strong = sampled(evaluation, server), a_judge(evaluation, server, "strong")
    # Result 3 is sampled 1, 1, 3: grade 1, agreed by 2 samples in 3; the others 2, 2, 2.
    server.respond_with(
        in_turn(
            {
                "sampler": lambda n, turn: ((1, 1, 3)[turn] if n == 3 else 2, 0.9),
                "strong": lambda n, turn: (3, 1.0),
            }
        )
    )
    chain = controls.chain_start(
        evaluation=evaluation,
        first=sampler.id,
        escalate_to=strong.id,
        agreement_below="0.9",
        audit_percent=0,
    )
    run_the_first_judge(evaluation, sampler)
    advance(chain)

    assert steps_of(chain) == {
        ("red shoes", 1): ("kept", "", 2, 1.0),
        ("red shoes", 2): ("kept", "", 2, 1.0),
        ("red shoes", 3): ("escalated", "samples_split", 1, pytest.approx(2 / 3)),
        ("red shoes", 4): ("kept", "", 2, 1.0),
    }
    assert values(evaluation) == {("red shoes", n): 3 if n == 3 else 2 for n in (1, 2, 3, 4)}
    step = ChainStep.objects.get(chain=chain, status=StepStatus.ESCALATED)
    assert step.next_grade == 3
    # The grade is the strong judge's now, with none of the samples' agreement left on it.
    grade = JudgeGrade.objects.get(slot=step.slot)
    assert (grade.model_name, grade.agreement, grade.votes) == ("strong", None, None)
    assert step.slot.grader_id == strong.user_id
    # One ask of three samples; one call to the strong judge, about one result.
    assert JudgeRun.objects.get(judge=sampler, evaluation=evaluation).calls == 3
    assert JudgeRun.objects.get(judge=strong, evaluation=evaluation).calls == 1
    assert chains.chain_summary(chain).by_reason == {"samples_split": 1}


def test_low_confidence_or_split_samples_either_send_a_result_on(server):
    evaluation = make_evaluation(scale="graded", strategy=1, keywords={"red shoes": 4})
    sampler, strong = sampled(evaluation, server), a_judge(evaluation, server, "strong")
    # 1: sure and agreed; 2: unsure, agreed; 3: sure, split; 4: unsure and split.
    unsure, split = (2, 4), (3, 4)
    server.respond_with(
        in_turn(
            {
                "sampler": lambda n, turn: (
                    (1, 1, 3)[turn] if n in split else 2,
                    0.2 if n in unsure else 0.9,
                ),
                "strong": lambda n, turn: (3, 1.0),
            }
        )
    )
    chain = controls.chain_start(
        evaluation=evaluation,
        first=sampler.id,
        escalate_to=strong.id,
        confidence_below=0.5,
        agreement_below=0.9,
        audit_percent=0,
    )
    run_the_first_judge(evaluation, sampler)
    advance(chain)

    whys = {
        position: (status, why) for (_, position), (status, why, _, _) in steps_of(chain).items()
    }
    # A result both unsure and split is counted once, for its confidence (checked first).
    assert whys == {
        1: ("kept", ""),
        2: ("escalated", "low_confidence"),
        3: ("escalated", "samples_split"),
        4: ("escalated", "low_confidence"),
    }
    assert values(evaluation) == {("red shoes", 1): 2} | {("red shoes", n): 3 for n in (2, 3, 4)}
    assert chains.chain_summary(chain).by_reason == {"low_confidence": 2, "samples_split": 1}


def test_split_results_go_on_within_the_escalation_budget(server):
    evaluation = make_evaluation(scale="graded", strategy=1, keywords=KEYWORDS)
    panel = a_pair(evaluation, server)
    server.respond_with(in_turn(SPLIT_ON_2_AND_4))
    chain = controls.chain_start(
        evaluation=evaluation,
        first=panel.id,
        agreement_below=1,
        audit_percent=0,
        escalation_budget=3,
    )
    run_the_first_judge(evaluation, panel)
    advance(chain)

    # Four results are split; the first three in the keywords' order go to people.
    steps = steps_of(chain)
    assert [place for place, step in steps.items() if step[0] == "awaiting_people"] == [
        ("red shoes", 2),
        ("red shoes", 4),
        ("blue hat", 2),
    ]
    assert steps[("blue hat", 4)] == ("over_budget", "panel_split", 0, 0.5)
    over = ChainStep.objects.get(chain=chain, status=StepStatus.OVER_BUDGET)
    assert over.note == "the escalation budget is spent"
    assert values(evaluation)[("blue hat", 4)] == 0  # it keeps the panel's grade
    summary = chains.chain_summary(chain)
    assert summary.by_reason == {"panel_split": 4}
    assert (summary.people_asked, summary.by_status["over_budget"]) == (3, 1)


def test_a_chains_next_judge_may_be_a_panel_each_member_a_call(server):
    evaluation = make_evaluation(scale="graded", strategy=1, keywords={"red shoes": 4})
    cheap, panel = a_judge(evaluation, server, "cheap"), a_pair(evaluation, server)
    # The cheap judge is unsure of results 3 and 4; the panel's members give 3 and 1.
    server.respond_with(
        in_turn(
            {
                "cheap": lambda n, turn: (1, 0.9 if n < 3 else 0.2),
                "Pair gpt": lambda n, turn: (3, 0.9),
                "Pair c": lambda n, turn: (1, 0.9),
            }
        )
    )
    chain = controls.chain_start(
        evaluation=evaluation,
        first=cheap.id,
        escalate_to=panel.id,
        confidence_below=0.5,
        audit_percent=0,
    )
    run_the_first_judge(evaluation, cheap)
    advance(chain)

    assert values(evaluation) == {("red shoes", n): 1 for n in (1, 2, 3, 4)}
    escalated = ChainStep.objects.filter(chain=chain, status=StepStatus.ESCALATED)
    assert escalated.count() == 2 and set(escalated.values_list("next_grade", flat=True)) == {1}
    grade = JudgeGrade.objects.get(slot=escalated.first().slot)
    # The median of 3 and 1 is 1, agreed by one member in two; each vote is kept.
    assert grade.agreement == 0.5 and sorted(v["grade"] for v in grade.votes) == [1, 3]
    # One ask about both results: a call per member.
    assert JudgeRun.objects.get(judge=panel, evaluation=evaluation).calls == 2


def test_agreement_below_is_a_share_and_needs_a_panel_or_samples(server, owner, team_a):
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=1, keywords={"x": 1})
    cheap = a_judge(evaluation, server, "cheap")
    warm = a_judge(evaluation, server, "warm", temperature=0.7)
    panel = a_pair(evaluation, server)
    for given in ("2", "-0.1", "abc", True):
        with pytest.raises(InvalidInput) as refused:
            controls.chain_start(evaluation=evaluation, first=panel.id, agreement_below=given)
        assert refused.value.problems == ["agreement_below: a number from 0 to 1"]
    for one_answer in (cheap, warm):
        with pytest.raises(InvalidInput) as refused:
            controls.chain_start(evaluation=evaluation, first=one_answer.id, agreement_below=0.5)
        assert refused.value.problems == [
            f"agreement_below: {one_answer.name} gives one grade per result; agreement "
            "needs a panel or samples"
        ]
    # The page says so too, and sets nothing up.
    refused_page = client_for(owner).post(
        f"/evaluations/{evaluation.id}/judges/chain/",
        {"first": cheap.id, "agreement_below": "0.5", "audit_percent": "0"},
        follow=True,
    )
    assert "cheap gives one grade per result" in refused_page.content.decode()
    assert not JudgeChain.objects.exists() and not JudgeRun.objects.exists()
    # Without it, a judge of one answer is a first judge as before.
    chain = controls.chain_start(evaluation=evaluation, first=cheap.id, agreement_below="")
    assert chain.agreement_below is None
