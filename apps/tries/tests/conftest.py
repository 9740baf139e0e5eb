import pytest

from .tuned import make_tuned_model


@pytest.fixture
def tuned_model(team_a, search_server):
    return make_tuned_model(team_a, search_server)
