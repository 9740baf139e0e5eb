"""The lead's page that samples a query set from one of the team's behaviour logs, the
sampled set with its design in plain words, and the new-evaluation form filled with a
set's queries (docs/query-sets-from-logs.md).

Every object is looked up inside the current team, so another team's answers 404; the
pages are for leads (an evaluator gets 403). The service holds every rule; a problem it
finds is put beside the field it names.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import forms
from django.contrib import messages
from django.db.models.fields.json import KT
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.behaviour.models import ClickLog
from apps.core.errors import InvalidInput, NotFound
from apps.core.forms import add_problems
from apps.engine.query_sampling import DEFAULT_BANDS, MAX_BANDS
from apps.lifecycle.views import evaluation_new

from .forms import choose
from .log_samples import METHOD_NAMES, design_in_words, query_set_sample
from .models import SavedQuerySet
from .query_sets import MAX_NAME, MAX_QUERIES

LOGS_SHOWN = 500  # the newest logs the form offers
SETS_SHOWN = 50  # the newest sampled sets listed under the form
DEFAULT_SIZE = 100

METHOD_CHOICES = [
    ("pps", "Proportional to searches: a query searched twice as often is twice as likely"),
    ("bands", "A random sample by band of searches: head, torso and tail alike"),
    ("top", "The most searched (not random)"),
]


class SampleForm(forms.Form):
    log = forms.ChoiceField(label="Behaviour log")
    method = forms.ChoiceField(
        label="How to choose", choices=METHOD_CHOICES, initial="pps", widget=forms.RadioSelect
    )
    size = forms.CharField(
        label="Queries",
        initial=str(DEFAULT_SIZE),
        max_length=20,
        help_text=f"1 to {MAX_QUERIES:,}. A log with fewer queries gives them all.",
    )
    bands = forms.CharField(
        required=False,
        label="Bands",
        max_length=20,
        widget=forms.TextInput(attrs={"placeholder": str(DEFAULT_BANDS)}),
        help_text=f"By band only: 1 to {MAX_BANDS} bands of searches, equally wide on a log "
        f"scale; {DEFAULT_BANDS} if blank.",
    )
    seed = forms.CharField(
        required=False,
        max_length=20,
        help_text="The same seed draws the same set again. Blank: one is drawn and recorded.",
    )
    name = forms.CharField(required=False, label="Name of the query set", max_length=MAX_NAME)

    def __init__(self, *args: Any, logs: list[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choose(self, "log", [], logs)


def _log_choices(team_id: int) -> list[tuple[int, str]]:
    logs = ClickLog.objects.filter(team_id=team_id).order_by("-imported_at", "-id")[:LOGS_SHOWN]
    return [
        (log.id, f"{log.name} ({log.query_count:,} queries{_dates(log)})")
        for log in logs.only("id", "name", "query_count", "first_event_at", "last_event_at")
    ]


def _dates(log: ClickLog) -> str:
    first, last = log.first_event_at[:10], log.last_event_at[:10]
    return f", {first} to {last}" if first and last else ""


def _sampled_sets(team_id: int) -> list[dict[str, Any]]:
    """The team's newest sampled sets, read without their designs' query lists."""
    sampled = (
        SavedQuerySet.objects.filter(team_id=team_id, design__isnull=False)
        .order_by("-created_at", "-id")
        .values(
            "id",
            "name",
            "created_at",
            log_name=KT("design__log__name"),
            method=KT("design__method"),
            size=KT("design__size"),
        )[:SETS_SHOWN]
    )
    return [dict(one) | {"method": METHOD_NAMES.get(one["method"], "")} for one in sampled]


def _page(
    request: TeamRequest,
    form: SampleForm,
    logs: list[tuple[int, str]],
    saved: SavedQuerySet | None = None,
    status: int = 200,
) -> HttpResponse:
    team_id = request.membership.team_id
    context: dict[str, Any] = {
        "form": form,
        "has_logs": bool(logs),
        "sampled_sets": _sampled_sets(team_id),
        "saved": saved,
    }
    if saved is not None and saved.design is not None:
        context |= {
            "design": saved.design,
            "in_words": design_in_words(saved.design),
            "sampled_at": datetime.fromisoformat(saved.design["sampled_at"]),
            "bands": [_band_row(band) for band in saved.design["bands"] or []],
            "rows": [_query_row(one) for one in saved.design["queries"]],
        }
    return render(request, "tries/sample_queries.html", context, status=status)


def _chance(probability: float | None) -> str:
    if probability is None:
        return "–"
    return "certain" if probability >= 1 else f"{probability * 100:.3g}%"


def _band_row(band: dict[str, Any]) -> dict[str, Any]:
    chance = band["sampled"] / band["queries"] if band["queries"] else None
    counts = {name: f"{band[name]:,}" for name in ("low", "high", "queries", "searches")}
    return band | counts | {"chance": _chance(chance)}


def _query_row(one: dict[str, Any]) -> dict[str, Any]:
    return one | {"searches": f"{one['searches']:,}", "chance": _chance(one["probability"])}


@lead_required
def sample_queries(request: TeamRequest) -> HttpResponse:
    logs = _log_choices(request.membership.team_id)
    if request.method != "POST":
        # "Sample a query set" on a log's page names the log.
        chosen = request.GET.get("log", "")
        initial = {"log": chosen} if chosen in {str(log_id) for log_id, _ in logs} else {}
        return _page(request, SampleForm(logs=logs, initial=initial), logs)
    form = SampleForm(request.POST, logs=logs)
    if not form.is_valid():
        return _page(request, form, logs, status=400)
    given = form.cleaned_data
    try:
        saved = query_set_sample(
            team=request.membership.team,
            user=request.user,
            name=given["name"],
            log=given["log"],
            method=given["method"],
            size=given["size"],
            seed=given["seed"].strip() or None,
            # The field keeps what was typed when another method is chosen; it is not theirs.
            bands=(given["bands"].strip() or None) if given["method"] == "bands" else None,
        )
    except (InvalidInput, NotFound) as error:
        add_problems(form, error.problems if isinstance(error, InvalidInput) else [error.message])
        return _page(request, form, logs, status=400)
    messages.success(
        request, f"Saved the query set {saved.name} with {len(saved.queries):,} queries."
    )
    return redirect("tries:sampled_set", saved.id)


@lead_required
def sampled_set(request: TeamRequest, set_id: int) -> HttpResponse:
    """A sampled set: its queries, their searches and chances, and its design in words."""
    saved = get_object_or_404(
        SavedQuerySet, id=set_id, team_id=request.membership.team_id, design__isnull=False
    )
    logs = _log_choices(request.membership.team_id)
    return _page(request, SampleForm(logs=logs), logs, saved)


@lead_required
def query_set_evaluation_new(request: TeamRequest, set_id: int) -> HttpResponseBase:
    """The new-evaluation form with the set's queries as its keywords."""
    saved = get_object_or_404(SavedQuerySet, id=set_id, team_id=request.membership.team_id)
    return evaluation_new(request, keywords="\n".join(saved.queries))
