"""/api/v1/evaluations/{id}/judge-chain/ and .../steps/: an integration sets up a chain of
judges on an evaluation, the first judge grades through a real local model server, the
chain sends what it is unsure of on to a stronger judge or to people, and the chain's
answer says what it did (counts by status and reason, people asked and graded, what it
spent against the next judge alone, the audit agreement); the steps list each result;
the judgements name the judge that made each grade. Every problem names its field; the
team's gate answers 409; another team's evaluation, or one without a chain, is 404; no
answer holds a judge's key."""

import pytest

from apps.judges.models import ChainStep, JudgeChain, JudgeRun
from apps.judges.services import judge_update
from apps.judges.tests.fake_provider import FakeProvider
from apps.judges.tests.test_chains import (
    KEYWORDS,
    advance,
    by_model,
    judges,
    run_the_first_judge,
)
from apps.judging.judgements import Giver, slot_judge
from tests.factories import make_evaluation

from .test_calibrations import Answers, fields, problems

pytestmark = pytest.mark.django_db

# What the API key of every judge here begins with.
API_KEY = "not-a-real-key-chain"
FIGURE = {"value", "low", "high", "n", "reason"}


@pytest.fixture(scope="module")
def server():
    with FakeProvider() as fake:
        yield fake


@pytest.fixture(autouse=True)
def local_model_servers_allowed(settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True


@pytest.fixture
def client(api):
    answers = Answers(api)
    yield answers
    assert answers.texts
    assert not [text for text in answers.texts if API_KEY in text]


def keyed(made):
    """The judges, each with an API key of its own (no answer may hold it)."""
    for each in made:
        judge_update(judge=each, api_key=f"{API_KEY}-{each.name}")
    return made


@pytest.fixture
def links(team_a, server):
    """The team's judges: a cheap first judge, a second opinion and a stronger one."""
    return keyed(judges(team_a, server))


def their_judge(team_b, server):
    return keyed(judges(team_b, server))[0]


@pytest.fixture
def evaluation(team_a):
    return make_evaluation(team=team_a, scale="graded", strategy=1, keywords=KEYWORDS)


def chain_url(evaluation) -> str:
    return f"/api/v1/evaluations/{evaluation.id}/judge-chain/"


def grade_and_settle(evaluation, first) -> None:
    """What the workers do: the first judge grades every result, then the chain looks."""
    run_the_first_judge(evaluation, first)
    advance(JudgeChain.objects.get(evaluation=evaluation))


# --- Setting one up and reading what it did ------------------------------------------


def test_a_chain_to_a_stronger_judge_is_set_up_and_says_what_it_did(
    client, server, evaluation, links
):
    cheap, _, strong = links
    # The cheap judge is unsure of results 3 and 4; the strong one grades 3 everywhere.
    server.respond_with(
        by_model({"cheap": lambda n: (1, 0.9 if n < 3 else 0.2), "strong": lambda n: (3, 1.0)})
    )
    created = client.post(
        chain_url(evaluation),
        {
            "first": cheap.id,
            "escalate_to": strong.id,
            "confidence_below": 0.5,
            "audit_percent": 0,
            "escalation_budget": 100,
            "seed": 7,
        },
    )
    assert created.status_code == 201, created.content
    chain = created.json()
    assert (chain["evaluation"], chain["first"], chain["first_name"]) == (
        evaluation.id,
        cheap.id,
        "cheap",
    )
    assert (chain["escalate_to"], chain["escalate_to_name"]) == (strong.id, "strong")
    assert (chain["second_opinion"], chain["second_opinion_name"]) == (None, None)
    assert (chain["confidence_below"], chain["audit_percent"]) == (0.5, 0)
    assert (chain["escalation_budget"], chain["seed"]) == (100, 7)
    assert chain["summary"]["looked_at"] == 0 and chain["summary"]["results"] == 8
    assert chain["summary"]["audit"] is None
    # The first judge was started; the strong one spends through a run of its own.
    assert JudgeRun.objects.filter(evaluation=evaluation).count() == 2

    grade_and_settle(evaluation, cheap)

    summary = client.get(chain_url(evaluation)).json()["summary"]
    assert summary["by_status"] == {
        "kept": 4,
        "escalated": 4,
        "awaiting_people": 0,
        "over_budget": 0,
        "failed": 0,
    }
    assert summary["by_reason"] == {
        "low_confidence": 4,
        "disagreement": 0,
        "panel_split": 0,
        "samples_split": 0,
        "audit": 0,
    }
    assert (summary["looked_at"], summary["settled_without_people"]) == (8, 8)
    assert (summary["people_asked"], summary["people_graded"]) == (0, 0)
    # Two calls of the cheap judge, two of the strong one, 1,000 input tokens each.
    assert summary["spent"] == "0.010200"
    # The strong judge's cost per result asked (0.01 / 4), times the 8 results.
    assert summary["next_judge_alone"] == "0.020000"

    steps = client.get(f"{chain_url(evaluation)}steps/").json()
    assert steps["count"] == 8
    first = steps["results"][0]
    assert (first["keyword"], first["position"], first["doc_id"]) == (
        "red shoes",
        1,
        "red shoes-doc-1",
    )
    assert (first["first_grade"], first["first_confidence"], first["first_reason"]) == (
        1,
        0.9,
        "r",
    )
    assert (first["why"], first["status"], first["next_grade"], first["grade"]) == (
        "",
        "kept",
        None,
        1,
    )
    escalated = client.get(f"{chain_url(evaluation)}steps/?status=escalated&page_size=3").json()
    assert escalated["count"] == 4 and len(escalated["results"]) == 3
    for step in escalated["results"]:
        assert (step["why"], step["first_grade"], step["next_grade"], step["grade"]) == (
            "low_confidence",
            1,
            3,
            3,
        )
        assert step["position"] in (3, 4)
    assert client.get(f"{chain_url(evaluation)}steps/?why=audit").json()["count"] == 0

    # The judgements name the judge that made each grade, its model and prompt version.
    judgements = client.get(f"/api/v1/evaluations/{evaluation.id}/judgements/").json()
    by_position = {(row["keyword"], row["position"]): row for row in judgements["results"]}
    kept, sent = by_position[("red shoes", 1)], by_position[("red shoes", 3)]
    assert (kept["grader"], kept["grade"], kept["reason"]) == ("cheap", 1, "r")
    assert kept["ai_judge"] == {
        "judge": cheap.id,
        "name": "cheap",
        "model": "cheap",
        "prompt_version": "default-graded-v2",
        "confidence": 0.9,
        "agreement": None,
        "votes": None,
    }
    assert (sent["grader"], sent["grade"]) == ("strong", 3)
    assert (sent["ai_judge"]["judge"], sent["ai_judge"]["model"]) == (strong.id, "strong")
    assert not [row for row in judgements["results"] if "ai-judges" in str(row)]


def test_a_chain_to_people_with_an_audit_reads_the_first_judge_s_agreement(
    client, server, evaluation, links, evaluator
):
    cheap, second, _ = links
    # The second opinion disagrees on result 2; every result is in the audit sample.
    server.respond_with(
        by_model({"cheap": lambda n: (2, 0.9), "second": lambda n: (2 if n != 2 else 0, 0.9)})
    )
    created = client.post(
        chain_url(evaluation),
        {"first": cheap.id, "second_opinion": second.id, "escalate_to": None, "audit_percent": 100},
    )
    assert created.status_code == 201, created.content
    assert (created.json()["escalate_to"], created.json()["escalate_to_name"]) == (None, None)
    assert created.json()["second_opinion_name"] == "second"
    grade_and_settle(evaluation, cheap)

    waiting = client.get(f"{chain_url(evaluation)}steps/?status=awaiting_people").json()
    assert waiting["count"] == 8
    disputed = [step for step in waiting["results"] if step["why"] == "disagreement"]
    assert [(step["position"], step["second_grade"]) for step in disputed] == [(2, 0), (2, 0)]
    assert {step["grade"] for step in waiting["results"]} == {None}  # back with people

    # People grade three results of the first keyword: the disputed one, and two of the
    # audited ones, one as the first judge did and one not.
    given = [(1, 2), (2, 0), (4, 0)]
    steps = ChainStep.objects.filter(chain__evaluation=evaluation, slot__keyword__position=1)
    for position, grade in given:
        slot = steps.get(slot__snapshot_position=position).slot
        slot_judge(slot_id=slot.id, giver=Giver.recorded(evaluator), grade=grade, reason="p")

    summary = client.get(chain_url(evaluation)).json()["summary"]
    assert (summary["people_asked"], summary["people_graded"]) == (8, 3)
    assert summary["settled_without_people"] == 0
    assert summary["by_reason"] == {
        "low_confidence": 0,
        "disagreement": 2,
        "panel_split": 0,
        "samples_split": 0,
        "audit": 6,
    }
    assert summary["next_judge_alone"] is None
    audit = summary["audit"]
    assert audit["compared"] == 2  # the audited results people graded: 1 and 4
    assert set(audit["exact"]) == FIGURE and set(audit["alpha"]) == FIGURE
    assert (audit["exact"]["value"], audit["exact"]["n"]) == (0.5, 2)

    # A person's grade is theirs in the judgements, the first judge's grade no one's.
    rows = client.get(f"/api/v1/evaluations/{evaluation.id}/judgements/?graded=true").json()
    assert [(row["grader"], row["ai_judge"]) for row in rows["results"]] == [
        ("evaluator@a.test", None)
    ] * 3


# --- Refused -------------------------------------------------------------------------


def test_every_problem_names_its_field_and_nothing_is_set_up(
    client, server, evaluation, links, team_a, team_b
):
    cheap, second, strong = links
    theirs = their_judge(team_b, server)

    unknown = client.post(chain_url(evaluation), {"first": cheap.id, "judge": 1, "extra": 2})
    assert unknown.status_code == 400
    assert problems(unknown) == ["extra: not a field of a chain", "judge: not a field of a chain"]

    typed = client.post(
        chain_url(evaluation),
        {
            "first": "cheap",
            "confidence_below": 2,
            "audit_percent": 101,
            "escalation_budget": 0,
            "seed": -1,
        },
    )
    assert typed.status_code == 400
    assert fields(typed) == {
        "first",
        "confidence_below",
        "audit_percent",
        "escalation_budget",
        "seed",
    }
    assert fields(client.post(chain_url(evaluation), {})) == {"first"}
    assert client.post(chain_url(evaluation), "[1]").status_code == 400

    checked = client.post(
        chain_url(evaluation),
        {"first": cheap.id, "second_opinion": theirs.id, "escalate_to": cheap.id},
    )
    assert checked.status_code == 400
    assert problems(checked) == [
        f"second_opinion: the team has no judge '{theirs.id}'",
        "escalate_to: each link of a chain is a different judge",
    ]
    three_grades = make_evaluation(team=team_a, strategy=3, keywords={"x": 1})
    refused = client.post(chain_url(three_grades), {"first": cheap.id})
    assert refused.status_code == 400 and fields(refused) == {"evaluation"}
    assert not JudgeChain.objects.exists() and not JudgeRun.objects.exists()

    assert client.post(chain_url(evaluation), {"first": cheap.id}).status_code == 201
    again = client.post(chain_url(evaluation), {"first": second.id})
    assert again.status_code == 400
    assert problems(again) == ["evaluation: it already has a chain"]


def test_the_team_s_gate_refuses_a_chain_with_409_and_nothing_is_set_up(client, evaluation, links):
    cheap, _, strong = links
    assert client.send("put", "/api/v1/judge-gate/", {"min_alpha": 0.8}).status_code == 200

    refused = client.post(chain_url(evaluation), {"first": cheap.id, "escalate_to": strong.id})

    assert refused.status_code == 409
    body = refused.json()
    assert body["errors"][0]["field"] == "judge"
    assert "it has no calibration" in body["detail"]
    assert not JudgeChain.objects.exists() and not JudgeRun.objects.exists()


def test_another_team_s_evaluation_and_one_without_a_chain_are_404(
    client, server, evaluation, links, team_b
):
    cheap, _, _ = links
    theirs = make_evaluation(team=team_b, strategy=1, keywords={"x": 1})
    their_first = their_judge(team_b, server)
    assert client.post(chain_url(theirs), {"first": their_first.id}).status_code == 404
    assert not JudgeChain.objects.exists()

    assert client.get(chain_url(evaluation)).status_code == 404
    assert client.get(f"{chain_url(evaluation)}steps/").status_code == 404
    JudgeChain.objects.create(evaluation=theirs, first=their_first, seed=1)
    assert client.get(chain_url(theirs)).status_code == 404
    assert client.get(f"{chain_url(theirs)}steps/").status_code == 404


def test_the_steps_filters_take_their_values_only(client, evaluation, links):
    cheap, _, _ = links
    client.post(chain_url(evaluation), {"first": cheap.id})

    for query in ("status=done", "why=", "why=none", "status=KEPT"):
        answer = client.get(f"{chain_url(evaluation)}steps/?{query}")
        assert answer.status_code == 400, query
        assert fields(answer) == {query.split("=")[0]}
    assert client.get(f"{chain_url(evaluation)}steps/?status=kept").json()["count"] == 0


# --- Escalating on agreement ---------------------------------------------------------


def test_a_chain_sends_on_what_its_sampled_first_judge_s_samples_split_on(
    client, server, evaluation, links
):
    from apps.judges.tests.test_chain_agreement import in_turn

    cheap, _, strong = links
    judge_update(judge=cheap, temperature=0.7, samples=3)
    # Result 3 of each keyword is sampled 1, 1, 3 (2 samples in 3 agree); the rest 2, 2, 2.
    server.respond_with(
        in_turn(
            {
                "cheap": lambda n, turn: ((1, 1, 3)[turn] if n == 3 else 2, 0.9),
                "strong": lambda n, turn: (3, 1.0),
            }
        )
    )
    created = client.post(
        chain_url(evaluation),
        {"first": cheap.id, "escalate_to": strong.id, "agreement_below": 0.9, "audit_percent": 0},
    )
    assert created.status_code == 201, created.content
    assert (created.json()["agreement_below"], created.json()["confidence_below"]) == (0.9, None)

    grade_and_settle(evaluation, cheap)

    chain = client.get(chain_url(evaluation)).json()
    assert chain["agreement_below"] == 0.9
    summary = chain["summary"]
    assert (summary["by_status"]["escalated"], summary["by_status"]["kept"]) == (2, 6)
    assert summary["by_reason"]["samples_split"] == 2
    assert sum(summary["by_reason"].values()) == 2
    # Three samples of each keyword's call (6) at 0.10 a million input tokens, and one
    # call of the strong judge a keyword (2) at 5.00: 1,000 input tokens each.
    assert summary["spent"] == "0.010600"

    split = client.get(f"{chain_url(evaluation)}steps/?why=samples_split").json()
    assert split["count"] == 2
    for step in split["results"]:
        assert step["position"] == 3 and step["first_agreement"] == pytest.approx(2 / 3)
        assert (step["status"], step["first_grade"], step["next_grade"], step["grade"]) == (
            "escalated",
            1,
            3,
            3,
        )
    kept = client.get(f"{chain_url(evaluation)}steps/?status=kept").json()["results"]
    assert {(step["first_agreement"], step["grade"]) for step in kept} == {(1.0, 2)}


def test_agreement_below_is_a_share_for_a_panel_or_samples_naming_its_field(
    client, evaluation, links
):
    cheap, _, _ = links
    for given in (1.5, -0.1, "half"):
        refused = client.post(chain_url(evaluation), {"first": cheap.id, "agreement_below": given})
        assert refused.status_code == 400, given
        assert fields(refused) == {"agreement_below"}
    one_answer = client.post(chain_url(evaluation), {"first": cheap.id, "agreement_below": 0.5})
    assert one_answer.status_code == 400
    assert problems(one_answer) == [
        "agreement_below: cheap gives one grade per result; agreement needs a panel or samples"
    ]
    assert not JudgeChain.objects.exists() and not JudgeRun.objects.exists()

    created = client.post(chain_url(evaluation), {"first": cheap.id, "agreement_below": None})
    assert created.status_code == 201
    assert created.json()["agreement_below"] is None
