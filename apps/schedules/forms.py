"""The schedule forms. They only type the input; every rule is the service's."""

from typing import Any

from django import forms
from django.db.models import QuerySet
from django.urls import reverse_lazy

from apps.insights.gate import SAME_SOURCES

from .gate_asking import SOURCE_RULE_WORDS


class ScheduleForm(forms.Form):
    name = forms.CharField(required=False)
    source = forms.ChoiceField(
        label="Setup",
        help_text="The evaluation each run copies: search model, keywords, scale, strategy, "
        "metrics. With a search model, each run fetches fresh results.",
    )
    cron = forms.CharField(
        required=False,
        label="When (cron)",
        help_text="minute hour day-of-month month day-of-week, in the team's time zone: "
        "'0 6 * * 1-5' is 06:00 on weekdays, '30 2 * * *' every night at 02:30.",
        # Read back in words under the field as it is typed (views.cron_words).
        widget=forms.TextInput(
            attrs={
                "hx-get": reverse_lazy("schedules:cron_words"),
                "hx-trigger": "load, input changed delay:300ms",
                "hx-target": "#cron-words",
                "autocomplete": "off",
                "spellcheck": "false",
            }
        ),
    )
    judge = forms.ChoiceField(
        required=False,
        label="AI judge",
        help_text="Grades each run beside people (optional).",
    )
    min_change = forms.CharField(
        required=False,
        initial="0",
        label="Smallest change that matters",
        help_text="A run worse than the previous one or the baseline by less is no regression.",
    )
    active = forms.BooleanField(
        required=False,
        initial=True,
        label="Run at these times",
        help_text="Uncheck to stop the schedule; Run now still starts a run.",
    )

    def __init__(
        self, *args: Any, evaluations: QuerySet[Any], judges: QuerySet[Any], **kwargs: Any
    ) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        _offer(self, "source", "Choose an evaluation", evaluations)
        _offer(self, "judge", "None: people only", judges)


class TimeZoneForm(forms.Form):
    time_zone = forms.CharField(label="The team's time zone", help_text="e.g. Europe/Paris, UTC")


class GateForm(forms.Form):
    """A baseline and a candidate evaluation, and the gate's options (relevance_gate's)."""

    baseline = forms.ChoiceField(
        help_text="Today's ranking: what the candidate must not be worse than."
    )
    candidate = forms.ChoiceField(help_text="The ranking that wants to ship.")
    metric = forms.CharField(
        required=False,
        label="Metrics",
        help_text="e.g. ndcg@10, precision@5; empty: every metric both evaluations report.",
    )
    min_change = forms.CharField(
        required=False,
        initial="0",
        label="Smallest change that matters",
        help_text="A drop smaller than this, in the metric's units, never fails.",
    )
    sources = forms.ChoiceField(
        required=False,  # a link with no sources asks the gate's default
        label="When people graded one and an AI judge the other",
        choices=list(SOURCE_RULE_WORDS.items()),
        initial=SAME_SOURCES,
    )

    def __init__(self, *args: Any, evaluations: QuerySet[Any], **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        _offer(self, "baseline", "Choose an evaluation", evaluations)
        _offer(self, "candidate", "Choose an evaluation", evaluations)


class GateRunForm(forms.Form):
    """A baseline and a search model to run now on its keywords (relevance_gate --model)."""

    baseline = forms.ChoiceField(
        help_text="Its keywords are asked of the model, in a copy of its setup."
    )
    model = forms.ChoiceField(
        label="Search model", help_text="The candidate ranking, e.g. on staging."
    )
    judge = forms.ChoiceField(
        required=False,
        label="AI judge",
        help_text="Grades the new results beside people (optional).",
    )
    min_change = forms.CharField(required=False, initial="0", label="Smallest change that matters")

    def __init__(
        self,
        *args: Any,
        evaluations: QuerySet[Any],
        models: QuerySet[Any],
        judges: QuerySet[Any],
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("label_suffix", "")
        kwargs.setdefault("prefix", "run")  # beside GateForm on one page: ids apart
        super().__init__(*args, **kwargs)
        _offer(self, "baseline", "Choose an evaluation", evaluations)
        _offer(self, "model", "Choose a search model", models)
        _offer(self, "judge", "None: people grade it", judges)


def _offer(form: forms.Form, name: str, nothing: str, objects: QuerySet[Any]) -> None:
    """The choice field `name` offers the objects by name, after `nothing` (value "")."""
    field = form.fields[name]
    assert isinstance(field, forms.ChoiceField)
    field.choices = [("", nothing), *((o.id, o.name) for o in objects)]
