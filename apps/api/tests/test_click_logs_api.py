"""Behaviour logs over the API with a real team token: a UBI export imported with what
it left out listed, a CSV log, a log in which nothing can be read refused naming why,
another team's logs not found."""

import io
import json

import pytest

from apps.behaviour.models import ClickCount, ClickLog
from tests.factories import make_team

pytestmark = pytest.mark.django_db

LOGS = "/api/v1/click-logs/"


def upload(text: str, name: str) -> io.BytesIO:
    file = io.BytesIO(text.encode())
    file.name = name
    return file


def test_a_ubi_export_imported_over_the_api_lists_what_it_left_out(api):
    queries = "\n".join(
        [
            json.dumps(
                {"query_id": "q1", "user_query": "shoes", "query_response_hit_ids": ["a", "b"]}
            ),
            "not json",
        ]
    )
    events = json.dumps(
        {
            "action_name": "click",
            "query_id": "q1",
            "event_attributes": {"object": {"object_id": "b"}},
        }
    )
    answer = api.post(
        LOGS,
        {
            "name": "October",
            "format": "ubi",
            "queries": upload(queries, "queries.jsonl"),
            "events": upload(events, "events.jsonl"),
        },
    )
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert (body["name"], body["clicks"], body["query_count"], body["problem_count"]) == (
        "October",
        1,
        1,
        1,
    )
    assert body["problems"] == ["queries line 2: not JSON"]
    assert api.get(f"{LOGS}{body['id']}/").json()["name"] == "October"
    assert [log["name"] for log in api.get(LOGS).json()] == ["October"]


def test_a_csv_log_in_which_nothing_can_be_read_is_refused_naming_why(api):
    answer = api.post(
        LOGS, {"name": "Bad", "format": "csv", "log": upload("query,doc\nx,y\n", "log.csv")}
    )
    assert answer.status_code == 400
    assert answer.json()["errors"][0]["field"] == "log"
    assert "the header has no column" in answer.json()["errors"][0]["message"]
    assert not ClickLog.objects.exists()


def test_a_ubi_import_without_its_events_file_names_the_field(api):
    answer = api.post(LOGS, {"name": "Half", "format": "ubi", "queries": upload("{}", "q.jsonl")})
    assert answer.status_code == 400
    assert {"field": "events", "message": "the UBI events file, JSON Lines"} in answer.json()[
        "errors"
    ]


def test_another_teams_log_is_not_found_and_a_removed_log_takes_its_counts(api):
    other = ClickLog.objects.create(team=make_team("Other"), name="Theirs", file_format="csv")
    assert api.get(f"{LOGS}{other.id}/").status_code == 404
    assert api.delete(f"{LOGS}{other.id}/").status_code == 404
    made = api.post(
        LOGS,
        {
            "name": "Mine",
            "format": "csv",
            "log": upload("query,document,position,clicked\nq,d,1,1\n", "l.csv"),
        },
    ).json()
    assert ClickCount.objects.filter(log_id=made["id"]).count() == 1
    assert api.delete(f"{LOGS}{made['id']}/").status_code == 204
    assert not ClickCount.objects.filter(log_id=made["id"]).exists()
