"""Endpoints and models for tests, built through the services the pages use."""

from itertools import count
from typing import Any

from apps.accounts.models import Team
from apps.endpoints.models import SearchEndpoint, SearchModel
from apps.endpoints.services import endpoint_create, model_create
from tests.search_server import MAPPER

_sequence = count(1)


def make_endpoint(
    team: Team, url: str = "https://search.example.com/search", **fields: Any
) -> SearchEndpoint:
    values: dict[str, Any] = {
        "name": f"Endpoint {next(_sequence)}",
        "method": "GET",
        "url": url,
        "mapper": MAPPER,
        "timeout_seconds": 5.0,
    }
    values.update(fields)
    return endpoint_create(team=team, **values)


def make_model(team: Team, endpoint: SearchEndpoint | None = None, **fields: Any) -> SearchModel:
    values: dict[str, Any] = {
        "name": f"Model {next(_sequence)}",
        "params": "q=#query#",
        "default_keywords": "red shoes\nblue shirt",
    }
    values.update(fields)
    return model_create(team=team, endpoint=endpoint or make_endpoint(team), **values)
