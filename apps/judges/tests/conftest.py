"""What the judges' tests share: a local server speaking the providers' protocols, and
the setting that lets a judge call it (it listens on this machine)."""

import pytest

from .fake_provider import FakeProvider


@pytest.fixture(scope="module")
def server():
    with FakeProvider() as fake:
        yield fake


@pytest.fixture
def local_model_servers_allowed(settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
