"""Instances built from hand-written SELECTs are the ones the ORM would give."""

import pytest
from django.db import connection
from django.db.models import signals

from apps.accounts.models import Membership, Team, User
from apps.core.rows import RowModels
from apps.evaluations.models import FeedbackSlot, Snapshot
from apps.judging.sql import CARD_UNREAD_SLOT_FIELDS, REUSE_FIELDS, SLOT_WITH_ALL
from tests.factories import make_evaluation, make_grader, make_team, slots_of

pytestmark = pytest.mark.django_db


def fields_of(instance) -> dict:
    return {name: value for name, value in vars(instance).items() if name != "_state"}


def read_row(sql: str, params: list) -> tuple:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def test_a_slot_with_its_snapshot_keyword_and_evaluation_matches_select_related():
    evaluation = make_evaluation(keywords={"shoes": 2})
    Snapshot.objects.update(attributes={"price": 12.5, "brand": "Acme"})
    slot_id = slots_of(evaluation)[1].id

    row = read_row(
        f"SELECT {SLOT_WITH_ALL.columns} FROM {SLOT_WITH_ALL.JOINS} WHERE s.id = %s", [slot_id]
    )
    built = SLOT_WITH_ALL.slot(row)
    # The card never reads a slot's staleness or source nor its evaluation's reuse: left
    # out, and deferred as the ORM defers.
    by_orm = (
        FeedbackSlot.objects.select_related("snapshot", "keyword", "evaluation")
        .defer(*CARD_UNREAD_SLOT_FIELDS, *(f"evaluation__{name}" for name in REUSE_FIELDS))
        .get(id=slot_id)
    )

    assert fields_of(built) == fields_of(by_orm)
    assert built.get_deferred_fields() == {
        FeedbackSlot._meta.get_field(name).attname for name in CARD_UNREAD_SLOT_FIELDS
    }
    assert (built.stale, built.content_fingerprint) == (False, "")  # read when asked
    assert built.evaluation.get_deferred_fields() == set(REUSE_FIELDS)
    for name in ("snapshot", "keyword", "evaluation"):
        assert fields_of(getattr(built, name)) == fields_of(getattr(by_orm, name))
        assert not getattr(built, name)._state.adding
    assert (built._state.adding, built._state.db) == (False, by_orm._state.db)


def test_a_built_instance_saves_as_an_update_of_its_row():
    team = make_team()
    person = make_grader(team)
    rows = RowModels((Membership, "m"), (Team, "t"))
    row = read_row(
        f"SELECT {rows.columns} FROM accounts_membership m "
        "JOIN accounts_team t ON t.id = m.team_id WHERE m.user_id = %s",
        [person.id],
    )
    membership, built_team = rows.build(row)

    built_team.name = "Renamed"
    built_team.save()

    assert Team.objects.count() == 1
    assert Team.objects.get(id=team.id).name == "Renamed"
    assert membership.team_id == team.id and membership.user_id == person.id


def test_a_model_with_an_init_receiver_is_built_through_init():
    seen = []

    def note(sender, instance, **kwargs):
        seen.append(instance)

    person = make_grader(make_team())
    rows = RowModels((User, "u"))
    row = read_row(f"SELECT {rows.columns} FROM accounts_user u WHERE u.id = %s", [person.id])
    signals.post_init.connect(note, sender=User)
    try:
        (built,) = rows.build(row)
    finally:
        signals.post_init.disconnect(note, sender=User)

    assert seen == [built]
    assert fields_of(built) == fields_of(User.objects.get(id=person.id))


def test_snapshots_json_attributes_come_back_decoded():
    evaluation = make_evaluation(keywords={"shoes": 1})
    Snapshot.objects.update(attributes={"colours": ["red", "blue"], "stock": 3})
    snapshot = Snapshot.objects.get(keyword__evaluation=evaluation)
    rows = RowModels((Snapshot, "p"))

    (built,) = rows.build(
        read_row(
            f"SELECT {rows.columns} FROM evaluations_snapshot p WHERE p.id = %s", [snapshot.id]
        )
    )

    assert built.attributes == snapshot.attributes and isinstance(built.attributes, dict)
