"""The lead's pages for panels: a judge made of two to five judges of one model whose
grades a rule makes one (panels.py). Creating and editing one, and what the judges'
list and a panel's page show of it. Everything is looked up inside the current team:
another team's panel answers 404.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from apps.accounts.decorators import lead_required
from apps.accounts.requests import TeamRequest
from apps.core.errors import InvalidInput
from apps.core.forms import add_problems

from . import panels
from .connection_check import check_connection
from .forms import PanelForm
from .models import Judge, JudgePrompt, PanelRule
from .selectors import JudgeRow

NOT_FITTED = "not fitted yet: calibrate it on a gold set and fit the weights there"


@dataclass(frozen=True)
class PanelShown:
    """What a page says of a panel: its rule in words, its members in order, and for
    the fitted rule its weights ([] before a fit, said as NOT_FITTED)."""

    rule: str
    members: list[Judge]
    weights: list[tuple[Judge, float]]
    fitted_rule: bool

    @property
    def not_fitted(self) -> str:
        return NOT_FITTED if self.fitted_rule and not self.weights else ""


def panel_shown(panel: Judge) -> PanelShown:
    return PanelShown(
        rule=PanelRule(panel.panel_rule).label,
        members=panel.members(),
        weights=panels.fitted_weights_shown(panel),
        fitted_rule=panel.panel_rule == PanelRule.FITTED,
    )


@dataclass(frozen=True)
class ListedJudge:
    """A row of the judges' list: the judge, why the team's rule keeps it out, and for
    a panel what it is made of (None for a judge of one model)."""

    judge: Judge
    below_rule: str
    panel: PanelShown | None


def listed(rows: list[JudgeRow]) -> list[ListedJudge]:
    # A panel's members are read one panel at a time: a team has a few.
    return [
        ListedJudge(
            row.judge, row.below_rule, panel_shown(row.judge) if row.judge.is_panel else None
        )
        for row in rows
    ]


def _panel(request: TeamRequest, panel_id: int) -> Judge:
    return get_object_or_404(
        Judge.objects.exclude(panel_rule=""), id=panel_id, team_id=request.membership.team_id
    )


@lead_required
def panel_create(request: TeamRequest) -> HttpResponse:
    return _panel_form(
        request,
        None,
        lambda data: panels.panel_create(
            team=request.membership.team, created_by=request.user, **data
        ),
        "Added",
    )


@lead_required
def panel_edit(request: TeamRequest, panel_id: int) -> HttpResponse:
    panel = _panel(request, panel_id)
    return _panel_form(
        request, panel, lambda data: panels.panel_update(panel=panel, **data), "Saved"
    )


def _panel_form(
    request: TeamRequest,
    panel: Judge | None,
    save: Callable[[dict[str, Any]], Judge],
    done: str,
) -> HttpResponse:
    """The panel form: shown, or saved by `save` (its problems beside their fields)."""
    team_id = request.membership.team_id
    # A member is a judge of one model: no panel sits on a panel.
    judges = Judge.objects.filter(team_id=team_id, panel_rule="")
    form = PanelForm(
        request.POST or None,
        initial=PanelForm.initial_for(panel) if panel else None,
        prompts=JudgePrompt.objects.filter(team_id=team_id),
        judges=judges,
    )
    if request.method == "POST" and form.is_valid():
        try:
            saved = save(form.cleaned_data)
        except InvalidInput as error:
            add_problems(form, error.problems)
        else:
            messages.success(request, f"{done} the panel {saved.name}.")
            return redirect("judges:judge_list")
    context = {
        "form": form,
        "panel": panel,
        "shown": panel_shown(panel) if panel else None,
        "no_judges": not judges.exists(),
    }
    return render(request, "judges/panel_form.html", context)


def panel_test_connection(request: TeamRequest, panel: Judge) -> HttpResponse:
    """Test connection of a panel: one small call to each member's model, each
    member's outcome said apart."""
    for member in panel.members():
        report = check_connection(member)
        say = messages.success if report.ok else messages.error
        say(request, f"Test connection of {member.name}: {report.sentence}")
    return redirect("judges:panel_edit", panel.id)
