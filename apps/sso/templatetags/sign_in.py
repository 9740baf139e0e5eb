from typing import Any

from django import template

from apps.sso.providers import provider_choices

register = template.Library()


@register.inclusion_tag("sso/_sign_in_buttons.html")
def sign_in_buttons(next_url: str = "") -> dict[str, Any]:
    """A "Sign in with …" button per identity provider, for the log-in page."""
    return {"providers": provider_choices(), "next": next_url}
