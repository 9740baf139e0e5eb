"""A service's problem as a person reads it in a form (apps/core/forms.py): beside its
field without the field's name in front, as a sentence; above the form as the API
words it, so the location still says what it is about."""

import pytest
from django import forms

from apps.core.forms import add_problems, as_sentence


class EndpointForm(forms.Form):
    name = forms.CharField(required=False)
    headers = forms.CharField(required=False)
    mapper = forms.CharField(required=False)


@pytest.mark.parametrize(
    ("problem", "field", "shown"),
    [
        ("must be at most 120 seconds", "timeout_seconds", "Must be at most 120 seconds."),
        (
            "headers line 2: no ':' (write Name: value)",
            "headers",
            "Line 2: no ':' (write Name: value).",
        ),
        ("mapper.id: required", "mapper", "id: required."),  # a key keeps its case
        ("Already ends well.", "name", "Already ends well."),
        ("'precision@0': k starts at 1", "metrics", "'precision@0': k starts at 1."),
        ("headersmith: no", "headers", "Headersmith: no."),  # not the field's name
    ],
)
def test_a_problem_beside_its_field_reads_as_a_sentence(problem, field, shown):
    assert as_sentence(problem, field) == shown


def test_each_problem_goes_beside_its_field_or_above_the_form():
    form = EndpointForm(data={})
    form.is_valid()

    add_problems(
        form,
        [
            "name: required",
            "headers line 3: 'Bad Header' is not a valid header name",
            "mapper.results: needs exactly one [*] (found 0)",
            "url: #query# appears nowhere",
        ],
    )

    assert form.errors == {
        "name": ["Required."],
        "headers": ["Line 3: 'Bad Header' is not a valid header name."],
        "mapper": ["results: needs exactly one [*] (found 0)."],
        "__all__": ["url: #query# appears nowhere"],
    }
