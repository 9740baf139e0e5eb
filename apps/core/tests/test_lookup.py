"""by_id_or_name finds the team's object by its id, else its name, and names the field
when it cannot."""

import pytest

from apps.core.lookup import by_id_or_name
from apps.endpoints.models import SearchModel
from tests.factories import make_search_model

pytestmark = pytest.mark.django_db


def look_up(team, chosen):
    problems: list[str] = []
    found = by_id_or_name(
        SearchModel.objects.filter(team=team),
        chosen,
        field="model",
        label="search model",
        problems=problems,
    )
    return found, problems


def test_an_id_or_a_name_finds_the_same_model(team_a):
    model = make_search_model(team_a, "http://127.0.0.1:9", name="Staging ranker")
    assert look_up(team_a, model.id) == (model, [])
    assert look_up(team_a, str(model.id)) == (model, [])
    assert look_up(team_a, " Staging ranker ") == (model, [])


def test_a_name_made_of_digits_is_found_when_no_id_is_that_number(team_a):
    model = make_search_model(team_a, "http://127.0.0.1:9", name="2027")
    assert look_up(team_a, "2027") == (model, [])


def test_another_teams_model_is_not_found_by_id_or_by_name(team_a, team_b):
    theirs = make_search_model(team_b, "http://127.0.0.1:9", name="Theirs")
    assert look_up(team_a, theirs.id) == (
        None,
        [f"model: the team has no search model '{theirs.id}'"],
    )
    assert look_up(team_a, "Theirs") == (None, ["model: the team has no search model 'Theirs'"])


@pytest.mark.parametrize(
    ("chosen", "problem"),
    [
        ("", "model: a search model of the team, by id or name"),
        (None, "model: a search model of the team, by id or name"),
        ("a\x00b", "model: must not contain NUL (0x00) characters"),
        ("x" * 10_000, f"model: the team has no search model {'x' * 200!r}"),
    ],
)
def test_what_names_nothing_is_a_problem_naming_the_field(team_a, chosen, problem):
    assert look_up(team_a, chosen) == (None, [problem])
