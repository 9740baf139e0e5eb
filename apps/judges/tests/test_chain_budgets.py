"""A chain's later links spend within their own budgets, as a run does: each call to the
next judge or the second opinion is reserved on the link's run before it is sent, cut to
the results the budget can pay; a result the next judge's budget cannot pay keeps its
first grade, marked over budget, and one the second opinion's cannot pay is not asked
about, which its step says."""

import pytest

from apps.judges import chains, controls
from apps.judges.asking import most_spent
from apps.judges.models import ChainStep, JudgeChain, JudgeRun, StepStatus
from apps.judges.prompts import pinned_prompt
from apps.judges.services import judge_update
from tests.factories import make_evaluation

from .test_chains import KEYWORDS, advance, by_model, judges, run_the_first_judge, values

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers_allowed")]

UNSURE = {"cheap": lambda n: (1, 0.2), "second": lambda n: (1, 0.9), "strong": lambda n: (3, 1.0)}


def asked(server, model: str) -> list[int]:
    """How many results each call to `model` was about, in order."""
    return [
        len(
            seen.body["response_format"]["json_schema"]["schema"]["properties"]["judgements"][
                "items"
            ]["properties"]["id"]["enum"]
        )
        for seen in server.requests
        if seen.body["model"] == model
    ]


def chain_of(server, *, second: bool = False, **budgets):
    """Every result unsure for the first judge: each goes on to the strong judge, whose
    `budgets` are set (or the second opinion's, `second`)."""
    evaluation = make_evaluation(scale="graded", strategy=1, keywords=KEYWORDS)
    cheap, second_judge, strong = judges(evaluation.team, server)
    judge_update(judge=second_judge if second else strong, **budgets)
    server.respond_with(by_model(UNSURE))
    chain = controls.chain_start(
        evaluation=evaluation,
        first=cheap.id,
        second_opinion=second_judge.id if second else None,
        escalate_to=strong.id,
        confidence_below="0.5",
        audit_percent=0,
    )
    run_the_first_judge(evaluation, cheap)
    return evaluation, chain, (second_judge if second else strong)


def test_the_next_judges_call_budget_is_a_cap_and_what_it_cannot_pay_keeps_its_first_grade(
    server,
):
    evaluation, chain, strong = chain_of(server, budget_calls=1)

    advance(chain)

    assert asked(server, "strong") == [4]  # one call, the first keyword's four results
    run = JudgeRun.objects.get(judge=strong, evaluation=evaluation)
    assert (run.calls, run.graded, run.reserved_calls) == (1, 4, 0)
    steps = ChainStep.objects.filter(chain=chain)
    assert steps.filter(status=StepStatus.ESCALATED).count() == 4
    over = steps.filter(status=StepStatus.OVER_BUDGET)
    assert over.count() == 4
    assert {step.note for step in over} == {
        "kept the first grade: strong's own budget: the budget of 1 calls is reached"
    }
    assert sorted(values(evaluation).values()) == [1] * 4 + [3] * 4


def test_a_token_budget_cuts_the_next_judges_call_to_the_results_it_can_pay(server):
    evaluation, chain, strong = chain_of(server)
    run = JudgeRun.objects.select_related("prompt").get(judge=strong, evaluation=evaluation)
    looked = [
        chains._Looked(step_slot, 1, "", 0.2)
        for step_slot in chains._unseen(JudgeChain.objects.get(id=chain.id))[:4]
    ]
    prompt = pinned_prompt(run.prompt, evaluation.grading_scale)
    two = most_spent(strong, prompt, chains._task(chain, strong, looked[:2]))
    judge_update(judge=strong, budget_tokens=two.tokens)  # two results' call, not three

    advance(chain)

    assert asked(server, "strong") == [2]
    run.refresh_from_db()
    assert run.input_tokens + run.output_tokens <= two.tokens and run.reserved_tokens == 0
    steps = ChainStep.objects.filter(chain=chain)
    assert steps.filter(status=StepStatus.ESCALATED).count() == 2
    over = steps.filter(status=StepStatus.OVER_BUDGET)
    assert over.count() == 6
    assert all(f"the budget of {two.tokens} tokens is reached" in step.note for step in over)


def test_the_second_opinions_budget_is_a_cap(server):
    evaluation, chain, second = chain_of(server, second=True, budget_calls=1)

    advance(chain)

    assert asked(server, "second") == [4]
    run = JudgeRun.objects.get(judge=second, evaluation=evaluation)
    assert (run.calls, run.reserved_calls) == (1, 0)
    steps = ChainStep.objects.filter(chain=chain)
    assert steps.exclude(second_grade=None).count() == 4
    not_asked = steps.filter(second_grade=None)
    assert {step.note for step in not_asked} == {
        "the second opinion was not asked: the budget of 1 calls is reached"
    }
    # Unsure all the same: every result went on to the strong judge, which has no budget.
    assert steps.filter(status=StepStatus.ESCALATED).count() == 8
