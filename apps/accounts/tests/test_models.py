"""Rules the database itself enforces for people and teams, whatever the code path."""

import pytest
from django.db import IntegrityError, transaction

from apps.accounts.models import Membership, Role, Tag, User
from tests.factories import make_grader, make_team

pytestmark = pytest.mark.django_db


def make_user(email: str) -> User:
    return User.objects.create_user(email=email)


def test_a_person_has_one_membership_per_team():
    team = make_team()
    grader = make_grader(team)

    with pytest.raises(IntegrityError), transaction.atomic():
        Membership.objects.create(team=team, user=grader, role=Role.ADMIN)

    assert Membership.objects.filter(team=team, user=grader).count() == 1


def test_a_person_may_be_a_member_of_several_teams():
    grader = make_grader(make_team())

    Membership.objects.create(team=make_team(), user=grader, role=Role.EVALUATOR)

    assert Membership.objects.filter(user=grader).count() == 2


def test_a_team_has_only_one_owner():
    team = make_team()

    with pytest.raises(IntegrityError), transaction.atomic():
        Membership.objects.create(team=team, user=make_user("second@example.test"), role="owner")

    assert Membership.objects.filter(team=team, role=Role.OWNER).count() == 1


def test_a_member_cannot_be_promoted_to_a_second_owner():
    team = make_team()
    grader = make_grader(team)

    with pytest.raises(IntegrityError), transaction.atomic():
        Membership.objects.filter(team=team, user=grader).update(role=Role.OWNER)


def test_a_team_may_have_many_admins_and_evaluators():
    team = make_team()
    for number in range(2):
        make_grader(team, role="admin", email=f"admin{number}@example.test")
        make_grader(team, role="evaluator", email=f"evaluator{number}@example.test")

    assert Membership.objects.filter(team=team).count() == 5


def test_one_person_may_own_several_teams():
    make_team(owner="ada@example.test")
    make_team(owner="ada@example.test")

    assert Membership.objects.filter(user__email="ada@example.test", role="owner").count() == 2


def test_tag_names_are_unique_within_a_team():
    team = make_team()
    Tag.objects.create(team=team, name="shoes")

    with pytest.raises(IntegrityError), transaction.atomic():
        Tag.objects.create(team=team, name="shoes")

    assert Tag.objects.filter(team=team).count() == 1


def test_a_tag_name_may_be_used_again_by_another_team():
    first, second = make_team(), make_team()

    Tag.objects.create(team=first, name="shoes")
    Tag.objects.create(team=second, name="shoes")

    assert Tag.objects.filter(name="shoes").count() == 2


def test_two_people_cannot_share_an_email_address():
    make_user("ada@example.test")

    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create(email="ada@example.test")
