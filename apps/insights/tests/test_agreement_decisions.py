"""A lead's decision on a snapshot: it overrides stage 1 in the metrics pipeline, is
recorded with who and when, can be changed and cleared, and only a lead of the team may
make it. Real commits, so the pipeline runs after each one as in production."""

import pytest
from django.utils import timezone

from apps.accounts.models import Membership
from apps.core.errors import InvalidInput, NotAllowed
from apps.evaluations.models import EvaluationMetric, Keyword, Snapshot
from apps.insights.agreement import selectors
from apps.insights.agreement.disagreement import disagreement_kind
from apps.insights.agreement.report import Ratings, agreement_report
from apps.judging.decisions import snapshot_decide, snapshot_decision_clear
from apps.judging.judgements import Giver, slot_judge
from apps.judging.models import SnapshotDecision
from apps.judging.tests.test_queue_concurrency import run_in_threads
from apps.scoring.models import KeywordMetric
from apps.scoring.services import recompute_evaluation
from tests.factories import make_evaluation, make_grader, make_team, slots_of

pytestmark = pytest.mark.django_db(transaction=True)


def membership_of(user, team) -> Membership:
    return Membership.objects.select_related("user").get(user=user, team=team)


def grade_snapshots(evaluation, grades_per_snapshot, graders):
    """Grade each snapshot's slots in order, slot i by graders[i]; None leaves it empty."""
    slots = slots_of(evaluation)
    strategy = evaluation.strategy
    for number, grades in enumerate(grades_per_snapshot):
        for index, grade in enumerate(grades):
            if grade is not None:
                slot = slots[number * strategy + index]
                slot_judge(
                    slot_id=slot.id,
                    giver=Giver.recorded(graders[index]),
                    grade=grade,
                    reason=f"r{grade}",
                )


def metric(evaluation, name, k):
    return EvaluationMetric.objects.get(evaluation=evaluation, metric=name, k=k).value


def snapshot_at(evaluation, position):
    return Snapshot.objects.get(keyword__evaluation=evaluation, position=position)


@pytest.fixture
def graders(team_a):
    return [make_grader(team_a, f"g{n}@a.test") for n in range(3)]


@pytest.fixture
def tied(team_a, graders):
    """Binary, three slots: a tie (1 vs 0, third slot open) at position 1, then relevant."""
    evaluation = make_evaluation(
        team=team_a, scale="binary", strategy=3, metrics=[("precision", 2)], keywords={"q": 2}
    )
    grade_snapshots(evaluation, [[1, 0, None], [1, 1, 1]], graders)
    return evaluation


def test_a_decision_overrides_stage_one_and_the_metric_follows(tied, admin, team_a):
    assert snapshot_at(tied, 1).value is None  # the tie counts in no metric
    assert metric(tied, "precision", 2) == 1.0  # one non-null value, relevant

    snapshot_decide(
        membership=membership_of(admin, team_a),
        snapshot_id=snapshot_at(tied, 1).id,
        grade=0,
        reason="not the red ones",
    )

    assert snapshot_at(tied, 1).value == 0.0
    assert metric(tied, "precision", 2) == 0.5
    keyword = Keyword.objects.get(evaluation=tied)
    assert (keyword.needs_scoring, keyword.scored_version) == (False, keyword.grade_version)


def test_a_decision_records_who_decided_and_when(tied, admin, team_a):
    before = timezone.now()

    decision = snapshot_decide(
        membership=membership_of(admin, team_a), snapshot_id=snapshot_at(tied, 1).id, grade=1
    )

    stored = SnapshotDecision.objects.get(id=decision.id)
    assert (stored.grade, stored.decided_by, stored.reason) == (1, admin, "")
    assert before <= stored.decided_at <= timezone.now()
    assert stored.evaluation_id == tied.id


def test_a_second_decision_replaces_the_first_and_the_metric_follows_again(
    tied, admin, owner, team_a
):
    snapshot = snapshot_at(tied, 1)
    snapshot_decide(membership=membership_of(admin, team_a), snapshot_id=snapshot.id, grade=0)
    assert metric(tied, "precision", 2) == 0.5

    snapshot_decide(
        membership=membership_of(owner, team_a), snapshot_id=snapshot.id, grade=1, reason="red"
    )

    decision = SnapshotDecision.objects.get(snapshot=snapshot)
    assert (decision.grade, decision.decided_by, decision.reason) == (1, owner, "red")
    assert SnapshotDecision.objects.count() == 1
    assert metric(tied, "precision", 2) == 1.0
    assert snapshot_at(tied, 1).value == 1.0


def test_clearing_a_decision_gives_the_graders_value_back(tied, admin, team_a):
    snapshot = snapshot_at(tied, 1)
    lead = membership_of(admin, team_a)
    snapshot_decide(membership=lead, snapshot_id=snapshot.id, grade=0)

    assert snapshot_decision_clear(membership=lead, snapshot_id=snapshot.id) is True

    assert not SnapshotDecision.objects.exists()
    assert snapshot_at(tied, 1).value is None
    assert metric(tied, "precision", 2) == 1.0
    assert snapshot_decision_clear(membership=lead, snapshot_id=snapshot.id) is False


def test_a_decision_stands_when_a_grader_changes_a_grade_later(tied, admin, team_a, graders):
    snapshot = snapshot_at(tied, 1)
    snapshot_decide(membership=membership_of(admin, team_a), snapshot_id=snapshot.id, grade=0)

    third = slots_of(tied)[2]
    slot_judge(slot_id=third.id, giver=Giver.recorded(graders[2]), grade=1)  # would make it 1

    assert snapshot_at(tied, 1).value == 0.0
    assert metric(tied, "precision", 2) == 0.5


def test_only_a_lead_may_decide_and_nothing_changes_otherwise(tied, evaluator, team_a):
    snapshot = snapshot_at(tied, 1)
    version = Keyword.objects.get(evaluation=tied).grade_version
    grader = membership_of(evaluator, team_a)

    with pytest.raises(NotAllowed, match="owner and its leads"):
        snapshot_decide(membership=grader, snapshot_id=snapshot.id, grade=1)
    with pytest.raises(NotAllowed):
        snapshot_decision_clear(membership=grader, snapshot_id=snapshot.id)

    assert not SnapshotDecision.objects.exists()
    assert Keyword.objects.get(evaluation=tied).grade_version == version


def test_another_teams_snapshot_does_not_exist_for_a_lead(tied, outsider, team_b):
    with pytest.raises(Snapshot.DoesNotExist):
        snapshot_decide(
            membership=membership_of(outsider, team_b),
            snapshot_id=snapshot_at(tied, 1).id,
            grade=1,
        )
    assert not SnapshotDecision.objects.exists()


@pytest.mark.parametrize(
    ("grade", "message"),
    [
        (2, "grade: 2 is not a binary grade (0, 1)"),
        ("1", "grade: '1' is not a binary grade (0, 1)"),
        (None, "grade: None is not a binary grade (0, 1)"),
        (True, "grade: True is not a binary grade (0, 1)"),
    ],
)
def test_a_grade_that_is_not_on_the_scale_is_refused_naming_the_field(
    tied, admin, team_a, grade, message
):
    with pytest.raises(InvalidInput) as error:
        snapshot_decide(
            membership=membership_of(admin, team_a),
            snapshot_id=snapshot_at(tied, 1).id,
            grade=grade,
        )

    assert error.value.problems == [message]
    assert error.value.field == "grade"
    assert not SnapshotDecision.objects.exists()


def test_a_reason_longer_than_the_limit_is_refused_naming_the_field(tied, admin, team_a):
    with pytest.raises(InvalidInput) as error:
        snapshot_decide(
            membership=membership_of(admin, team_a),
            snapshot_id=snapshot_at(tied, 1).id,
            grade=1,
            reason="x" * 2001,
        )
    assert error.value.problems == ["reason: at most 2000 characters (2001 given)"]


def test_a_decision_is_transformed_like_a_grade_for_a_metric_on_another_scale(
    team_a, admin, graders
):
    evaluation = make_evaluation(
        team=team_a, scale="graded", strategy=3, metrics=[("cg", 2), ("precision", 2)],
        keywords={"q": 2},
    )  # fmt: skip
    grade_snapshots(evaluation, [[0, 2, 0], [3, 3, 3]], graders)
    assert metric(evaluation, "precision", 2) == 0.5  # [0, 1, 0] votes 0

    snapshot_decide(
        membership=membership_of(admin, team_a),
        snapshot_id=snapshot_at(evaluation, 1).id,
        grade=2,
    )

    assert snapshot_at(evaluation, 1).value == 2.0
    assert metric(evaluation, "cg", 2) == 5.0
    assert metric(evaluation, "precision", 2) == 1.0  # 2 -> relevant


def test_a_whole_evaluation_recompute_keeps_the_decisions(team_a, admin, graders):
    evaluation = make_evaluation(
        team=team_a, scale="graded", strategy=3, metrics=[("ndcg", 3), ("precision", 3)],
        keywords={"a": 3, "b": 3},
    )  # fmt: skip
    grade_snapshots(evaluation, [[0, 3, 1], [2, 2, None], [1, 3, 0]] * 2, graders)
    lead = membership_of(admin, team_a)
    for position in (1, 3):
        snapshot = Snapshot.objects.get(
            keyword__text="a", keyword__evaluation=evaluation, position=position
        )
        snapshot_decide(membership=lead, snapshot_id=snapshot.id, grade=3)
    values = sorted(KeywordMetric.objects.values_list("keyword__text", "metric", "k", "value"))
    snapshot_values = sorted(Snapshot.objects.values_list("keyword__text", "position", "value"))
    means = dict(EvaluationMetric.objects.values_list("metric", "value"))
    assert len(values) == 4 and all(value is not None for *_key, value in values)

    # Forget everything stored, then recompute the whole evaluation in one go.
    KeywordMetric.objects.update(value=None)
    Snapshot.objects.update(value=None)
    Keyword.objects.update(scored_version=0)
    recompute_evaluation(evaluation_id=evaluation.id)

    assert (
        sorted(KeywordMetric.objects.values_list("keyword__text", "metric", "k", "value")) == values
    )
    assert (
        sorted(Snapshot.objects.values_list("keyword__text", "position", "value"))
        == snapshot_values
    )
    # Means kept incrementally may differ in the last bit from the exact ones.
    assert dict(EvaluationMetric.objects.values_list("metric", "value")) == pytest.approx(means)
    assert ("a", 1, 3.0) in snapshot_values and ("b", 1, 4 / 3) in snapshot_values


@pytest.mark.services
def test_two_leads_deciding_at_once_leave_one_consistent_decision(
    postgres, tied, admin, owner, team_a
):
    snapshot = snapshot_at(tied, 1)
    leads = [membership_of(admin, team_a), membership_of(owner, team_a)]
    version = Keyword.objects.get(evaluation=tied).grade_version

    for _round in range(5):
        _results, errors = run_in_threads(
            2,
            lambda n: snapshot_decide(
                membership=leads[n], snapshot_id=snapshot.id, grade=n, reason=f"lead {n}"
            ),
        )
        assert errors == []
        [decision] = SnapshotDecision.objects.filter(snapshot=snapshot)
        # Grade, reason and author come from the same lead's call, never a mix.
        assert (decision.grade, decision.reason, decision.decided_by_id) in [
            (0, "lead 0", admin.id),
            (1, "lead 1", owner.id),
        ]
        assert snapshot_at(tied, 1).value == float(decision.grade)
    keyword = Keyword.objects.get(evaluation=tied)
    assert keyword.grade_version == version + 10  # every decision marked the keyword
    assert not keyword.needs_scoring


# --- The queue and the ratings, read from the database ---------------------------------


@pytest.mark.parametrize("scale", ["binary", "graded", "detail"])
def test_the_queue_query_finds_exactly_the_snapshots_the_rule_names(team_a, graders, scale):
    patterns = {
        "binary": [[1, 0, None], [1, 1, 0], [0, None, None], [None, 1, 0], [1, 1, 1], [0, 1, None]],
        "graded": [[0, 2, None], [0, 1, 1], [3, 1, 2], [3, None, None], [2, 3, 3], [None, 0, 3]],
        "detail": [[4, 5, 6], [4, 5, 5], [10, 1, None], [7, None, None], [1, 2, 2], [None, 8, 10]],
    }[scale]
    evaluation = make_evaluation(
        team=team_a, scale=scale, strategy=3, metrics=[("cg", 3)], keywords={"a": 3, "b": 3}
    )
    grade_snapshots(evaluation, patterns, graders)
    ids = list(
        Snapshot.objects.filter(keyword__evaluation=evaluation)
        .order_by("keyword__position", "position")
        .values_list("id", flat=True)
    )
    expected = [ids[n] for n, grades in enumerate(patterns) if disagreement_kind(grades, scale)]

    found = list(selectors.disagreements(evaluation).values_list("snapshot_id", flat=True))

    assert found == expected and len(expected) >= 2
    snapshot_decide(
        membership=Membership.objects.get(team=team_a, role="owner"),
        snapshot_id=expected[0],
        grade={"binary": 1, "graded": 2, "detail": 5}[scale],
    )
    assert (
        list(selectors.disagreements(evaluation).values_list("snapshot_id", flat=True))
        == expected[1:]
    )
    assert selectors.open_disagreement_count(evaluation) == len(expected) - 1


def test_the_ratings_read_from_the_database_give_the_same_report_as_plain_lists(team_a, graders):
    evaluation = make_evaluation(
        team=team_a, scale="graded", strategy=3, metrics=[("cg", 3)], keywords={"a": 3}
    )
    patterns = [[0, 2, 3], [1, 1, None], [3, 3, 2]]
    grade_snapshots(evaluation, patterns, graders)
    slot_judge(slot_id=slots_of(evaluation)[5].id, giver=Giver.recorded(None, "vendor"), grade=0)

    agreement = selectors.evaluation_agreement(evaluation)

    triples = [
        (n, graders[i].email, g)
        for n, grades in enumerate(patterns)
        for i, g in enumerate(grades)
        if g is not None
    ] + [(1, "vendor", 0)]
    expected = agreement_report(Ratings.of(triples), scale="graded", ratings_per_item=3)
    assert agreement.report.kappa == expected.kappa
    assert agreement.report.alpha == expected.alpha
    assert (agreement.report.items, agreement.report.graders, agreement.report.grades) == (3, 4, 9)
    by_name = {row.name: row for row in agreement.graders}
    assert set(by_name) == {"g0@a.test", "g1@a.test", "g2@a.test", "vendor"}
    assert by_name["vendor"].imported and not by_name["g0@a.test"].imported
    assert agreement.open_disagreements == 1  # [0, 2, 3]


def test_another_team_never_sees_these_ratings(team_a, graders):
    evaluation = make_evaluation(team=team_a, scale="binary", strategy=3, keywords={"q": 1})
    grade_snapshots(evaluation, [[1, 0, 1]], graders)
    other = make_evaluation(team=make_team(), scale="binary", strategy=3, keywords={"q": 1})

    assert selectors.evaluation_agreement(other).report.grades == 0
    assert selectors.evaluation_agreement(evaluation).report.grades == 3
