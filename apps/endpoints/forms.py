"""Forms for endpoints and models. They only type the input (a choice, a number); every
rule is the service's, whose located problems are put back next to their fields."""

import json
from typing import Any

from django import forms

from apps.accounts.models import Tag
from apps.core.forms import limit_choices

from .models import BodyType, HttpMethod, SearchEndpoint, SearchModel
from .name_value_lines import format_lines

MAPPER_EXAMPLE = """{
  "results": "hits.hits[*]",
  "id": "_id",
  "name": "_source.title",
  "image": "_source.image_url",
  "attributes": {
    "price": "_source.price",
    "label": "{_source.brand} {_source.title}"
  }
}"""


def _text_area(rows: int, placeholder: str = "") -> forms.Textarea:
    attrs = {"rows": str(rows), "spellcheck": "false", "class": "code"}
    if placeholder:
        attrs["placeholder"] = placeholder
    return forms.Textarea(attrs=attrs)


class _Form(forms.Form):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")  # labels read "Name", as on the other pages
        super().__init__(*args, **kwargs)


class EndpointForm(_Form):
    name = forms.CharField(required=False)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": "2"}))
    method = forms.ChoiceField(choices=HttpMethod.choices, initial=HttpMethod.GET)
    url = forms.CharField(
        required=False,
        label="URL",
        widget=forms.TextInput(attrs={"placeholder": "https://search.example.com/products"}),
        help_text="http:// or https://. May hold #query#, e.g. …/search?q=#query#.",
    )
    headers = forms.CharField(
        required=False,
        widget=_text_area(3, "Accept: application/json\nAuthorization: Bearer abc:123"),
        help_text="One “Name: value” per line; the value is everything after the first colon.",
    )
    timeout_seconds = forms.FloatField(
        initial=10, label="Timeout (seconds)", help_text="More than 0, at most 120."
    )
    mapper = forms.CharField(
        required=False,
        label="Response mapper (JSON)",
        widget=_text_area(12, MAPPER_EXAMPLE),
    )

    @staticmethod
    def initial_for(endpoint: SearchEndpoint) -> dict[str, object]:
        return {
            "name": endpoint.name,
            "description": endpoint.description,
            "method": endpoint.method,
            "url": endpoint.url,
            "headers": format_lines(endpoint.headers, separator=":"),
            "timeout_seconds": endpoint.timeout_seconds,
            "mapper": json.dumps(endpoint.mapper, indent=2, ensure_ascii=False),
        }


class SearchModelForm(_Form):
    name = forms.CharField(required=False)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": "2"}))
    endpoint = forms.ModelChoiceField(queryset=SearchEndpoint.objects.none(), required=False)
    params = forms.CharField(
        required=False,
        label="Query parameters",
        widget=_text_area(3, "q=#query#\nsize=20"),
        help_text="One “name=value” per line, added to the endpoint's URL.",
    )
    headers = forms.CharField(
        required=False,
        widget=_text_area(2, "X-Api-Key: abc123"),
        help_text="One “Name: value” per line; a name set here replaces the endpoint's.",
    )
    body = forms.CharField(
        required=False,
        label="Body template",
        widget=_text_area(5, '{"query": "#query#", "size": 20}'),
        help_text="#query# is escaped for the body type. Leave empty to send no body.",
    )
    body_type = forms.ChoiceField(choices=BodyType.choices, initial=BodyType.JSON)
    default_keywords = forms.CharField(
        required=False,
        widget=_text_area(5, "red shoes\nwinter jacket"),
        help_text="One per line; offered when an evaluation is created from this model.",
    )
    tags = forms.ModelMultipleChoiceField(
        queryset=Tag.objects.none(), required=False, widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args: Any, team_id: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit_choices(self, "endpoint", SearchEndpoint.objects.filter(team_id=team_id))
        limit_choices(self, "tags", Tag.objects.filter(team_id=team_id))

    @staticmethod
    def initial_for(model: SearchModel) -> dict[str, object]:
        return {
            "name": model.name,
            "description": model.description,
            "endpoint": model.endpoint_id,
            "params": format_lines(model.params, separator="="),
            "headers": format_lines(model.headers, separator=":"),
            "body": model.body,
            "body_type": model.body_type,
            "default_keywords": model.default_keywords,
            "tags": list(model.tags.all()),
        }


class ModelTestForm(_Form):
    keyword = forms.CharField(required=False)
