"""The lead's forms for a new evaluation and for editing a pending one.

They only type the input (a choice, a number, JSON, the metric@k list); every rule is the
services', whose located problems ("metrics[1].k: ...") are put back next to their field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from django import forms

from apps.accounts.models import Tag
from apps.core import bounded_json
from apps.core.forms import as_sentence, limit_choices
from apps.endpoints.models import SearchModel
from apps.evaluations.metric_list import metric_text, parse_metric_list
from apps.evaluations.models import Evaluation, Keyword, Profile, Reuse, Scale

from .editing import LOCKED_ONCE_STARTED
from .keyword_editing import MAX_ADDED_AT_ONCE

# What a new evaluation measures unless the lead says otherwise, per native scale.
DEFAULT_METRICS = {
    Scale.BINARY: "precision@10, ap@10, rr@10",
    Scale.GRADED: "ndcg@10, precision@10",
    Scale.DETAIL: "ndcg_d@10, precision@10",
    Scale.CUSTOM: "ndcg@10, precision@10",
}
# The form's fields for a custom scale's levels, and their keys in scale_levels.
LEVEL_FIELDS = {
    "levels_lowest": "lowest",
    "levels_highest": "highest",
    "levels_relevant_from": "relevant_from",
    "levels_labels": "labels",
}
KEYWORD_LIMIT = Keyword._meta.get_field("text").max_length or 500
# Services name some places differently from the form's fields.
FIELD_OF_LOCATION = {
    "model": "search_model",
    "scale_levels": "levels_lowest",
    "scale_levels.lowest": "levels_lowest",
    "scale_levels.highest": "levels_highest",
    "scale_levels.relevant_from": "levels_relevant_from",
    "scale_levels.labels": "levels_labels",
    "scale_levels.keys": "levels_labels",
}
_LOCATION = re.compile(r"^([a-z_]+)")


def keyword_list(text: str) -> list[str]:
    """The keywords typed one per line, trimmed, without blanks and repeats, in order."""
    return list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))


def keyword_lines_cleaned(text: str) -> list[str]:
    """keyword_list's keywords, or the first line that is too long as the field's error."""
    too_long = [
        number
        for number, line in enumerate(text.splitlines(), 1)
        if len(line.strip()) > KEYWORD_LIMIT
    ]
    if too_long:
        raise forms.ValidationError(f"line {too_long[0]} is longer than {KEYWORD_LIMIT} characters")
    return keyword_list(text)


def suggested_name(model_name: str, taken: Iterable[str]) -> str:
    """ "<model> 1", or the number after the highest one already used with that name (in
    any case, as a team's names are unique in any case)."""
    pattern = re.compile(rf"^{re.escape(model_name)} (\d+)$", re.IGNORECASE)
    used = [int(match.group(1)) for name in taken if (match := pattern.match(name.strip()))]
    return f"{model_name} {max(used, default=0) + 1}"


def put_problems(form: forms.Form, problems: list[str]) -> None:
    """Each "location: reason" next to the field it names (the reason alone when the
    location is the field itself, as a sentence: apps.core.forms.as_sentence); any other
    problem above the form."""
    for problem in problems:
        location, _, reason = problem.partition(": ")
        match = _LOCATION.match(location)
        name = match.group(1) if match else ""
        field = FIELD_OF_LOCATION.get(location) or FIELD_OF_LOCATION.get(name, name)
        if field in form.fields:
            whole = location == name or location in FIELD_OF_LOCATION
            # A part keeps the API's location ("metrics[0].k: ..."): it says which entry.
            form.add_error(field, as_sentence(reason) if whole else problem)
        else:
            form.add_error(None, problem)


def _textarea(rows: int, *, code: bool = False, placeholder: str = "") -> forms.Textarea:
    attrs = {"rows": str(rows)}
    if code:
        attrs |= {"class": "code", "spellcheck": "false"}
    if placeholder:
        attrs["placeholder"] = placeholder
    return forms.Textarea(attrs=attrs)


class EvaluationForm(forms.Form):
    search_model = forms.ModelChoiceField(
        queryset=SearchModel.objects.none(),
        required=False,
        label="Search model",
        empty_label="none — results will be imported",
    )
    name = forms.CharField(required=False)
    description = forms.CharField(required=False, widget=_textarea(2))
    keywords = forms.CharField(
        required=False,
        widget=_textarea(8, placeholder="red shoes\nwinter jacket"),
        help_text="One per line. Blank lines and repeats are skipped.",
    )
    scale = forms.ChoiceField(choices=Scale.choices, initial=Scale.GRADED)
    levels_lowest = forms.IntegerField(
        required=False, label="Lowest level", help_text="Custom levels only, e.g. -2."
    )
    levels_highest = forms.IntegerField(
        required=False, label="Highest level", help_text="At most 10 levels in all, e.g. 4."
    )
    levels_relevant_from = forms.IntegerField(
        required=False,
        label="Relevant from",
        initial=1,
        help_text="The lowest level the binary metrics (P, AP, RR, recall, Success, Rprec) count "
        "as relevant.",
    )
    levels_labels = forms.CharField(
        required=False,
        label="Level names",
        widget=_textarea(4, placeholder="Spam\nJunk\nNot relevant\nRelevant\nHighly relevant"),
        help_text="Optional: one per line, lowest level first; the grader's buttons show them.",
    )
    strategy = forms.TypedChoiceField(
        choices=Evaluation.STRATEGY_CHOICES, coerce=int, initial=1, label="Grades per result"
    )
    profile = forms.ChoiceField(choices=Profile.choices, initial=Profile.SEARCHTWEAK)
    metrics = forms.CharField(
        required=False,
        initial=DEFAULT_METRICS[Scale.GRADED],
        help_text="metric@k, separated by commas, e.g. ndcg@10, precision@5; a metric "
        "alone (ap, ndcg) is computed over the whole list. k goes up to 1000.",
    )
    transformers = forms.CharField(
        required=False,
        label="Transformer rules (JSON)",
        widget=_textarea(4, code=True, placeholder='{"binary": {"0": 0, "1": 0, "2": 1, "3": 1}}'),
        help_text="Optional: how grades map to the scale of each metric. Empty means the defaults.",
    )
    show_position = forms.BooleanField(required=False, label="Show graders each result's position")
    scoring_guidelines = forms.CharField(
        required=False,
        widget=_textarea(6),
        help_text="Markdown. Graders see it next to every result.",
    )
    reuse = forms.ChoiceField(
        choices=Reuse.choices,
        initial=Reuse.NONE,
        label="Reuse earlier grades",
        help_text="From finished evaluations and imported judgement lists of the team on the "
        "same scale: people's grades.",
    )
    reuse_judges = forms.BooleanField(
        required=False,
        label="Copy AI judges' grades too",
        help_text="Only from judges that meet the team's calibration rule. Each copy keeps "
        "saying which judge gave it.",
    )
    auto_restart = forms.BooleanField(
        required=False, label="Start a fresh copy when it finishes (auto-restart)"
    )
    zero_without_results = forms.BooleanField(
        required=False,
        label="Judged queries without results count as 0",
        help_text="As trec_eval -c. Otherwise they are left out of the means.",
    )
    tags = forms.ModelMultipleChoiceField(
        queryset=Tag.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Graders see the evaluation only if they hold every one of its tags.",
    )

    def __init__(self, *args: Any, team_id: int, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")  # labels sit above their fields
        super().__init__(*args, **kwargs)
        limit_choices(self, "search_model", SearchModel.objects.filter(team_id=team_id))
        limit_choices(self, "tags", Tag.objects.filter(team_id=team_id))

    def clean_metrics(self) -> list[tuple[str, int]]:
        try:
            return parse_metric_list(self.cleaned_data["metrics"])
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None

    def clean_transformers(self) -> dict[str, Any]:
        text = self.cleaned_data["transformers"].strip()
        if not text:
            return {}
        try:
            rules = bounded_json.loads(text)
        except bounded_json.JsonLimitError as error:
            raise forms.ValidationError(str(error)) from None
        except json.JSONDecodeError as error:
            raise forms.ValidationError(
                f"not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
            ) from None
        if not isinstance(rules, dict):
            raise forms.ValidationError('must be a JSON object, e.g. {"binary": {"0": 0}}')
        return rules

    def clean_keywords(self) -> list[str]:
        return keyword_lines_cleaned(self.cleaned_data["keywords"])

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        levels = {key: data.pop(field, None) for field, key in LEVEL_FIELDS.items()}
        if data.get("scale") == Scale.CUSTOM and "scale" not in self.fields_locked():
            labels = [line.strip() for line in (levels["labels"] or "").splitlines()]
            levels["labels"] = [label for label in labels if label] or None
            if levels["relevant_from"] is None:
                levels["relevant_from"] = 1
            data["scale_levels"] = {
                key: value for key, value in levels.items() if value is not None
            }
        elif "scale" not in self.fields_locked():
            data["scale_levels"] = None
        needs_keywords = data.get("search_model") and "keywords" in self.fields
        if needs_keywords and not data.get("keywords") and "keywords" not in self.errors:
            self.add_error("keywords", "give at least one keyword for the search model to run")
        return data

    def fields_locked(self) -> tuple[str, ...]:
        return ()


class EvaluationEditForm(EvaluationForm):
    """The settings of a pending evaluation. Keywords change through forms of their own
    on the same page (keyword_views.py), and the settings that shape grades are shown
    disabled once it has started."""

    def __init__(self, *args: Any, evaluation: Evaluation, **kwargs: Any) -> None:
        super().__init__(
            *args, team_id=evaluation.team_id, initial=initial_of(evaluation), **kwargs
        )
        del self.fields["keywords"]
        self.locked: tuple[str, ...] = ()
        self.locked_reason = ""
        if evaluation.started_at is not None:
            self.locked = LOCKED_ONCE_STARTED
            self.locked_reason = (
                "the evaluation has started, and grades given under other rules would mix."
            )
        elif evaluation.graded_slots:
            self.locked = ("scale", "strategy")
            self.locked_reason = "its results already have grades."
        for name in self.locked:
            for field in (name, *LEVEL_FIELDS) if name == "scale" else (name,):
                if field in self.fields:
                    self.fields[field].disabled = True
                    self.fields[field].help_text = "Locked."

    def fields_locked(self) -> tuple[str, ...]:
        return self.locked

    def changes(self) -> dict[str, Any]:
        """The settings to hand to evaluation_update, locked ones left out."""
        data = dict(self.cleaned_data)
        data.pop("metrics")
        data.pop("tags")
        return {name: value for name, value in data.items() if name not in self.locked}


def _shown_level(levels: dict[str, Any] | None, key: str) -> Any:
    value = (levels or {}).get(key)
    return "\n".join(value) if key == "labels" and value else value


def initial_of(evaluation: Evaluation) -> dict[str, Any]:
    return {
        "search_model": evaluation.search_model_id,
        "name": evaluation.name,
        "description": evaluation.description,
        "scale": evaluation.scale,
        **{
            field: _shown_level(evaluation.scale_levels, key) for field, key in LEVEL_FIELDS.items()
        },
        "strategy": evaluation.strategy,
        "profile": evaluation.profile,
        "metrics": ", ".join(metric_text(m.metric, m.k) for m in evaluation.metrics.all()),
        "transformers": json.dumps(evaluation.transformers, indent=2)
        if evaluation.transformers
        else "",
        "show_position": evaluation.show_position,
        "scoring_guidelines": evaluation.scoring_guidelines,
        "reuse": evaluation.reuse,
        "reuse_judges": evaluation.reuse_judges,
        "auto_restart": evaluation.auto_restart,
        "zero_without_results": evaluation.zero_without_results,
        "tags": list(evaluation.tags.all()),
    }


class KeywordForm(forms.Form):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")  # labels sit above their fields
        super().__init__(*args, **kwargs)


class KeywordsAddForm(KeywordForm):
    """Keywords to add to a pending evaluation, typed as on the new-evaluation page."""

    # Not "keywords": the page's settings form must not seem to have that field.
    new_keywords = forms.CharField(
        label="Add keywords",
        widget=_textarea(4, placeholder="red shoes\nwinter jacket"),
        help_text="One per line. Blank lines, repeats and keywords already listed are skipped.",
        error_messages={"required": "type at least one keyword, one per line"},
    )

    def clean_new_keywords(self) -> list[str]:
        keywords = keyword_lines_cleaned(self.cleaned_data["new_keywords"])
        if not keywords:
            raise forms.ValidationError("type at least one keyword, one per line")
        if len(keywords) > MAX_ADDED_AT_ONCE:
            raise forms.ValidationError(
                f"at most {MAX_ADDED_AT_ONCE} keywords at once (got {len(keywords)}); "
                "add the rest in another go"
            )
        return keywords


class KeywordRenameForm(KeywordForm):
    """A keyword's new text; the service checks its length and that it is not listed."""

    keyword = forms.CharField(
        label="Keyword",
        error_messages={"required": "type the keyword's new text"},
    )
