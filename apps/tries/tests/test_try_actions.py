"""What a lead does with a try: fill its unjudged results with an AI judge on a real
local model server, send them to people in an evaluation that reuses the rest, or
promote it to a search model of its own. Transactional, as in production: what a
commit queues (the keyword runs, the judge's lanes) runs too."""

import json
import re

import pytest

from apps.core.errors import InvalidInput
from apps.endpoints.models import SearchModel
from apps.evaluations.models import Evaluation, Status
from apps.judges.services import judge_create
from apps.judges.tests.fake_provider import FakeProvider, Reply, Seen
from apps.tries.actions import try_fill_with_judge, try_promote, try_send_to_people
from apps.tries.models import Try
from apps.tries.report import try_report
from apps.tries.starting import TryRequest, try_start
from apps.tries.verdict import Verdict
from tests.factories import make_grader, slots_of

from .tuned import ASKED, GRADES, grade_open_slots, rank_of

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def true_judge(team_a, settings):
    """An AI judge whose every answer is the document's true grade."""
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True

    def true_grades(seen: Seen) -> Reply:
        # Each result is shown as {"id": "r1", "title": "query 3 result 9", ...}: the
        # search server's titles end in the document's rank.
        asked = "".join(str(message["content"]) for message in seen.body["messages"])
        shown = re.findall(r'"id": "(r\d+)",\s*"title": "[^"]* result (\d+)"', asked)
        answer = {
            "judgements": [
                {"id": i, "grade": GRADES[int(rank)], "confidence": 0.9, "reason": "true"}
                for i, rank in shown
            ]
        }
        return Reply.openai(json.dumps(answer))

    with FakeProvider() as server:
        server.respond_with(true_grades)
        yield judge_create(
            team=team_a,
            name="Truthful",
            protocol="openai",
            base_url=server.openai_url,
            model_name="gpt-test",
            api_key="not-a-real-key-tries",
        )


def test_the_holes_say_not_enough_judged_until_an_ai_judge_fills_them(
    team_a, boost_down, true_judge
):
    attempt = Try.objects.get(id=boost_down.id)
    before = try_report(attempt)
    assert before.verdict == Verdict.NOT_ENOUGH_JUDGED
    assert before.unjudged == 2 * len(ASKED)  # documents 10 and 9 of each query

    try_fill_with_judge(attempt=attempt, judge=true_judge, user=None)

    after = try_report(Try.objects.get(id=attempt.id))
    assert after.unjudged == 0
    # The top 5: documents 10 and 9 now graded by the judge, 8 to 6 by people before.
    assert after.bases == {"people": 3 * len(ASKED), "judges": 2 * len(ASKED)}
    assert after.verdict == Verdict.WORSE


def test_sent_to_people_only_the_holes_wait_and_their_grades_decide(team_a, boost_down):
    attempt = Try.objects.get(id=boost_down.id)
    evaluation = try_send_to_people(attempt=attempt, user=None)

    assert evaluation.status == Status.ACTIVE
    assert try_send_to_people(attempt=attempt, user=None).id == evaluation.id
    slots = slots_of(evaluation)
    assert len(slots) == 8 * len(ASKED)
    open_slots = [slot for slot in slots if slot.grade is None]
    assert sorted({rank_of(s.keyword.text, s.snapshot.doc_id) for s in open_slots}) == [9, 10]
    assert all(slot.reused and not slot.stale for slot in slots if slot.grade is not None)

    grade_open_slots(Evaluation.objects.get(id=evaluation.id), make_grader(team_a))
    assert try_report(Try.objects.get(id=attempt.id)).verdict == Verdict.WORSE


def test_a_promoted_try_is_a_model_of_its_own_that_ranks_as_the_try_did(
    team_a, boost_down, tuned_model
):
    attempt = Try.objects.get(id=boost_down.id)
    promoted = try_promote(attempt=attempt, user=None)

    assert promoted.name == "Tuned (try 1)"
    assert promoted.params == [["q", "#query#"], ["boost", "1"]]
    assert SearchModel.objects.get(id=tuned_model.id).params == [["q", "#query#"], ["boost", "3"]]
    assert try_promote(attempt=Try.objects.get(id=attempt.id), user=None).id == promoted.id

    again = try_start(
        team=team_a,
        user=None,
        asked=TryRequest(model=promoted.id, queries=ASKED, baseline_try=None),
    )
    ours = {q.text: q.doc_ids for q in Try.objects.get(id=attempt.id).queries.all()}
    theirs = {q.text: q.doc_ids for q in again.queries.all()}
    assert theirs == ours


def test_a_knob_in_the_endpoints_url_cannot_be_promoted(team_a, graded_today, tuned_model):
    endpoint = tuned_model.endpoint
    endpoint.url += "?index=#index#"
    endpoint.save(update_fields=["url"])
    attempt = try_start(
        team=team_a,
        user=None,
        asked=TryRequest(model="Tuned", queries=ASKED[:1], knobs={"index": "books"}),
    )
    with pytest.raises(InvalidInput, match="knobs.index: it fills the endpoint's URL"):
        try_promote(attempt=attempt, user=None)
