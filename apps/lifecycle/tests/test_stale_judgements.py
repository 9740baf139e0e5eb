"""Stale judgements: a grade reused from an earlier evaluation whose
document has changed since is marked stale, counted where metrics are read, and sent back
to the queue on a lead's word."""

import pytest

from apps.evaluations.fingerprints import content_fingerprint
from apps.evaluations.models import EvaluationMetric, FeedbackSlot, Snapshot
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.stale import stale_count, stale_requeue
from apps.lifecycle.steps import evaluation_finish_now
from tests.factories import client_for, make_grader, make_team, slots_of

from .test_reuse import graded_evaluation, new_evaluation, start

pytestmark = pytest.mark.django_db

FIRST_RESULT = "red shoes-doc-1"


def change_document(evaluation, **content):
    """The search now shows the first result with other content."""
    Snapshot.objects.filter(keyword__evaluation=evaluation, doc_id=FIRST_RESULT).update(**content)


def copied(evaluation):
    return list(
        FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=False).order_by("id")
    )


def test_the_fingerprint_reads_name_image_and_attributes_in_any_key_order():
    same = content_fingerprint("Red shoe", "", {"brand": "Acme", "price": 10})
    assert same == content_fingerprint("Red shoe", "", {"price": 10, "brand": "Acme"})
    assert same != content_fingerprint("Red shoe", "", {"brand": "Acme", "price": 12})
    assert same != content_fingerprint("Red shoes", "", {"brand": "Acme", "price": 10})
    assert len(same) == 32


def test_a_grade_of_a_document_shown_the_same_way_is_reused_as_it_is(
    django_capture_on_commit_callbacks,
):
    team = make_team()
    graded_evaluation(team, [(make_grader(team, "ann@example.test"), 3)])

    evaluation = start(new_evaluation(team), django_capture_on_commit_callbacks)

    [slot] = copied(evaluation)
    assert slot.reused and not slot.stale
    assert slot.content_fingerprint == content_fingerprint("Result 1", "", {})
    assert stale_count(evaluation.id) == 0


def test_a_grade_of_a_document_that_changed_since_is_marked_stale_and_still_counts(
    django_capture_on_commit_callbacks,
):
    team = make_team()
    ann, bob = make_grader(team, "ann@example.test"), make_grader(team, "bob@example.test")
    graded_evaluation(team, [(ann, 3), (bob, 2)])
    evaluation = new_evaluation(team)
    change_document(evaluation, name="Result 1, new edition")

    evaluation = start(evaluation, django_capture_on_commit_callbacks)

    assert sorted((slot.grade, slot.stale) for slot in copied(evaluation)) == [(2, True), (3, True)]
    assert stale_count(evaluation.id) == 2
    # Not silently dropped: the metrics rest on them, and say so.
    assert EvaluationMetric.objects.get(evaluation=evaluation, metric="ndcg").value is not None


def test_a_copy_of_a_copy_is_judged_against_the_content_first_graded(
    django_capture_on_commit_callbacks,
):
    team = make_team()
    graded_evaluation(team, [(make_grader(team, "ann@example.test"), 3)])
    changed = new_evaluation(team, strategy=1)
    change_document(changed, attributes={"price": 12})
    changed = start(changed, django_capture_on_commit_callbacks)
    evaluation_finish_now(evaluation=changed)
    # The document is back as it was first graded: the copy's copy is not stale.
    evaluation = start(new_evaluation(team, strategy=1), django_capture_on_commit_callbacks)

    [slot] = copied(evaluation)
    assert copied(changed)[0].stale
    assert not slot.stale


def test_a_new_grade_of_a_stale_slot_is_given_on_todays_content(
    django_capture_on_commit_callbacks,
):
    team = make_team()
    ann = make_grader(team, "ann@example.test")
    graded_evaluation(team, [(ann, 3)])
    evaluation = new_evaluation(team)
    change_document(evaluation, image="https://img.example/new.png")
    evaluation = start(evaluation, django_capture_on_commit_callbacks)
    [slot] = copied(evaluation)

    with django_capture_on_commit_callbacks(execute=True):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(ann), grade=1)

    slot.refresh_from_db()
    assert (slot.grade, slot.stale, slot.content_fingerprint) == (1, False, "")
    assert stale_count(evaluation.id) == 0


def test_a_lead_sees_the_stale_count_and_sends_them_back_to_the_queue(
    owner, team_a, django_capture_on_commit_callbacks
):
    graded_evaluation(team_a, [(make_grader(team_a, "ann@example.test"), 3)])
    evaluation = new_evaluation(team_a)
    change_document(evaluation, name="Result 1, new edition")
    evaluation = start(evaluation, django_capture_on_commit_callbacks)
    client = client_for(owner)
    [slot] = copied(evaluation)

    page = client.get(f"/evaluations/{evaluation.id}/").content.decode()
    keyword = slot.keyword
    keyword_page = client.get(f"/evaluations/{evaluation.id}/keywords/{keyword.id}/")

    assert "These metrics rest on <strong>1 stale judgement</strong>" in page
    assert 'data-testid="stale"' in keyword_page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/evaluations/{evaluation.id}/stale/requeue/")

    assert response.status_code == 302
    slot.refresh_from_db()
    assert (slot.grade, slot.grader_id, slot.stale) == (None, None, False)
    evaluation.refresh_from_db()
    assert evaluation.graded_slots == 0
    after = client.get(f"/evaluations/{evaluation.id}/").content.decode()
    assert "1 stale judgement sent back to the queue." in after
    assert 'data-testid="stale-judgements"' not in after
    assert EvaluationMetric.objects.get(evaluation=evaluation, metric="ndcg").value is None


def test_only_a_lead_of_the_team_sends_them_back(evaluator, outsider, team_a):
    evaluation = new_evaluation(team_a)

    assert (
        client_for(evaluator).post(f"/evaluations/{evaluation.id}/stale/requeue/").status_code
        == 403
    )
    assert (
        client_for(outsider).post(f"/evaluations/{evaluation.id}/stale/requeue/").status_code == 404
    )


def test_a_finished_evaluations_stale_judgements_stay(team_a, owner):
    from apps.core.errors import InvalidState

    evaluation = graded_evaluation(team_a, [(make_grader(team_a, "ann@example.test"), 3)])
    FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=False).update(stale=True)

    with pytest.raises(InvalidState):
        stale_requeue(evaluation=evaluation, lead=owner)
    assert stale_count(evaluation.id) == 1
    assert slots_of(evaluation)[0].grade == 3
