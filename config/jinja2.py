"""The Jinja2 environment of the templates under templates/jinja2/ (see settings)."""

from typing import Any

from jinja2 import Environment, StrictUndefined

from apps.core.image_sources import image_source
from apps.core.templatetags.relevo import percent, render_value


def environment(**options: Any) -> Environment:
    # A name the template does not know is an error, not an empty string: Django's
    # engine forgives it, and a card that quietly lost a field would go unnoticed.
    options["undefined"] = StrictUndefined
    options["autoescape"] = True  # Django sets it too; the card relies on it
    env = Environment(**options)
    env.filters.update(percent=percent, render_value=render_value, image_source=image_source)
    return env
