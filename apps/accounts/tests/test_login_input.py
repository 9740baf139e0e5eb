"""The log-in form refuses what no address can be, on SQLite as on PostgreSQL."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_an_email_longer_than_any_address_is_a_failed_log_in_not_a_server_error(owner):
    client = Client(raise_request_exception=False)

    response = client.post("/accounts/login/", {"username": "x" * 100_000, "password": "x" * 12})

    assert response.status_code == 200
    assert "Please enter a correct email address and password" in response.content.decode()
    assert "_auth_user_id" not in client.session
