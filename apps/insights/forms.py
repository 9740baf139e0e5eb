from datetime import timedelta
from typing import Any

from django import forms
from django.utils import timezone

from apps.evaluations.metric_list import parse_metric_list
from apps.evaluations.models import Profile, Scale

from .selectors import KEYWORD_FILTERS, KEYWORDS_PER_PAGE, PAGE_SIZES, PLAIN_SORTS

KIND_CHOICES = [("json", "Evaluation document (JSON)"), ("trec", "TREC run and qrels")]


class ImportForm(forms.Form):
    kind = forms.ChoiceField(choices=KIND_CHOICES, widget=forms.RadioSelect, initial="json")
    document = forms.FileField(required=False, help_text="relevo.evaluation/1 JSON")
    run = forms.FileField(required=False, help_text="qid Q0 docno rank score tag")
    qrels = forms.FileField(required=False, help_text="qid iteration docno grade")
    topics = forms.FileField(required=False, help_text="qid<TAB>keyword text (optional)")
    name = forms.CharField(max_length=200, required=False)
    # The TREC fields are checked in clean(), only when TREC files are imported.
    scale = forms.ChoiceField(choices=Scale.choices, initial=Scale.GRADED, required=False)
    profile = forms.ChoiceField(choices=Profile.choices, initial=Profile.TREC, required=False)
    metrics = forms.CharField(
        initial="ndcg@10, precision@5", help_text="metric@k, separated by commas", required=False
    )
    keep_rank = forms.BooleanField(required=False, help_text="keep the run's rank column")
    relevant_from = forms.IntegerField(
        required=False,
        initial=1,
        min_value=-100,
        max_value=100,
        label="Relevant from",
        help_text="Custom levels: the lowest relevant level (trec_eval -l); the levels are "
        "those the qrels hold",
    )
    zero_without_results = forms.BooleanField(
        required=False,
        label="Judged queries without results count as 0",
        help_text="as trec_eval -c; otherwise they are left out of the means",
    )

    def clean(self) -> dict:
        data = super().clean() or {}
        if data.get("kind") == "json" and not data.get("document"):
            self.add_error("document", "Choose the JSON document to import.")
        if data.get("kind") == "trec":
            if not data.get("run"):
                self.add_error("run", "Choose the run file.")
            if not (data.get("name") or "").strip():
                self.add_error("name", "Name the new evaluation.")
            if not data.get("scale"):
                self.add_error("scale", "Choose the scale of the grades.")
            try:
                data["metric_list"] = parse_metric_list(data.get("metrics", ""))
            except ValueError as error:
                self.add_error("metrics", str(error))
        return data


def form_problems(form: forms.Form) -> list[str]:
    """Every error of a form as "field: reason", the way the API names them."""
    return [
        f"{name}: {message}" if name != "__all__" else str(message)
        for name, messages in form.errors.items()
        for message in messages
    ]


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
