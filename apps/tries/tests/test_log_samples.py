"""Query sets sampled from a behaviour log: a query's searches read from its rank-1
impressions in one query; a set drawn by each method and saved with its design; the same
seed, the same set; bad input named field by field with nothing saved; another team's log
not found; the API's 201, 400 and 404; the lead's page from the form to a new evaluation
filled with the set's queries; and the command."""

import io
import re
from html import unescape

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.accounts.api_tokens import api_token_create
from apps.behaviour.models import ClickCount, ClickLog
from apps.core.errors import InvalidInput, NotFound
from apps.evaluations.models import Evaluation
from apps.tries.log_samples import log_frequencies, query_set_sample
from apps.tries.models import SavedQuerySet
from tests.factories import client_for

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
        query_count=len(SEARCHES if searches is None else searches),
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


# --- The page ---------------------------------------------------------------------------

PAGE = "/query-sets/sample/"


def text_of(response) -> str:
    """The page's words, tags left out, spaces as one."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", response.content.decode())).split())


def keywords_box(response) -> str:
    found = re.search(
        r"<textarea name=\"keywords\"[^>]*>(.*?)</textarea>", response.content.decode(), re.S
    )
    return unescape(found.group(1)).strip() if found else ""


def new_evaluation(keywords: str) -> dict[str, str]:
    return {
        "search_model": "",
        "name": "From the log",
        "keywords": keywords,
        "scale": "graded",
        "strategy": "1",
        "profile": "searchtweak",
        "metrics": "ndcg@10",
        "reuse": "none",
    }


def test_a_lead_samples_on_the_page_and_starts_an_evaluation_with_the_queries(team_a, owner):
    log = make_log(team_a)
    lead = client_for(owner)
    assert "October (10 queries, 2026-10-01 to 2026-10-31)" in text_of(lead.get(PAGE))

    answer = lead.post(
        PAGE,
        # Bands typed while another method is chosen are not the sample's.
        {"log": log.id, "method": "pps", "size": "4", "bands": "5", "seed": "7", "name": "Mix"},
        follow=True,
    )

    saved = SavedQuerySet.objects.get(team=team_a, name="Mix")
    assert answer.redirect_chain == [(f"/query-sets/{saved.id}/sampled/", 302)]
    assert saved.design["method"] == "pps" and saved.design["bands_asked"] is None
    page = text_of(answer)
    assert "Saved the query set Mix with 4 queries." in page
    assert (
        "4 of 10 queries from the log October, 2026-10-01 to 2026-10-31 (1,915 searches), "
        "probability proportional to searches, seed 7; 2 queries searched so often they were "
        "certain; each other query's chance of being picked is 2 × its searches ÷ 515"
    ) in page
    assert "1 shoes 1,000 certain 2 boots 400 certain" in page
    start = reverse("tries:query_set_evaluation_new", args=[saved.id])
    assert f'href="{start}"' in answer.content.decode()

    form = lead.get(start)
    assert form.status_code == 200
    assert keywords_box(form).splitlines() == saved.queries
    created = lead.post(start, new_evaluation(keywords_box(form)), follow=True)

    evaluation = Evaluation.objects.get(team=team_a, name="From the log")
    assert created.redirect_chain[-1][0] == f"/evaluations/{evaluation.id}/"
    assert [k.text for k in evaluation.keywords.order_by("position")] == saved.queries


def test_the_page_shows_a_banded_sample_band_by_band(team_a, owner):
    make_log(team_a)
    saved = sample(team_a, name="By band", method="bands", size=6, bands=3)

    page = text_of(client_for(owner).get(f"/query-sets/{saved.id}/sampled/"))

    assert "6 of 10 queries from the log October" in page
    assert "a random sample by band of searches, seed 7; the searches are cut into 3 bands" in page
    assert "1 126 to 1,000 times 3 1,600 2 66.7%" in page  # shoes, boots, red dress
    assert "3 2 to 15 times 3 25 2 66.7%" in page


def queries_to_open(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_the_pages_queries_do_not_grow_with_the_logs_and_sets_listed(team_a, owner):
    make_log(team_a)
    first = sample(team_a, name="First")
    lead = client_for(owner)
    lead.get(PAGE)  # a session's first request reads more than the next ones
    url = f"/query-sets/{first.id}/sampled/"
    before = queries_to_open(lead, url)

    for more in range(3):
        make_log(team_a, name=f"Log {more}")
        sample(team_a, name=f"Set {more}", log=f"Log {more}")

    assert queries_to_open(lead, url) == before
    assert "Set 2" in text_of(lead.get(PAGE))


def test_a_form_with_problems_names_each_field_and_saves_nothing(team_a, owner):
    log = make_log(team_a)
    SavedQuerySet.objects.create(team=team_a, name="Taken", queries=["x"])
    lead = client_for(owner)

    answer = lead.post(
        PAGE,
        {"log": log.id, "method": "bands", "size": "²", "bands": "11", "seed": "", "name": "Taken"},
    )

    assert answer.status_code == 400
    page = text_of(answer)
    assert "Nothing was saved." in page
    for said in (
        "gives them all. A whole number from 1 to 1,000.",
        "3 if blank. A whole number from 1 to 10.",
        "Name of the query set: The team already has a query set named 'Taken'.",
    ):
        assert said in page
    assert SavedQuerySet.objects.count() == 1


def test_another_teams_logs_and_sets_are_not_found_and_an_evaluator_is_refused(
    team_a, team_b, owner, evaluator
):
    theirs = make_log(team_b, name="Theirs")
    their_set = sample(team_b, log="Theirs")
    lead = client_for(owner)

    refused = lead.post(PAGE, {"log": theirs.id, "method": "top", "size": "3", "name": "Stolen"})

    assert refused.status_code == 400 and "Theirs" not in text_of(lead.get(PAGE))
    assert lead.get(f"/query-sets/{their_set.id}/sampled/").status_code == 404
    assert lead.get(f"/query-sets/{their_set.id}/new-evaluation/").status_code == 404
    graders = client_for(evaluator)
    assert graders.get(PAGE).status_code == 403
    assert graders.get(f"/query-sets/{their_set.id}/new-evaluation/").status_code == 403
    assert not SavedQuerySet.objects.filter(team=team_a).exists()


# --- The command ------------------------------------------------------------------------


def test_the_command_samples_a_set_and_prints_it_with_its_design(team_a):
    make_log(team_a)
    out = io.StringIO()

    call_command(
        "sample_queries",
        "--team=Team A",
        "--log=October",
        "--method=top",
        "--size=2",
        "--name=Head",
        stdout=out,
    )

    printed = out.getvalue()
    assert "Saved the query set Head" in printed
    assert "The 2 most searched of 10 queries from the log October" in printed
    assert re.search(r"1,000 +- +shoes", printed) and re.search(r"400 +- +boots", printed)
    assert SavedQuerySet.objects.get(name="Head").queries == ["shoes", "boots"]


def test_the_command_names_each_bad_option_and_exits_2(team_a):
    make_log(team_a)

    with pytest.raises(CommandError) as refused:
        call_command(
            "sample_queries",
            "--team=Team A",
            "--log=October",
            "--method=pps",
            "--size=0",
            "--name=X",
            "--bands=3",
        )
    assert refused.value.returncode == 2
    assert str(refused.value) == (
        "--size: a whole number from 1 to 1,000; --bands: only for the method bands"
    )
    with pytest.raises(CommandError, match="--log: the team has no behaviour log 'May'"):
        call_command(
            "sample_queries", "--team=Team A", "--log=May", "--method=pps", "--size=3", "--name=X"
        )
    with pytest.raises(CommandError, match="--team: no team named 'Nobody'"):
        call_command(
            "sample_queries", "--team=Nobody", "--log=May", "--method=pps", "--size=3", "--name=X"
        )
