"""The schedule pages through their real URLs: a hostile cron gets the form's own error
beside the field (never a 500), a time zone that depends on the host is refused beside
the time zone field, and every schedule reads in words."""

import pytest
from django.urls import reverse

from apps.schedules import services
from apps.schedules.models import Schedule
from tests.factories import client_for, make_evaluation

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(team_a):
    return make_evaluation(team=team_a, start=False)


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("² * * * *", "Minute: &#x27;²&#x27; is not a number."),
        ("0 ٣ * * *", "Hour: &#x27;٣&#x27; is not a number."),
        ("0 6 * * ¹", "Day of week: &#x27;¹&#x27; is not a number"),
        ("99999999999 * * * *", "Minute: &#x27;99999999999&#x27; is not a number."),
        ("*/99999 * * * *", "Minute: &#x27;99999&#x27; is not a number."),
        ("1,,2 * * * *", "Minute: &#x27;&#x27; is not a number."),
        ("-1 * * * *", "Minute: &#x27;&#x27; is not a number."),
        ("0 6 * * 1-", "Day of week: &#x27;&#x27; is not a number"),
    ],
)
def test_a_hostile_cron_gets_the_forms_own_error_beside_the_field(
    owner, setup, expression, problem
):
    data = {"name": "Nightly", "source": setup.id, "cron": expression, "active": "on"}
    page = client_for(owner).post(reverse("schedules:schedule_list"), data)
    assert page.status_code == 200
    text = page.content.decode()
    assert 'id="id_cron_error"' in text and problem in text, text
    assert not Schedule.objects.exists()


@pytest.mark.parametrize("zone", ["localtime", "Factory", "posixrules", "posix/Europe/Paris"])
def test_a_time_zone_that_depends_on_the_host_is_refused_beside_the_field(owner, team_a, zone):
    page = client_for(owner).post(reverse("schedules:time_zone_save"), {"time_zone": zone})
    assert page.status_code == 200
    text = page.content.decode()
    assert 'id="id_time_zone_error"' in text, text
    assert "An IANA time zone name, e.g. Europe/Paris or UTC" in text
    assert f'value="{zone}"' in text  # kept in the box, to be mended
    team_a.refresh_from_db()
    assert team_a.time_zone == "UTC"


def test_a_named_time_zone_is_saved(owner, team_a):
    page = client_for(owner).post(
        reverse("schedules:time_zone_save"), {"time_zone": "Europe/Paris"}, follow=True
    )
    assert "The team&#x27;s schedules read their times in Europe/Paris." in page.content.decode()
    team_a.refresh_from_db()
    assert team_a.time_zone == "Europe/Paris"


def test_the_pages_read_each_schedule_in_words(owner, team_a, setup):
    services.team_time_zone_set(team=team_a, time_zone="Europe/Paris")
    weekly = services.schedule_create(team=team_a, name="Weekly", source=setup.id, cron="0 9 * * 1")
    lead = client_for(owner)
    listing = lead.get(reverse("schedules:schedule_list")).content.decode()
    assert "Every Monday at 09:00 (Europe/Paris)" in listing
    detail = lead.get(reverse("schedules:schedule_detail", args=[weekly.id])).content.decode()
    assert "Every Monday at 09:00 (Europe/Paris)" in detail
    assert "<code>0 9 * * 1</code>" in detail  # the expression stays beside its words


def test_the_cron_field_is_read_back_as_it_is_typed(owner, team_a):
    lead = client_for(owner)
    words = lead.get(reverse("schedules:cron_words"), {"cron": "*/15 * * * *"})
    assert words.status_code == 200
    assert "Every 15 minutes (UTC)" in words.content.decode()
    problem = lead.get(reverse("schedules:cron_words"), {"cron": "² * * * *"})
    assert problem.status_code == 200
    assert "Minute: &#x27;²&#x27; is not a number." in problem.content.decode()
    empty = lead.get(reverse("schedules:cron_words"), {"cron": " "})
    assert "cron-problem" not in empty.content.decode()


def test_a_grader_cannot_read_cron_words(evaluator):
    answer = client_for(evaluator).get(reverse("schedules:cron_words"), {"cron": "0 6 * * *"})
    assert answer.status_code == 403
