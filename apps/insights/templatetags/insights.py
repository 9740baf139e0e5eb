"""Template filters of the lead's pages."""

from django import template

from apps.engine import Scale

register = template.Library()


@register.filter
def signed(value: float | None, digits: int = 4) -> str:
    """A change with its sign, rounded for display: +0.0123, −0.0400, ±0.0000."""
    if value is None:
        return "–"
    shown = f"{abs(value):.{int(digits)}f}"
    if float(shown) == 0:
        return f"±{shown}"
    return f"+{shown}" if value > 0 else f"−{shown}"


@register.filter
def share(value: float | None) -> str:
    """0.256 -> '25.6%'."""
    if value is None:
        return "–"
    return f"{value * 100:.1f}%"


@register.filter
def grade_label(grade: int | None, scale: Scale) -> str:
    """A grade as every page names it, "2 · Good" (Scale.label_of); "–" for none.
    Used as {{ slot.grade|grade_label:evaluation.grading_scale }}."""
    if grade is None:
        return "–"
    return scale.label_of(grade)
