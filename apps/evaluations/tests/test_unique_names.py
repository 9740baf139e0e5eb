"""A team has one evaluation of each name, trimmed and in any case:
the pages, clone, auto-restart, the database's own guard and the migration that made
existing names unique. The API and imports are in apps/api/tests/test_evaluation_names.py.
"""

import importlib

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.accounts.models import User
from apps.core.errors import InvalidInput
from apps.evaluations import services
from apps.evaluations.models import Evaluation, Status
from apps.evaluations.services import NameTaken, evaluation_create
from apps.lifecycle import steps
from apps.lifecycle.forms import suggested_name
from apps.lifecycle.steps import evaluation_clone, evaluation_restart
from apps.lifecycle.tests.test_pages_forms import field_errors, valid_post
from tests.factories import client_for, make_evaluation, make_team

pytestmark = pytest.mark.django_db

METRICS = [("ndcg", 10)]
TAKEN = "An evaluation named 'Shoes 1' already exists in this team."  # a form's sentence


def named(team, name: str) -> Evaluation:
    return evaluation_create(team=team, name=name, metrics=METRICS)


# --- The new-evaluation and edit pages -------------------------------------------------


@pytest.mark.parametrize("typed", ["Shoes 1", "  shoes 1 ", "SHOES 1"])
def test_the_new_page_refuses_a_name_the_team_has_in_any_case_and_saves_nothing(
    typed, owner, team_a
):
    named(team_a, "Shoes 1")

    response = client_for(owner).post("/evaluations/new/", valid_post(name=typed))

    assert response.status_code == 400
    assert field_errors(response, "name") == f"An evaluation named '{typed.strip()}' " + (
        "already exists in this team."
    )
    assert Evaluation.objects.filter(team=team_a).count() == 1


def test_the_suggested_name_numbers_on_past_names_in_any_case():
    assert suggested_name("Catalogue", ["catalogue 1", " CATALOGUE 2 "]) == "Catalogue 3"


def test_another_team_may_use_a_name_this_team_has(owner, team_a, team_b):
    named(team_b, "Shoes 1")

    response = client_for(owner).post("/evaluations/new/", valid_post(name="Shoes 1"))

    assert response.status_code == 302
    assert Evaluation.objects.filter(name="Shoes 1").count() == 2


def test_the_edit_page_refuses_renaming_to_another_evaluations_name(owner, team_a):
    named(team_a, "Shoes 1")
    other = named(team_a, "Hats 1")

    response = client_for(owner).post(
        f"/evaluations/{other.id}/edit/", valid_post(name="shoes 1", keywords="")
    )

    assert response.status_code == 400
    assert field_errors(response, "name") == "An evaluation named 'shoes 1' already exists in " + (
        "this team."
    )
    other.refresh_from_db()
    assert other.name == "Hats 1"


def test_an_evaluation_may_change_the_case_of_its_own_name(owner, team_a):
    evaluation = named(team_a, "Shoes 1")

    response = client_for(owner).post(
        f"/evaluations/{evaluation.id}/edit/", valid_post(name="SHOES 1", keywords="")
    )

    assert response.status_code == 302
    evaluation.refresh_from_db()
    assert evaluation.name == "SHOES 1"


# --- Clone and auto-restart pick a free name -------------------------------------------


def test_a_clone_takes_the_next_number_the_team_has_not_used(owner, team_a):
    original = make_evaluation(team=team_a, start=False)
    Evaluation.objects.filter(id=original.id).update(name="Shoes 1")
    named(team_a, "shoes 2")
    named(team_a, "Shoes 3")

    response = client_for(owner).post(f"/evaluations/{original.id}/clone/")

    copy = Evaluation.objects.get(team=team_a, name="Shoes 4")
    assert response.status_code == 302
    assert response["Location"] == f"/evaluations/{copy.id}/"
    assert copy.keywords.count() == original.keywords.count()


def test_a_clone_given_a_taken_name_is_refused_naming_the_name():
    team = make_team()
    named(team, "Shoes 1")
    original = named(team, "Hats 1")

    with pytest.raises(NameTaken) as refused:
        evaluation_clone(evaluation=original, name="shoes 1")

    assert refused.value.problems == [
        "name: An evaluation named 'shoes 1' already exists in this team"
    ]
    assert Evaluation.objects.filter(team=team).count() == 2


def test_a_clone_whose_free_name_is_taken_meanwhile_takes_the_next_one(monkeypatch):
    team = make_team()
    original = named(team, "Shoes 1")
    real_free_name = steps.free_name
    reads = []

    def another_clone_writes_after_the_first_read(*, team_id, name):
        reads.append(name)
        if len(reads) == 1:
            named(team, "Shoes 2")
            return name  # what the names read before that write said
        return real_free_name(team_id=team_id, name=name)

    monkeypatch.setattr(steps, "free_name", another_clone_writes_after_the_first_read)
    # The check before the write misses it too: the unique index is what refuses it.
    monkeypatch.setattr(services, "name_taken", lambda **kwargs: False)

    copy = evaluation_clone(evaluation=original)

    assert copy.name == "Shoes 3"
    assert reads == ["Shoes 2", "Shoes 2"]


def test_an_auto_restart_copy_takes_the_next_free_name():
    team = make_team()
    finished = make_evaluation(team=team, auto_restart=True)
    # Finished as the pipeline finishes it, without its own restart queued.
    Evaluation.objects.filter(id=finished.id).update(name="Nightly 7", status=Status.FINISHED)
    named(team, "Nightly 8")

    copy = evaluation_restart(evaluation_id=finished.id)

    assert copy.name == "Nightly 9"


# --- The database's guard --------------------------------------------------------------


def test_a_name_taken_by_a_concurrent_request_is_the_same_clear_error(monkeypatch):
    team = make_team()
    named(team, "Shoes 1")
    # The other request's row is committed after this one's check read the names.
    monkeypatch.setattr("apps.evaluations.services.name_taken", lambda **kwargs: False)

    with pytest.raises(InvalidInput) as refused:
        named(team, " SHOES 1")

    assert refused.value.problems == [
        "name: An evaluation named 'SHOES 1' already exists in this team"
    ]
    assert Evaluation.objects.filter(team=team).count() == 1


def test_a_rename_racing_another_is_the_same_clear_error(monkeypatch, owner, team_a):
    named(team_a, "Shoes 1")
    other = named(team_a, "Hats 1")
    monkeypatch.setattr("apps.evaluations.services.name_taken", lambda **kwargs: False)

    response = client_for(owner).post(
        f"/evaluations/{other.id}/edit/", valid_post(name="Shoes 1", keywords="")
    )

    assert response.status_code == 400
    assert field_errors(response, "name") == TAKEN


# --- The migration that made existing names unique --------------------------------------

MIGRATION = importlib.import_module(
    "apps.evaluations.migrations.0009_evaluation_name_once_per_team"
)


def test_the_migration_renames_all_but_the_oldest_of_each_name_in_id_order():
    rows = [
        (1, 1, "Shoes"),
        (2, 1, "shoes "),
        (3, 2, "Shoes"),  # another team
        (4, 1, "Shoes (2)"),  # already holds the first free-looking name
        (5, 1, "SHOES"),
        (6, 1, "Hats"),
    ]

    assert MIGRATION.renamed_duplicates(rows) == {2: "shoes (3)", 5: "SHOES (4)"}


def test_the_migration_keeps_a_long_name_within_the_column():
    long = "x" * 200

    assert MIGRATION.renamed_duplicates([(1, 1, long), (2, 1, long)]) == {2: "x" * 196 + " (2)"}


@pytest.mark.django_db(transaction=True)
def test_migrating_renames_existing_duplicates_then_refuses_new_ones():
    executor = MigrationExecutor(connection)
    executor.migrate([("evaluations", "0008_custom_scale_levels")])
    old_apps = executor.loader.project_state([("evaluations", "0008_custom_scale_levels")]).apps
    OldEvaluation = old_apps.get_model("evaluations", "Evaluation")
    Team = old_apps.get_model("accounts", "Team")
    team = Team.objects.create(name="Migrated team")
    ids = [OldEvaluation.objects.create(team=team, name=name).id for name in ("Run", "run", "RUN")]

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    names = dict(Evaluation.objects.filter(id__in=ids).values_list("id", "name"))
    assert [names[i] for i in ids] == ["Run", "run (2)", "RUN (3)"]
    with pytest.raises(NameTaken):
        evaluation_create(team=Evaluation.objects.get(id=ids[0]).team, name="rUn", metrics=METRICS)


def test_the_admin_refuses_a_taken_name_with_the_constraints_message():
    team = make_team()
    named(team, "Shoes 1")
    other = named(team, "Hats 1")
    root = User.objects.create_superuser(email="root@example.test", password="x" * 12)
    url = f"/admin/evaluations/evaluation/{other.id}/change/"
    form = client_for(root).get(url).context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not None}
    data.update(
        {
            "name": "shoes 1",
            "team": team.id,
            "tags": [],
            "metrics-TOTAL_FORMS": "0",
            "metrics-INITIAL_FORMS": "0",
        }
    )

    response = client_for(root).post(url, data)

    assert response.status_code == 200
    assert "An evaluation with this name already exists in this team." in response.content.decode()
    other.refresh_from_db()
    assert other.name == "Hats 1"
