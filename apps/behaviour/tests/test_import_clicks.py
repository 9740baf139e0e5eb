"""Importing behaviour logs: UBI's queries and events as JSON Lines and a CSV click log
fold into impressions and clicks per query, document and rank, and into sessions; bad
lines, clicks on unknown queries and events without a query are reported with their line
and never stored; a refused import stores nothing."""

import io
import json

import pytest
from django.core.management import call_command

from apps.behaviour.importing import click_log_import
from apps.behaviour.models import ClickCount, ClickLog, SessionPattern
from apps.core.errors import InvalidInput
from apps.engine.clicks import ImpressionCounts, coec

pytestmark = pytest.mark.django_db


def jsonl(*records):
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    return io.BytesIO(("\n".join(lines) + "\n").encode())


def ubi_query(query_id, text, hits, at="2026-10-01T10:00:00Z"):
    return {
        "query_id": query_id,
        "user_query": text,
        "query_response_hit_ids": hits,
        "client_id": "c1",
        "timestamp": at,
    }


def click(query_id, doc, ordinal=1, at="2026-10-01T10:00:05Z", action="click"):
    return {
        "action_name": action,
        "query_id": query_id,
        "client_id": "c1",
        "timestamp": at,
        "event_attributes": {"object": {"object_id": doc}, "position": {"ordinal": ordinal}},
    }


def counts_of(log):
    return {
        (row.query, row.doc_id, row.rank): (row.impressions, row.clicks)
        for row in ClickCount.objects.filter(log=log)
    }


def test_ubi_queries_and_clicks_fold_into_impressions_clicks_and_sessions(team_a):
    queries = jsonl(
        ubi_query("q1", "red shoes", ["d1", "d2", "d3"]),
        {"_index": "ubi_queries", "_source": ubi_query("q2", "red shoes", ["d2", "d1"])},
        ubi_query("q3", "blue hat", ["h1"], at="2026-10-31T09:00:00Z"),
    )
    events = jsonl(
        click("q1", "d2", 2),
        {"action_name": "impression", "query_id": "q1"},  # not a click: the record says
        click("q2", "d2", 1),
        click("q2", "d1", 2),
    )
    log = click_log_import(
        team=team_a, user=None, name="October", file_format="ubi", queries=queries, events=events
    )

    assert counts_of(log) == {
        ("red shoes", "d1", 1): (1, 0),
        ("red shoes", "d2", 2): (1, 1),
        ("red shoes", "d3", 3): (1, 0),
        ("red shoes", "d2", 1): (1, 1),
        ("red shoes", "d1", 2): (1, 1),
        ("blue hat", "h1", 1): (1, 0),
    }
    sessions = {
        (s.query, tuple(s.docs), tuple(s.clicks)): s.count
        for s in SessionPattern.objects.filter(log=log)
    }
    assert sessions == {
        ("red shoes", ("d1", "d2", "d3"), (0, 1, 0)): 1,
        ("red shoes", ("d2", "d1"), (1, 1)): 1,
        ("blue hat", ("h1",), (0,)): 1,
    }
    # Four events read, the impression among them; three of them clicks.
    assert (log.events_read, log.clicks, log.query_count, log.problem_count) == (4, 3, 2, 0)
    assert (log.first_event_at, log.last_event_at) == (
        "2026-10-01T10:00:00Z",
        "2026-10-31T09:00:00Z",
    )


def test_bad_lines_unknown_queries_and_events_without_a_query_are_reported_not_stored(team_a):
    queries = jsonl(
        ubi_query("q1", "red shoes", ["d1", "d2"]),
        "{not json",
        ubi_query("", "no id", ["x"]),
        ubi_query("q9", "", ["x"]),
    )
    events = jsonl(
        click("q1", "d1"),
        click("nope", "d1"),
        {"action_name": "click", "event_attributes": {"object": {"object_id": "d1"}}},
        click("q1", "elsewhere"),
        "[1, 2]",
    )
    log = click_log_import(
        team=team_a, user=None, name="Messy", file_format="ubi", queries=queries, events=events
    )
    assert log.problems == [
        "queries line 2: not JSON",
        "queries line 3: no query_id",
        "queries line 4: user_query: a text of 1 to 500 characters",
        "events line 2: a click on query_id 'nope', which no query record has",
        "events line 3: a click without a query_id",
        "events line 4: document 'elsewhere' is not among the query's results",
        "events line 5: not a JSON object",
    ]
    assert log.problem_count == 7
    assert counts_of(log) == {("red shoes", "d1", 1): (1, 1), ("red shoes", "d2", 2): (1, 0)}


def test_a_csv_click_log_folds_its_rows_and_its_consecutive_sessions(team_a):
    text = (
        "session,query,document,position,clicked\n"
        "s1,red shoes,d1,1,0\n"
        "s1,red shoes,d2,2,1\n"
        "s2,red shoes,d2,1,true\n"
        "s2,red shoes,d1,2,false\n"
        "s3,red shoes,d1,zero,1\n"
        "s3,,d1,1,1\n"
        "s3,red shoes,d1,1,maybe\n"
    )
    log = click_log_import(
        team=team_a, user=None, name="CSV", file_format="csv", log=io.BytesIO(text.encode())
    )
    assert counts_of(log) == {
        ("red shoes", "d1", 1): (1, 0),
        ("red shoes", "d2", 2): (1, 1),
        ("red shoes", "d2", 1): (1, 1),
        ("red shoes", "d1", 2): (1, 0),
    }
    assert sorted(
        (tuple(s.docs), tuple(s.clicks)) for s in SessionPattern.objects.filter(log=log)
    ) == [
        (("d1", "d2"), (0, 1)),
        (("d2", "d1"), (1, 0)),
    ]
    assert log.problems == [
        "line 6: position: a whole number from 1 to 1000",
        "line 7: query: a text of 1 to 500 characters",
        "line 8: clicked: 0 or 1 (or true/false)",
    ]


def test_a_csv_log_with_timestamps_says_what_it_covers_and_counts_its_lines(team_a):
    text = (
        "timestamp,query,document,position,clicked,session\n"
        "2026-10-03T09:00:00Z,red shoes,d1,1,1,s1\n"
        "2026-10-01T08:00:00Z,red shoes,d2,2,0,s1\n"
        "\n"
        "2026-10-31T22:00:00Z,red shoes,d1\n"
        "2026-10-30T21:00:00Z,red shoes,d1,1,0,s2\n"
    )

    log = click_log_import(
        team=team_a, user=None, name="Dated", file_format="csv", log=io.BytesIO(text.encode())
    )

    assert (log.first_event_at, log.last_event_at) == (
        "2026-10-01T08:00:00Z",
        "2026-10-30T21:00:00Z",
    )
    assert (log.lines_read, log.events_read) == (6, 3)
    assert log.problems == ["line 5: 3 columns, the header has 6"]


def test_coec_on_an_imported_log_equals_the_hand_computation(team_a):
    # Rank 1 was shown 4 times and clicked twice (CTR 1/2); rank 2 shown 4 times, clicked
    # once (CTR 1/4). d1: shown at rank 1 three times and rank 2 once, clicked twice:
    # expected clicks 3 x 1/2 + 1 x 1/4 = 1.75, COEC = 2 / 1.75 = 8/7.
    rows = [
        ("a", "d1", 1, 1), ("a", "d2", 2, 0),
        ("b", "d1", 1, 1), ("b", "d2", 2, 1),
        ("c", "d1", 1, 0), ("c", "d2", 2, 0),
        ("d", "d2", 1, 0), ("d", "d1", 2, 0),
    ]  # fmt: skip
    text = "session,query,document,position,clicked\n" + "".join(
        f"{s},q,{doc},{rank},{clicked}\n" for s, doc, rank, clicked in rows
    )
    log = click_log_import(
        team=team_a, user=None, name="Hand", file_format="csv", log=io.BytesIO(text.encode())
    )
    stored = list(ClickCount.objects.filter(log=log))
    docs = sorted({row.doc_id for row in stored})
    counts = ImpressionCounts(
        queries=["q"],
        docs=docs,
        query=[0] * len(stored),
        doc=[docs.index(row.doc_id) for row in stored],
        rank=[row.rank for row in stored],
        impressions=[row.impressions for row in stored],
        clicks=[row.clicks for row in stored],
    )
    assert coec(counts)[("q", "d1")].value == pytest.approx(8 / 7)


@pytest.mark.parametrize(
    ("asked", "problem"),
    [
        ({"name": "", "file_format": "csv", "log": io.BytesIO(b"x")}, "name: a text of 1 to 200"),
        ({"name": "x", "file_format": "xml"}, "file_format: ubi or csv"),
        ({"name": "x", "file_format": "ubi", "queries": io.BytesIO(b"")}, "events: the UBI"),
        ({"name": "x", "file_format": "csv", "log": io.BytesIO(b"")}, "log: nothing could be read"),
        (
            {"name": "x", "file_format": "csv", "log": io.BytesIO(b"q,doc\n")},
            "log: nothing could be read (line 1: the header has no column",
        ),
    ],
)
def test_an_import_that_cannot_be_made_names_why_and_stores_nothing(team_a, asked, problem):
    with pytest.raises(InvalidInput) as refused:
        click_log_import(team=team_a, user=None, **asked)
    assert any(p.startswith(problem) for p in refused.value.problems), refused.value.problems
    assert not ClickLog.objects.exists() and not ClickCount.objects.exists()


def test_a_name_the_team_has_is_refused(team_a):
    log = io.BytesIO(b"query,document,position,clicked\nq,d,1,1\n")
    click_log_import(team=team_a, user=None, name="Once", file_format="csv", log=log)
    with pytest.raises(InvalidInput, match="already"):
        log.seek(0)
        click_log_import(team=team_a, user=None, name="Once", file_format="csv", log=log)
    assert ClickLog.objects.count() == 1


def test_the_command_imports_a_ubi_export_and_prints_what_it_left_out(team_a, tmp_path):
    (tmp_path / "queries.jsonl").write_bytes(
        jsonl(ubi_query("q1", "red shoes", ["d1", "d2"]), "oops").getvalue()
    )
    (tmp_path / "events.jsonl").write_bytes(jsonl(click("q1", "d2", 2)).getvalue())
    out = io.StringIO()
    call_command(
        "import_clicks",
        "--team",
        "Team A",
        "--name",
        "Week 40",
        "--ubi-queries",
        str(tmp_path / "queries.jsonl"),
        "--ubi-events",
        str(tmp_path / "events.jsonl"),
        stdout=out,
    )
    text = out.getvalue()
    assert "Imported Week 40: 1 events, 1 clicks, 1 queries" in text
    assert "1 lines could not be read and were left out:\n  queries line 2: not JSON" in text
    with pytest.raises(Exception, match="--csv: nothing could be read") as refused:
        (tmp_path / "empty.csv").write_bytes(b"")
        call_command(
            "import_clicks",
            "--team",
            "Team A",
            "--name",
            "Empty",
            "--csv",
            str(tmp_path / "empty.csv"),
        )
    assert refused.value.returncode == 2


def test_text_that_is_not_utf8_or_a_line_too_long_is_reported_by_line(team_a):
    huge = b'{"query_id": "' + b"x" * 1_100_000 + b'"}\n'
    queries = io.BytesIO(huge + json.dumps(ubi_query("q1", "shoes", ["d1"])).encode() + b"\n")
    log = click_log_import(
        team=team_a, user=None, name="Long", file_format="ubi", queries=queries, events=jsonl()
    )
    assert log.problems == ["queries line 1: longer than 1,000,000 bytes"]
    assert counts_of(log) == {("shoes", "d1", 1): (1, 0)}

    latin = "query,document,position,clicked\nq,d,1,1\ncaf\xe9,d,1,1\n".encode("latin-1")
    log = click_log_import(
        team=team_a, user=None, name="Latin", file_format="csv", log=io.BytesIO(latin)
    )
    assert log.problems == ["line 3: not UTF-8 text"]
