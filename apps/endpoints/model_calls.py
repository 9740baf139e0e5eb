"""From a stored search model to a call: the bridge between the database and apps.search.

Test model (one keyword, shown to the lead) and an evaluation's start (every keyword)
both call through here, so they build requests, check addresses and cap answers in
exactly the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from apps.search import KeywordRun, Mapper, SearchTemplate, run_keyword

from .models import SearchEndpoint, SearchModel


@dataclass(frozen=True)
class ModelCall:
    """Everything needed to run keywords through one search model, built once."""

    template: SearchTemplate
    mapper: Mapper
    timeout_s: float

    def run(self, keyword: str) -> KeywordRun:
        return run_keyword(
            self.template,
            keyword,
            self.mapper,
            timeout_s=self.timeout_s,
            max_bytes=settings.SEARCH_MAX_RESPONSE_BYTES,
            allow_private=settings.SEARCH_ALLOW_PRIVATE_ADDRESSES,
        )


def merged_headers(
    endpoint_headers: list[list[str]], model_headers: list[list[str]]
) -> list[tuple[str, str]]:
    """The endpoint's headers, then the model's; a name the model sets (any case)
    replaces every endpoint header of that name."""
    overridden = {name.lower() for name, _ in model_headers}
    kept = [(name, value) for name, value in endpoint_headers if name.lower() not in overridden]
    return kept + [(name, value) for name, value in model_headers]


def model_template(endpoint: SearchEndpoint, model: SearchModel) -> SearchTemplate:
    """The request template of `model` on `endpoint` (which may be an unsaved candidate:
    the services check a changed endpoint against the models that use it)."""
    return SearchTemplate(
        method=endpoint.method,
        url=endpoint.url,
        params=[(name, value) for name, value in model.params],
        headers=merged_headers(endpoint.headers, model.headers),
        body_template=model.body or None,
        body_type=model.body_type,
    )


def model_call(model: SearchModel) -> ModelCall:
    """Raises apps.search.InvalidMapper when the endpoint's stored mapper is broken
    (forms check it on save, so that means the database was edited by hand)."""
    endpoint = model.endpoint
    template = model_template(endpoint, model)
    return ModelCall(template, Mapper.compile(endpoint.mapper), endpoint.timeout_seconds)
