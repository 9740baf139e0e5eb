"""What forms of several apps share."""

from typing import Any

from django import forms
from django.db.models import QuerySet


def limit_choices(form: forms.BaseForm, name: str, queryset: QuerySet[Any]) -> None:
    """Offer only `queryset` (e.g. one team's objects) in the model choice field `name`.

    A form's fields are typed as any Field; this checks that the field chooses models
    (ModelMultipleChoiceField is a ModelChoiceField too) before setting its queryset."""
    field = form.fields[name]
    if not isinstance(field, forms.ModelChoiceField):
        raise TypeError(f"{name} is not a model choice field")
    field.queryset = queryset
