"""Chains: a cheap judge grades every result; the unsure, the disputed and an audit sample
go on to a stronger judge or to people, whose grade becomes the result's value (the
metric engine agrees), the first kept beside it; escalations have a budget; the page
and the summary say what it saved."""

import json
import re

import pytest

from apps import engine
from apps.core.errors import InvalidInput, InvalidState
from apps.evaluations.models import FeedbackSlot
from apps.judges import chains, controls, runs
from apps.judges.models import ChainStep, JudgeGrade, JudgeRun, StepStatus
from apps.judges.services import judge_create
from apps.judging.judgements import Giver, slot_judge
from apps.scoring.models import KeywordMetric
from apps.scoring.services import recompute_evaluation
from tests.factories import client_for, make_evaluation, make_team

from .fake_provider import Reply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers_allowed")]

KEYWORDS = {"red shoes": 4, "blue hat": 4}


def by_model(rules):
    """A server where each model grades by its rule(result number) -> (grade, confidence)."""

    def respond(seen) -> Reply:
        rule = rules[seen.body["model"]]
        user = seen.body["messages"][-1]["content"]
        shown = json.loads(re.search(r"RESULTS BEGIN\n(.*)\nRESULTS END", user, re.S).group(1))
        judgements = []
        for result in shown["results"]:
            grade, confidence = rule(int(result["title"].split()[-1]))
            judgements.append(
                {"id": result["id"], "grade": grade, "confidence": confidence, "reason": "r"}
            )
        return Reply.openai(json.dumps({"judgements": judgements}), tokens=(1000, 100))

    return respond


def judges(team, server):
    def make(name, price):
        return judge_create(
            team=team,
            name=name,
            protocol="openai",
            base_url=server.openai_url,
            model_name=name,
            price_input_per_million=price,
        )

    return make("cheap", "0.10"), make("second", "0.10"), make("strong", "5.00")


def run_the_first_judge(evaluation, judge):
    run = JudgeRun.objects.get(judge=judge, evaluation=evaluation)
    while runs.run_step(run_id=run.id) == runs.GO:
        pass


def advance(chain):
    while chains.chain_advance(chain_id=chain.id) == "more":
        pass


def values(evaluation):
    return {
        (slot.keyword.text, slot.snapshot.position): slot.grade
        for slot in FeedbackSlot.objects.filter(evaluation=evaluation).select_related(
            "keyword", "snapshot"
        )
    }


def test_unsure_results_go_to_the_stronger_judge_whose_grade_is_the_value_the_metrics_use(
    server,
):
    evaluation = make_evaluation(scale="graded", strategy=1, keywords=KEYWORDS)
    cheap, _, strong = judges(evaluation.team, server)
    # The cheap judge is unsure of results 3 and 4; the strong one grades 3 everywhere.
    server.respond_with(
        by_model({"cheap": lambda n: (1, 0.9 if n < 3 else 0.2), "strong": lambda n: (3, 1.0)})
    )
    chain = controls.chain_start(
        evaluation=evaluation,
        first=cheap.id,
        escalate_to=strong.id,
        confidence_below="0.5",
        audit_percent=0,
    )
    run_the_first_judge(evaluation, cheap)
    advance(chain)

    assert values(evaluation) == {
        (keyword, position): (1 if position < 3 else 3)
        for keyword in KEYWORDS
        for position in range(1, 5)
    }
    steps = ChainStep.objects.filter(chain=chain)
    assert steps.filter(status=StepStatus.KEPT).count() == 4
    escalated = steps.filter(status=StepStatus.ESCALATED)
    assert escalated.count() == 4 and set(escalated.values_list("why", flat=True)) == {
        "low_confidence"
    }
    assert set(escalated.values_list("first_grade", "next_grade")) == {(1, 3)}
    # The grade names the strong judge as its maker now.
    slot = escalated.first().slot
    assert slot.grader_id == strong.user_id
    assert JudgeGrade.objects.get(slot=slot).model_name == "strong"

    # The metric engine, fed the last link's grades, gives the evaluation's metrics.
    recompute_evaluation(evaluation_id=evaluation.id)
    for keyword in KEYWORDS:
        grades = [[1], [1], [3], [3]]
        expected = engine.score_keyword(
            grades, scale="graded", metrics=[("ndcg", 10)], profile=evaluation.profile
        ).metrics[("ndcg", 10)]
        stored = KeywordMetric.objects.get(keyword__text=keyword, metric="ndcg", k=10).value
        assert stored == pytest.approx(expected)

    summary = chains.chain_summary(chain)
    assert (summary.looked_at, summary.people_asked, summary.settled_without_people) == (8, 0, 8)
    assert summary.by_reason == {"low_confidence": 4}
    assert summary.next_judge_alone is not None and summary.next_judge_alone > summary.spent


def test_disputed_results_go_to_people_and_no_judge_takes_them_again(server, evaluator, team_a):
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=1, keywords=KEYWORDS)
    cheap, second, strong = judges(team_a, server)
    # The second opinion disagrees on result 2 only.
    server.respond_with(
        by_model(
            {
                "cheap": lambda n: (2, 0.9),
                "second": lambda n: (2 if n != 2 else 0, 0.9),
                "strong": lambda n: (3, 0.9),
            }
        )
    )
    chain = controls.chain_start(
        evaluation=evaluation, first=cheap.id, second_opinion=second.id, audit_percent=0
    )
    run_the_first_judge(evaluation, cheap)
    advance(chain)

    waiting = ChainStep.objects.filter(chain=chain, status=StepStatus.AWAITING_PEOPLE)
    assert waiting.count() == 2 and set(waiting.values_list("why", flat=True)) == {"disagreement"}
    assert set(waiting.values_list("first_grade", "second_grade")) == {(2, 0)}
    slot = waiting.first().slot
    assert (slot.grade, slot.grader_id) == (None, None)  # back in the people's queue
    # Another judge, assigned now, does not take it.
    controls.run_start(judge=strong, evaluation=evaluation)
    run_the_first_judge(evaluation, strong)
    slot.refresh_from_db()
    assert slot.grader_id is None

    # A person grades it from the queue: their grade is the value.
    grader = client_for(evaluator)
    page = grader.get("/feedback/")
    assert page.status_code == 200
    held = FeedbackSlot.objects.filter(evaluation=evaluation, grader=evaluator).first()
    slot_judge(slot_id=held.id, giver=Giver.grader(evaluator), grade=1, team_id=team_a.id)
    summary = chains.chain_summary(chain)
    assert (summary.people_asked, summary.people_graded) == (2, 1)
    assert summary.settled_without_people == 6


def test_the_audit_sample_goes_on_within_the_escalation_budget(server):
    evaluation = make_evaluation(scale="graded", strategy=1, keywords=KEYWORDS)
    cheap, _, strong = judges(evaluation.team, server)
    server.respond_with(by_model({"cheap": lambda n: (2, 1.0), "strong": lambda n: (2, 1.0)}))
    chain = controls.chain_start(
        evaluation=evaluation,
        first=cheap.id,
        escalate_to=strong.id,
        audit_percent=100,
        escalation_budget=3,
    )
    run_the_first_judge(evaluation, cheap)
    advance(chain)

    steps = ChainStep.objects.filter(chain=chain)
    assert steps.filter(status=StepStatus.ESCALATED, why="audit").count() == 3
    assert steps.filter(status=StepStatus.OVER_BUDGET).count() == 5
    audit = chains.chain_summary(chain).audit
    assert audit is not None and audit.exact.value == 1.0  # the cheap judge was right


def test_the_audit_sample_is_fixed_by_the_seed_and_near_its_share():
    drawn = [chains.in_audit_sample(7, snapshot, 10) for snapshot in range(10_000)]
    assert drawn == [chains.in_audit_sample(7, snapshot, 10) for snapshot in range(10_000)]
    assert 900 < sum(drawn) < 1100
    assert not any(chains.in_audit_sample(7, s, 0) for s in range(1000))


def test_a_chain_refuses_what_it_cannot_do_naming_the_field(server):
    evaluation = make_evaluation(scale="graded", strategy=3, keywords={"x": 1})
    cheap, second, strong = judges(evaluation.team, server)
    theirs = judge_create(
        team=make_team("Other"),
        name="t",
        protocol="openai",
        base_url=server.openai_url,
        model_name="t",
    )
    with pytest.raises(InvalidInput) as refused:
        controls.chain_start(
            evaluation=evaluation,
            first=cheap.id,
            second_opinion=theirs.id,
            escalate_to=cheap.id,
            confidence_below="2",
            audit_percent="101",
        )
    assert refused.value.problems == [
        f"second_opinion: the team has no judge '{theirs.id}'",
        "evaluation: a chain keeps one grade per result, the last link's; this evaluation "
        "asks for 3 grades per result",
        "escalate_to: each link of a chain is a different judge",
        "confidence_below: a number from 0 to 1",
        "audit_percent: a whole number from 0 to 100",
    ]


def test_a_chain_s_later_link_never_grades_on_its_own(server):
    evaluation = make_evaluation(scale="graded", strategy=1, keywords={"x": 1})
    cheap, _, strong = judges(evaluation.team, server)
    controls.chain_start(evaluation=evaluation, first=cheap.id, escalate_to=strong.id)
    with pytest.raises(InvalidState, match="asked by the chain"):
        controls.run_resume(run=JudgeRun.objects.get(judge=strong, evaluation=evaluation))
    with pytest.raises(InvalidInput, match="it already has a chain"):
        controls.chain_start(evaluation=evaluation, first=cheap.id)


def test_a_lead_sets_up_a_chain_from_the_evaluation_page_and_reads_what_it_saved(
    server, owner, team_a
):
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=1, keywords=KEYWORDS)
    cheap, _, strong = judges(team_a, server)
    server.respond_with(
        by_model({"cheap": lambda n: (1, 0.9 if n < 4 else 0.1), "strong": lambda n: (3, 1.0)})
    )
    lead = client_for(owner)
    panel_url = f"/evaluations/{evaluation.id}/judges/panel/"
    assert (
        'data-testid="chain-form"' in lead.get(panel_url, HTTP_HX_REQUEST="true").content.decode()
    )
    refused = lead.post(
        f"/evaluations/{evaluation.id}/judges/chain/",
        {"first": cheap.id, "escalate_to": cheap.id, "audit_percent": "0"},
        follow=True,
    )
    assert "each link of a chain is a different judge" in refused.content.decode()

    lead.post(
        f"/evaluations/{evaluation.id}/judges/chain/",
        {
            "first": cheap.id,
            "escalate_to": strong.id,
            "confidence_below": "0.5",
            "audit_percent": "0",
        },
    )
    chain = evaluation.judge_chain
    run_the_first_judge(evaluation, cheap)
    advance(chain)

    panel = lead.get(panel_url, HTTP_HX_REQUEST="true").content.decode()
    assert "The last link's grade is the result's value." in panel
    assert "8 of 8" in panel and "2: low confidence" in panel
    assert "strong alone on every result: about" in panel
    assert "asked by the chain" in panel  # the strong judge's run has no controls


def test_a_seed_that_is_not_a_whole_number_in_range_is_refused(server):
    evaluation = make_evaluation(scale="graded", strategy=1, keywords={"x": 1})
    cheap, _, _ = judges(evaluation.team, server)
    for seed in ("abc", "-1", str(2**40)):
        with pytest.raises(InvalidInput, match=r"seed: a whole number from 0 to"):
            controls.chain_start(evaluation=evaluation, first=cheap.id, seed=seed)
