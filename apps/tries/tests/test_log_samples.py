"""Query sets sampled from a behaviour log: a query's searches read from its rank-1
impressions in one query; a set drawn by each method and saved with its design; the same
seed, the same set; bad input named field by field with nothing saved; another team's log
not found; the API's 201, 400 and 404; the lead's page from the form to a new evaluation
filled with the set's queries; and the command."""

import pytest
from django.test import Client

from apps.accounts.api_tokens import api_token_create
from apps.behaviour.models import ClickCount, ClickLog
from apps.core.errors import InvalidInput, NotFound
from apps.tries.log_samples import log_frequencies, query_set_sample
from apps.tries.models import SavedQuerySet

pytestmark = pytest.mark.django_db

SAMPLE = "/api/v1/query-sets/sample/"
SETS = "/api/v1/query-sets/"
# Ten queries searched 1 to 1,000 times: 1,915 searches in all.
SEARCHES = {
    "shoes": 1000,
    "boots": 400,
    "red dress": 200,
    "socks": 120,
    "hat": 90,
    "scarf": 50,
    "gloves": 30,
    "belt": 15,
    "umbrella": 8,
    "wool tights": 2,
}


def make_log(team, name="October", searches=None):
    """A log whose queries were searched as `searches` says: each search shown at rank 1
    one of two documents, and a document at rank 2 that must not count again."""
    log = ClickLog.objects.create(
        team=team,
        name=name,
        file_format="csv",
        first_event_at="2026-10-01T00:00:00Z",
        last_event_at="2026-10-31T23:59:59Z",
    )
    rows = []
    for query, count in (SEARCHES if searches is None else searches).items():
        half = count // 2
        rows += [
            ClickCount(log=log, query=query, doc_id="d1", rank=1, impressions=half, clicks=1),
            ClickCount(
                log=log, query=query, doc_id="d2", rank=1, impressions=count - half, clicks=0
            ),
            ClickCount(log=log, query=query, doc_id="d3", rank=2, impressions=count, clicks=0),
        ]
    ClickCount.objects.bulk_create(rows)
    return log


def sample(team, **asked):
    given = {"name": "Sampled", "log": "October", "method": "pps", "size": 4, "seed": 7}
    return query_set_sample(team=team, user=None, **(given | asked))


def problems_of(error) -> list[str]:
    return [problem.split(":")[0] for problem in error.value.problems]


# --- The service ------------------------------------------------------------------------


def test_a_querys_searches_are_its_rank_1_impressions_read_in_one_query(
    team_a, django_assert_num_queries
):
    log = make_log(team_a, searches={"shoes": 7, "shoes ": 3, "hat": 1, " ": 4})
    ClickCount.objects.create(
        log=log, query="rank two only", doc_id="x", rank=2, impressions=9, clicks=0
    )

    with django_assert_num_queries(1):
        frequencies = log_frequencies(log)

    # Texts that differ only in spaces are one query; a blank text is left out.
    assert frequencies == {"shoes": 10, "hat": 1}


def test_a_pps_sample_is_saved_with_its_design(team_a, owner):
    log = make_log(team_a)

    saved = query_set_sample(
        team=team_a, user=owner, name=" Head and tail ", log=log.id, method="pps", size=4, seed=7
    )

    design = saved.design
    assert saved.name == "Head and tail" and saved.created_by == owner
    assert saved.queries == [one["query"] for one in design["queries"]]
    assert design["log"] == {
        "id": log.id,
        "name": "October",
        "first_event_at": "2026-10-01T00:00:00Z",
        "last_event_at": "2026-10-31T23:59:59Z",
    }
    assert (design["method"], design["size_asked"], design["size"], design["seed"]) == (
        "pps",
        4,
        4,
        7,
    )
    assert design["population"] == {"queries": 10, "searches": 1915}
    # "shoes" and then "boots" are certain (4 × 1,000 ≥ 1,915, then 3 × 400 ≥ 915); the
    # other two are drawn from the 515 searches left, each with chance 2 × searches / 515.
    assert design["certain"] == 2
    assert design["queries"][:2] == [
        {"query": "shoes", "searches": 1000, "probability": 1.0, "band": None},
        {"query": "boots", "searches": 400, "probability": 1.0, "band": None},
    ]
    for one in design["queries"][2:]:
        assert one["probability"] == pytest.approx(2 * SEARCHES[one["query"]] / 515)
    assert design["bands"] is None and design["bands_asked"] is None
    assert design["sampled_at"]


def test_the_same_seed_draws_the_same_set_and_a_seed_not_given_is_recorded(team_a):
    make_log(team_a)
    first = sample(team_a, name="One", method="bands", size=5, bands=2)
    again = sample(team_a, name="Two", method="bands", size=5, bands=2)
    drawn = sample(team_a, name="Three", seed=None)

    assert first.queries == again.queries
    assert isinstance(drawn.design["seed"], int)
    redrawn = sample(team_a, name="Four", seed=drawn.design["seed"])
    assert redrawn.queries == drawn.queries


def test_a_banded_sample_records_each_band(team_a):
    make_log(team_a)

    saved = sample(team_a, method="bands", size=6, bands=3)

    # 2 to 1,000 searches in three bands equally wide on a log scale.
    assert saved.design["bands_asked"] == 3
    assert [(b["low"], b["high"], b["queries"], b["sampled"]) for b in saved.design["bands"]] == [
        (126, 1000, 3, 2),
        (16, 125, 4, 2),
        (2, 15, 3, 2),
    ]
    for one in saved.design["queries"]:
        band = saved.design["bands"][one["band"] - 1]
        assert band["low"] <= one["searches"] <= band["high"]
        assert one["probability"] == band["sampled"] / band["queries"]


def test_the_most_searched_are_taken_in_order_and_a_size_past_the_log_takes_them_all(team_a):
    make_log(team_a)

    top = sample(team_a, name="Top", method="top", size=3)
    everything = sample(team_a, name="All", method="pps", size=50)

    assert top.queries == ["shoes", "boots", "red dress"]
    assert [one["probability"] for one in top.design["queries"]] == [None, None, None]
    assert (everything.design["size_asked"], everything.design["size"]) == (50, 10)
    assert {one["probability"] for one in everything.design["queries"]} == {1.0}


def test_bad_input_names_each_field_and_saves_nothing(team_a):
    make_log(team_a)
    SavedQuerySet.objects.create(team=team_a, name="Taken", queries=["x"])

    with pytest.raises(InvalidInput) as refused:
        sample(team_a, name="Taken", log="", method="random", size=0, seed=-1, bands=2)
    assert problems_of(refused) == ["name", "log", "method", "size", "seed", "bands"]

    with pytest.raises(InvalidInput) as refused:
        sample(team_a, name="", log=["October"], size=1001, seed="7x", method="bands", bands=11)
    assert refused.value.problems == [
        "name: a text of 1 to 200 characters, without NUL",
        "log: a behaviour log of the team, by id or name",
        "size: a whole number from 1 to 1,000",
        "seed: a whole number from 0 to 2,147,483,647",
        "bands: a whole number from 1 to 10",
    ]
    assert SavedQuerySet.objects.count() == 1


def test_another_teams_log_is_not_found_and_an_empty_log_is_refused(team_a, team_b):
    theirs = make_log(team_b, name="Theirs")
    make_log(team_a, name="Empty", searches={})

    with pytest.raises(NotFound, match="log: the team has no behaviour log"):
        sample(team_a, log=theirs.id)
    with pytest.raises(NotFound):
        sample(team_a, log="Theirs")
    with pytest.raises(InvalidInput, match="log: Empty has no searches to sample"):
        sample(team_a, log="Empty")
    assert not SavedQuerySet.objects.exists()


# --- The API ----------------------------------------------------------------------------


@pytest.fixture
def api(team_a) -> Client:
    """Team A's integration, with its API token."""
    _token, text = api_token_create(team=team_a, name="ci")
    return Client(headers={"Authorization": f"Bearer {text}"})


def post(api, **body):
    return api.post(SAMPLE, body, content_type="application/json")


def test_the_api_samples_a_set_by_log_name_and_lists_it_with_its_design(api, team_a):
    make_log(team_a)
    SavedQuerySet.objects.create(team=team_a, name="By hand", queries=["x"])

    created = post(api, name="Head", log="October", method="top", size=2)

    assert created.status_code == 201, created.content
    body = created.json()
    assert body["queries"] == ["shoes", "boots"]
    assert body["design"]["method"] == "top" and body["design"]["seed"] >= 0
    assert body["design"]["queries"][0] == {
        "query": "shoes",
        "searches": 1000,
        "probability": None,
        "band": None,
    }
    listed = {one["name"]: one["design"] for one in api.get(SETS).json()}
    assert listed["By hand"] is None and listed["Head"]["size"] == 2
    assert api.get(f"{SETS}{body['id']}/").json()["design"] == body["design"]


def test_the_api_answers_400_naming_each_field(api, team_a):
    make_log(team_a)

    refused = post(api, name="", log="October", method="pps", size=5000, bands=3)
    unknown = post(api, name="A", log="October", method="pps", size=5, weights=True)
    not_object = api.post(SAMPLE, [1], content_type="application/json")

    assert refused.status_code == 400
    assert [e["field"] for e in refused.json()["errors"]] == ["name", "size", "bands"]
    assert unknown.status_code == 400
    assert unknown.json()["errors"] == [{"field": "weights", "message": "not a field of a sample"}]
    assert not_object.status_code == 400
    assert not SavedQuerySet.objects.exists()


def test_the_api_answers_404_for_another_teams_log(api, team_b):
    theirs = make_log(team_b, name="Theirs")

    for log in (theirs.id, "Theirs", 999_999):
        answer = post(api, name="Stolen", log=log, method="pps", size=3)
        assert answer.status_code == 404
        assert answer.json()["detail"].startswith("log: the team has no behaviour log")
    assert not SavedQuerySet.objects.exists()
