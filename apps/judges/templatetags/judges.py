"""How the judges' pages write a figure (its value with its interval) and a cost."""

from decimal import Decimal

from django import template

from apps.judges.calibration_figures import Figure
from apps.judges.money import in_dollars

register = template.Library()


@register.filter
def figure(value: Figure | None, digits: int = 2) -> str:
    """0.82 [0.71, 0.90]; a dash when undefined (the reason is shown beside it)."""
    if value is None or value.value is None:
        return "–"
    shown = f"{value.value:.{int(digits)}f}"
    if value.low is None or value.high is None:
        return shown
    return f"{shown} [{value.low:.{int(digits)}f}, {value.high:.{int(digits)}f}]"


@register.filter
def share_figure(value: Figure | None) -> str:
    """A share as a percentage with its interval: 75% [62%, 86%]."""
    if value is None or value.value is None:
        return "–"
    shown = f"{value.value * 100:.0f}%"
    if value.low is None or value.high is None:
        return shown
    return f"{shown} [{value.low * 100:.0f}%, {value.high * 100:.0f}%]"


@register.filter
def dollars(amount: Decimal | None) -> str:
    """A cost with its currency: US$0.4217."""
    return in_dollars(amount)


@register.filter
def by_grade(rows: list[list[int]], grades: tuple[int, ...]) -> list[tuple[int, list[int]]]:
    """A confusion matrix's rows with the grade each stands for."""
    return list(zip(grades, rows, strict=True))


OUTCOME_LABELS = {"all": "All", "succeeded": "Succeeded", "failed": "Failed"}


@register.filter
def outcome_label(outcome: str) -> str:
    """A call log filter's name: All, Succeeded, Failed, or the kind of failure
    ("rate_limited": Rate limited)."""
    return OUTCOME_LABELS.get(outcome) or outcome.replace("_", " ").capitalize()
