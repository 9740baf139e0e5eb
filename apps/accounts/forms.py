from typing import Any

from django import forms
from django.contrib.auth import forms as auth_forms
from django.contrib.auth.password_validation import validate_password
from django.db.models import QuerySet

from .models import Role, Tag, Team, User


class TagChoiceField(forms.ModelMultipleChoiceField):
    widget = forms.CheckboxSelectMultiple

    def label_from_instance(self, obj: Tag) -> str:
        return obj.name


def team_tags_field(team: Team) -> TagChoiceField:
    return TagChoiceField(queryset=Tag.objects.filter(team=team), required=False)


class InviteForm(forms.Form):
    email = forms.EmailField()
    role = forms.ChoiceField(choices=[(Role.EVALUATOR, "Evaluator"), (Role.ADMIN, "Admin")])

    def __init__(self, *args: Any, team: Team, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["tags"] = team_tags_field(team)


class MembershipForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)

    def __init__(self, *args: Any, team: Team, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["tags"] = team_tags_field(team)


class TagForm(forms.Form):
    name = forms.CharField(max_length=60)
    colour = forms.CharField(
        max_length=7, initial="#2563eb", widget=forms.TextInput(attrs={"type": "color"})
    )


class ApiTokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What it is for, e.g. 'nightly import'")


class AcceptInvitationForm(forms.Form):
    password = forms.CharField(widget=forms.PasswordInput, required=False)

    def __init__(
        self, *args: Any, needs_password: bool, validate_strength: bool, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["password"].required = needs_password
        self.validate_strength = validate_strength

    def clean_password(self) -> str:
        password = self.cleaned_data["password"]
        if password and self.validate_strength:
            validate_password(password)
        return password


class PasswordResetForm(auth_forms.PasswordResetForm):
    """Also reaches people whose account a lead created without a password.

    Such an account has an unusable password; the emailed link is how its owner, who
    proves they hold the address, chooses one. Django's form skips those accounts.
    """

    def get_users(self, email: str) -> QuerySet[User]:
        return User.objects.filter(email__iexact=email, is_active=True)


class LoginForm(auth_forms.AuthenticationForm):
    """Django's log-in form, refusing a password to a member of a team that signs in
    through its identity provider (its owner excepted: the way back in)."""

    def confirm_login_allowed(self, user: Any) -> None:
        super().confirm_login_allowed(user)
        team = sso_team_of(user)
        if team is not None:
            raise forms.ValidationError(
                f"{team.name} signs in with single sign-on: use its button below.",
                code="sso_required",
            )


def sso_team_of(user: User) -> Team | None:
    """A team that requires single sign-on of `user` (not its owner), if any."""
    membership = (
        user.memberships.filter(team__sso_required=True)
        .exclude(role=Role.OWNER)
        .select_related("team")
        .first()
    )
    return membership.team if membership else None
