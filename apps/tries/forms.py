"""The forms of the tries' pages. They only type what a lead wrote (lines into pairs, a
choice into an id); every rule is try_start's, whose problems are put back beside the
field they name, a line's by its number as the lead counts lines in the text box."""

from __future__ import annotations

import re
from typing import Any

from django import forms

from apps.core.typed import parse_id, parse_int
from apps.endpoints.models import SearchModel
from apps.evaluations.models import Evaluation

from .drafting import Draft
from .models import Try
from .starting import DEFAULT_DEPTH, MAX_DEPTH, MAX_NOTES, TryRequest

CHOICES_SHOWN = 500  # the newest evaluations and tries a select offers
MAX_TEXT = 200_000  # what a text box may send; the service bounds each part far lower

PARAMS_HELP = (
    "One name=value per line. A name replaces every parameter of that name the model "
    "sends, and a new name is added. “name=” with nothing after it sends the parameter "
    "with an empty value; a line “-name” drops the model's parameter. Put #boost# in a "
    "value and give a knob boost below to turn it."
)
HEADERS_HELP = (
    "One “Name: value” per line, names in any case; a line “-Name” drops the model's "
    "header. The values are kept encrypted and never shown again."
)
KNOBS_HELP = (
    "One name=value per line: each #name# in the URL, a parameter, a header or the body "
    "becomes the value. Names in lower-case letters, digits and _."
)
BASELINE_HELP = (
    "Blank: the query set's evaluation if it ran this model, else the model's last "
    "evaluation, else its last try."
)
METRICS_HELP = "e.g. ndcg@10, precision@5. Blank: the query set's evaluation's, else nDCG@10."


def _text_area(rows: int, placeholder: str = "", code: bool = True) -> forms.Textarea:
    attrs = {"rows": str(rows), "spellcheck": "false"}
    if code:
        attrs["class"] = "code"
    if placeholder:
        attrs["placeholder"] = placeholder
    return forms.Textarea(attrs=attrs)


def _text(label: str, widget: forms.Widget, help_text: str = "") -> forms.CharField:
    return forms.CharField(
        required=False,
        label=label,
        widget=widget,
        help_text=help_text,
        max_length=MAX_TEXT,
        strip=False,
    )


Pairs = list[tuple[str, str | None]]


def parse_pairs(text: str, *, separator: str, field: str) -> tuple[Pairs, list[int], list[str]]:
    """The pairs written one a line ("name=value", or "-name" to drop it), each pair's
    line number, and every problem as "<field> line N: ...". A line is split at its first
    separator, so a value keeps any further one."""
    pairs: Pairs = []
    lines: list[int] = []
    problems: list[str] = []
    example = "Name: value" if separator == ":" else "name=value"
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        name, found, value = line.partition(separator)
        if not found:
            if line.startswith("-") and line[1:].strip():
                pairs.append((line[1:].strip(), None))
                lines.append(number)
            else:
                problems.append(
                    f"{field} line {number}: no '{separator}' "
                    f"(write {example}, or -name to drop it)"
                )
            continue
        if not name.strip():
            problems.append(f"{field} line {number}: the name before '{separator}' is empty")
            continue
        pairs.append((name.strip(), value.strip()))
        lines.append(number)
    return pairs, lines, problems


def parse_knobs(text: str) -> tuple[dict[str, str], list[str]]:
    pairs, lines, problems = parse_pairs(text, separator="=", field="knobs")
    knobs: dict[str, str] = {}
    for (name, value), number in zip(pairs, lines, strict=True):
        if value is None:
            problems.append(f"knobs line {number}: a knob has a value (write name=value)")
        elif name in knobs:
            problems.append(f"knobs line {number}: {name} is given twice")
        else:
            knobs[name] = value
    return knobs, problems


def pair_lines(pairs: Pairs, *, separator: str) -> str:
    """Pairs as the lead writes them, for a form filled from an earlier try."""
    joiner = ": " if separator == ":" else separator
    return "\n".join(
        f"-{name}" if value is None else f"{name}{joiner}{value}" for name, value in pairs
    )


_INDEXED = re.compile(r"^(params|headers|queries)\[(\d+)\]")


def located(problems: list[str], lines: dict[str, list[int]]) -> list[str]:
    """The service's problems as the lead finds them: "params[1]: ..." as the line the
    second pair was written on, and the baseline's two fields as the form's one."""
    shown = []
    for problem in problems:
        match = _INDEXED.match(problem)
        numbers = lines.get(match.group(1), []) if match else []
        if match and int(match.group(2)) < len(numbers):
            number = numbers[int(match.group(2))]
            problem = f"{match.group(1)} line {number}{problem[match.end() :]}"
        for name in ("baseline_evaluation", "baseline_try"):
            if problem.startswith(name):
                problem = "baseline" + problem[len(name) :]
        shown.append(problem)
    return shown


class TryForm(forms.Form):
    evaluation = forms.ChoiceField(required=False, label="Queries of an evaluation")
    queries = _text(
        "Or these queries, one per line",
        _text_area(5, "red shoes\nrunning socks", code=False),
        "Give one or the other.",
    )
    params = _text("Parameters", _text_area(3, "boost=#boost#\nfq=\n-debug"), PARAMS_HELP)
    keep_headers_of = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)
    headers = _text("Headers", _text_area(2, "X-Ranking: experiment"), HEADERS_HELP)
    body = _text(
        "Body",
        _text_area(4),
        "Blank: the model's body. Anything written here replaces it whole.",
    )
    knobs = _text("Knobs", _text_area(2, "boost=2"), KNOBS_HELP)
    baseline = forms.ChoiceField(required=False, label="Baseline", help_text=BASELINE_HELP)
    metrics = forms.CharField(
        required=False, max_length=500, label="Metrics", help_text=METRICS_HELP
    )
    depth = forms.CharField(
        required=False,
        max_length=40,
        initial=str(DEFAULT_DEPTH),
        label="Depth",
        help_text=f"Results kept per query, 1 to {MAX_DEPTH}.",
    )
    notes = _text("Notes", _text_area(2, "What this try changes, and why", code=False))

    def __init__(self, *args: Any, model: SearchModel, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.model = model
        evaluations = list(
            Evaluation.objects.filter(team_id=model.team_id)
            .order_by("-created_at", "-id")
            .values_list("id", "name")[:CHOICES_SHOWN]
        )
        tries = list(
            Try.objects.filter(search_model=model)
            .order_by("-number")
            .values_list("number", "notes")[:CHOICES_SHOWN]
        )
        choose(
            self, "evaluation", [("", "None: the queries below")], evaluations_choices(evaluations)
        )
        choose(
            self,
            "baseline",
            [("", "The default")],
            [
                ("Evaluations", [(f"evaluation:{i}", name) for i, name in evaluations]),
                (
                    "Earlier tries of this model",
                    [(f"try:{n}", try_label(n, notes)) for n, notes in tries],
                ),
            ],
        )
        self.kept_headers: Pairs = []
        self.kept_from: Try | None = None

    def clean_keep_headers_of(self) -> int | None:
        """An earlier try of this model whose header overrides the new one keeps: their
        values never reach the page, so the form names the try instead."""
        text = self.cleaned_data["keep_headers_of"].strip()
        if not text:
            return None
        number = parse_id(text)
        earlier = Try.objects.filter(search_model=self.model, id=number).first() if number else None
        if earlier is None:
            raise forms.ValidationError("No such try of this model to keep the headers of.")
        self.kept_headers = earlier.draft().headers
        self.kept_from = earlier
        return earlier.id

    def asked(self) -> tuple[TryRequest, list[str], dict[str, list[int]]]:
        """What try_start is asked, the problems found in the lines, and each line-written
        field's line numbers (to place the service's problems)."""
        data = self.cleaned_data
        params, param_lines, problems = parse_pairs(data["params"], separator="=", field="params")
        headers, header_lines, header_problems = parse_pairs(
            data["headers"], separator=":", field="headers"
        )
        knobs, knob_problems = parse_knobs(data["knobs"])
        problems += header_problems + knob_problems
        queries, query_lines = _query_lines(data["queries"])
        kept = [
            (n, v) for n, v in self.kept_headers if n.lower() not in {h.lower() for h, _ in headers}
        ]
        baseline_kind, _, baseline_value = data["baseline"].partition(":")
        asked = TryRequest(
            model=self.model.id,
            evaluation=parse_id(data["evaluation"]),
            queries=queries if queries or not data["evaluation"] else None,
            params=[list(pair) for pair in params],
            headers=[list(pair) for pair in kept + headers],
            body=data["body"] if data["body"].strip() else None,
            knobs=knobs,
            baseline_evaluation=parse_id(baseline_value) if baseline_kind == "evaluation" else None,
            baseline_try=parse_id(baseline_value) if baseline_kind == "try" else None,
            metrics=data["metrics"],
            depth=_depth(data["depth"]),
            notes=data["notes"],
        )
        header_lines = [0] * len(kept) + header_lines  # kept ones were written on no line
        lines = {"params": param_lines, "headers": header_lines, "queries": query_lines}
        return asked, problems, lines


def choose(form: forms.Form, name: str, first: list[Any], rest: list[Any]) -> None:
    field = form.fields[name]
    assert isinstance(field, forms.ChoiceField)
    field.choices = first + rest


def evaluations_choices(evaluations: list[tuple[int, str]]) -> list[tuple[str, str]]:
    return [(str(evaluation_id), name) for evaluation_id, name in evaluations]


def try_label(number: int, notes: str) -> str:
    first = notes.strip().splitlines()[0][:60] if notes.strip() else ""
    return f"Try {number}: {first}" if first else f"Try {number}"


def _query_lines(text: str) -> tuple[list[str], list[int]]:
    texts: list[str] = []
    lines: list[int] = []
    for number, raw in enumerate(text.splitlines(), 1):
        if raw.strip():
            texts.append(raw.strip())
            lines.append(number)
    return texts, lines


def _depth(text: str) -> int:
    """The depth written; 0 (refused by the service, naming the field) when it is not a
    whole number, so its problem comes with every other."""
    if not text.strip():
        return DEFAULT_DEPTH
    return parse_int(text, 0, 2**31 - 1) or 0


def initial_from(attempt: Try) -> dict[str, Any]:
    """A new try's form filled from an earlier one: "Try again from this one"."""
    draft: Draft = attempt.draft()
    if attempt.query_evaluation_id is not None:
        query_set: dict[str, Any] = {"evaluation": str(attempt.query_evaluation_id), "queries": ""}
    else:
        texts = attempt.queries.order_by("position").values_list("text", flat=True)
        query_set = {"evaluation": "", "queries": "\n".join(texts)}
    if attempt.baseline_try_id is not None and attempt.baseline_try is not None:
        baseline = f"try:{attempt.baseline_try.number}"
    elif attempt.baseline_evaluation_id is not None:
        baseline = f"evaluation:{attempt.baseline_evaluation_id}"
    else:
        baseline = ""
    return {
        **query_set,
        "params": pair_lines(draft.params, separator="="),
        "keep_headers_of": str(attempt.id) if draft.headers else "",
        "body": draft.body or "",
        "knobs": "\n".join(f"{name}={value}" for name, value in draft.knobs.items()),
        "baseline": baseline,
        "metrics": ", ".join(f"{metric}@{k}" if k else metric for metric, k in attempt.metrics),
        "depth": str(attempt.depth),
        "notes": "",
    }


def initial_for(model: SearchModel) -> dict[str, Any]:
    """A new try's form: the model's last evaluation's queries, else its default keywords."""
    last = model.evaluations.order_by("-created_at", "-id").values_list("id", flat=True).first()
    if last is not None:
        return {"evaluation": str(last)}
    return {"queries": model.default_keywords}


class NotesForm(forms.Form):
    notes = forms.CharField(
        required=False,
        max_length=MAX_NOTES,
        strip=False,
        label="Notes",
        widget=_text_area(3, "What this try changes, and what it showed", code=False),
    )


class FillForm(forms.Form):
    judge = forms.ChoiceField(label="AI judge")

    def __init__(self, *args: Any, judges: list[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choose(self, "judge", [], [(str(judge_id), name) for judge_id, name in judges])
