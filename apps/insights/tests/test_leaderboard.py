"""The leaderboard: graded results per member over a date range, by tag, for everyone."""

import json
import re
from datetime import date, datetime, timedelta

import pytest
from django.utils import timezone

from apps.accounts.models import Membership, Tag
from apps.evaluations.models import FeedbackSlot
from apps.insights.leaderboard import leaderboard
from apps.judges import controls, runs
from apps.judges.services import judge_create
from apps.judges.tests.fake_provider import FakeProvider, Reply
from apps.judging.judgements import Action, Giver, slot_judge
from tests.factories import (
    client_for,
    import_graded_by,
    make_evaluation,
    make_grader,
    slots_of,
)

from .lead_pages import text

pytestmark = pytest.mark.django_db


def graded_on(slot, user, moment: datetime, grade: int = 1) -> None:
    slot_judge(slot_id=slot.id, giver=Giver.recorded(user), grade=grade)
    FeedbackSlot.objects.filter(id=slot.id).update(graded_at=moment)


def local(day: date, hour: int = 12) -> datetime:
    return timezone.make_aware(datetime.combine(day, datetime.min.time()).replace(hour=hour))


@pytest.fixture
def today():
    return timezone.localdate()


@pytest.fixture
def graded(team_a, owner, admin, evaluator, today):
    """The evaluator grades 3 results on two days, the admin 1; the owner none. One grade
    of the evaluator's is 40 days old."""
    evaluation = make_evaluation(team=team_a, strategy=3, keywords={"shoes": 2})
    slots = slots_of(evaluation)  # slots 0-2 on the first result, 3-5 on the second
    graded_on(slots[0], evaluator, local(today))
    graded_on(slots[3], evaluator, local(today, hour=8))
    graded_on(slots[1], admin, local(today - timedelta(days=2)))
    other = make_evaluation(team=team_a, keywords={"boots": 2})
    graded_on(slots_of(other)[0], evaluator, local(today - timedelta(days=5)))
    graded_on(slots_of(other)[1], evaluator, local(today - timedelta(days=40)))
    return evaluation


def rows_of(response) -> list[tuple[str, str, str, str]]:
    """(member, graded, share, active days) of each row, in order."""
    return [
        (email, graded, share, days)
        for email, graded, share, days in re.findall(
            r'<tr data-grader="([^"]+)">\s*<td>\d+</td>\s*'
            r"<td>[^<]*(?:<span[^>]*>[^<]*</span>)?</td>\s*"
            r'<td class="number">(\d+)</td>\s*<td class="number">([^<]+)</td>\s*'
            r'<td class="number">(\d+)</td>',
            text(response),
        )
    ]


def test_the_last_30_days_by_default_with_counts_shares_and_active_days(graded, evaluator):
    response = client_for(evaluator).get("/leaderboard/")

    assert response.status_code == 200
    assert rows_of(response) == [
        ("evaluator@a.test", "3", "75.0%", "2"),
        ("admin@a.test", "1", "25.0%", "1"),
        ("owner@a.test", "0", "0.0%", "0"),
    ]
    assert "4 graded results" in text(response)


def test_from_and_to_take_whole_days_both_included(graded, owner, today):
    day = today - timedelta(days=2)

    response = client_for(owner).get(f"/leaderboard/?from={day}&to={day}")

    assert rows_of(response)[0] == ("admin@a.test", "1", "100.0%", "1")
    assert rows_of(response)[1][1] == "0"


def test_a_longer_range_counts_older_grades(graded, owner, today):
    response = client_for(owner).get(f"/leaderboard/?from={today - timedelta(days=60)}")

    assert rows_of(response)[0] == ("evaluator@a.test", "4", "80.0%", "3")


def test_the_tag_filter_keeps_members_holding_the_tag(graded, team_a, owner, admin):
    german = Tag.objects.create(team=team_a, name="german")
    Membership.objects.get(team=team_a, user=admin).tags.add(german)

    response = client_for(owner).get(f"/leaderboard/?tag={german.id}")

    assert rows_of(response) == [("admin@a.test", "1", "100.0%", "1")]
    assert "by members with the tag german" in text(response)


def test_a_reset_grade_no_longer_counts(graded, evaluator, today):

    slot_judge(slot_id=slots_of(graded)[0].id, giver=Giver.lead(), action=Action.CLEAR)

    rows = leaderboard(team_id=graded.team_id, start=today - timedelta(days=29), end=today)
    assert [(row.email, row.graded) for row in rows][0] == ("evaluator@a.test", 2)


def test_a_grade_copied_by_a_reuse_strategy_counts_only_where_it_was_given(
    graded, evaluator, today
):
    FeedbackSlot.objects.filter(id=slots_of(graded)[0].id).update(reused=True)

    rows = leaderboard(team_id=graded.team_id, start=today - timedelta(days=29), end=today)
    assert [(row.email, row.graded) for row in rows][0] == ("evaluator@a.test", 2)


def test_grades_in_another_teams_evaluations_do_not_count(graded, team_b, evaluator, today):
    from apps.accounts.services import member_add

    member_add(team=team_b, email=evaluator.email, role="evaluator")
    foreign = make_evaluation(team=team_b, keywords={"hats": 3})
    for slot in slots_of(foreign):
        graded_on(slot, evaluator, local(today))

    rows = leaderboard(team_id=graded.team_id, start=today, end=today)

    assert [(row.email, row.graded) for row in rows][0] == ("evaluator@a.test", 2)


def test_the_chart_draws_a_bar_per_member_with_grades(graded, evaluator):
    page = text(client_for(evaluator).get("/leaderboard/"))

    data = json.loads(
        re.search(
            r'<script id="leaderboard-chart" type="application/json">(.*?)</script>', page
        ).group(1)
    )
    assert data["kind"] == "bar"
    assert data["labels"] == ["evaluator@a.test", "admin@a.test"]
    assert data["series"][0]["values"] == [3, 1]
    assert '<canvas data-chart="leaderboard-chart"' in page


def test_with_no_grades_there_is_no_chart_but_every_member(team_a, owner, evaluator):
    page = text(client_for(owner).get("/leaderboard/"))

    assert '<canvas data-chart="leaderboard-chart"' not in page
    assert 'data-grader="evaluator@a.test"' in page and 'data-grader="owner@a.test"' in page


def test_the_outsider_sees_only_their_own_team(graded, outsider):
    page = text(client_for(outsider).get("/leaderboard/"))

    assert "a.test" not in page.split("</header>")[1]
    assert 'data-grader="outsider@b.test"' in page


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ("from=yesterday", "from: Enter a valid date."),
        ("to=2026-02-30", "to: Enter a valid date."),
        ("from=2026-03-10&to=2026-03-01", "from: must be on or before to (2026-03-01)"),
        ("tag=banana", "tag: Select a valid choice."),
    ],
)
def test_bad_input_is_refused_naming_the_field(query, problem, team_a, evaluator):
    response = client_for(evaluator).get(f"/leaderboard/?{query}")

    assert response.status_code == 400
    assert problem in text(response)


def test_a_tag_of_another_team_is_refused(team_a, team_b, owner):
    foreign = Tag.objects.create(team=team_b, name="theirs")

    response = client_for(owner).get(f"/leaderboard/?tag={foreign.id}")

    assert response.status_code == 400
    assert "tag: Select a valid choice." in text(response)


def test_someone_not_logged_in_is_sent_to_log_in():
    response = client_for(None).get("/leaderboard/")

    assert response.status_code == 302 and response.url.startswith("/accounts/login/")


def test_the_leaderboard_costs_the_same_queries_for_many_members(
    team_a, owner, today, django_assert_max_num_queries
):
    evaluation = make_evaluation(team=team_a, keywords={"shoes": 30})
    for n, slot in enumerate(slots_of(evaluation)):
        graded_on(slot, make_grader(team_a), local(today - timedelta(days=n % 7)))
    client = client_for(owner)
    client.get("/")

    with django_assert_max_num_queries(7):
        response = client.get("/leaderboard/")
    assert len(rows_of(response)) == 31  # the owner and thirty graders


def test_days_are_the_teams_local_days(settings, team_a, owner, evaluator):
    settings.TIME_ZONE = "Pacific/Auckland"  # far from UTC: local and UTC days differ
    evaluation = make_evaluation(team=team_a, keywords={"shoes": 2})
    first, second = slots_of(evaluation)
    graded_on(first, evaluator, local(date(2026, 3, 10), hour=23))
    graded_on(second, evaluator, local(date(2026, 3, 11), hour=0))

    both = leaderboard(team_id=team_a.id, start=date(2026, 3, 10), end=date(2026, 3, 11))
    first_day = leaderboard(team_id=team_a.id, start=date(2026, 3, 10), end=date(2026, 3, 10))

    assert [(r.email, r.graded, r.active_days) for r in both][0] == ("evaluator@a.test", 2, 2)
    assert [(r.email, r.graded, r.active_days) for r in first_day][0] == (
        "evaluator@a.test",
        1,
        1,
    )


def test_an_imported_grade_naming_a_member_is_not_their_work(graded, team_a, evaluator):
    imported = import_graded_by(team_a, "evaluator@a.test", [3, 2])
    assert FeedbackSlot.objects.filter(evaluation=imported, grader=evaluator).count() == 2

    response = client_for(evaluator).get("/leaderboard/")

    assert rows_of(response)[0] == ("evaluator@a.test", "3", "75.0%", "2")
    assert "4 graded results" in text(response)


def test_an_imported_grade_given_again_here_counts_for_whoever_gave_it(
    graded, team_a, admin, today
):
    imported = import_graded_by(team_a, "evaluator@a.test", [3])
    (slot,) = slots_of(imported)

    slot_judge(slot_id=slot.id, giver=Giver.recorded(admin), grade=1)

    rows = leaderboard(team_id=team_a.id, start=today, end=today)
    assert [(row.email, row.graded) for row in rows if row.email == "admin@a.test"] == [
        ("admin@a.test", 1)
    ]


def test_an_ai_judges_grades_are_counted_apart_from_peoples(graded, team_a, owner, settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True  # the model server is on this machine
    evaluation = make_evaluation(team=team_a, scale="binary", keywords={"red shoes": 2})
    with FakeProvider() as server:
        server.script(
            Reply.openai(
                '{"judgements": [{"id": "r1", "grade": 1, "reason": "Red."},'
                ' {"id": "r2", "grade": 0, "reason": "Blue."}]}'
            )
        )
        judge = judge_create(
            team=team_a,
            name="Shoe expert",
            protocol="openai",
            base_url=server.openai_url,
            model_name="gpt-test",
            api_key="not-a-real-key",
        )
        run = controls.run_start(judge=judge, evaluation=evaluation)
        runs.run_step(run_id=run.id)

    response = client_for(owner).get("/leaderboard/")

    people, judges = text(response).split('data-testid="judge-leaderboard"')
    assert rows_of(response)[0] == ("evaluator@a.test", "3", "75.0%", "2")
    assert "4 graded results" in people and "Shoe expert" not in people
    assert re.search(r"Shoe expert .*?</td>.*?<td class=\"number\">2</td>", judges, re.S)
    # On the lead's dashboard, the judges' grades of today stand apart from the lead's own.
    dashboard = text(client_for(owner).get("/"))
    assert "You graded 0 results today." in dashboard
    assert "The team's AI judges graded 2 results today, counted apart from people's" in dashboard
