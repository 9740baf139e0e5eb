"""Judge what decides, through the real queue: with the option on, the grader's claims
come in decision order (an AI judge's: apps/judges/tests/test_decisive_order_judges.py);
switching it off gives back keyword order; the evaluation page says when judging can
stop; the form's rules."""

import pytest
from django.urls import reverse

from apps.accounts.models import Membership
from apps.core.errors import InvalidInput
from apps.evaluations.models import Evaluation, FeedbackSlot
from apps.judging.decisive import decisive_order_clear, decisive_order_set
from apps.judging.judgements import Giver, slot_judge
from apps.judging.services import slot_claim_next
from tests.factories import client_for, make_evaluation, slots_of

pytestmark = pytest.mark.django_db

KEYWORDS = {"alpha": 3, "beta": 3}
# DCG@2: rank 1 weighs 1, rank 2 1/log2(3), rank 3 nothing. Both keywords' first results
# move the mean most, then their second ones; the third ones cannot change the verdict.
DECISION_ORDER = [("alpha", 1), ("beta", 1), ("alpha", 2), ("beta", 2), ("alpha", 3), ("beta", 3)]
KEYWORD_ORDER = [("alpha", 1), ("alpha", 2), ("alpha", 3), ("beta", 1), ("beta", 2), ("beta", 3)]


def rival_and_candidate(team, *, rival_grade: int = 0) -> tuple[Evaluation, Evaluation]:
    """A rival with every result graded `rival_grade`, and a candidate with the same
    keywords still to grade (no reuse, so every result of it is open)."""
    rival = make_evaluation(team=team, keywords=KEYWORDS, metrics=[("dcg", 2)])
    owner = Membership.objects.get(team=team, role="owner").user
    for slot in slots_of(rival):
        slot_judge(slot_id=slot.id, giver=Giver.lead(owner), grade=rival_grade)
    candidate = make_evaluation(team=team, keywords=KEYWORDS, metrics=[("dcg", 2)])
    return rival, candidate


def grade_in_queue_order(membership: Membership, evaluation: Evaluation, grade: int = 1):
    given = []
    while (slot := slot_claim_next(membership=membership, evaluation=evaluation)) is not None:
        slot_judge(slot_id=slot.id, giver=Giver.grader(membership.user), grade=grade)
        given.append((slot.keyword.text, slot.snapshot.position))
    return given


@pytest.fixture
def lead(team_a, owner) -> Membership:
    return Membership.objects.select_related("user").get(team=team_a, user=owner)


def test_with_the_option_on_the_grader_gets_the_results_that_decide_first(team_a, lead):
    rival, candidate = rival_and_candidate(team_a)

    decisive_order_set(evaluation=candidate, rival_id=rival.id, metric="dcg@2", lead=lead.user)

    assert grade_in_queue_order(lead, candidate) == DECISION_ORDER


def test_switching_it_off_gives_back_keyword_order(team_a, lead):
    rival, candidate = rival_and_candidate(team_a)
    decisive_order_set(evaluation=candidate, rival_id=rival.id, metric="dcg@2", lead=lead.user)
    for _ in range(3):  # alpha 1, beta 1, alpha 2: numbered 1, 2, 3 in decision order
        slot = slot_claim_next(membership=lead, evaluation=candidate)
        slot_judge(slot_id=slot.id, giver=Giver.grader(lead.user), grade=1)

    decisive_order_clear(evaluation=candidate)

    assert grade_in_queue_order(lead, candidate) == [("alpha", 3), ("beta", 2), ("beta", 3)]
    # Every slot, those graded in decision order too, has its keyword's position again.
    slots = FeedbackSlot.objects.filter(evaluation=candidate).select_related("keyword")
    assert [s.keyword_position for s in slots] == [s.keyword.position for s in slots]


def test_the_page_says_when_judging_can_stop(team_a, lead):
    rival, candidate = rival_and_candidate(team_a)
    decisive_order_set(evaluation=candidate, rival_id=rival.id, metric="dcg@2", lead=lead.user)
    page = client_for(lead.user)
    url = f"/evaluations/{candidate.id}/"

    before = page.get(url).content.decode()
    first = slot_claim_next(membership=lead, evaluation=candidate)
    # The rival's results are all 0: a 3 on alpha's first result puts the candidate's mean
    # DCG@2 ahead whatever the other five grades are.
    slot_judge(slot_id=first.id, giver=Giver.grader(lead.user), grade=3)
    after = page.get(url).content.decode()

    assert "Still open: 4 results could change the verdict on DCG@2" in before
    assert (
        f"The verdict can no longer change: {candidate.name} is ahead on DCG@2, whatever the "
        "5 remaining grades are; judging can stop." in after
    )


def test_the_live_answer_redraws_the_line_after_a_grade(team_a, lead):
    """An open evaluation page asks its live URL after each change: the line follows."""
    rival, candidate = rival_and_candidate(team_a)
    decisive_order_set(evaluation=candidate, rival_id=rival.id, metric="dcg@2", lead=lead.user)
    first = slot_claim_next(membership=lead, evaluation=candidate)
    slot_judge(slot_id=first.id, giver=Giver.grader(lead.user), grade=3)

    live = client_for(lead.user).get(reverse("insights:live_evaluation", args=[candidate.id]))

    assert 'id="decisive-order"' in live.content.decode()
    assert "The verdict can no longer change" in live.content.decode()


def test_a_grade_that_keeps_it_open_leaves_it_open(team_a, lead):
    rival, candidate = rival_and_candidate(team_a, rival_grade=3)
    decisive_order_set(evaluation=candidate, rival_id=rival.id, metric="dcg@2", lead=lead.user)
    first = slot_claim_next(membership=lead, evaluation=candidate)
    slot_judge(slot_id=first.id, giver=Giver.grader(lead.user), grade=3)

    page = client_for(lead.user).get(f"/evaluations/{candidate.id}/").content.decode()

    assert "Still open: 3 results could change the verdict on DCG@2" in page


def test_a_lead_switches_it_on_and_off_on_the_page(team_a, lead):
    rival, candidate = rival_and_candidate(team_a)
    page = client_for(lead.user)

    on = page.post(
        f"/evaluations/{candidate.id}/decisive-order/",
        {"rival": rival.id, "metric": "dcg@2", "min_change": "0"},
    )
    assert on.status_code == 302
    assert grade_in_queue_order(lead, candidate)[:2] == DECISION_ORDER[:2]

    off = page.post(f"/evaluations/{candidate.id}/decisive-order/off/")
    assert off.status_code == 302
    shown = page.get(f"/evaluations/{candidate.id}/").content.decode()
    assert "Give graders first the results that can still change which one is ahead" in shown
    assert 'data-testid="decisive-status"' not in shown


def test_the_page_of_the_option_offers_the_teams_other_evaluations(team_a, team_b, lead):
    rival, candidate = rival_and_candidate(team_a)
    theirs = make_evaluation(team=team_b, keywords=KEYWORDS)

    page = client_for(lead.user).get(f"/evaluations/{candidate.id}/decisive-order/")

    assert page.status_code == 200
    form = page.content.decode().split('data-testid="decisive-form"')[1]
    assert f'<option value="{rival.id}">{rival.name}</option>' in form
    assert f'value="{candidate.id}"' not in form
    assert f'value="{theirs.id}"' not in form


@pytest.mark.parametrize(
    ("rival", "metric", "min_change", "problem"),
    [
        ("another team's", "dcg@2", "0", "rival: "),
        ("itself", "dcg@2", "0", "rival: choose another evaluation"),
        ("rival", "ndcg@10", "0", "metric: nDCG is not a sum of one share per result"),
        ("rival", "precision@5", "0", "metric: P under the searchtweak profile"),
        ("rival", "dcg@2, cg@2", "0", "metric: name one metric@k"),
        ("rival", "dcg@2", "-1", "min_change: &#x27;-1&#x27; is not a number from 0 to 1000"),
    ],
)
def test_bad_input_is_refused_naming_the_field(
    team_a, team_b, lead, rival, metric, min_change, problem
):
    ours, candidate = rival_and_candidate(team_a)
    theirs = make_evaluation(team=team_b, keywords=KEYWORDS)
    chosen = {"another team's": theirs, "itself": candidate, "rival": ours}[rival]

    answer = client_for(lead.user).post(
        f"/evaluations/{candidate.id}/decisive-order/",
        {"rival": chosen.id, "metric": metric, "min_change": min_change},
    )

    assert answer.status_code == 400
    assert problem in answer.content.decode()
    with pytest.raises(InvalidInput):
        decisive_order_set(
            evaluation=candidate,
            rival_id=chosen.id,
            metric=metric,
            min_change=min_change,
            lead=None,
        )


def test_another_teams_evaluation_is_not_found_and_a_grader_may_not(
    team_a, lead, outsider, evaluator
):
    rival, candidate = rival_and_candidate(team_a)
    form = {"rival": rival.id, "metric": "dcg@2"}
    page = f"/evaluations/{candidate.id}/decisive-order/"

    assert client_for(outsider).get(page).status_code == 404
    assert client_for(outsider).post(page, form).status_code == 404
    assert client_for(outsider).post(f"{page}off/").status_code == 404
    assert client_for(evaluator).get(page).status_code == 403
    assert client_for(evaluator).post(page, form).status_code == 403
    assert client_for(evaluator).post(f"{page}off/").status_code == 403
