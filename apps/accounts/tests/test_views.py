"""The people-and-teams pages: log in and out, password reset, the team switcher, members,
invitations and tags, each used by the cast of team A (owner, admin, evaluator), a lead of
team B (the outsider) and someone not logged in."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import SESSION_KEY
from django.core import mail
from django.test import Client
from django.utils import timezone

from apps.accounts import services
from apps.accounts.models import Invitation, Membership, Role, Tag, User
from apps.accounts.selectors import SESSION_TEAM_KEY
from tests.factories import client_for, finish, make_evaluation, make_grader

pytestmark = pytest.mark.django_db

PASSWORD = "Correct-horse-battery-42"


# --- The cast ---------------------------------------------------------------------------


def membership_of(user: User, team) -> Membership:
    return Membership.objects.get(user=user, team=team)


def invite(team, email: str, role: str = Role.EVALUATOR, tags=()) -> str:
    """An open invitation; returns the token of its link."""
    _invitation, token = services.invitation_create(
        team=team, email=email, role=role, tags=tags, invited_by=None
    )
    return token


def with_password(user: User) -> User:
    user.set_password(PASSWORD)
    user.save(update_fields=["password"])
    return user


def text(response) -> str:
    return response.content.decode()


# --- Log in and out ---------------------------------------------------------------------


def test_the_login_page_asks_for_email_and_password():
    response = Client().get("/accounts/login/")

    assert response.status_code == 200
    assert "Log in to Relevo" in text(response)
    assert 'name="username"' in text(response) and 'name="password"' in text(response)


def test_a_person_logs_in_with_email_and_password_and_lands_on_the_dashboard(team_a, owner):
    with_password(owner)
    client = Client()

    response = client.post("/accounts/login/", {"username": "owner@a.test", "password": PASSWORD})

    assert response.status_code == 302 and response.url == "/"
    assert client.session[SESSION_KEY] == str(owner.pk)
    dashboard = client.get("/")
    assert dashboard.status_code == 200 and "Team A" in text(dashboard)


def test_a_wrong_password_is_refused_with_a_message_and_no_session(team_a, owner):
    with_password(owner)
    client = Client()

    response = client.post("/accounts/login/", {"username": "owner@a.test", "password": "nope"})

    assert response.status_code == 200
    assert 'role="alert"' in text(response)
    assert "correct email address and password" in text(response)
    assert SESSION_KEY not in client.session


def test_logging_in_sends_the_person_to_the_page_they_asked_for(team_a, owner):
    with_password(owner)

    response = Client().post(
        "/accounts/login/?next=/team/tags/",
        {"username": "owner@a.test", "password": PASSWORD, "next": "/team/tags/"},
    )

    assert response.status_code == 302 and response.url == "/team/tags/"


def test_logging_in_never_redirects_to_another_site(team_a, owner):
    with_password(owner)

    response = Client().post(
        "/accounts/login/",
        {"username": "owner@a.test", "password": PASSWORD, "next": "https://evil.test/"},
    )

    assert response.status_code == 302 and response.url == "/"


def test_logout_is_a_post_that_ends_the_session(team_a, owner):
    client = client_for(owner)

    response = client.post("/accounts/logout/")

    assert response.status_code == 302 and response.url == "/accounts/login/"
    assert SESSION_KEY not in client.session
    assert client.get("/").status_code == 302


def test_logout_by_get_is_refused_and_keeps_the_session(team_a, owner):
    client = client_for(owner)

    response = client.get("/accounts/logout/")

    assert response.status_code == 405
    assert client.get("/").status_code == 200


def test_logout_without_the_csrf_token_is_refused(team_a, owner):
    client = client_for(owner, enforce_csrf_checks=True)

    response = client.post("/accounts/logout/")

    assert response.status_code == 403
    assert client.get("/").status_code == 200


# --- Password reset ---------------------------------------------------------------------


def reset_link(message) -> str:
    match = re.search(r"http://testserver(/accounts/reset/[^/\s]+/[^/\s]+/)", message.body)
    assert match, message.body
    return match.group(1)


def test_password_reset_emails_a_link_that_sets_a_new_password(team_a, owner):
    with_password(owner)
    client = Client()

    form = client.get("/accounts/password-reset/")
    sent = client.post("/accounts/password-reset/", {"email": "owner@a.test"})

    assert form.status_code == 200 and "Reset your password" in text(form)
    assert sent.status_code == 302 and sent.url == "/accounts/password-reset/sent/"
    assert "Check your email" in text(client.get(sent.url))
    [message] = mail.outbox
    assert message.to == ["owner@a.test"]
    assert message.subject == "Reset your Relevo password"

    opened = client.get(reset_link(message), follow=True)
    assert opened.status_code == 200 and "Choose a new password" in text(opened)
    set_password_url = opened.redirect_chain[-1][0]

    saved = client.post(
        set_password_url,
        {"new_password1": "Brand-new-secret-77", "new_password2": "Brand-new-secret-77"},
    )
    assert saved.status_code == 302 and saved.url == "/accounts/reset/done/"
    assert "Password saved" in text(client.get(saved.url))

    login = Client().post(
        "/accounts/login/", {"username": "owner@a.test", "password": "Brand-new-secret-77"}
    )
    assert login.status_code == 302 and login.url == "/"
    old = Client().post("/accounts/login/", {"username": "owner@a.test", "password": PASSWORD})
    assert old.status_code == 200


def test_a_reset_link_works_only_once(team_a, owner):
    with_password(owner)
    client = Client()
    client.post("/accounts/password-reset/", {"email": "owner@a.test"})
    link = reset_link(mail.outbox[0])
    opened = client.get(link, follow=True)
    client.post(
        opened.redirect_chain[-1][0],
        {"new_password1": "Brand-new-secret-77", "new_password2": "Brand-new-secret-77"},
    )

    again = Client().get(link, follow=True)

    assert again.status_code == 200
    assert "This link does not work any more" in text(again)


def test_a_reset_to_a_weak_or_mismatched_password_is_refused(team_a, owner):
    with_password(owner)
    client = Client()
    client.post("/accounts/password-reset/", {"email": "owner@a.test"})
    set_password_url = client.get(reset_link(mail.outbox[0]), follow=True).redirect_chain[-1][0]

    weak = client.post(set_password_url, {"new_password1": "123", "new_password2": "123"})
    mismatched = client.post(
        set_password_url,
        {"new_password1": "Brand-new-secret-77", "new_password2": "Brand-new-secret-78"},
    )

    assert weak.status_code == 200 and "too short" in text(weak)
    assert mismatched.status_code == 200 and "didn’t match" in text(mismatched)
    owner.refresh_from_db()
    assert owner.check_password(PASSWORD)


def test_a_reset_for_an_unknown_address_looks_the_same_and_sends_nothing(team_a):
    response = Client().post("/accounts/password-reset/", {"email": "nobody@a.test"})

    assert response.status_code == 302 and response.url == "/accounts/password-reset/sent/"
    assert mail.outbox == []


def test_an_account_made_without_a_password_can_choose_one_by_password_reset(team_a, evaluator):
    assert not evaluator.has_usable_password()

    response = Client().post("/accounts/password-reset/", {"email": "evaluator@a.test"})

    assert response.status_code == 302
    assert [message.to for message in mail.outbox] == [["evaluator@a.test"]]


def test_a_reset_with_a_malformed_email_is_refused_naming_the_field():
    response = Client().post("/accounts/password-reset/", {"email": "not an email"})

    assert response.status_code == 200
    assert "email" in response.context["form"].errors
    assert mail.outbox == []


# --- Who may open what --------------------------------------------------------------------

LEAD_PAGES = ["/team/members/", "/team/tags/"]


@pytest.mark.parametrize(
    "path",
    ["/team/members/", "/team/members/1/", "/team/tags/", "/team/tags/1/"],
)
def test_someone_not_logged_in_is_sent_to_log_in(path):
    response = Client().get(path)

    assert response.status_code == 302
    assert response.url == f"/accounts/login/?next={path}"


@pytest.mark.parametrize(
    "path",
    [
        "/team/switch/",
        "/team/members/",
        "/team/members/{member}/",
        "/team/members/{member}/remove/",
        "/team/tags/",
        "/team/tags/{tag}/",
        "/team/tags/{tag}/delete/",
    ],
)
def test_a_post_by_someone_not_logged_in_is_sent_to_log_in_and_changes_nothing(
    path, team_a, evaluator
):
    tag = Tag.objects.create(team=team_a, name="de")
    member = membership_of(evaluator, team_a)
    path = path.format(member=member.id, tag=tag.id)
    data = {
        "team": team_a.id,
        "email": "x@a.test",
        "role": "admin",
        "name": "x",
        "colour": "#000000",
    }

    response = Client().post(path, data)

    assert response.status_code == 302
    assert response.url == f"/accounts/login/?next={path}"
    member.refresh_from_db()
    assert member.role == Role.EVALUATOR
    assert list(Tag.objects.values_list("name", flat=True)) == ["de"]
    assert Invitation.objects.count() == 0


@pytest.mark.parametrize("path", LEAD_PAGES)
def test_an_evaluator_is_refused_the_lead_pages(path, evaluator):
    response = client_for(evaluator).get(path)

    assert response.status_code == 403
    assert "owner and its leads can do this." in text(response)


def test_an_evaluator_cannot_edit_or_remove_a_member(team_a, admin, evaluator):
    client = client_for(evaluator)
    target = membership_of(admin, team_a)

    edit = client.post(f"/team/members/{target.id}/", {"role": "evaluator"})
    remove = client.post(f"/team/members/{target.id}/remove/")

    assert client.get(f"/team/members/{target.id}/").status_code == 403
    assert (edit.status_code, remove.status_code) == (403, 403)
    target.refresh_from_db()
    assert target.role == Role.ADMIN


def test_an_evaluator_cannot_create_edit_or_delete_a_tag(team_a, evaluator):
    tag = Tag.objects.create(team=team_a, name="de", colour="#112233")
    client = client_for(evaluator)

    created = client.post("/team/tags/", {"name": "fr", "colour": "#445566"})
    edited = client.post(f"/team/tags/{tag.id}/", {"name": "xx", "colour": "#445566"})
    deleted = client.post(f"/team/tags/{tag.id}/delete/")

    assert (created.status_code, edited.status_code, deleted.status_code) == (403, 403, 403)
    assert list(Tag.objects.values_list("name", "colour")) == [("de", "#112233")]


def test_the_lead_links_show_only_for_leads(team_a, owner, evaluator):
    lead_page = text(client_for(owner).get("/"))
    evaluator_page = text(client_for(evaluator).get("/"))

    assert 'href="/team/members/"' in lead_page and 'href="/team/tags/"' in lead_page
    assert 'href="/team/members/"' not in evaluator_page
    assert 'href="/team/tags/"' not in evaluator_page


# --- Team switcher ----------------------------------------------------------------------


def test_a_member_of_two_teams_switches_to_the_other_team(team_a, team_b, evaluator):
    Membership.objects.create(team=team_b, user=evaluator, role=Role.ADMIN)
    client = client_for(evaluator)
    assert 'id="team-select"' in text(client.get("/"))

    response = client.post("/team/switch/", {"team": team_b.id})

    assert response.status_code == 302 and response.url == "/"
    assert client.session[SESSION_TEAM_KEY] == team_b.id
    dashboard = text(client.get("/"))
    assert "<h1>Team B</h1>" in dashboard
    # An admin in team B: the lead pages open, for team B.
    members = client.get("/team/members/")
    assert members.status_code == 200 and "Members of Team B" in text(members)


def test_the_switcher_shows_only_for_someone_in_several_teams(team_a, evaluator):
    page = text(client_for(evaluator).get("/"))

    assert 'id="team-select"' not in page
    assert '<span class="team-name">Team A</span>' in page


def test_switching_to_a_team_you_are_not_in_is_not_found(team_a, team_b, evaluator):
    client = client_for(evaluator)

    response = client.post("/team/switch/", {"team": team_b.id})

    assert response.status_code == 404
    assert SESSION_TEAM_KEY not in client.session
    assert "<h1>Team A</h1>" in text(client.get("/"))


@pytest.mark.parametrize("team", ["", "abc", "999999"])
def test_switching_to_a_malformed_or_missing_team_is_not_found(team, team_a, evaluator):
    client = client_for(evaluator)

    response = client.post("/team/switch/", {"team": team})

    assert response.status_code == 404
    assert SESSION_TEAM_KEY not in client.session


def test_switching_by_get_is_refused(team_a, evaluator):
    response = client_for(evaluator).get("/team/switch/", {"team": team_a.id})

    assert response.status_code == 405


def test_switching_without_the_csrf_token_is_refused(team_a, team_b, evaluator):
    Membership.objects.create(team=team_b, user=evaluator, role=Role.EVALUATOR)
    client = client_for(evaluator, enforce_csrf_checks=True)

    response = client.post("/team/switch/", {"team": team_b.id})

    assert response.status_code == 403
    assert SESSION_TEAM_KEY not in client.session


def test_a_stale_team_choice_falls_back_to_a_team_the_person_is_in(team_a, team_b, evaluator):
    membership = Membership.objects.create(team=team_b, user=evaluator, role=Role.EVALUATOR)
    client = client_for(evaluator)
    client.post("/team/switch/", {"team": team_b.id})
    membership.delete()

    response = client.get("/")

    assert response.status_code == 200 and "<h1>Team A</h1>" in text(response)


# --- Members ----------------------------------------------------------------------------


@pytest.mark.parametrize("lead", ["owner", "admin"])
def test_a_lead_sees_every_member_with_role_and_tags_and_the_pending_invitations(
    lead, request, team_a, owner, admin, evaluator
):
    tag = Tag.objects.create(team=team_a, name="german", colour="#ff0000")
    membership_of(evaluator, team_a).tags.add(tag)
    invite(team_a, "pending@a.test", role=Role.ADMIN)

    response = client_for(request.getfixturevalue(lead)).get("/team/members/")

    page = text(response)
    assert response.status_code == 200
    assert "Members of Team A" in page
    for email in ("owner@a.test", "admin@a.test", "evaluator@a.test"):
        assert f"<td>{email}</td>" in page
    assert re.search(r"evaluator@a\.test</td>\s*<td>Evaluator</td>\s*<td><span class=\"tag\"", page)
    assert ">german</span>" in page
    assert "Waiting for an answer" in page
    assert "pending@a.test (Admin)" in page


def test_the_members_page_shows_no_edit_or_remove_for_the_owner(team_a, owner, evaluator):
    page = text(client_for(owner).get("/team/members/"))

    owner_row = membership_of(owner, team_a)
    evaluator_row = membership_of(evaluator, team_a)
    assert f"/team/members/{owner_row.id}/" not in page
    assert f'href="/team/members/{evaluator_row.id}/"' in page
    assert f'action="/team/members/{evaluator_row.id}/remove/"' in page


def test_the_outsider_sees_their_own_team_and_none_of_team_a(team_a, evaluator, outsider):
    page = text(client_for(outsider).get("/team/members/"))

    assert "Members of Team B" in page
    assert "outsider@b.test" in page
    assert "a.test" not in page


@pytest.mark.parametrize("lead", ["owner", "admin"])
def test_a_lead_invites_by_email_and_the_email_carries_a_working_link(
    lead, request, team_a, owner, admin
):
    tag = Tag.objects.create(team=team_a, name="german")
    client = client_for(request.getfixturevalue(lead))

    response = client.post(
        "/team/members/", {"email": " New@A.test ", "role": "evaluator", "tags": [tag.id]}
    )

    assert response.status_code == 302 and response.url == "/team/members/"
    invitation = Invitation.objects.get()
    assert (invitation.team, invitation.email, invitation.role) == (
        team_a,
        "new@a.test",
        "evaluator",
    )
    assert list(invitation.tags.all()) == [tag]
    [message] = mail.outbox
    assert message.to == ["new@a.test"]
    assert message.subject == "You are invited to Team A on Relevo"
    link = re.search(r"http://testserver(/invitations/[\w-]+/)", message.body)
    assert link, message.body
    page = text(client.get("/team/members/"))
    assert "Invitation sent to new@a.test." in page
    assert "new@a.test (Evaluator)" in page
    join = Client().get(link.group(1))
    assert join.status_code == 200 and "Join Team A" in text(join)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"email": "not-an-email", "role": "evaluator"}, "email"),
        ({"email": "", "role": "evaluator"}, "email"),
        ({"email": "new@a.test", "role": "owner"}, "role"),
        ({"email": "new@a.test", "role": "boss"}, "role"),
    ],
)
def test_an_invitation_with_bad_input_is_refused_naming_the_field(data, field, team_a, owner):
    response = client_for(owner).post("/team/members/", data)

    assert response.status_code == 200
    assert field in response.context["form"].errors
    assert Invitation.objects.count() == 0
    assert mail.outbox == []


def test_an_invitation_with_a_bad_email_shows_the_error_on_the_page(team_a, owner):
    response = client_for(owner).post("/team/members/", {"email": "nope", "role": "evaluator"})

    assert '<ul class="errorlist"' in text(response)
    assert "Enter a valid email address." in text(response)


@pytest.mark.parametrize("page", ["invite", "member"])
def test_a_tag_deleted_meanwhile_is_refused_with_a_visible_reason(page, team_a, owner, evaluator):
    # The lead ticked a tag, then someone deleted it before the form was sent.
    gone = Tag.objects.create(team=team_a, name="german")
    gone_id = gone.id
    gone.delete()
    url = "/team/members/"
    if page == "member":
        url = f"/team/members/{membership_of(evaluator, team_a).id}/"

    response = client_for(owner).post(
        url, {"email": "new@a.test", "role": "evaluator", "tags": [gone_id]}
    )

    assert response.status_code == 200
    assert "tags" in response.context["form"].errors
    assert "Select a valid choice" in text(response)


def test_inviting_someone_already_in_the_team_is_refused_on_the_email(team_a, owner, evaluator):
    response = client_for(owner).post(
        "/team/members/", {"email": "evaluator@a.test", "role": "admin"}
    )

    assert response.status_code == 200
    assert response.context["form"].errors["email"] == [
        "email: evaluator@a.test is already a member"
    ]
    assert Invitation.objects.count() == 0
    assert mail.outbox == []


def test_an_invitation_with_another_teams_tag_is_refused(team_a, team_b, owner):
    foreign = Tag.objects.create(team=team_b, name="german")

    response = client_for(owner).post(
        "/team/members/", {"email": "new@a.test", "role": "evaluator", "tags": [foreign.id]}
    )

    assert response.status_code == 200
    assert "tags" in response.context["form"].errors
    assert Invitation.objects.count() == 0


def test_inviting_without_the_csrf_token_is_refused(team_a, owner):
    client = client_for(owner, enforce_csrf_checks=True)

    response = client.post("/team/members/", {"email": "new@a.test", "role": "evaluator"})

    assert response.status_code == 403
    assert Invitation.objects.count() == 0
    assert mail.outbox == []


def test_an_evaluator_cannot_invite(team_a, evaluator):
    response = client_for(evaluator).post(
        "/team/members/", {"email": "new@a.test", "role": "admin"}
    )

    assert response.status_code == 403
    assert Invitation.objects.count() == 0
    assert mail.outbox == []


# --- One member -------------------------------------------------------------------------


def test_a_lead_opens_a_member_with_their_role_and_tags(team_a, admin, evaluator):
    tag = Tag.objects.create(team=team_a, name="german")
    membership_of(evaluator, team_a).tags.add(tag)

    response = client_for(admin).get(f"/team/members/{membership_of(evaluator, team_a).id}/")

    page = text(response)
    assert response.status_code == 200
    assert "<h1>evaluator@a.test</h1>" in page
    assert '<option value="evaluator" selected>' in page
    assert re.search(rf'value="{tag.id}"[^>]*checked', page)


def test_a_lead_changes_a_members_role_and_tags(team_a, admin, evaluator):
    german, french = (Tag.objects.create(team=team_a, name=n) for n in ("german", "french"))
    target = membership_of(evaluator, team_a)
    target.tags.add(german)
    client = client_for(admin)

    response = client.post(f"/team/members/{target.id}/", {"role": "admin", "tags": [french.id]})

    assert response.status_code == 302 and response.url == "/team/members/"
    target.refresh_from_db()
    assert target.role == Role.ADMIN
    assert list(target.tags.all()) == [french]
    assert "Saved evaluator@a.test." in text(client.get("/team/members/"))


@pytest.mark.parametrize("role", ["owner", "boss", ""])
def test_a_member_cannot_be_given_a_role_other_than_admin_or_evaluator(
    role, team_a, owner, evaluator
):
    target = membership_of(evaluator, team_a)

    response = client_for(owner).post(f"/team/members/{target.id}/", {"role": role})

    assert response.status_code == 200
    assert "role" in response.context["form"].errors
    target.refresh_from_db()
    assert target.role == Role.EVALUATOR


def test_the_owners_role_cannot_be_changed(team_a, owner, admin):
    target = membership_of(owner, team_a)

    response = client_for(admin).post(f"/team/members/{target.id}/", {"role": "evaluator"})

    assert response.status_code == 200
    assert response.context["form"].errors["role"] == ["role: the owner's role cannot be changed"]
    target.refresh_from_db()
    assert target.role == Role.OWNER


def test_a_member_cannot_be_given_another_teams_tag(team_a, team_b, owner, evaluator):
    foreign = Tag.objects.create(team=team_b, name="german")
    target = membership_of(evaluator, team_a)

    response = client_for(owner).post(
        f"/team/members/{target.id}/", {"role": "evaluator", "tags": [foreign.id]}
    )

    assert response.status_code == 200
    assert "tags" in response.context["form"].errors
    assert list(target.tags.all()) == []


def test_the_outsider_cannot_open_edit_or_remove_a_member_of_team_a(team_a, evaluator, outsider):
    target = membership_of(evaluator, team_a)
    client = client_for(outsider)

    opened = client.get(f"/team/members/{target.id}/")
    edited = client.post(f"/team/members/{target.id}/", {"role": "admin"})
    removed = client.post(f"/team/members/{target.id}/remove/")

    assert (opened.status_code, edited.status_code, removed.status_code) == (404, 404, 404)
    assert "belongs to another team" in text(opened)
    target.refresh_from_db()
    assert target.role == Role.EVALUATOR


def test_a_lead_removes_a_member(team_a, admin, evaluator):
    client = client_for(admin)
    target = membership_of(evaluator, team_a)

    response = client.post(f"/team/members/{target.id}/remove/")

    assert response.status_code == 302 and response.url == "/team/members/"
    assert not Membership.objects.filter(id=target.id).exists()
    assert User.objects.filter(email="evaluator@a.test").exists()
    assert "Removed evaluator@a.test from the team." in text(client.get("/team/members/"))
    # The removed person no longer has a team.
    assert client_for(evaluator).get("/").status_code == 403


def test_the_owner_cannot_be_removed(team_a, owner, admin):
    client = client_for(admin)
    target = membership_of(owner, team_a)

    response = client.post(f"/team/members/{target.id}/remove/", follow=True)

    assert response.status_code == 200
    assert "the owner cannot be removed" in text(response)
    assert Membership.objects.filter(id=target.id).exists()


def test_removing_by_get_is_refused(team_a, owner, evaluator):
    target = membership_of(evaluator, team_a)

    response = client_for(owner).get(f"/team/members/{target.id}/remove/")

    assert response.status_code == 405
    assert Membership.objects.filter(id=target.id).exists()


def test_removing_a_member_that_does_not_exist_is_not_found(team_a, owner):
    assert client_for(owner).post("/team/members/999999/remove/").status_code == 404


# --- Tags -------------------------------------------------------------------------------


@pytest.mark.parametrize("lead", ["owner", "admin"])
def test_a_lead_lists_and_adds_tags(lead, request, team_a, owner, admin):
    Tag.objects.create(team=team_a, name="german", colour="#ff0000")
    client = client_for(request.getfixturevalue(lead))

    listed = client.get("/team/tags/")
    added = client.post("/team/tags/", {"name": "  french ", "colour": "#00AA00"})

    assert listed.status_code == 200
    assert '<span class="tag" style="--tag: #ff0000">german</span>' in text(listed)
    assert added.status_code == 302 and added.url == "/team/tags/"
    assert Tag.objects.get(team=team_a, name="french").colour == "#00aa00"
    assert "Added the tag" in text(client.get("/team/tags/"))


def test_the_tags_page_says_when_there_is_none(team_a, owner):
    assert "No tags yet." in text(client_for(owner).get("/team/tags/"))


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"name": "french", "colour": "red"}, "colour"),
        ({"name": "french", "colour": "#12345"}, "colour"),
        ({"name": "french", "colour": "#1234567"}, "colour"),
        ({"name": "french", "colour": ""}, "colour"),
        ({"name": "", "colour": "#123456"}, "name"),
        ({"name": "   ", "colour": "#123456"}, "name"),
        ({"name": "x" * 61, "colour": "#123456"}, "name"),
        ({"name": "german", "colour": "#123456"}, "name"),
    ],
)
def test_a_tag_with_bad_input_is_refused_naming_the_field(data, field, team_a, owner):
    Tag.objects.create(team=team_a, name="german", colour="#ff0000")

    response = client_for(owner).post("/team/tags/", data)

    assert response.status_code == 200
    assert field in response.context["form"].errors
    assert '<ul class="errorlist"' in text(response)
    assert list(Tag.objects.values_list("name", flat=True)) == ["german"]


def test_a_duplicate_tag_name_is_refused_with_a_clear_message(team_a, owner):
    Tag.objects.create(team=team_a, name="german")

    response = client_for(owner).post("/team/tags/", {"name": "german", "colour": "#123456"})

    assert response.context["form"].errors["name"] == [
        "name: the team already has a tag named 'german'"
    ]


def test_two_teams_may_have_tags_of_the_same_name(team_a, team_b, owner):
    Tag.objects.create(team=team_b, name="german")

    response = client_for(owner).post("/team/tags/", {"name": "german", "colour": "#123456"})

    assert response.status_code == 302
    assert Tag.objects.filter(name="german").count() == 2


def test_adding_a_tag_without_the_csrf_token_is_refused(team_a, owner):
    client = client_for(owner, enforce_csrf_checks=True)

    response = client.post("/team/tags/", {"name": "french", "colour": "#123456"})

    assert response.status_code == 403
    assert Tag.objects.count() == 0


def test_a_lead_renames_and_recolours_a_tag(team_a, admin):
    tag = Tag.objects.create(team=team_a, name="german", colour="#ff0000")
    client = client_for(admin)

    opened = client.get(f"/team/tags/{tag.id}/")
    saved = client.post(f"/team/tags/{tag.id}/", {"name": "deutsch", "colour": "#0000FF"})

    assert opened.status_code == 200 and "<h1>Tag german</h1>" in text(opened)
    assert 'value="german"' in text(opened) and 'value="#ff0000"' in text(opened)
    assert saved.status_code == 302 and saved.url == "/team/tags/"
    tag.refresh_from_db()
    assert (tag.name, tag.colour) == ("deutsch", "#0000ff")


def test_a_tag_keeps_its_own_name_when_only_the_colour_changes(team_a, owner):
    tag = Tag.objects.create(team=team_a, name="german", colour="#ff0000")

    response = client_for(owner).post(
        f"/team/tags/{tag.id}/", {"name": "german", "colour": "#00ff00"}
    )

    assert response.status_code == 302
    tag.refresh_from_db()
    assert tag.colour == "#00ff00"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"name": "french", "colour": "#123456"}, "name"),
        ({"name": "german", "colour": "x"}, "colour"),
    ],
)
def test_editing_a_tag_with_bad_input_is_refused_naming_the_field(data, field, team_a, owner):
    tag = Tag.objects.create(team=team_a, name="german", colour="#ff0000")
    Tag.objects.create(team=team_a, name="french")

    response = client_for(owner).post(f"/team/tags/{tag.id}/", data)

    assert response.status_code == 200
    assert field in response.context["form"].errors
    tag.refresh_from_db()
    assert (tag.name, tag.colour) == ("german", "#ff0000")


def test_a_lead_deletes_a_tag_and_members_lose_it(team_a, owner, evaluator):
    tag = Tag.objects.create(team=team_a, name="german")
    membership_of(evaluator, team_a).tags.add(tag)
    client = client_for(owner)

    response = client.post(f"/team/tags/{tag.id}/delete/")

    assert response.status_code == 302 and response.url == "/team/tags/"
    assert not Tag.objects.filter(id=tag.id).exists()
    assert list(membership_of(evaluator, team_a).tags.all()) == []
    assert "Deleted the tag german." in text(client.get("/team/tags/"))


def test_deleting_a_tag_that_restricts_open_evaluations_asks_first_and_names_them(team_a, owner):
    tag = Tag.objects.create(team=team_a, name="german")
    active = make_evaluation(team=team_a, tags=[tag])
    pending = make_evaluation(team=team_a, tags=[tag], start=False)
    finished = make_evaluation(team=team_a, tags=[tag])
    finish(finished)
    client = client_for(owner)

    asked = client.post(f"/team/tags/{tag.id}/delete/")

    assert asked.status_code == 200 and Tag.objects.filter(id=tag.id).exists()
    page = text(asked)
    assert "2 evaluations not yet finished carry this tag" in page
    assert active.name in page and pending.name in page and finished.name not in page
    assert 'name="confirm" value="yes"' in asked.content.decode()

    confirmed = client.post(f"/team/tags/{tag.id}/delete/", {"confirm": "yes"})

    assert confirmed.status_code == 302 and not Tag.objects.filter(id=tag.id).exists()
    assert list(active.tags.all()) == []


def test_deleting_a_tag_by_get_is_refused(team_a, owner):
    tag = Tag.objects.create(team=team_a, name="german")

    assert client_for(owner).get(f"/team/tags/{tag.id}/delete/").status_code == 405
    assert Tag.objects.filter(id=tag.id).exists()


def test_the_outsider_cannot_open_edit_or_delete_a_tag_of_team_a(team_a, outsider):
    tag = Tag.objects.create(team=team_a, name="german", colour="#ff0000")
    client = client_for(outsider)

    opened = client.get(f"/team/tags/{tag.id}/")
    edited = client.post(f"/team/tags/{tag.id}/", {"name": "mine", "colour": "#000000"})
    deleted = client.post(f"/team/tags/{tag.id}/delete/")
    listed = client.get("/team/tags/")

    assert (opened.status_code, edited.status_code, deleted.status_code) == (404, 404, 404)
    tag.refresh_from_db()
    assert (tag.name, tag.colour) == ("german", "#ff0000")
    assert "german" not in text(listed)


# --- Invitations --------------------------------------------------------------------------


def test_someone_new_chooses_a_password_joins_and_is_logged_in(team_a):
    tag = Tag.objects.create(team=team_a, name="german")
    token = invite(team_a, "new@a.test", role=Role.ADMIN, tags=[tag])
    client = Client()

    page = client.get(f"/invitations/{token}/")
    response = client.post(f"/invitations/{token}/", {"password": "A-fresh-password-9"})

    assert page.status_code == 200
    assert "Join Team A" in text(page) and "Choose a password" in text(page)
    assert "new@a.test" in text(page)
    assert response.status_code == 302 and response.url == "/"
    user = User.objects.get(email="new@a.test")
    assert user.check_password("A-fresh-password-9")
    membership = membership_of(user, team_a)
    assert membership.role == Role.ADMIN
    assert list(membership.tags.all()) == [tag]
    assert client.session[SESSION_KEY] == str(user.pk)
    assert client.session[SESSION_TEAM_KEY] == team_a.id
    dashboard = text(client.get("/"))
    assert "Welcome to Team A." in dashboard and "<h1>Team A</h1>" in dashboard


@pytest.mark.parametrize("password", ["", "short", "password123"])
def test_someone_new_must_choose_a_strong_enough_password(password, team_a):
    token = invite(team_a, "new@a.test")
    client = Client()

    response = client.post(f"/invitations/{token}/", {"password": password})

    assert response.status_code == 200
    assert "password" in response.context["form"].errors
    assert not User.objects.filter(email="new@a.test").exists()
    assert SESSION_KEY not in client.session
    assert services.invitation_find(token=token) is not None


def test_an_existing_account_must_type_its_own_password(team_a, team_b, outsider):
    with_password(outsider)
    token = invite(team_a, "outsider@b.test")
    client = Client()

    page = client.get(f"/invitations/{token}/")
    wrong = client.post(f"/invitations/{token}/", {"password": "Not-the-password-1"})
    empty = client.post(f"/invitations/{token}/", {"password": ""})

    assert "You already have an account" in text(page)
    assert wrong.status_code == 200
    assert wrong.context["form"].errors["password"] == ["That is not the password of this account."]
    assert empty.status_code == 200 and "password" in empty.context["form"].errors
    assert not Membership.objects.filter(team=team_a, user=outsider).exists()
    assert SESSION_KEY not in client.session

    joined = client.post(f"/invitations/{token}/", {"password": PASSWORD})

    assert joined.status_code == 302 and joined.url == "/"
    assert membership_of(outsider, team_a).role == Role.EVALUATOR
    assert membership_of(outsider, team_b).role == Role.OWNER
    assert client.session[SESSION_KEY] == str(outsider.pk)
    assert client.session[SESSION_TEAM_KEY] == team_a.id
    outsider.refresh_from_db()
    assert outsider.check_password(PASSWORD)


def test_someone_logged_in_as_the_invited_address_joins_without_a_password(
    team_a, team_b, outsider
):
    token = invite(team_a, "outsider@b.test")
    client = client_for(outsider, enforce_csrf_checks=True)

    page = client.get(f"/invitations/{token}/")
    # What the browser sends: the form holds nothing but its CSRF token.
    response = client.post(
        f"/invitations/{token}/", {"csrfmiddlewaretoken": client.cookies["csrftoken"].value}
    )

    assert 'type="password"' not in text(page)
    assert response.status_code == 302 and response.url == "/"
    assert membership_of(outsider, team_a).role == Role.EVALUATOR
    assert client.session[SESSION_TEAM_KEY] == team_a.id


def test_someone_logged_in_as_another_address_still_types_the_invited_accounts_password(
    team_a, team_b, owner, outsider
):
    with_password(outsider)
    token = invite(team_a, "outsider@b.test")
    client = client_for(owner)

    page = client.get(f"/invitations/{token}/")
    response = client.post(f"/invitations/{token}/", {"password": ""})

    assert "You already have an account" in text(page)
    assert response.status_code == 200 and "password" in response.context["form"].errors
    assert not Membership.objects.filter(team=team_a, user=outsider).exists()
    assert client.session[SESSION_KEY] == str(owner.pk)


def test_a_used_invitation_shows_the_not_valid_page(team_a):
    token = invite(team_a, "new@a.test")
    Client().post(f"/invitations/{token}/", {"password": "A-fresh-password-9"})
    client = Client()

    opened = client.get(f"/invitations/{token}/")
    posted = client.post(f"/invitations/{token}/", {"password": "Another-password-9"})

    assert opened.status_code == 404 and posted.status_code == 404
    assert "This invitation does not work any more" in text(opened)
    assert User.objects.get(email="new@a.test").check_password("A-fresh-password-9")
    assert SESSION_KEY not in client.session


def test_an_expired_invitation_shows_the_not_valid_page_and_lets_nobody_in(team_a):
    token = invite(team_a, "new@a.test")
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    opened = Client().get(f"/invitations/{token}/")
    posted = Client().post(f"/invitations/{token}/", {"password": "A-fresh-password-9"})

    assert opened.status_code == 404 and posted.status_code == 404
    assert "This invitation does not work any more" in text(opened)
    assert not User.objects.filter(email="new@a.test").exists()


def test_a_made_up_token_shows_the_not_valid_page(team_a):
    invite(team_a, "new@a.test")

    response = Client().get("/invitations/made-up-token/")

    assert response.status_code == 404
    assert "This invitation does not work any more" in text(response)


def test_accepting_without_the_csrf_token_is_refused(team_a):
    token = invite(team_a, "new@a.test")

    response = Client(enforce_csrf_checks=True).post(
        f"/invitations/{token}/", {"password": "A-fresh-password-9"}
    )

    assert response.status_code == 403
    assert not User.objects.filter(email="new@a.test").exists()


# --- Query counts -------------------------------------------------------------------------


def build_team_data(team, size: int) -> None:
    """10 members per size unit, each holding two of the team's tags, and pending invitations."""
    tags = [Tag.objects.create(team=team, name=f"tag {size}-{i}") for i in range(5 * size)]
    for i in range(10 * size):
        membership = membership_of(make_grader(team, f"member{i}@a.test"), team)
        membership.tags.add(tags[i % len(tags)], tags[(i + 1) % len(tags)])
    for i in range(3 * size):
        invite(team, f"invited{i}@a.test", tags=tags[:2])


# Measured on SQLite and PostgreSQL, the same at both sizes: every page reads the session,
# the user and their memberships (3); then the members page reads members, their tags,
# invitations and the form's tags (8 in all), a member's page 6 and the tags page 4.
MEMBERS_PAGE_QUERIES = 10
MEMBER_PAGE_QUERIES = 8
TAGS_PAGE_QUERIES = 6


@pytest.mark.parametrize("size", [1, 2])
def test_the_members_page_reads_a_fixed_number_of_queries_however_big_the_team(
    size, team_a, owner, django_assert_max_num_queries
):
    build_team_data(team_a, size)
    client = client_for(owner)

    with django_assert_max_num_queries(MEMBERS_PAGE_QUERIES):
        response = client.get("/team/members/")

    page = text(response)
    assert response.status_code == 200
    assert page.count("@a.test</td>") == 10 * size + 1
    assert page.count("(Evaluator), invited") == 3 * size


@pytest.mark.parametrize("size", [1, 2])
def test_the_tags_page_reads_a_fixed_number_of_queries_however_many_tags(
    size, team_a, owner, django_assert_max_num_queries
):
    build_team_data(team_a, size)
    client = client_for(owner)

    with django_assert_max_num_queries(TAGS_PAGE_QUERIES):
        response = client.get("/team/tags/")

    assert response.status_code == 200
    assert text(response).count('<span class="tag"') == 5 * size


@pytest.mark.parametrize("size", [1, 2])
def test_a_member_page_reads_a_fixed_number_of_queries_however_many_tags(
    size, team_a, owner, django_assert_max_num_queries
):
    build_team_data(team_a, size)
    target = Membership.objects.get(team=team_a, user__email="member0@a.test")
    client = client_for(owner)

    with django_assert_max_num_queries(MEMBER_PAGE_QUERIES):
        response = client.get(f"/team/members/{target.id}/")

    assert response.status_code == 200
    form = text(response).split("<main", 1)[1]  # the header's menu toggle is a checkbox too
    assert form.count('type="checkbox"') == 5 * size
