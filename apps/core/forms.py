"""What forms of several apps share."""

import re
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


_FIELD = re.compile(r"^([a-z_]+)")


def add_problems(form: forms.Form, problems: list[str]) -> None:
    """Each "location: reason" next to the field it names; others above the form.

    A problem about the field as a whole shows only its reason there; one about a part
    of it ("headers line 2", "mapper.id") keeps the part."""
    for problem in problems:
        location, _, reason = problem.partition(": ")
        match = _FIELD.match(location)
        field = match.group(1) if match else None
        if field in form.fields:
            form.add_error(field, reason if location == field else problem)
        else:
            form.add_error(None, problem)
