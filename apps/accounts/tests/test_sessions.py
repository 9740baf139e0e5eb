"""Who is logged in: the session row, the person and their teams read in one plain
SELECT, and every check Django makes on them kept."""

import re

import pytest
from django.contrib.auth import get_user
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import Membership, Session, User
from apps.accounts.selectors import SESSION_TEAM_KEY, current_membership
from apps.accounts.services import member_add
from apps.accounts.sessions import UserBackend
from tests.factories import client_for, make_team

pytestmark = pytest.mark.django_db


def test_the_person_comes_with_their_teams_in_name_order_in_one_statement(team_a, evaluator):
    member_add(team=make_team("Another team"), email=evaluator.email, role="admin")

    with CaptureQueriesContext(connection) as reading:
        user = UserBackend().get_user(evaluator.id)
        teams = [(m.team.name, m.role, m.user is user) for m in user.loaded_memberships]

    assert len(reading.captured_queries) == 1
    assert user == evaluator
    assert teams == [("Another team", "admin", True), ("Team A", "evaluator", True)]


def test_a_person_in_no_team_comes_with_no_memberships(team_a, evaluator):
    Membership.objects.filter(user=evaluator).delete()

    assert UserBackend().get_user(evaluator.id).loaded_memberships == []


def test_an_unknown_or_deactivated_person_is_nobody(team_a, evaluator):
    assert UserBackend().get_user(10**9) is None
    evaluator.is_active = False
    evaluator.save(update_fields=["is_active"])

    assert UserBackend().get_user(evaluator.id) is None


def test_the_working_team_is_chosen_from_the_memberships_read_with_the_person(team_a, evaluator):
    other = make_team("Another team")
    member_add(team=other, email=evaluator.email, role="admin")
    request = RequestFactory().get("/")
    request.session = {SESSION_TEAM_KEY: team_a.id}
    request.user = UserBackend().get_user(evaluator.id)

    with CaptureQueriesContext(connection) as choosing:
        membership = current_membership(request)

    assert choosing.captured_queries == []
    assert (membership.team, membership.role) == (team_a, "evaluator")


def reads_of(table: str, statements: list[str]) -> list[int]:
    """The positions of the statements naming the table (not a longer name)."""
    named = re.compile(rf'(?<![\w"]){table}(?![\w"])|"{table}"')
    return [n for n, sql in enumerate(statements) if named.search(sql)]


def test_a_page_reads_the_session_the_person_and_their_teams_in_one_statement(team_a, evaluator):
    client = client_for(evaluator)

    with CaptureQueriesContext(connection) as page:
        response = client.get("/feedback/")

    assert response.status_code == 200
    statements = [q["sql"] for q in page.captured_queries]
    session = reads_of(Session._meta.db_table, statements)
    assert len(session) == 1
    assert reads_of(User._meta.db_table, statements) == session
    assert reads_of(Membership._meta.db_table, statements) == session


def test_the_session_row_names_the_person_it_logs_in(team_a, evaluator, owner):
    client = client_for(evaluator)
    assert Session.objects.get(session_key=client.session.session_key).user == evaluator

    client.force_login(owner)

    assert Session.objects.get(session_key=client.session.session_key).user == owner


def test_the_person_read_with_the_session_is_used_only_for_the_id_its_data_names(
    team_a, evaluator, owner
):
    client = client_for(evaluator)
    # As if the row named someone else than the signed session data does.
    Session.objects.filter(session_key=client.session.session_key).update(user=owner)

    response = client.get("/feedback/")

    assert response.status_code == 200
    assert response.wsgi_request.user == evaluator


def test_a_new_password_logs_out_the_sessions_made_with_the_old_one(team_a, evaluator):
    client = client_for(evaluator)
    assert client.get("/").status_code == 200

    evaluator.set_password("a-brand-new-password-42")
    evaluator.save(update_fields=["password"])

    response = client.get("/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_logging_out_ends_the_session(team_a, evaluator):
    client = client_for(evaluator)
    request = RequestFactory().get("/")
    request.session = client.session

    assert get_user(request) == evaluator
    client.post("/accounts/logout/")

    assert client.get("/").status_code == 302
