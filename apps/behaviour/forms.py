"""The behaviour pages' forms: a log to import, a click model's judgements to make, and a
list of them to grade an evaluation with. The services check every value again and name
what is wrong; these give the page its fields."""

from django import forms

from apps.engine.clicks import MIN_IMPRESSIONS

from .click_judgements import MAX_MIN_IMPRESSIONS, SCALES
from .fitting import ClickModel
from .models import LogFormat


class LogImportForm(forms.Form):
    name = forms.CharField(max_length=200)
    file_format = forms.ChoiceField(label="Format", choices=LogFormat.choices)
    queries = forms.FileField(required=False, label="UBI queries (ubi_queries, JSON Lines)")
    events = forms.FileField(required=False, label="UBI events (ubi_events, JSON Lines)")
    log = forms.FileField(
        required=False,
        label="CSV click log (query, document, position, clicked[, session, timestamp])",
    )


class ClickJudgementsForm(forms.Form):
    model = forms.ChoiceField(
        choices=ClickModel.choices,
        initial=ClickModel.PBM,
        help_text="PBM: the position-based model; DBN: the dynamic Bayesian network; "
        "COEC: clicks over expected clicks; CTR: the click-through rate",
    )
    scale = forms.ChoiceField(choices=[(scale, scale) for scale in SCALES], initial="graded")
    min_impressions = forms.IntegerField(
        min_value=1,
        max_value=MAX_MIN_IMPRESSIONS,
        initial=MIN_IMPRESSIONS,
        label="Minimum impressions",
        help_text="below this, a document makes no judgement for a query",
    )
    thresholds = forms.CharField(
        required=False,
        max_length=500,
        help_text="ascending, one per grade above the lowest (0.1, 0.3, 0.6); empty: "
        "fitted against people's grades",
    )
    name = forms.CharField(
        required=False, max_length=200, help_text='empty: "clicks: PBM, <the log\'s dates>"'
    )


class ClickGradingForm(forms.Form):
    judgement_list = forms.ChoiceField(label="Click judgements", choices=[])

    def __init__(self, *args: object, lists: list[tuple[int, str]], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        field = self.fields["judgement_list"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [(str(list_id), name) for list_id, name in lists]
