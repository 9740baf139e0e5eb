from typing import Any

from django import forms

from apps.accounts.models import Role

from .provisioning import MAX_GROUP_LENGTH


class RuleForm(forms.Form):
    provider = forms.ChoiceField(label="Identity provider")
    group = forms.CharField(
        max_length=MAX_GROUP_LENGTH,
        help_text="the group's name as the provider lists it in the person's groups",
    )
    role = forms.ChoiceField(
        choices=[(Role.EVALUATOR.value, "Evaluator"), (Role.ADMIN.value, "Admin")],
        initial=Role.EVALUATOR.value,
    )

    def __init__(self, *args: Any, providers: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["provider"].choices = providers  # type: ignore[attr-defined]


class RequiredForm(forms.Form):
    sso_required = forms.BooleanField(
        required=False,
        label="Members sign in with single sign-on only",
        help_text="The owner keeps a password, the way back in if the provider is down.",
    )
