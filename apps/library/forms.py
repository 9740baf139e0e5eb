"""The library page's filters and the form that imports a judgement list."""

from django import forms

from apps.evaluations.models import Scale

from .browsing import KIND_CHOICES, Filters

MADE_BY_CHOICES = [("people", "People"), ("judge", "An AI judge")]


class FiltersForm(forms.Form):
    query = forms.CharField(required=False, max_length=500, label="Query contains")
    kind = forms.ChoiceField(required=False, choices=KIND_CHOICES, label="Source")
    grader = forms.CharField(required=False, max_length=254, label="Grader contains")
    scale = forms.ChoiceField(required=False, choices=[("", "Any scale")], label="Scale")
    stale = forms.BooleanField(required=False, label="Stale only")
    disagreeing = forms.BooleanField(required=False, label="Disagreeing only")

    def __init__(self, *args: object, scales: list[str], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        scale = self.fields["scale"]
        assert isinstance(scale, forms.ChoiceField)
        scale.choices = [("", "Any scale"), *((key, key) for key in scales)]

    def filters(self) -> Filters:
        """The filters asked for; a filter that is not valid is left out."""
        data = self.cleaned_data if self.is_valid() else {}
        return Filters(
            query=(data.get("query") or "").strip(),
            kind=data.get("kind") or "",
            grader=(data.get("grader") or "").strip(),
            stale=bool(data.get("stale")),
            disagreeing=bool(data.get("disagreeing")),
            scale=data.get("scale") or "",
        )


class ListImportForm(forms.Form):
    judgements = forms.FileField(label="Judgement list")
    queries = forms.FileField(
        required=False,
        label="Queries file (TREC qrels only)",
        help_text="qid<TAB>query text; without it a qid is itself the query text",
    )
    file_format = forms.ChoiceField(label="Format", choices=[])
    name = forms.CharField(max_length=200, label="Name")
    scale = forms.ChoiceField(choices=Scale.choices, initial=Scale.GRADED)
    made_by = forms.ChoiceField(
        choices=MADE_BY_CHOICES,
        initial="people",
        widget=forms.RadioSelect,
        label="Who made these judgements",
    )

    def __init__(self, *args: object, formats: list[tuple[str, str]], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        file_format = self.fields["file_format"]
        assert isinstance(file_format, forms.ChoiceField)
        file_format.choices = formats
