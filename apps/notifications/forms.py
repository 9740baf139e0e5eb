"""The notification forms. They only type the input; every rule is the service's."""

from typing import Any

from django import forms

from .models import SUBSCRIBABLE, PayloadFormat

EVENT_CHOICES = [(event.value, event.label) for event in SUBSCRIBABLE]


class WebhookForm(forms.Form):
    name = forms.CharField(required=False)
    url = forms.CharField(
        required=False,
        label="URL",
        # Plain text, so a person sees what they typed, and finds it again after an error.
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
        help_text="Where Relevo POSTs each event (http:// or https://). Stored encrypted; "
        "leave empty to keep the stored one.",
    )
    events = forms.MultipleChoiceField(
        choices=EVENT_CHOICES, required=False, widget=forms.CheckboxSelectMultiple
    )
    payload_format = forms.ChoiceField(choices=PayloadFormat.choices, label="Payload")
    active = forms.BooleanField(
        required=False,
        initial=True,
        label="Send events to this URL",
        help_text="Uncheck to pause: events that happen while it is paused are not sent.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)


class EmailNoticeForm(forms.Form):
    events = forms.MultipleChoiceField(
        choices=EVENT_CHOICES,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="E-mail me when",
    )


class DisagreementLevelForm(forms.Form):
    disagreement_level = forms.CharField(
        label="Disagreements per evaluation",
        help_text="Tell the team when more results than this await a lead's decision.",
    )
