"""The create_team and add_member management commands, run as an operator would."""

from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.accounts.models import Membership, Role, Tag, Team, User
from tests.factories import make_team

pytestmark = pytest.mark.django_db


def run(command: str, *args: str, **options: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out, **options)
    return out.getvalue()


# --- create_team ----------------------------------------------------------------------


def test_create_team_creates_the_team_with_its_owner_and_says_so():
    printed = run("create_team", "Acme", owner="ada@example.test")

    team = Team.objects.get(name="Acme")
    [membership] = Membership.objects.filter(team=team)
    assert membership.user.email == "ada@example.test"
    assert membership.role == Role.OWNER
    assert printed == f"Created team 'Acme' (id {team.id}) owned by ada@example.test\n"


def test_create_team_trims_the_name():
    run("create_team", "  Acme  ", owner="ada@example.test")

    assert list(Team.objects.values_list("name", flat=True)) == ["Acme"]


def test_owner_created_with_a_password_can_log_in_with_it():
    run("create_team", "Acme", owner="ada@example.test", password="correct-horse-42")

    user = authenticate(username="ada@example.test", password="correct-horse-42")
    assert user == User.objects.get(email="ada@example.test")
    assert authenticate(username="ada@example.test", password="wrong-horse-42") is None


def test_owner_created_without_a_password_cannot_log_in():
    run("create_team", "Acme", owner="ada@example.test")

    assert not User.objects.get(email="ada@example.test").has_usable_password()


def test_an_existing_user_becomes_owner_without_a_second_account():
    make_team(name="First", owner="ada@example.test")

    run("create_team", "Second", owner="ada@example.test")

    assert User.objects.filter(email="ada@example.test").count() == 1
    assert Membership.objects.get(team__name="Second").user.email == "ada@example.test"


def test_a_second_team_with_the_same_name_is_refused_naming_the_name():
    make_team(name="Acme")

    with pytest.raises(CommandError, match="a team named 'Acme' already exists"):
        run("create_team", "Acme", owner="ben@example.test")

    assert Team.objects.filter(name="Acme").count() == 1
    assert not User.objects.filter(email="ben@example.test").exists()


def test_a_blank_team_name_is_refused():
    with pytest.raises(CommandError, match="name: required"):
        run("create_team", "   ", owner="ada@example.test")

    assert not Team.objects.exists()


def test_an_owner_address_without_at_sign_is_refused_naming_the_address():
    with pytest.raises(CommandError, match="email: 'not-an-email' is not an email address"):
        run("create_team", "Acme", owner="not-an-email")

    assert not Team.objects.exists()
    assert not User.objects.exists()


def test_create_team_needs_an_owner():
    with pytest.raises(CommandError, match="--owner"):
        run("create_team", "Acme")


def test_owner_given_with_capitals_logs_in_with_the_address_as_typed():
    printed = run("create_team", "Acme", owner="Ada@Example.test", password="correct-horse-42")

    assert "owned by Ada@Example.test" in printed
    assert authenticate(username="Ada@Example.test", password="correct-horse-42") is not None


def test_an_owner_address_with_nothing_after_the_at_sign_is_refused():
    with pytest.raises(CommandError, match="email"):
        run("create_team", "Acme", owner="ada@")


def test_a_team_name_longer_than_the_column_is_refused_naming_the_name():
    with pytest.raises(CommandError, match="name"):
        run("create_team", "x" * 121, owner="ada@example.test")


# --- add_member -----------------------------------------------------------------------


@pytest.fixture
def team() -> Team:
    return make_team(name="Acme", owner="owner@example.test")


def membership_of(team: Team, email: str) -> Membership:
    return Membership.objects.get(team=team, user__email=email)


def tag_names(membership: Membership) -> list[str]:
    return sorted(membership.tags.values_list("name", flat=True))


def test_add_member_creates_the_person_with_role_and_tags_and_says_so(team):
    printed = run("add_member", "Acme", "ben@example.test", role="evaluator", tags="shoes,bags")

    membership = membership_of(team, "ben@example.test")
    assert membership.role == Role.EVALUATOR
    assert tag_names(membership) == ["bags", "shoes"]
    assert sorted(Tag.objects.filter(team=team).values_list("name", flat=True)) == [
        "bags",
        "shoes",
    ]
    assert printed == "ben@example.test is evaluator of 'Acme' (bags, shoes)\n"


def test_add_member_trims_tag_names_and_skips_empty_ones(team):
    run("add_member", "Acme", "ben@example.test", role="evaluator", tags=" shoes , ,bags,")

    assert tag_names(membership_of(team, "ben@example.test")) == ["bags", "shoes"]


def test_add_member_without_tags_says_no_tags(team):
    printed = run("add_member", "Acme", "ben@example.test", role="admin")

    assert tag_names(membership_of(team, "ben@example.test")) == []
    assert printed == "ben@example.test is admin of 'Acme' (no tags)\n"


def test_tags_are_created_in_the_members_team_only(team):
    other = make_team(name="Other")
    Tag.objects.create(team=other, name="shoes")

    run("add_member", "Acme", "ben@example.test", role="evaluator", tags="shoes")

    [tag] = membership_of(team, "ben@example.test").tags.all()
    assert tag.team == team
    assert Tag.objects.filter(name="shoes").count() == 2


def test_a_member_added_with_a_password_can_log_in_with_it(team):
    run("add_member", "Acme", "ben@example.test", role="evaluator", password="correct-horse-42")

    assert authenticate(username="ben@example.test", password="correct-horse-42") is not None


def test_running_add_member_again_changes_role_and_tags_without_duplicating(team):
    run("add_member", "Acme", "ben@example.test", role="evaluator", tags="shoes,bags")

    printed = run("add_member", "Acme", "ben@example.test", role="admin", tags="bags,hats")

    assert Membership.objects.filter(team=team, user__email="ben@example.test").count() == 1
    assert User.objects.filter(email="ben@example.test").count() == 1
    membership = membership_of(team, "ben@example.test")
    assert membership.role == Role.ADMIN
    assert tag_names(membership) == ["bags", "hats"]
    assert Tag.objects.filter(team=team, name="bags").count() == 1
    assert printed == "ben@example.test is admin of 'Acme' (bags, hats)\n"


def test_running_add_member_again_without_tags_removes_them(team):
    run("add_member", "Acme", "ben@example.test", role="evaluator", tags="shoes")

    run("add_member", "Acme", "ben@example.test", role="evaluator")

    assert tag_names(membership_of(team, "ben@example.test")) == []


def test_add_member_to_an_unknown_team_is_refused_naming_the_team():
    with pytest.raises(CommandError, match="no team named 'Nowhere'"):
        run("add_member", "Nowhere", "ben@example.test", role="evaluator")

    assert not User.objects.filter(email="ben@example.test").exists()


def test_the_owners_role_cannot_be_changed(team):
    with pytest.raises(CommandError, match="the owner's role cannot be changed"):
        run("add_member", "Acme", "owner@example.test", role="admin", tags="shoes")

    membership = membership_of(team, "owner@example.test")
    assert membership.role == Role.OWNER
    assert tag_names(membership) == []
    assert not Tag.objects.exists()


def test_the_owners_password_is_left_alone_when_the_role_change_is_refused(team):
    with pytest.raises(CommandError):
        run("add_member", "Acme", "owner@example.test", role="admin", password="new-pass-42")

    assert not User.objects.get(email="owner@example.test").has_usable_password()


@pytest.mark.parametrize("role", ["owner", "grader"])
def test_a_role_other_than_evaluator_or_admin_is_refused_by_the_parser(team, role):
    with pytest.raises(CommandError, match=f"invalid choice: '{role}'"):
        run("add_member", "Acme", "ben@example.test", f"--role={role}")

    assert not User.objects.filter(email="ben@example.test").exists()


def test_add_member_needs_a_role(team):
    with pytest.raises(CommandError, match="--role"):
        run("add_member", "Acme", "ben@example.test")


def test_add_member_with_a_bad_address_is_refused_naming_the_address(team):
    with pytest.raises(CommandError, match="email: 'ben' is not an email address"):
        run("add_member", "Acme", "ben", role="evaluator")

    assert Membership.objects.filter(team=team).count() == 1
