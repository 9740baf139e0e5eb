"""What forms of several apps share."""

import re
from collections.abc import Callable
from typing import Any, TypeVar

from django import forms
from django.db.models import QuerySet

from .errors import InvalidInput

T = TypeVar("T")


def limit_choices(form: forms.BaseForm, name: str, queryset: QuerySet[Any]) -> None:
    """Offer only `queryset` (e.g. one team's objects) in the model choice field `name`.

    A form's fields are typed as any Field; this checks that the field chooses models
    (ModelMultipleChoiceField is a ModelChoiceField too) before setting its queryset."""
    field = form.fields[name]
    if not isinstance(field, forms.ModelChoiceField):
        raise TypeError(f"{name} is not a model choice field")
    field.queryset = queryset


def saved_through(form: forms.Form, save: Callable[[dict[str, Any]], T]) -> T | None:
    """What `save` (a service) answers for the form's data; None when the form is not
    valid or the service found problems, which are then beside their fields."""
    if not form.is_valid():
        return None
    try:
        return save(form.cleaned_data)
    except InvalidInput as error:
        add_problems(form, error.problems)
        return None


_FIELD = re.compile(r"^([a-z_]+)")


def add_problems(form: forms.Form, problems: list[str]) -> None:
    """Each "location: reason" next to the field it names; others above the form.

    A problem about the field as a whole shows only its reason there; one about a part
    of it ("headers line 2", "mapper.id") keeps the part. Either reads as a sentence
    (`as_sentence`)."""
    for problem in problems:
        location, _, reason = problem.partition(": ")
        match = _FIELD.match(location)
        field = match.group(1) if match else None
        if field is not None and field in form.fields:
            form.add_error(field, as_sentence(reason if location == field else problem, field))
        else:  # above the form, the location stays: it says what the problem is about
            form.add_error(None, problem if ": " in problem else as_sentence(problem))


def as_sentence(problem: str, field: str = "") -> str:
    """A service's problem as a person reads it in a form, not as the API words it.

    The API names the field in front ("headers line 2: no ':'"); beside the field itself
    that name is noise, so it goes, keeping the part ("Line 2: no ':'"). Then a capital
    and a full stop: "must be at most 120 seconds" -> "Must be at most 120 seconds."."""
    part_of_a_document = False  # "mapper.id: ...": the part is a key, written as it is
    if field and problem.startswith(field) and problem[len(field) : len(field) + 1] in (" ", "."):
        part_of_a_document = problem[len(field)] == "."
        problem = problem[len(field) + 1 :]
    problem = problem.strip()
    if problem[:1].islower() and not part_of_a_document:
        problem = problem[0].upper() + problem[1:]
    if problem and problem[-1] not in ".!?":
        problem += "."
    return problem
