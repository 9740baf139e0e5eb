import pytest
from django.test import Client

from apps.accounts.api_tokens import api_token_create


@pytest.fixture
def api(team_a) -> Client:
    """Team A's integration: a client sending its own API token."""
    _token, text = api_token_create(team=team_a, name="ci")
    client = Client(headers={"Authorization": f"Bearer {text}"})
    client.get("/api/v1/evaluations/")  # first use marks the token used; later calls only read
    return client
