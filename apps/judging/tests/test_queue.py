"""The grader's queue: which slot a grader gets, and when they get none.

Claims need no real commits, so these tests run in a rolled-back transaction; the
concurrency of claims is tested on PostgreSQL in test_queue_concurrency.py.
"""

from datetime import timedelta
from unittest import mock

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.accounts.models import Membership, Team
from apps.accounts.services import member_add, tags_get_or_create
from apps.core.errors import InvalidState, NotAllowed
from apps.evaluations.models import Evaluation, FeedbackSlot, SnapshotSkip
from apps.judging import services, sql
from apps.judging.judgements import Action, Giver, slot_judge
from apps.judging.selectors import open_evaluations_parameters, start_of_today
from apps.judging.services import slot_claim_next
from apps.scoring.finishing import evaluation_finish
from tests.factories import assign, make_evaluation, make_team, slots_of

pytestmark = pytest.mark.django_db


def membership_of(user, team: Team) -> Membership:
    return Membership.objects.select_related("user").get(user=user, team=team)


def new_member(team: Team, *, role: str = "evaluator", tags: tuple[str, ...] = ()) -> Membership:
    membership = member_add(
        team=team, email=f"{role}{Membership.objects.count()}@example.test", role=role
    )
    membership.tags.set(tags_get_or_create(team=team, names=tags))
    return membership_of(membership.user, team)


def where(slot: FeedbackSlot | None) -> tuple[str, int] | None:
    """The keyword and position of a slot, to read orders at a glance."""
    if slot is None:
        return None
    return (slot.keyword.text, slot.snapshot.position)


def claim_and_grade(membership: Membership, grade: int = 2) -> FeedbackSlot | None:
    slot = slot_claim_next(membership=membership)
    if slot is not None:
        slot_judge(slot_id=slot.id, giver=Giver.grader(membership.user), grade=grade)
    return slot


def expire_lock(slot: FeedbackSlot) -> None:
    long_ago = timezone.now() - timedelta(seconds=settings.SLOT_LOCK_SECONDS + 1)
    FeedbackSlot.objects.filter(id=slot.id).update(assigned_at=long_ago)


# --- What a grader gets -------------------------------------------------------------------


def test_a_grader_who_asks_again_gets_the_slot_they_already_hold():
    evaluation = make_evaluation(keywords={"red shoes": 5})
    grader = new_member(evaluation.team)

    first = slot_claim_next(membership=grader)
    again = slot_claim_next(membership=grader)

    assert first is not None and again is not None
    assert again.id == first.id
    assert FeedbackSlot.objects.filter(grader=grader.user).count() == 1


def test_a_grader_gets_a_new_slot_once_the_held_one_is_graded():
    evaluation = make_evaluation(keywords={"red shoes": 5})
    grader = new_member(evaluation.team)

    first = claim_and_grade(grader)
    second = slot_claim_next(membership=grader)

    assert first is not None and second is not None
    assert second.id != first.id


def test_a_started_snapshot_is_offered_first_even_when_it_comes_later():
    evaluation = make_evaluation(strategy=3, keywords={"boots": 2, "sandals": 2})
    early, late = new_member(evaluation.team), new_member(evaluation.team)
    last_result = slots_of(evaluation, "sandals")[-1]
    slot_judge(slot_id=assign(last_result, early.user).id, giver=Giver.grader(early.user), grade=3)

    assert where(slot_claim_next(membership=late)) == ("sandals", 2)


def test_a_snapshot_started_by_a_recorded_grade_is_offered_first_too():
    evaluation = make_evaluation(strategy=3, keywords={"boots": 2, "sandals": 2})
    grader = new_member(evaluation.team)
    slot_judge(
        slot_id=slots_of(evaluation, "sandals")[-1].id, giver=Giver.recorded(None, "x"), grade=1
    )

    assert where(slot_claim_next(membership=grader)) == ("sandals", 2)


def test_fresh_snapshots_are_offered_in_keyword_order_then_by_position():
    # Keyword order is the order they were added, not the alphabet.
    evaluation = make_evaluation(keywords={"zebra print": 2, "apple green": 2})
    grader = new_member(evaluation.team)

    offered = [where(claim_and_grade(grader)) for _ in range(5)]

    assert offered == [
        ("zebra print", 1),
        ("zebra print", 2),
        ("apple green", 1),
        ("apple green", 2),
        None,
    ]


def test_a_grader_never_gets_two_slots_of_one_snapshot():
    evaluation = make_evaluation(strategy=3, keywords={"red shoes": 3})
    grader, colleague = new_member(evaluation.team), new_member(evaluation.team)

    mine = [claim_and_grade(grader) for _ in range(4)]

    assert [where(slot) for slot in mine] == [
        ("red shoes", 1),
        ("red shoes", 2),
        ("red shoes", 3),
        None,  # six free slots are left, all on snapshots this grader has graded
    ]
    # The colleague still gets a slot of every snapshot, started ones first.
    assert where(claim_and_grade(colleague)) == ("red shoes", 1)


def test_a_skipped_snapshot_is_never_offered_again_to_that_grader_but_is_to_others():
    evaluation = make_evaluation(strategy=3, keywords={"red shoes": 2})
    grader, colleague = new_member(evaluation.team), new_member(evaluation.team)
    skipped = slot_claim_next(membership=grader)
    assert where(skipped) == ("red shoes", 1)

    slot_judge(
        slot_id=skipped.id,
        giver=Giver.grader(grader.user),
        action=Action.SKIP,
        reason="cannot see the image",
    )

    assert SnapshotSkip.objects.filter(snapshot=skipped.snapshot, user=grader.user).exists()
    assert FeedbackSlot.objects.get(id=skipped.id).grader is None
    assert where(slot_claim_next(membership=colleague)) == ("red shoes", 1)
    assert [where(claim_and_grade(grader)) for _ in range(2)] == [("red shoes", 2), None]


def test_a_grader_cannot_skip_someone_elses_slot():
    evaluation = make_evaluation(keywords={"red shoes": 2})
    holder, other = new_member(evaluation.team), new_member(evaluation.team)
    slot = slot_claim_next(membership=holder)

    with pytest.raises(NotAllowed):
        slot_judge(slot_id=slot.id, giver=Giver.grader(other.user), action=Action.SKIP)

    assert FeedbackSlot.objects.get(id=slot.id).grader == holder.user
    assert not SnapshotSkip.objects.exists()


# --- Which evaluations give work ------------------------------------------------------------


def test_an_evaluation_tagged_shoes_is_invisible_to_a_grader_without_that_tag():
    team = make_team()
    [shoes] = tags_get_or_create(team=team, names=["shoes"])
    make_evaluation(team=team, tags=[shoes])
    grader = new_member(team, tags=("bags",))

    assert slot_claim_next(membership=grader) is None


def test_an_evaluation_tagged_shoes_is_visible_to_a_grader_with_that_tag():
    team = make_team()
    [shoes] = tags_get_or_create(team=team, names=["shoes"])
    evaluation = make_evaluation(team=team, tags=[shoes])
    grader = new_member(team, tags=("shoes", "bags"))

    slot = slot_claim_next(membership=grader)

    assert slot is not None and slot.evaluation_id == evaluation.id


def test_an_evaluation_with_two_tags_needs_a_grader_holding_both():
    team = make_team()
    make_evaluation(team=team, tags=tags_get_or_create(team=team, names=["shoes", "kids"]))

    assert slot_claim_next(membership=new_member(team, tags=("shoes",))) is None
    assert slot_claim_next(membership=new_member(team, tags=("shoes", "kids"))) is not None


def test_an_untagged_evaluation_is_visible_to_every_grader():
    team = make_team()
    make_evaluation(team=team)

    assert slot_claim_next(membership=new_member(team)) is not None
    assert slot_claim_next(membership=new_member(team, tags=("shoes",))) is not None


def pending_evaluation() -> Evaluation:
    return make_evaluation(start=False)


def finished_evaluation() -> Evaluation:
    evaluation = make_evaluation()
    evaluation_finish(evaluation_id=evaluation.id)
    evaluation.refresh_from_db()
    return evaluation


def archived_evaluation() -> Evaluation:
    evaluation = make_evaluation()
    Evaluation.objects.filter(id=evaluation.id).update(archived=True)
    return evaluation


@pytest.mark.parametrize(
    "closed_evaluation", [pending_evaluation, finished_evaluation, archived_evaluation]
)
def test_pending_finished_and_archived_evaluations_give_no_work(closed_evaluation):
    grader = new_member(closed_evaluation().team)

    assert slot_claim_next(membership=grader) is None


def test_another_teams_evaluations_never_give_work():
    make_evaluation(team=make_team())
    elsewhere = make_team()
    grader = new_member(elsewhere)

    assert slot_claim_next(membership=grader) is None


def test_a_grader_of_two_teams_gets_only_the_team_of_the_membership_they_work_in():
    evaluation = make_evaluation(team=make_team())
    grader = new_member(evaluation.team)
    other_team = make_team()
    member_add(team=other_team, email=grader.user.email, role="evaluator")

    assert slot_claim_next(membership=membership_of(grader.user, other_team)) is None
    assert slot_claim_next(membership=grader).evaluation_id == evaluation.id


def test_an_evaluation_with_no_work_left_gives_none():
    evaluation = make_evaluation(keywords={"red shoes": 2})
    grader = new_member(evaluation.team)
    for slot in slots_of(evaluation):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(None, "import"), grade=1)

    assert slot_claim_next(membership=grader) is None


def test_an_active_evaluation_without_results_gives_none():
    evaluation = make_evaluation(keywords={})

    assert slot_claim_next(membership=new_member(evaluation.team)) is None


# --- A lead's queue of one evaluation --------------------------------------------------------


def test_a_leads_queue_of_one_evaluation_ignores_tags():
    team = make_team()
    [shoes] = tags_get_or_create(team=team, names=["shoes"])
    make_evaluation(team=team)  # older and untagged: the shared pool would offer it first
    tagged = make_evaluation(team=team, tags=[shoes])
    lead = new_member(team, role="admin")

    slot = slot_claim_next(membership=lead, evaluation=tagged)

    assert slot is not None and slot.evaluation_id == tagged.id


def test_a_leads_queue_refuses_another_teams_evaluation():
    foreign = make_evaluation(team=make_team())
    lead = new_member(make_team(), role="admin")

    with pytest.raises(InvalidState):
        slot_claim_next(membership=lead, evaluation=foreign)
    assert not FeedbackSlot.objects.filter(grader=lead.user).exists()


@pytest.mark.parametrize("closed_evaluation", [pending_evaluation, finished_evaluation])
def test_a_leads_queue_refuses_an_evaluation_that_is_not_active(closed_evaluation):
    evaluation = closed_evaluation()
    lead = new_member(evaluation.team, role="admin")

    with pytest.raises(InvalidState):
        slot_claim_next(membership=lead, evaluation=evaluation)


# --- Locks -------------------------------------------------------------------------------


def test_a_slot_with_a_live_lock_is_never_given_to_another_grader():
    evaluation = make_evaluation(keywords={"red shoes": 1})
    holder, other = new_member(evaluation.team), new_member(evaluation.team)
    slot_claim_next(membership=holder)

    assert slot_claim_next(membership=other) is None


def test_an_expired_lock_lets_another_grader_take_the_slot_and_the_first_grade_is_refused():
    evaluation = make_evaluation(keywords={"red shoes": 1})
    slow, quick = new_member(evaluation.team), new_member(evaluation.team)
    slot = slot_claim_next(membership=slow)
    expire_lock(slot)

    taken = slot_claim_next(membership=quick)
    assert taken is not None and taken.id == slot.id
    slot_judge(slot_id=slot.id, giver=Giver.grader(quick.user), grade=3, reason="exact match")
    with pytest.raises(NotAllowed):
        slot_judge(slot_id=slot.id, giver=Giver.grader(slow.user), grade=0)

    stored = FeedbackSlot.objects.get(id=slot.id)
    assert (stored.grader, stored.grade, stored.reason) == (quick.user, 3, "exact match")
    assert slot_claim_next(membership=slow) is None


def test_an_expired_but_untaken_slot_is_returned_to_its_holder_with_a_renewed_lock():
    evaluation = make_evaluation(keywords={"red shoes": 3})
    grader = new_member(evaluation.team)
    slot = slot_claim_next(membership=grader)
    expire_lock(slot)
    before = timezone.now()

    again = slot_claim_next(membership=grader)

    assert again is not None and again.id == slot.id
    assert FeedbackSlot.objects.get(id=slot.id).assigned_at >= before
    assert again.assigned_at >= before


class StatementsNotKept(dict):
    """Stands in for the claim's cache of statements, so each claim builds its own."""

    def __setitem__(self, key, value) -> None:
        pass


def test_a_held_slot_taken_over_between_picking_and_taking_it_is_not_returned():
    evaluation = make_evaluation(keywords={"red shoes": 3})
    slow, quick = new_member(evaluation.team), new_member(evaluation.team)
    slot = slot_claim_next(membership=slow)
    expire_lock(slot)
    assert slot_claim_next(membership=quick).id == slot.id
    real_pick_sql = sql.pick_sql
    picks = []

    def pick_sql_that_first_sees_the_slot_still_held(evaluations: int) -> str:
        # The race: the slow grader's claim picked its held slot just before the quick
        # one took it over.
        picks.append(evaluations)
        return f"SELECT {slot.id} AS id" if len(picks) == 1 else real_pick_sql(evaluations)

    with (
        mock.patch.object(sql, "STATEMENTS", StatementsNotKept()),
        mock.patch.object(sql, "pick_sql", pick_sql_that_first_sees_the_slot_still_held),
    ):
        given = slot_claim_next(membership=slow)

    assert len(picks) == 2  # the take was refused, and the claim picked again
    assert given is not None and given.id != slot.id
    assert FeedbackSlot.objects.get(id=given.id).grader == slow.user
    assert FeedbackSlot.objects.get(id=slot.id).grader == quick.user


def test_a_reset_slot_is_offered_again():
    evaluation = make_evaluation(keywords={"red shoes": 1})
    grader, colleague = new_member(evaluation.team), new_member(evaluation.team)
    slot = claim_and_grade(grader)

    slot_judge(slot_id=slot.id, giver=Giver.lead(), action=Action.CLEAR)

    assert slot_claim_next(membership=colleague).id == slot.id


def test_a_snapshot_whose_only_grade_is_reset_is_fresh_again_and_waits_its_turn():
    evaluation = make_evaluation(strategy=3, keywords={"red shoes": 2})
    grader, colleague = new_member(evaluation.team), new_member(evaluation.team)
    first = claim_and_grade(grader)
    second_result = slots_of(evaluation)[3]
    slot_judge(slot_id=second_result.id, giver=Giver.recorded(None, "import"), grade=1)

    slot_judge(slot_id=first.id, giver=Giver.lead(), action=Action.CLEAR)

    assert not FeedbackSlot.objects.filter(snapshot_id=first.snapshot_id, snapshot_started=True)
    # The started second result comes first now, not the first one that lost its grade.
    assert slot_claim_next(membership=colleague).snapshot_id == second_result.snapshot_id


def test_a_reset_leaves_a_snapshot_started_while_another_of_its_grades_stands():
    evaluation = make_evaluation(strategy=3, keywords={"red shoes": 1})
    grader, colleague = new_member(evaluation.team), new_member(evaluation.team)
    first = claim_and_grade(grader)
    claim_and_grade(colleague)

    slot_judge(slot_id=first.id, giver=Giver.lead(), action=Action.CLEAR)

    started = FeedbackSlot.objects.filter(snapshot_id=first.snapshot_id, snapshot_started=True)
    assert started.count() == 3


# --- Cost ---------------------------------------------------------------------------------


def grader_far_ahead() -> tuple[Evaluation, Membership]:
    """A grader who has graded four started snapshots that wait for their other grades,
    and a snapshot someone else started further back, beyond a window of two slots."""
    evaluation = make_evaluation(strategy=3, keywords={f"k{n}": 1 for n in range(1, 7)})
    ahead = new_member(evaluation.team)
    for _ in range(4):
        claim_and_grade(ahead)
    slot_judge(
        slot_id=slots_of(evaluation, "k6")[0].id, giver=Giver.recorded(None, "import"), grade=1
    )
    return evaluation, ahead


def test_a_grader_far_ahead_gets_fresh_work_without_walking_past_all_they_started():
    evaluation, ahead = grader_far_ahead()

    with mock.patch.object(services, "STARTED_WINDOW", 2):
        offered = where(slot_claim_next(membership=ahead))

    # k6 is started but beyond the window; the others will finish it.
    assert offered == ("k5", 1)
    assert where(slot_claim_next(membership=new_member(evaluation.team))) == ("k1", 1)


def test_a_grader_far_ahead_with_nothing_fresh_left_still_gets_a_started_snapshot_far_back():
    _evaluation, ahead = grader_far_ahead()

    with mock.patch.object(services, "STARTED_WINDOW", 2):
        offered = [where(claim_and_grade(ahead)) for _ in range(3)]

    assert offered == [("k5", 1), ("k6", 1), None]


def queries_of_a_claim(keywords: int) -> int:
    evaluation = make_evaluation(strategy=3, keywords={f"k{n}": 10 for n in range(keywords)})
    grader = new_member(evaluation.team)
    claim_and_grade(grader)
    with CaptureQueriesContext(connection) as claim:
        assert slot_claim_next(membership=grader) is not None
    return len(claim.captured_queries)


def test_a_claim_costs_the_same_number_of_queries_however_large_the_pool():
    assert queries_of_a_claim(keywords=1) == queries_of_a_claim(keywords=40)


@pytest.mark.parametrize("lead_queue", [False, True])
def test_the_claims_statement_is_short_enough_for_psycopg_to_keep_its_conversion(
    postgres, lead_queue
):
    from psycopg._queries import MAX_CACHED_STATEMENT_LENGTH

    # A longer statement is converted to PostgreSQL's placeholders again on every claim.
    # When a model grows, trim the statement (sql.claim_sql) to get back under.
    assert len(sql.claim_sql(lead_queue).encode()) <= MAX_CACHED_STATEMENT_LENGTH


def test_a_claim_runs_each_search_for_a_free_slot_once(postgres):
    evaluation = make_evaluation(strategy=3, keywords={"k": 10})
    grader = new_member(evaluation.team)
    parameters = services._claim_parameters(grader.user)
    parameters.update(
        open_evaluations_parameters(grader), today=start_of_today(), evaluation=evaluation.id
    )

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (COSTS OFF) " + sql.claim_sql(False), parameters)
        plan = "\n".join(row[0] for row in cursor.fetchall())

    # Each of the three searches locks the slot it finds: three LockRows nodes, not six
    # (the planner once wrote the searches twice, to test their answer and to give it).
    assert plan.count("LockRows") == 3, plan


def test_the_claims_one_statement_stays_short_enough_for_psycopg_to_remember(postgres):
    # psycopg converts a statement's placeholders once and remembers the result only for
    # statements up to 4,096 bytes (claim_sql's docstring): a longer claim was converted
    # again on every claim.
    for lead_queue in (False, True):
        assert len(sql.claim_sql(lead_queue).encode()) <= 4096
