"""The lifecycle buttons on the evaluation page and the POSTs behind them, through real
URLs: start or resume, pause, finish, clone, archive, pin, team baseline, delete, and
the "Running keywords" line while a start runs."""

import pytest
from django.contrib.messages import get_messages

from apps.accounts.models import Team
from apps.evaluations.models import Evaluation, Keyword, Snapshot, Status
from apps.evaluations.services import evaluation_create_with_keywords
from apps.lifecycle.steps import evaluation_stop, team_set_baseline
from tests.factories import client_for, make_evaluation, make_search_model

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def text(response) -> str:
    return response.content.decode()


def said(response) -> str:
    """The latest message left for the next page (earlier ones were never shown)."""
    return [str(message) for message in get_messages(response.wsgi_request)][-1]


def url(evaluation, action: str) -> str:
    return f"/evaluations/{evaluation.id}/{action}/"


def status_of(evaluation) -> str:
    return Evaluation.objects.values_list("status", flat=True).get(id=evaluation.id)


def finished(evaluation):
    Evaluation.objects.filter(id=evaluation.id).update(status=Status.FINISHED)
    evaluation.refresh_from_db()
    return evaluation


def lifecycle_part(page: str) -> str:
    return page.split('data-testid="lifecycle"')[1].split("</section>")[0]


def model_evaluation(team, server, *, path="/search", keywords=("red shoes", "blue hat")):
    return evaluation_create_with_keywords(
        team=team,
        name="Catalogue 1",
        metrics=[("ndcg", 5)],
        keywords=keywords,
        search_model=make_search_model(team, server.base_url, path=path),
    )


@pytest.fixture
def lead(owner):
    return client_for(owner)


# --- Which buttons show ----------------------------------------------------------------


def test_a_pending_evaluation_offers_start_edit_clone_pin_archive_and_delete(lead, team_a):
    evaluation = make_evaluation(team=team_a, start=False)

    part = lifecycle_part(text(lead.get(f"/evaluations/{evaluation.id}/")))

    assert ">Start</button>" in part and ">Edit</a>" in part and ">Delete…</a>" in part
    assert ">Clone</button>" in part and ">Pin</button>" in part and ">Archive</button>" in part
    for hidden in ["Pause", "Finish…", "Resume", "Set as team baseline", "Open its queue"]:
        assert hidden not in part
    assert f"/evaluations/{evaluation.id}/export/?format=json" in part


def test_an_active_evaluation_offers_pause_and_finish_but_not_edit_archive_or_delete(lead, team_a):
    evaluation = make_evaluation(team=team_a)

    part = lifecycle_part(text(lead.get(f"/evaluations/{evaluation.id}/")))

    assert ">Pause</button>" in part and ">Finish…</a>" in part and "Open its queue" in part
    for hidden in [">Start<", ">Edit<", "Delete…", ">Archive<", "Set as team baseline"]:
        assert hidden not in part


def test_a_finished_evaluation_offers_the_team_baseline_and_then_clearing_it(lead, team_a):
    evaluation = finished(make_evaluation(team=team_a))

    part = lifecycle_part(text(lead.get(f"/evaluations/{evaluation.id}/")))
    assert "Set as team baseline" in part and ">Pause<" not in part and ">Start<" not in part

    team_set_baseline(team=team_a, evaluation=evaluation)
    part = lifecycle_part(text(lead.get(f"/evaluations/{evaluation.id}/")))
    assert "Clear team baseline" in part and "Team baseline</span>" in part


def test_a_paused_evaluation_offers_resume(lead, team_a):
    evaluation = make_evaluation(team=team_a)
    evaluation_stop(evaluation=evaluation)

    part = lifecycle_part(text(lead.get(f"/evaluations/{evaluation.id}/")))

    assert ">Resume</button>" in part and ">Start</button>" not in part


# --- Start, resume, pause ----------------------------------------------------------------


@pytest.mark.parametrize("who", ["owner", "admin"])
def test_a_lead_starts_an_evaluation_of_imported_results_and_it_opens(who, request, team_a):
    evaluation = make_evaluation(team=team_a, start=False)

    response = client_for(request.getfixturevalue(who)).post(url(evaluation, "start"))

    assert response.status_code == 302 and response["Location"] == f"/evaluations/{evaluation.id}/"
    assert status_of(evaluation) == Status.ACTIVE
    assert said(response) == "Started: open for grading."


def test_starting_with_a_model_runs_its_keywords_and_opens_it(
    lead, team_a, search_server, django_capture_on_commit_callbacks
):
    evaluation = model_evaluation(team_a, search_server)

    with django_capture_on_commit_callbacks(execute=True):
        response = lead.post(url(evaluation, "start"))

    assert response.status_code == 302
    assert status_of(evaluation) == Status.ACTIVE
    assert Snapshot.objects.filter(keyword__evaluation=evaluation).count() == 10
    page = text(lead.get(f"/evaluations/{evaluation.id}/"))
    assert "Open its queue" in page and "Running keywords" not in page


def test_while_the_keywords_run_the_page_shows_how_many_ran_and_keeps_asking(
    lead, team_a, search_server
):
    evaluation = model_evaluation(team_a, search_server)

    response = lead.post(url(evaluation, "start"))  # the run is queued after the commit
    Keyword.objects.filter(evaluation=evaluation, text="red shoes").update(
        executed_at="2025-01-01T00:00:00Z"
    )

    assert said(response).startswith("Started: its keywords are running")
    part = lifecycle_part(text(lead.get(f"/evaluations/{evaluation.id}/")))
    assert "Running keywords: <strong>1 of 2</strong>" in part
    assert f'hx-get="/evaluations/{evaluation.id}/lifecycle/"' in part
    assert 'hx-trigger="every 2s"' in part
    assert ">Pause</button>" in part and ">Start<" not in part and "Delete…" not in part
    polled = lead.get(url(evaluation, "lifecycle"), headers=HTMX)
    assert "1 of 2" in text(polled) and "HX-Refresh" not in polled


def test_the_polled_part_reloads_the_page_once_the_evaluation_has_opened(lead, team_a):
    evaluation = make_evaluation(team=team_a)

    polled = lead.get(url(evaluation, "lifecycle"), headers=HTMX)

    assert polled.status_code == 200 and polled["HX-Refresh"] == "true"
    assert "hx-trigger" not in text(polled)


def test_failed_keywords_are_counted_with_a_link_to_them_in_the_table(
    lead, team_a, search_server, django_capture_on_commit_callbacks, settings
):
    settings.SEARCH_ATTEMPTS = 1
    evaluation = model_evaluation(team_a, search_server, path="/error500")
    with django_capture_on_commit_callbacks(execute=True):
        lead.post(url(evaluation, "start"))

    part = lifecycle_part(text(lead.get(f"/evaluations/{evaluation.id}/")))

    assert f'href="/evaluations/{evaluation.id}/?only=failed#keywords">2 keywords failed' in part


def test_pausing_a_start_stops_its_run_and_resuming_runs_the_rest(
    lead, team_a, search_server, django_capture_on_commit_callbacks
):
    evaluation = model_evaluation(team_a, search_server)
    lead.post(url(evaluation, "start"))  # queued, not run: the commit never happens here

    paused = lead.post(url(evaluation, "pause"))

    evaluation.refresh_from_db()
    assert (evaluation.status, evaluation.fetching) == (Status.PENDING, False)
    assert said(paused).startswith("Paused: no more keywords run")
    Keyword.objects.filter(evaluation=evaluation, text="red shoes").update(
        executed_at="2025-01-01T00:00:00Z"
    )
    assert ">Resume</button>" in text(lead.get(f"/evaluations/{evaluation.id}/"))
    with django_capture_on_commit_callbacks(execute=True):
        lead.post(url(evaluation, "start"))
    assert status_of(evaluation) == Status.ACTIVE
    assert search_server.keyword_calls == {"blue hat": 1}


def test_a_lead_pauses_and_resumes_an_active_evaluation(lead, team_a):
    evaluation = make_evaluation(team=team_a)

    paused = lead.post(url(evaluation, "pause"))
    assert status_of(evaluation) == Status.PENDING
    resumed = lead.post(url(evaluation, "start"))

    assert status_of(evaluation) == Status.ACTIVE
    assert paused.status_code == resumed.status_code == 302
    assert said(resumed) == "Resumed: open for grading again."


@pytest.mark.parametrize(
    ("action", "state", "refusal"),
    [
        (
            "start",
            "active",
            "Not started: only a pending evaluation can start; this one is active.",
        ),
        (
            "start",
            "finished",
            "Not started: only a pending evaluation can start; this one is finished.",
        ),
        (
            "pause",
            "pending",
            "Not paused: only an active or starting evaluation can pause; this one is pending.",
        ),
        (
            "finish",
            "pending",
            "Not finished: only an active evaluation can finish; this one is pending.",
        ),
        (
            "delete",
            "active",
            "Not deleted: pause the evaluation before deleting it: it is active.",
        ),
    ],
)
def test_a_refused_transition_says_why_and_changes_nothing(lead, team_a, action, state, refusal):
    evaluation = make_evaluation(team=team_a, start=state != "pending")
    if state == "finished":
        finished(evaluation)

    response = lead.post(url(evaluation, action))

    assert response.status_code == 302 and response["Location"] == f"/evaluations/{evaluation.id}/"
    assert said(response) == refusal
    assert status_of(evaluation) == state


def test_a_start_already_running_is_not_started_twice(lead, team_a, search_server):
    evaluation = model_evaluation(team_a, search_server)
    lead.post(url(evaluation, "start"))

    again = lead.post(url(evaluation, "start"))

    assert said(again) == (
        "Not started: the evaluation is already starting: its keywords are running."
    )


# --- Finish, clone, archive, pin, baseline, delete ---------------------------------------------


def test_finishing_asks_first_then_finishes(lead, team_a):
    evaluation = make_evaluation(team=team_a)

    asked = lead.get(url(evaluation, "finish"))
    assert asked.status_code == 200 and "Finish the evaluation</button>" in text(asked)
    assert status_of(evaluation) == Status.ACTIVE

    done = lead.post(url(evaluation, "finish"))
    assert status_of(evaluation) == Status.FINISHED
    assert said(done) == f"Finished {evaluation.name}."


def test_finishing_an_auto_restarting_evaluation_starts_its_copy(
    lead, team_a, django_capture_on_commit_callbacks
):
    evaluation = make_evaluation(team=team_a, auto_restart=True)

    with django_capture_on_commit_callbacks(execute=True):
        done = lead.post(url(evaluation, "finish"))

    assert "A fresh copy starts" in said(done)
    copy = Evaluation.objects.exclude(id=evaluation.id).get(team=team_a)
    assert copy.status == Status.ACTIVE


def test_cloning_makes_a_pending_copy_and_opens_it(lead, team_a):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2, "hat": 1})

    response = lead.post(url(evaluation, "clone"))

    copy = Evaluation.objects.exclude(id=evaluation.id).get(team=team_a)
    assert response["Location"] == f"/evaluations/{copy.id}/"
    assert copy.status == Status.PENDING and copy.total_slots == 3
    assert said(response) == (
        f"Cloned {evaluation.name} as {copy.name}: pending, ready to edit or start."
    )


def test_archiving_and_bringing_back(lead, team_a):
    evaluation = make_evaluation(team=team_a, start=False)

    lead.post(url(evaluation, "archive"), {"archived": "1"})
    assert Evaluation.objects.get(id=evaluation.id).archived
    assert ">Unarchive</button>" in text(lead.get(f"/evaluations/{evaluation.id}/"))
    lead.post(url(evaluation, "archive"), {"archived": "0"})
    assert not Evaluation.objects.get(id=evaluation.id).archived


def test_an_active_evaluation_is_not_archived(lead, team_a):
    evaluation = make_evaluation(team=team_a)

    response = lead.post(url(evaluation, "archive"), {"archived": "1"})

    assert said(response) == ("Not archived: pause or finish the evaluation before archiving it.")
    assert not Evaluation.objects.get(id=evaluation.id).archived


def test_pinning_and_unpinning(lead, team_a):
    evaluation = make_evaluation(team=team_a)

    pinned = lead.post(url(evaluation, "pin"), {"pinned": "1"})
    assert Evaluation.objects.get(id=evaluation.id).pinned
    assert said(pinned) == "Pinned to the dashboard."
    assert ">Unpin</button>" in text(lead.get(f"/evaluations/{evaluation.id}/"))
    lead.post(url(evaluation, "pin"), {"pinned": "0"})
    assert not Evaluation.objects.get(id=evaluation.id).pinned


@pytest.mark.parametrize(
    ("action", "field"), [("pin", "pinned"), ("archive", "archived"), ("baseline", "baseline")]
)
@pytest.mark.parametrize("value", [None, "yes", "2"])
def test_a_flag_that_is_not_1_or_0_is_refused_naming_the_field(lead, team_a, action, field, value):
    evaluation = finished(make_evaluation(team=team_a))

    response = lead.post(url(evaluation, action), {} if value is None else {field: value})

    assert response.status_code == 400
    assert f"{field}: must be 1 or 0" in text(response)
    evaluation.refresh_from_db()
    assert not evaluation.pinned and not evaluation.archived
    assert Team.objects.get(id=team_a.id).baseline_evaluation is None


def test_a_finished_evaluation_becomes_the_team_baseline_and_is_cleared(lead, team_a):
    evaluation = finished(make_evaluation(team=team_a))

    lead.post(url(evaluation, "baseline"), {"baseline": "1"})
    assert Team.objects.get(id=team_a.id).baseline_evaluation == evaluation
    cleared = lead.post(url(evaluation, "baseline"), {"baseline": "0"})

    assert Team.objects.get(id=team_a.id).baseline_evaluation is None
    assert said(cleared) == "The team has no baseline now."


def test_clearing_from_another_evaluation_leaves_the_baseline_alone(lead, team_a):
    baseline = finished(make_evaluation(team=team_a))
    other = finished(make_evaluation(team=team_a))
    team_set_baseline(team=team_a, evaluation=baseline)

    response = lead.post(url(other, "baseline"), {"baseline": "0"})

    assert Team.objects.get(id=team_a.id).baseline_evaluation == baseline
    assert "was not the team's baseline" in said(response)


def test_only_a_finished_evaluation_becomes_the_baseline(lead, team_a):
    evaluation = make_evaluation(team=team_a)

    response = lead.post(url(evaluation, "baseline"), {"baseline": "1"})

    assert said(response) == (
        "Baseline not changed: only a finished evaluation can be the baseline; this one is active."
    )
    assert Team.objects.get(id=team_a.id).baseline_evaluation is None


def test_deleting_asks_first_then_deletes_and_goes_to_the_list(lead, team_a):
    evaluation = make_evaluation(team=team_a, keywords={"red shoes": 2, "hat": 1}, start=False)

    asked = lead.get(url(evaluation, "delete"))
    assert "Its 2 keywords, their results and 0 grades are deleted" in text(asked)
    assert Evaluation.objects.filter(id=evaluation.id).exists()

    response = lead.post(url(evaluation, "delete"))
    assert response["Location"] == "/evaluations/"
    assert not Evaluation.objects.filter(id=evaluation.id).exists()
    assert not Keyword.objects.exists()


# --- Who may ------------------------------------------------------------------------------------


ACTIONS = [
    ("start", {}),
    ("pause", {}),
    ("finish", {}),
    ("clone", {}),
    ("archive", {"archived": "1"}),
    ("pin", {"pinned": "1"}),
    ("baseline", {"baseline": "1"}),
    ("delete", {}),
]


def snapshot_of(team):
    return (
        list(Evaluation.objects.values_list("id", "status", "pinned", "archived")),
        Team.objects.get(id=team.id).baseline_evaluation_id,
    )


@pytest.mark.parametrize(("who", "refused"), [("evaluator", 403), ("outsider", 404)])
@pytest.mark.parametrize(("action", "data"), ACTIONS)
def test_an_evaluator_is_refused_and_another_teams_lead_finds_nothing(
    request, team_a, who, refused, action, data
):
    evaluation = make_evaluation(team=team_a)
    before = snapshot_of(team_a)

    client = client_for(request.getfixturevalue(who))

    assert client.post(url(evaluation, action), data).status_code == refused
    assert snapshot_of(team_a) == before


@pytest.mark.parametrize(("action", "data"), ACTIONS)
def test_every_action_needs_the_csrf_token(team_a, owner, action, data):
    evaluation = make_evaluation(team=team_a)
    before = snapshot_of(team_a)

    response = client_for(owner, enforce_csrf_checks=True).post(url(evaluation, action), data)

    assert response.status_code == 403
    assert snapshot_of(team_a) == before


@pytest.mark.parametrize("action", ["start", "pause", "clone", "archive", "pin", "baseline"])
def test_actions_only_answer_posts(lead, team_a, action):
    evaluation = make_evaluation(team=team_a)

    assert lead.get(url(evaluation, action)).status_code == 405


@pytest.mark.parametrize("page", ["finish", "delete", "lifecycle"])
def test_the_confirmation_pages_and_the_polled_part_are_for_the_teams_leads(
    team_a, evaluator, outsider, page
):
    evaluation = make_evaluation(team=team_a)

    assert client_for(evaluator).get(url(evaluation, page)).status_code == 403
    assert client_for(outsider).get(url(evaluation, page)).status_code == 404


# --- Cost -----------------------------------------------------------------------------------------


def test_the_polled_part_reads_a_fixed_number_of_queries(
    lead, team_a, search_server, django_assert_max_num_queries
):
    evaluation = model_evaluation(team_a, search_server, keywords=[f"k{n}" for n in range(30)])
    lead.post(url(evaluation, "start"))
    lead.get("/")

    with django_assert_max_num_queries(6):
        response = lead.get(url(evaluation, "lifecycle"), headers=HTMX)

    assert "0 of 30" in text(response)


@pytest.mark.parametrize(
    ("action", "data"),
    [("pause", {}), ("start", {}), ("pin", {"pinned": "1"}), ("archive", {"archived": "0"})],
)
def test_an_action_costs_a_few_queries(lead, team_a, action, data, django_assert_max_num_queries):
    evaluation = make_evaluation(team=team_a, keywords={f"k{n}": 3 for n in range(20)})
    if action == "start":
        evaluation_stop(evaluation=evaluation)
    lead.get("/")

    with django_assert_max_num_queries(12):
        assert lead.post(url(evaluation, action), data).status_code == 302
