from datetime import timedelta
from typing import Any

from django import forms
from django.utils import timezone

from apps.evaluations.models import Status

from . import evaluation_list as listing
from .keyword_table import KEYWORD_FILTERS, KEYWORDS_PER_PAGE, PAGE_SIZES, PLAIN_SORTS
from .metric_columns import Column


class KeywordTableForm(forms.Form):
    """The keyword table's query string: search, sort, filter, page and page size."""

    q = forms.CharField(required=False, max_length=500)
    sort = forms.CharField(required=False, max_length=40)
    only = forms.ChoiceField(
        required=False, choices=[("", "all keywords"), *KEYWORD_FILTERS.items()]
    )
    page = forms.IntegerField(required=False, min_value=1)
    size = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=None,
        choices=[(size, str(size)) for size in PAGE_SIZES],
    )

    def __init__(self, data: Any, *, sort_keys: list[str]) -> None:
        super().__init__(data)
        self.sort_keys = [*PLAIN_SORTS, *sort_keys]

    def clean_sort(self) -> str:
        sort = self.cleaned_data.get("sort") or "position"
        if sort.removeprefix("-") not in self.sort_keys:
            raise forms.ValidationError(
                f"cannot sort by {sort!r}; sort by one of {', '.join(self.sort_keys)} "
                "(with a leading - for descending)"
            )
        return sort

    def clean_page(self) -> int:
        return self.cleaned_data.get("page") or 1

    def clean_size(self) -> int:
        return self.cleaned_data.get("size") or KEYWORDS_PER_PAGE


class LeaderboardForm(forms.Form):
    """The leaderboard's date range (from, to: inclusive days) and member tag."""

    DEFAULT_DAYS = 30

    def __init__(self, data: Any, *, tags: Any) -> None:
        super().__init__(data)
        self.fields["from"] = forms.DateField(required=False, input_formats=["%Y-%m-%d"])
        self.fields["to"] = forms.DateField(required=False, input_formats=["%Y-%m-%d"])
        self.fields["tag"] = forms.ModelChoiceField(
            required=False, queryset=tags, empty_label="every member"
        )

    def clean(self) -> dict:
        data = super().clean() or {}
        if self.errors:
            return data
        today = timezone.localdate()
        end = data.get("to") or today
        start = data.get("from") or end - timedelta(days=self.DEFAULT_DAYS - 1)
        if start > end:
            self.add_error("from", f"must be on or before to ({end:%Y-%m-%d})")
        data["from"], data["to"] = start, end
        return data


def form_problems(form: forms.Form) -> list[str]:
    """Every error of a form as "field: reason", the way the API names them."""
    return [
        f"{name}: {message}" if name != "__all__" else str(message)
        for name, messages in form.errors.items()
        for message in messages
    ]


class EvaluationListForm(forms.Form):
    """The evaluation list's query string: search, filters (status, model, tag, archived),
    sort, page and page size. A model or tag is one of the team's, by id."""

    q = forms.CharField(required=False, max_length=200)
    status = forms.ChoiceField(required=False, choices=[("", "any status"), *Status.choices])
    archived = forms.ChoiceField(
        required=False, choices=[("", "hidden"), ("0", "hidden"), ("1", "shown too")]
    )
    sort = forms.CharField(required=False, max_length=40)
    page = forms.IntegerField(required=False, min_value=1)
    size = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=None,
        choices=[(size, str(size)) for size in listing.PAGE_SIZES],
    )

    def __init__(self, data: Any, *, choices: listing.ListChoices) -> None:
        super().__init__(data)
        self.fields["model"] = _id_choice("any model", [(m.id, m.name) for m in choices.models])
        self.fields["tag"] = _id_choice("any tag", [(t.id, t.name) for t in choices.tags])
        self.metrics = {column.key: column for column in choices.metrics}

    def clean_sort(self) -> str:
        sort = self.cleaned_data.get("sort") or listing.DEFAULT_SORT
        keys = [*listing.PLAIN_SORTS, *self.metrics]
        if sort.removeprefix("-") not in keys:
            raise forms.ValidationError(
                f"cannot sort by {sort!r}; sort by one of {', '.join(keys)} "
                "(with a leading - for descending)"
            )
        return sort

    def clean_archived(self) -> bool:
        return self.cleaned_data.get("archived") == "1"

    def clean_page(self) -> int:
        return self.cleaned_data.get("page") or 1

    def clean_size(self) -> int:
        return self.cleaned_data.get("size") or listing.EVALUATIONS_PER_PAGE

    def sort_column(self) -> Column | None:
        """The metric the cleaned sort names, if it names one."""
        return self.metrics.get(self.cleaned_data["sort"].removeprefix("-"))


def _id_choice(anything: str, choices: list[tuple[int, str]]) -> forms.TypedChoiceField:
    """One of the team's rows by id (an empty value: any)."""
    return forms.TypedChoiceField(
        required=False, coerce=int, empty_value=None, choices=[("", anything), *choices]
    )


class KeywordNotesForm(forms.Form):
    """A keyword's information need and the lead's notes (the service bounds them)."""

    information_need = forms.CharField(
        required=False,
        strip=False,
        label="Information need",
        help_text="What the searcher wants; graders read it beside the keyword.",
        widget=forms.Textarea(attrs={"rows": 2, "maxlength": 2000}),
    )
    notes = forms.CharField(
        required=False,
        strip=False,
        label="Notes",
        help_text="For leads: what to watch, what was decided. In the exports.",
        widget=forms.Textarea(attrs={"rows": 3, "maxlength": 5000}),
    )
