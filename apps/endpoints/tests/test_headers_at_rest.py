"""Search endpoints' and models' headers are encrypted at rest: the database holds no
credential in plain text, the pages and the calls read them as typed, and the migration
encrypts the headers stored before it."""

import json
import logging

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import override_settings

from apps.core.secrets import new_key
from apps.endpoints.models import SearchEndpoint, SearchModel
from tests.factories import client_for

from .factories import make_endpoint, make_model

pytestmark = pytest.mark.django_db

CREDENTIAL = "Bearer test-token-not-a-secret"


def stored_headers(table: str, row_id: int) -> str:
    """The headers column as the database holds it, read past the ORM."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT headers FROM {table} WHERE id = %s", [row_id])
        return str(cursor.fetchone()[0])


def test_an_endpoints_and_a_models_headers_are_stored_encrypted_and_read_as_typed(team_a):
    endpoint = make_endpoint(team_a, headers=f"Authorization: {CREDENTIAL}\nAccept: json")
    model = make_model(team_a, endpoint, headers="X-Api-Key: model-secret-key-42")

    assert CREDENTIAL not in stored_headers("endpoints_searchendpoint", endpoint.id)
    assert "Accept" not in stored_headers("endpoints_searchendpoint", endpoint.id)
    assert "model-secret-key-42" not in stored_headers("endpoints_searchmodel", model.id)
    assert SearchEndpoint.objects.get(id=endpoint.id).headers == [
        ["Authorization", CREDENTIAL],
        ["Accept", "json"],
    ]
    assert SearchModel.objects.get(id=model.id).headers == [["X-Api-Key", "model-secret-key-42"]]


def test_the_edit_page_still_shows_the_headers_the_lead_typed(team_a, owner):
    endpoint = make_endpoint(team_a, headers=f"Authorization: {CREDENTIAL}")

    page = client_for(owner).get(f"/endpoints/{endpoint.id}/edit/").content.decode()

    assert f"Authorization: {CREDENTIAL}" in page


def test_headers_no_configured_key_decrypts_read_as_none_and_the_log_names_no_value(team_a, caplog):
    with override_settings(SECRETS_ENCRYPTION_KEYS=[new_key()]):
        endpoint = make_endpoint(team_a, headers=f"Authorization: {CREDENTIAL}")

    with override_settings(SECRETS_ENCRYPTION_KEYS=[new_key()]), caplog.at_level(logging.ERROR):
        assert SearchEndpoint.objects.get(id=endpoint.id).headers == []

    assert "endpoints.SearchEndpoint.headers: a stored value cannot be decrypted" in caplog.text
    assert CREDENTIAL not in caplog.text


@pytest.mark.django_db(transaction=True)
def test_migrating_encrypts_the_headers_stored_before_and_back():
    before, after = ("endpoints", "0001_initial"), ("endpoints", "0002_encrypt_headers")
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    old = executor.loader.project_state([before]).apps
    team = old.get_model("accounts", "Team").objects.create(name="Migrated team")
    endpoint = old.get_model("endpoints", "SearchEndpoint").objects.create(
        team=team, name="Old", url="https://search.example.com", headers=[["Authorization", "t"]]
    )
    model = old.get_model("endpoints", "SearchModel").objects.create(
        team=team, endpoint=endpoint, name="Old model", headers=[["X-Key", CREDENTIAL]]
    )

    executor = MigrationExecutor(connection)
    executor.migrate([after])

    assert CREDENTIAL not in stored_headers("endpoints_searchmodel", model.id)
    assert SearchModel.objects.get(id=model.id).headers == [["X-Key", CREDENTIAL]]
    assert SearchEndpoint.objects.get(id=endpoint.id).headers == [["Authorization", "t"]]

    executor = MigrationExecutor(connection)
    executor.migrate([before])
    assert json.loads(stored_headers("endpoints_searchmodel", model.id)) == [["X-Key", CREDENTIAL]]

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
