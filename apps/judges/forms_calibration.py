"""The calibration pages' forms. They only type the input; the rules are the services'
(gold_sets.py, calibration.py), whose problems are put back beside their fields."""

from collections.abc import Sequence
from typing import Any

from django import forms

from .gold_sets import KEYWORDS_DEFAULT, KEYWORDS_MAX, KEYWORDS_MIN


class GoldSetForm(forms.Form):
    name = forms.CharField(required=False)
    baseline = forms.ChoiceField(help_text="An evaluation people graded.")
    candidate = forms.ChoiceField(
        required=False,
        help_text="Optional: an evaluation of the same keywords, to see whether the judge "
        "would change the comparison's verdict.",
    )
    keywords = forms.CharField(
        initial=str(KEYWORDS_DEFAULT),
        help_text=f"How many keywords to draw at random ({KEYWORDS_MIN} to {KEYWORDS_MAX}).",
    )
    seed = forms.CharField(required=False, help_text="Empty: a random one (it is recorded).")

    def __init__(
        self,
        *args: Any,
        baselines: Sequence[Any] = (),
        evaluations: Sequence[Any] = (),
        **kwargs: Any,
    ) -> None:
        """`baselines`: the evaluations people graded; `evaluations`: any of the team's,
        as a candidate (only its lists are read)."""
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        baseline, candidate = self.fields["baseline"], self.fields["candidate"]
        assert isinstance(baseline, forms.ChoiceField) and isinstance(candidate, forms.ChoiceField)
        baseline.choices = [(str(e.id), e.name) for e in baselines]
        candidate.choices = [("", "None")] + [(str(e.id), e.name) for e in evaluations]


class GateForm(forms.Form):
    min_alpha = forms.CharField(
        required=False,
        label="Minimum Krippendorff's alpha",
        help_text="0 to 1; empty: judges may grade without a calibration.",
    )
