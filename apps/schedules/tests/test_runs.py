"""Scheduled runs, in process: a due schedule starts one run however many of its times
were missed, each run a copy of the setup that reuses the grades still valid, compared
once finished with the previous run and the team's baseline, the team told of both and
of a regression. The lead's pages: add, edit, run now, remove; bad input named; another
team's schedules 404."""

import json
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.evaluations.models import Evaluation, FeedbackSlot, Status
from apps.evaluations.services import evaluation_create_with_keywords
from apps.judges.models import JudgeRun
from apps.judges.services import judge_create
from apps.judges.tests.fake_provider import FakeProvider, Reply, Seen
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.steps import evaluation_delete
from apps.notifications import services as notifications
from apps.notifications.models import Delivery
from apps.schedules import cron, services
from apps.schedules.models import RunState, Schedule, ScheduledRun
from apps.schedules.runner import scheduled_runs_advance, schedules_run_due
from tests import search_server as search_server_module
from tests.comparison_data import imported_evaluation
from tests.factories import client_for, make_evaluation, make_search_model, slots_of

pytestmark = pytest.mark.django_db(transaction=True)

KEYWORDS = [f"q{n}" for n in range(8)]


@pytest.fixture
def setup(team_a):
    """The setup a schedule copies: eight keywords of two results, binary, P@2."""
    return make_evaluation(
        team=team_a,
        scale="binary",
        metrics=[("precision", 2)],
        keywords={text: 2 for text in KEYWORDS},
        start=False,
    )


@pytest.fixture
def nightly(team_a, owner, setup):
    return services.schedule_create(
        team=team_a, created_by=owner, name="Nightly", source=setup.id, cron="0 6 * * *"
    )


def grade_all(evaluation, grade, who):
    for slot in slots_of(evaluation):
        if slot.grade is None:
            slot_judge(slot_id=slot.id, giver=Giver.recorded(who), grade=grade)


def told(event):
    bodies = Delivery.objects.filter(event=event).order_by("id").values_list("body", flat=True)
    return [json.loads(body) for body in bodies]


def test_a_due_schedule_starts_one_run_however_many_times_were_missed(nightly, team_a):
    # Beat was down three days: three 06:00s passed.
    Schedule.objects.filter(id=nightly.id).update(next_run_at=timezone.now() - timedelta(days=3))

    assert schedules_run_due() == 1
    assert schedules_run_due() == 0, "nothing more is due"

    [run] = ScheduledRun.objects.all()
    assert run.state == RunState.STARTED and run.evaluation.status == Status.ACTIVE
    assert run.evaluation.name.startswith("Nightly ")
    assert run.evaluation.keywords.count() == len(KEYWORDS)
    nightly.refresh_from_db()
    expected = cron.parse("0 6 * * *").next_after(timezone.now(), ZoneInfo(team_a.time_zone))
    assert nightly.next_run_at == expected


def test_a_schedule_not_yet_due_starts_nothing(nightly):
    assert nightly.next_run_at > timezone.now()
    assert schedules_run_due() == 0 and not ScheduledRun.objects.exists()


def test_runs_are_compared_with_the_previous_run_and_the_baseline(nightly, team_a, owner):
    notifications.webhook_create(
        team=team_a,
        name="CI",
        url="https://hooks.example.invalid/relevo",
        events=["schedule.run_compared", "regression.found"],
    )
    baseline = imported_evaluation(
        team_a,
        "Baseline",
        {text: [(f"{text}-b1", 1), (f"{text}-b2", 1)] for text in KEYWORDS},
        metrics=[("precision", 2)],
        scale="binary",
    )
    team_a.baseline_evaluation = baseline
    team_a.save(update_fields=["baseline_evaluation"])

    first = services.run_now(schedule=nightly)
    grade_all(first.evaluation, 0, owner)  # nothing relevant: worse than the baseline
    assert scheduled_runs_advance() == 1
    first.refresh_from_db()
    assert first.state == RunState.COMPARED and first.regression is True
    assert first.against_previous is None
    assert first.against_baseline["outcome"] == "fail"

    second = services.run_now(schedule=nightly)
    second.evaluation.refresh_from_db()
    # Every result of the second run was graded in the first: reused, nothing to grade.
    assert not FeedbackSlot.objects.filter(evaluation=second.evaluation, grade=None).exists()
    assert second.evaluation.status == Status.FINISHED
    assert second.previous_id == first.evaluation_id
    assert scheduled_runs_advance() == 1
    second.refresh_from_db()
    assert second.against_previous["outcome"] == "pass"
    assert second.against_baseline["outcome"] == "fail"

    compared = told("schedule.run_compared")
    assert [c["data"]["evaluation"]["id"] for c in compared] == [
        first.evaluation_id,
        second.evaluation_id,
    ]
    regressions = told("regression.found")
    assert len(regressions) == 2 and regressions[0]["data"]["regressions"] == ["baseline"]
    assert scheduled_runs_advance() == 0, "each run is compared and told once"


def test_a_run_reuses_the_grades_still_valid_and_not_those_of_a_changed_document(
    team_a, owner, search_server, monkeypatch
):
    model = make_search_model(team_a, search_server.base_url)
    setup = evaluation_create_with_keywords(
        team=team_a,
        name="Shoes",
        metrics=[("precision", 5)],
        scale="binary",
        keywords=["red shoes"],
        search_model=model,
    )
    schedule = services.schedule_create(
        team=team_a, name="Nightly", source=setup.id, cron="0 6 * * *"
    )
    first = services.run_now(schedule=schedule)  # its keyword runs here, then it opens
    grade_all(first.evaluation, 1, owner)

    # Before the next run, the second result's title changes on the search system.
    original = search_server_module.documents_for

    def second_result_renamed(keyword, count):
        documents = original(keyword, count)
        documents[1]["_source"]["title"] += " (new edition)"
        return documents

    monkeypatch.setattr(search_server_module, "documents_for", second_result_renamed)
    second = services.run_now(schedule=schedule)

    slots = FeedbackSlot.objects.filter(evaluation=second.evaluation).select_related("snapshot")
    assert [s.snapshot.position for s in slots if s.grade is None] == [2]
    assert all(s.reused and not s.stale for s in slots if s.grade is not None)
    assert len(slots) == 5


def test_a_run_waits_for_its_grades_to_be_compared(nightly, owner):
    run = services.run_now(schedule=nightly)
    grade_all(run.evaluation, 1, owner)
    ungraded = slots_of(run.evaluation)[0]
    FeedbackSlot.objects.filter(id=ungraded.id).update(grade=None)
    Evaluation.objects.filter(id=run.evaluation_id).update(status=Status.ACTIVE)
    assert scheduled_runs_advance() == 0
    run.refresh_from_db()
    assert run.state == RunState.STARTED


def test_the_schedules_ai_judge_grades_each_run(nightly, team_a, settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True

    def grade_everything(seen: Seen) -> Reply:
        schema = seen.body["response_format"]["json_schema"]["schema"]
        ids = schema["properties"]["judgements"]["items"]["properties"]["id"]["enum"]
        judgements = [{"id": i, "grade": 1, "reason": "fits"} for i in ids]
        return Reply.openai(json.dumps({"judgements": judgements}))

    with FakeProvider() as server:
        server.respond_with(grade_everything)
        judge = judge_create(
            team=team_a,
            name="GPT",
            protocol="openai",
            base_url=server.openai_url,
            model_name="gpt-test",
            api_key="not-a-real-key-schedules",
        )
        services.schedule_update(schedule=nightly, judge=judge.id)
        run = services.run_now(schedule=nightly)
        scheduled_runs_advance()  # the run opened: its judge starts (its lanes run here)
    run.refresh_from_db()
    assert JudgeRun.objects.filter(judge=judge, evaluation=run.evaluation).exists()
    assert run.evaluation.status == Status.FINISHED
    assert run.judge_started


def test_a_schedule_whose_setup_was_removed_stops_and_says_why(nightly, setup):
    evaluation_delete(evaluation=setup)
    Schedule.objects.filter(id=nightly.id).update(next_run_at=timezone.now())
    nightly.refresh_from_db()
    assert schedules_run_due() == 0
    nightly.refresh_from_db()
    [run] = ScheduledRun.objects.all()
    assert run.state == RunState.FAILED and "removed" in run.note
    assert not nightly.active and nightly.next_run_at is None and "removed" in nightly.note


def test_the_teams_time_zone_moves_its_schedules(nightly, team_a):
    services.team_time_zone_set(team=team_a, time_zone="Asia/Tokyo")
    nightly.refresh_from_db()
    assert nightly.next_run_at.astimezone(ZoneInfo("Asia/Tokyo")).hour == 6
    with pytest.raises(Exception, match="time_zone: an IANA time zone name"):
        services.team_time_zone_set(team=team_a, time_zone="Mars/Olympus")


# --- The pages ------------------------------------------------------------------------------


def test_a_lead_schedules_an_evaluation_on_the_page_and_runs_it_now(owner, setup):
    lead = client_for(owner)
    page = lead.post(
        reverse("schedules:schedule_list"),
        {
            "name": "Weekdays",
            "source": setup.id,
            "cron": "0 6 * * 1-5",
            "min_change": "0.01",
            "active": "on",
        },
        follow=True,
    )
    schedule = Schedule.objects.get(name="Weekdays")
    assert "Scheduled Weekdays." in page.content.decode()
    assert schedule.min_change == 0.01 and schedule.next_run_at > timezone.now()

    page = lead.post(reverse("schedules:schedule_run_now", args=[schedule.id]), follow=True)
    assert "Started a run" in page.content.decode()
    [run] = ScheduledRun.objects.filter(schedule=schedule)
    assert run.by_hand and run.evaluation.name in page.content.decode()


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"cron": "0 6 * *"}, "Five fields separated by spaces"),
        ({"cron": "0 25 * * *"}, "Hour: 25 is outside 0-23"),
        ({"min_change": "-1"}, "From 0 to 1000."),
        ({"name": ""}, "Required."),
        ({"source": ""}, "This field is required."),
    ],
)
def test_bad_input_is_refused_beside_its_field(owner, setup, fields, problem):
    data = {"name": "Nightly", "source": setup.id, "cron": "0 6 * * *", "active": "on", **fields}
    page = client_for(owner).post(reverse("schedules:schedule_list"), data)
    assert page.status_code == 200 and problem in page.content.decode()
    assert not Schedule.objects.exists()


def test_another_teams_evaluation_or_judge_cannot_be_scheduled(team_a, team_b):
    theirs = make_evaluation(team=team_b, start=False)
    with pytest.raises(Exception, match=f"source: the team has no evaluation {theirs.id}"):
        services.schedule_create(team=team_a, name="X", source=theirs.id, cron="0 6 * * *")


def test_a_source_or_judge_that_is_no_id_is_refused(team_a):
    with pytest.raises(Exception) as refused:
        services.schedule_create(
            team=team_a, name="X", source="9" * 30, cron="0 6 * * *", judge="GPT"
        )
    assert refused.value.problems == [
        "source: an id of one of the team's evaluations",
        "judge: an id of one of the team's judges",
    ]


def test_another_teams_schedule_does_not_exist(nightly, outsider):
    stranger = client_for(outsider)
    for name in ("schedule_detail", "schedule_run_now", "schedule_delete"):
        assert stranger.post(reverse(f"schedules:{name}", args=[nightly.id])).status_code == 404
    assert Schedule.objects.filter(id=nightly.id).exists() and not ScheduledRun.objects.exists()


def test_a_grader_cannot_see_the_schedules(evaluator):
    assert client_for(evaluator).get(reverse("schedules:schedule_list")).status_code == 403
