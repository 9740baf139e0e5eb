"""What the team is told, from where it happens: an evaluation finishing, an AI judge's
run stopping on a failure, a disagreement queue growing past the team's level; and the
e-mails each person switches on and off on the notifications page."""

import json

import pytest
from django.core import mail
from django.urls import reverse

from apps.accounts.models import Membership
from apps.insights.agreement.watch import disagreements_watch
from apps.judges import controls
from apps.judges.models import RunStatus
from apps.judges.services import judge_create
from apps.judges.tests.fake_provider import FakeProvider, Reply
from apps.judging.decisions import snapshot_decide
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.steps import evaluation_finish_now
from apps.notifications import services
from apps.notifications.models import Delivery
from tests.factories import client_for, make_evaluation, make_grader, slots_of

pytestmark = pytest.mark.django_db(transaction=True)


def listening(team, event):
    """A webhook of the team for `event`, at an address nobody answers (the delivery is
    written and tried; what it says is what these tests read)."""
    webhook, _ = services.webhook_create(
        team=team, name=event, url="https://hooks.example.invalid/relevo", events=[event]
    )
    return webhook


def told(event):

    return [
        json.loads(body)
        for body in Delivery.objects.filter(event=event).values_list("body", flat=True)
    ]


def test_a_person_switches_emails_on_and_off_on_the_page(owner, evaluator, team_a):
    page = client_for(evaluator)
    page.post(reverse("notifications:overview"), {"events": ["evaluation.finished"]})
    evaluation_finish_now(evaluation=make_evaluation(team=team_a))
    assert [message.to for message in mail.outbox] == [[evaluator.email]]
    message = mail.outbox[0]
    assert "finished" in message.subject and team_a.name in message.subject
    assert "/evaluations/" in message.body and "Notifications" in message.body

    page.post(reverse("notifications:overview"), {})  # every box unticked
    mail.outbox.clear()
    evaluation_finish_now(evaluation=make_evaluation(team=team_a))
    assert mail.outbox == []
    form = page.get(reverse("notifications:overview")).content.decode()
    assert 'value="evaluation.finished"' in form and "checked" not in form


def test_an_unknown_event_in_the_email_form_is_refused(evaluator):
    answer = client_for(evaluator).post(reverse("notifications:overview"), {"events": ["x.y"]})
    assert answer.status_code == 200 and b"Select a valid choice" in answer.content
    assert services.email_events_of(Membership.objects.get(user=evaluator)) == []


def test_an_evaluation_finishing_tells_its_means(team_a):
    listening(team_a, "evaluation.finished")
    evaluation = make_evaluation(team=team_a, keywords={"q": 2}, metrics=[("precision", 2)])
    for slot in slots_of(evaluation):
        slot_judge(slot_id=slot.id, giver=Giver.recorded(team_a.memberships.first().user), grade=3)
    evaluation.refresh_from_db()
    assert evaluation.status == "finished"  # on its own, with its last grade
    [payload] = told("evaluation.finished")
    assert payload["data"]["graded"] == payload["data"]["results"] == 2
    assert payload["data"]["metrics"] == [{"metric": "P@2", "value": 1.0}]
    assert "finished (2 of 2 results graded): P@2 1.000." in payload["summary"]


def test_an_ai_judge_run_stopping_on_a_failure_is_told(team_a, settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    listening(team_a, "judge_run.failed")
    evaluation = make_evaluation(team=team_a, keywords={"q": 2})
    with FakeProvider() as server:
        judge = judge_create(
            team=team_a,
            name="GPT",
            protocol="openai",
            base_url=server.openai_url,
            model_name="gpt-test",
            api_key="not-a-real-key-events",
        )
        server.script(Reply.error(401, "Incorrect API key"))
        run = controls.run_start(judge=judge, evaluation=evaluation)  # its lane runs here
    run.refresh_from_db()
    assert run.status == RunStatus.PAUSED
    [payload] = told("judge_run.failed")
    assert payload["data"]["judge"] == "GPT" and "rejected" in payload["data"]["reason"]
    assert payload["url"].endswith(reverse("judges:run_detail", args=[run.id]))
    assert "not-a-real-key-events" not in str(payload)


def test_a_disagreement_queue_past_the_level_is_told_once_until_it_falls_back(team_a, owner):
    listening(team_a, "disagreements.above_level")
    services.disagreement_level_set(team=team_a, level="1")
    first, second = make_grader(team_a), make_grader(team_a)
    evaluation = make_evaluation(team=team_a, scale="binary", strategy=3, keywords={"q": 3})
    slots = slots_of(evaluation)  # three per result

    def disagree(result: int) -> None:
        slot_judge(slot_id=slots[3 * result].id, giver=Giver.recorded(first), grade=1)
        slot_judge(slot_id=slots[3 * result + 1].id, giver=Giver.recorded(second), grade=0)

    disagree(0)
    disagree(1)

    assert disagreements_watch() == 1
    assert disagreements_watch() == 0, "told once while it stands"
    [payload] = told("disagreements.above_level")
    assert payload["data"]["disagreements"] == 2 and payload["data"]["level"] == 1

    lead = Membership.objects.get(user=owner, team=team_a)
    snapshot_decide(membership=lead, snapshot_id=slots[0].snapshot_id, grade=1)
    assert disagreements_watch() == 0, "back to the level: nothing to tell, the watch forgets"
    disagree(2)
    assert disagreements_watch() == 1, "past the level again: told again"
    assert len(told("disagreements.above_level")) == 2


def test_a_team_nobody_listens_in_is_not_watched(team_a, django_assert_max_num_queries):
    make_evaluation(team=team_a, scale="binary", strategy=3)
    with django_assert_max_num_queries(2):
        assert disagreements_watch() == 0
