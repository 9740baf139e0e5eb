"""The Jinja2 environment of the templates under templates/jinja2/ (see settings)."""

from typing import Any

from django.template.defaultfilters import date
from django.urls import reverse
from jinja2 import Environment, StrictUndefined

from apps.core.image_sources import image_source
from apps.core.templatetags.relevo import percent, render_value
from apps.insights.templatetags.insights import grade_label


def url(name: str, *args: Any) -> str:
    """{{ url("insights:keyword_detail", evaluation.id, keyword.id) }}, as {% url %}."""
    return reverse(name, args=args)


def environment(**options: Any) -> Environment:
    # A name the template does not know is an error, not an empty string: Django's
    # engine forgives it, and a card that quietly lost a field would go unnoticed.
    options["undefined"] = StrictUndefined
    options["autoescape"] = True  # Django sets it too; the card relies on it
    env = Environment(**options)
    env.filters.update(
        percent=percent,
        render_value=render_value,
        image_source=image_source,
        grade_label=grade_label,
        date=date,  # Django's: in the current time zone, with its format letters
    )
    env.globals["url"] = url
    return env
