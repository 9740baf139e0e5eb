"""The seed_demo command: a demo team, its people and three evaluations, loaded once."""

import random
from io import StringIO
from unittest import mock

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from apps.accounts.models import Membership, Tag, Team, User
from apps.behaviour.models import ClickJudgementSet, ClickLog
from apps.demo import seed as demo
from apps.endpoints.models import SearchEndpoint
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    FeedbackSlot,
    Keyword,
    Snapshot,
    Status,
)
from apps.judges.models import Judge
from apps.lifecycle.steps import evaluation_start
from apps.schedules.models import Schedule

LOGINS = [demo.OWNER, demo.LEAD, *demo.GRADERS]


def seed() -> str:
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (
            Team,
            User,
            Membership,
            Tag,
            Evaluation,
            EvaluationMetric,
            Keyword,
            Snapshot,
            FeedbackSlot,
        )
    }


def demo_evaluation(scale: str) -> Evaluation:
    return Evaluation.objects.get(team__name=demo.TEAM_NAME, scale=scale, search_model=None)


@pytest.fixture
def served_as_make_run_does(settings):
    """`make run`'s settings: the demo APIs on, loopback allowed to search and judges."""
    settings.DEMO_SEARCH_API = True
    settings.SEARCH_ALLOW_PRIVATE_ADDRESSES = True
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    settings.DEMO_SEARCH_URL = "http://127.0.0.1:8000/demo/search"
    settings.DEMO_JUDGE_URL = "http://127.0.0.1:8000/demo/llm/v1"
    return settings


@pytest.fixture
def private_addresses_refused(settings):
    """docker-compose's settings: DEBUG off (the demo APIs with it), no private address."""
    settings.DEMO_SEARCH_API = False
    settings.SEARCH_ALLOW_PRIVATE_ADDRESSES = False
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = False
    return settings


def demo_schedule() -> Schedule:
    return Schedule.objects.get(team__name=demo.TEAM_NAME, name=demo.DEMO_SCHEDULE)


@pytest.mark.django_db
def test_seed_demo_prints_what_the_demo_calls_the_four_logins_and_the_password(
    served_as_make_run_does,
):
    printed = seed()

    assert printed.splitlines() == [
        "Loaded demo team 'Acme Outdoor Shop' with 7 evaluations.",
        "The demo search model calls http://127.0.0.1:8000/demo/search.",
        "The demo judge calls http://127.0.0.1:8000/demo/llm/v1.",
        "Demo logins (password: relevo-demo):",
        "  owner   owner@relevo.test",
        "  lead    lead@relevo.test",
        "  grader  ada@relevo.test",
        "  grader  ben@relevo.test",
    ]


@pytest.mark.django_db
def test_seed_demo_creates_one_team_with_an_owner_an_admin_and_two_evaluators():
    seed()

    team = Team.objects.get()
    assert team.name == demo.TEAM_NAME
    assert sorted(Membership.objects.filter(team=team).values_list("user__email", "role")) == [
        ("ada@relevo.test", "evaluator"),
        ("ben@relevo.test", "evaluator"),
        ("lead@relevo.test", "admin"),
        ("owner@relevo.test", "owner"),
    ]
    for email in demo.GRADERS:
        grader = Membership.objects.get(team=team, user__email=email)
        assert list(grader.tags.values_list("name", flat=True)) == ["apparel"]


@pytest.mark.django_db
def test_the_demo_logins_authenticate_with_the_demo_password():
    seed()

    for email in LOGINS:
        assert authenticate(username=email, password=demo.PASSWORD) == User.objects.get(email=email)
    assert authenticate(username=demo.OWNER, password="not-the-password") is None


@pytest.mark.django_db
def test_the_demo_owner_can_use_the_admin_and_no_one_else_can():
    seed()

    assert list(User.objects.filter(is_staff=True).values_list("email", flat=True)) == [demo.OWNER]
    assert User.objects.get(email=demo.OWNER).is_superuser


# Real commits: the grade-to-metrics pipeline runs on commit, as it does in production.
@pytest.mark.django_db(transaction=True)
def test_seed_demo_grades_all_of_the_binary_evaluation_and_part_of_the_others():
    seed()

    evaluations = Evaluation.objects.filter(team__name=demo.TEAM_NAME, search_model=None)
    assert sorted(evaluations.values_list("scale", "strategy")) == [
        ("binary", 1),
        ("detail", 1),
        ("graded", 3),
    ]
    for evaluation in evaluations:
        assert evaluation.keywords.count() == len(demo.QUERIES)
        assert evaluation.total_slots == len(demo.QUERIES) * 8 * evaluation.strategy

    binary = demo_evaluation("binary")
    assert binary.status == Status.FINISHED
    assert binary.finished_at is not None
    assert binary.graded_slots == binary.total_slots
    assert binary.progress == 1.0

    for scale in ("graded", "detail"):
        evaluation = demo_evaluation(scale)
        assert evaluation.status == Status.ACTIVE
        assert 0 < evaluation.graded_slots < evaluation.total_slots
        assert evaluation.progress == pytest.approx(
            evaluation.graded_slots / evaluation.total_slots
        )
        assert (
            evaluation.graded_slots
            == FeedbackSlot.objects.filter(evaluation=evaluation, grade__isnull=False).count()
        )


@pytest.mark.django_db(transaction=True)
def test_seed_demo_leaves_every_evaluation_with_computed_metric_values():
    seed()

    for evaluation in Evaluation.objects.filter(team__name=demo.TEAM_NAME, search_model=None):
        metrics = list(evaluation.metrics.values_list("metric", "k", "value"))
        expected = next(spec[3] for spec in demo.EVALUATIONS if spec[0] == evaluation.name)
        assert [(metric, k) for metric, k, _ in metrics] == expected
        assert all(value is not None for _, _, value in metrics), metrics
    assert not Keyword.objects.filter(needs_scoring=True).exists()


@pytest.mark.django_db(transaction=True)
def test_running_seed_demo_again_changes_nothing_and_says_it_was_already_loaded():
    seed()
    before = counts()
    grades_before = sorted(FeedbackSlot.objects.values_list("id", "grade"))
    values_before = sorted(EvaluationMetric.objects.values_list("id", "value"))

    printed = seed()

    assert counts() == before
    assert sorted(FeedbackSlot.objects.values_list("id", "grade")) == grades_before
    assert sorted(EvaluationMetric.objects.values_list("id", "value")) == values_before
    assert printed.splitlines()[0] == (
        "Already loaded: demo team 'Acme Outdoor Shop' with 7 evaluations."
    )
    assert "Demo logins (password: relevo-demo):" in printed


@pytest.mark.django_db
def test_a_run_interrupted_part_way_is_completed_by_the_next_run():
    with (
        mock.patch.object(demo, "evaluation_start", side_effect=RuntimeError("interrupted")),
        pytest.raises(RuntimeError),
    ):
        seed()

    printed = seed()

    assert Evaluation.objects.filter(team__name=demo.TEAM_NAME).count() == 7, printed


@pytest.mark.django_db
def test_the_demo_has_a_search_model_and_a_pending_evaluation_of_it_to_start():
    seed()

    live = Evaluation.objects.get(team__name=demo.TEAM_NAME, name__startswith="Live catalogue")

    assert (live.status, live.reuse) == (Status.PENDING, "keyword_doc")
    assert list(live.keywords.values_list("text", flat=True)) == demo.QUERIES
    assert live.search_model.default_keywords.splitlines() == demo.QUERIES


@pytest.mark.django_db
def test_the_demo_search_api_answers_like_a_search_engine(client, settings):
    settings.DEMO_SEARCH_API = True

    answer = client.get("/demo/search", {"q": "red running shoes", "size": 3}).json()

    hits = answer["hits"]["hits"]
    assert len(hits) == 3 and answer["hits"]["total"] == 3
    assert all(hit["_id"].startswith("sku-") for hit in hits)
    assert client.get("/demo/search", {"q": "red running shoes", "size": 3}).json() == answer
    assert client.get("/demo/search", {"q": "x", "size": "many"}).status_code == 400


@pytest.mark.django_db
def test_the_demo_search_api_is_off_unless_the_setting_is_on(client, settings):
    settings.DEMO_SEARCH_API = False

    assert client.get("/demo/search", {"q": "red"}).status_code == 404


@pytest.mark.django_db
def test_starting_the_demo_evaluation_calls_the_demo_search_api_and_opens_it(
    live_server, settings, django_capture_on_commit_callbacks
):
    settings.DEMO_SEARCH_API = True
    settings.SEARCH_ALLOW_PRIVATE_ADDRESSES = True
    settings.DEMO_SEARCH_URL = f"{live_server.url}/demo/search"
    seed()
    live = Evaluation.objects.get(team__name=demo.TEAM_NAME, name__startswith="Live catalogue")

    with django_capture_on_commit_callbacks(execute=True):
        evaluation_start(evaluation=live)

    live.refresh_from_db()
    assert live.status == Status.ACTIVE
    assert not live.keywords.filter(failed=True).exists()
    assert Snapshot.objects.filter(keyword__evaluation=live).count() == len(demo.QUERIES) * 8


@pytest.mark.django_db(transaction=True)  # the metrics are computed once the seed commits
def test_the_demo_model_has_three_finished_weekly_runs_for_its_history(client):
    seed()
    history = Evaluation.objects.filter(
        team__name=demo.TEAM_NAME, search_model__isnull=False, status=Status.FINISHED
    ).order_by("finished_at")

    assert [e.name for e in history] == [f"Default ranking, week {n}" for n in (1, 2, 3)]
    assert all(e.progress == 1.0 for e in history)
    ndcg = [EvaluationMetric.objects.get(evaluation=e, metric="ndcg", k=10).value for e in history]
    assert all(value is not None for value in ndcg)
    client.force_login(User.objects.get(email=demo.LEAD))
    page = client.get(f"/models/{history[0].search_model_id}/history/").content.decode()
    assert all(e.name in page for e in history)


@pytest.mark.django_db
def test_where_private_addresses_are_refused_the_demo_judge_is_left_out_and_said_so(
    private_addresses_refused,
):
    printed = seed().splitlines()

    assert printed[1:3] == [
        "The demo search model calls http://127.0.0.1:8000/demo/search, which fails here: "
        "the demo APIs are off here (DEMO_SEARCH_API=0).",
        "The demo judge is left out: the demo APIs are off here (DEMO_SEARCH_API=0).",
    ]
    assert not Judge.objects.exists()
    assert demo_schedule().judge is None
    assert Evaluation.objects.filter(team__name=demo.TEAM_NAME).count() == 7


@pytest.mark.django_db
def test_with_the_demo_apis_on_but_loopback_refused_to_judges_the_judge_is_left_out(
    served_as_make_run_does,
):
    served_as_make_run_does.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = False

    printed = seed().splitlines()

    assert printed[2] == (
        "The demo judge is left out: 127.0.0.1 is a loopback address and "
        "AI_JUDGES_ALLOW_PRIVATE_ADDRESSES is off."
    )
    assert not Judge.objects.exists()


@pytest.mark.django_db
def test_the_demo_search_model_and_judge_follow_the_address_served_at(served_as_make_run_does):
    seed()
    served_as_make_run_does.DEMO_SEARCH_URL = "http://127.0.0.1:8100/demo/search"
    served_as_make_run_does.DEMO_JUDGE_URL = "http://127.0.0.1:8100/demo/llm/v1"

    printed = seed().splitlines()

    assert printed[1:3] == [
        "The demo search model calls http://127.0.0.1:8100/demo/search.",
        "The demo judge calls http://127.0.0.1:8100/demo/llm/v1.",
    ]
    endpoint = SearchEndpoint.objects.get(team__name=demo.TEAM_NAME, name=demo.DEMO_ENDPOINT)
    assert endpoint.url == "http://127.0.0.1:8100/demo/search"
    judge = Judge.objects.get(team__name=demo.TEAM_NAME, name=demo.DEMO_JUDGE)
    assert judge.base_url == "http://127.0.0.1:8100/demo/llm/v1"
    assert demo_schedule().judge == judge


@pytest.mark.django_db
def test_a_demo_judge_left_out_is_added_once_it_can_work(settings, private_addresses_refused):
    seed()
    settings.DEMO_SEARCH_API = True
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True

    printed = seed().splitlines()

    judge = Judge.objects.get(team__name=demo.TEAM_NAME, name=demo.DEMO_JUDGE)
    assert printed[2] == f"The demo judge calls {settings.DEMO_JUDGE_URL}."
    assert demo_schedule().judge == judge


@pytest.mark.django_db
def test_the_demo_has_a_month_of_clicks_and_the_judgements_a_click_model_made_from_them():
    seed()
    team = Team.objects.get(name=demo.TEAM_NAME)

    log = ClickLog.objects.get(team=team)
    made = ClickJudgementSet.objects.get(log=log)

    assert log.events_read == len(demo.QUERIES) * demo.DEMO_SESSIONS_PER_QUERY * 10
    assert made.model == "pbm"
    assert made.judgement_list.source.kind == "clicks"
    # The more a product matches the query, the higher the clicks grade it.
    grades = dict(
        made.judgement_list.judgements.filter(query="red running shoes").values_list(
            "doc_id", "grade"
        )
    )
    products = {product.sku: product for product in demo.catalogue(random.Random(demo.DEMO_SEED))}
    by_relevance = sorted(
        (demo.relevance("red running shoes", products[sku]), grade) for sku, grade in grades.items()
    )
    assert len({relevance for relevance, _ in by_relevance}) > 1
    assert by_relevance == sorted(by_relevance, key=lambda pair: pair[1]), by_relevance
