"""Property: every HTML form of the app, given hostile values, answers without a server
error; a 400 names a field it refused.

The forms are found as a person finds them: every page of the app (each route outside
/api/ and /admin/, its ids filled in from a world of one team that has one of
everything) is opened as the team's owner or, for the pages before logging in, as nobody;
each form that posts is sent back as the page filled it, with fields changed. Every
route that takes a POST must be the action of a form found so: a new form is covered the
day it is added.

Two parts: hand-picked values (digits that are digits to str.isdigit and not to int,
integers past each column, NUL, a lone surrogate, 100,000 characters) in every field of
every form at once, and the number-like ones in each field alone; and text Hypothesis
generates, in one field it draws. Each request starts from
the same rows (rolled back after it). Run on SQLite and on PostgreSQL (DATABASE_URL),
where a number past its column is an error of the database.
"""

import os
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.tokens import default_token_generator
from django.test import Client
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.accounts.api_tokens import api_token_create
from apps.accounts.models import Membership, Tag
from apps.accounts.services import invitation_create, member_add
from apps.behaviour.click_judgements import click_judgements_make
from apps.behaviour.models import ClickCount, ClickLog
from apps.endpoints.models import SearchModel
from apps.endpoints.tests.factories import make_endpoint, make_model
from apps.evaluations.models import EvaluationMetric, FeedbackSlot
from apps.judges import calibration, controls, prompts
from apps.judges.gold_sets import gold_set_create
from apps.judges.services import judge_create
from apps.judging.judgements import Giver, slot_judge
from apps.notifications import services as notifications
from apps.schedules import services as schedules
from apps.tries.log_samples import query_set_sample
from apps.tries.models import Try, TryQuery, TryState
from tests.factories import make_evaluation, make_grader, make_team, slots_of
from tests.hostile import Failure, ServerErrors, report, rolled_back
from tests.html_forms import Form, filled, forms_on, route_of, routes, takes_post, urlencoded

pytestmark = pytest.mark.django_db

# Text to str.isdigit, not to int; integers past smallint, int4 and int8; and the rest.
HOSTILE_VALUES: list[tuple[str, str]] = [
    ("superscript two", "²"),
    ("Arabic-Indic digits", "١٢"),
    ("2**15", str(2**15)),
    ("-2**15-1", str(-(2**15) - 1)),
    ("2**31", str(2**31)),
    ("2**63", str(2**63)),
    ("10**30", str(10**30)),
    ("-1", "-1"),
    ("1.5", "1.5"),
    ("1_000", "1_000"),
    ("1e999", "1e999"),
    ("NaN", "NaN"),
    ("empty", ""),
    ("spaces", "   "),
    ("NUL", "a\x00b"),
    ("lone surrogate", "\udfff"),
    ("100,000 characters", "x" * 100_000),
    ("markup", "<script>alert(1)</script>"),
]

# The pages of someone not logged in: opened and posted without a session.
NOBODYS = ("/accounts/", "/invitations/")

# The values that are numbers to someone, sent to one field at a time.
HOSTILE_NUMBERS = [
    (label, value)
    for label, value in HOSTILE_VALUES
    if label in ("superscript two", "Arabic-Indic digits", "2**15", "-2**15-1", "2**63")
]


@dataclass
class World:
    owner: Client
    nobody: Client
    forms: list[Form]
    posting_routes: set[str]
    covered_routes: set[str]


def build_world() -> tuple[list[dict[str, str]], Any]:
    """One team with one of everything, and the id each route parameter takes."""
    team = make_team("Forms team", owner="owner@forms.test")
    owner = team.memberships.get().user
    grader = make_grader(team, "grader@forms.test")
    other = make_team("Other forms team")
    member_add(team=other, email=owner.email, role="admin")  # a second team to switch to
    pending = make_evaluation(team=team, start=False, keywords={"hat": 2})
    active = make_evaluation(team=team, strategy=3, keywords={"red shoes": 3, "blue shirt": 3})
    # The first result's three grades disagree; the second result has one.
    first, second, third, fourth = slots_of(active)[:4]
    slot_judge(slot_id=first.id, giver=Giver.recorded(grader), grade=1)
    slot_judge(slot_id=second.id, giver=Giver.recorded(None, "vendor-1"), grade=3)
    slot_judge(slot_id=third.id, giver=Giver.recorded(None, "vendor-2"), grade=0)
    slot_judge(slot_id=fourth.id, giver=Giver.recorded(None, "vendor-1"), grade=2)
    rival = make_evaluation(team=team, keywords={"red shoes": 3, "blue shirt": 3})
    model = make_model(
        team, make_endpoint(team, "http://127.0.0.1:9/search", headers="Authorization: Bearer t")
    )
    spare_endpoint = make_endpoint(team, "http://127.0.0.1:9/other")  # no model: deletable
    judge = judge_create(
        team=team,
        name="Forms judge",
        protocol="openai",
        base_url="http://127.0.0.1:9/v1",
        model_name="m",
        api_key="test-key-not-a-secret",
    )
    prompt = prompts.prompt_create(team=team, name="Forms prompt")
    gold = gold_set_create(team=team, name="Forms gold", baseline=active.id, keywords=2, seed=1)
    calibration.calibration_create(gold_set=gold, judge=judge)  # the gold set's controls
    judge_run = controls.run_assign(judge=judge, evaluation=rival)
    schedule = schedules.schedule_create(
        team=team, name="Nightly", source=pending.id, cron="0 6 * * *"
    )
    webhook, _ = notifications.webhook_create(
        team=team, name="CI", url="http://127.0.0.1:9/hook", events=["evaluation.finished"]
    )
    tag = Tag.objects.create(team=team, name="german")
    token, _ = api_token_create(team=team, name="ci")
    _invitation, invitation_token = invitation_create(
        team=team, email="new@forms.test", role="evaluator", invited_by=owner
    )
    attempt, other_try = (ran_try(model, number) for number in (1, 2))  # the tries' forms
    log = ClickLog.objects.create(team=team, name="October", file_format="csv")
    ClickCount.objects.bulk_create(
        ClickCount(
            log=log,
            query="red shoes",
            doc_id=f"red shoes-doc-{n}",
            rank=n,
            impressions=40,
            clicks=40 // n,
        )
        for n in (1, 2, 3)
    )
    click_judgements_make(  # the evaluation's clicks panel and the gold set's list form
        team=team, user=None, log=log, model="ctr", scale="graded", thresholds=[0.2, 0.4, 0.6]
    )
    sampled = query_set_sample(
        team=team, user=owner, log=log.id, name="Sampled", method="top", size=1
    )
    slot = FeedbackSlot.objects.filter(evaluation=active, grade__isnull=True).first()
    graded = FeedbackSlot.objects.filter(evaluation=active, grade__isnull=False).first()
    assert slot is not None and graded is not None
    ids = {
        "evaluation_id": active.id,
        "keyword_id": slot.keyword_id,
        "slot_id": slot.id,
        "snapshot_id": graded.snapshot_id,
        "metric_id": EvaluationMetric.objects.filter(evaluation=active).first().id,
        "model_id": model.id,
        "endpoint_id": spare_endpoint.id,
        "judge_id": judge.id,
        "prompt_id": prompt.id,
        "gold_set_id": gold.id,
        "run_id": judge_run.id,
        "schedule_id": schedule.id,
        "webhook_id": webhook.id,
        "tag_id": tag.id,
        "token_id": token.id,
        "membership_id": Membership.objects.get(team=team, user=grader).id,
        "team_id": team.id,
        "token": invitation_token,
        "uidb64": urlsafe_base64_encode(force_bytes(owner.pk)),
        "action": "pause",
        "try_id": attempt.id,
        "other_id": other_try.id,
        "log_id": log.id,
        "set_id": sampled.id,
    }
    pending_keyword = pending.keywords.first()
    assert pending_keyword is not None
    # The pages of a pending evaluation have forms an active one's have not (edit, add
    # keywords), and the other way round: every route is opened with both.
    as_pending = {**ids, "evaluation_id": pending.id, "keyword_id": pending_keyword.id}
    return [
        {name: str(value) for name, value in chosen.items()} for chosen in (ids, as_pending)
    ], owner


def ran_try(model: SearchModel, number: int) -> Try:
    """A try of the model that has run one query (a result nobody judged: a hole to fill)."""
    attempt = Try.objects.create(
        team=model.team, search_model=model, number=number, state=TryState.DONE, queries_total=1
    )
    document = {"doc_id": "hat-1", "name": "Hat", "image": "", "attributes": {}}
    TryQuery.objects.create(
        attempt=attempt, position=0, text="hat", documents=[document], ran_at=timezone.now()
    )
    return attempt


def route_ids(route: str, ids: dict[str, str]) -> dict[str, str]:
    """The ids of a route: the password reset's token is not the invitation's."""
    if route.startswith("/accounts/reset/"):
        return {**ids, "token": ids["reset_token"]}
    return ids


@pytest.fixture
def world(settings) -> World:
    # The world's search endpoint, judge and webhook are on a closed port of this machine:
    # a form that calls one (Test, Test connection) is refused at once, and nothing
    # leaves the machine.
    settings.SEARCH_ALLOW_PRIVATE_ADDRESSES = True
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True
    settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True
    id_sets, owner_user = build_world()
    owner = Client(raise_request_exception=False)
    owner.force_login(owner_user)
    # A password reset link, made after the log-in (the token covers the last log-in).
    reset_token = default_token_generator.make_token(owner_user)
    id_sets = [{**ids, "reset_token": reset_token} for ids in id_sets]
    nobody = Client(raise_request_exception=False)
    forms: dict[tuple[str, tuple[str, ...]], Form] = {}
    posting: set[str] = set()
    for route, view in routes():
        if takes_post(view):
            posting.add(route)
        client = nobody if route.startswith(NOBODYS) else owner
        for ids in id_sets:
            url = filled(route, route_ids(route, ids))
            if url is None:
                continue
            with rolled_back():
                page = client.get(url, follow=True)
            if page.status_code == 200 and "html" in page.get("Content-Type", ""):
                for form in forms_on(page.request["PATH_INFO"], page.content.decode()):
                    forms.setdefault((form.action, tuple(form.names)), form)
    covered = {route_of(form.action) for form in forms.values()}
    return World(owner, nobody, list(forms.values()), posting, {r for r in covered if r})


def client_of(form: Form, world: World) -> Client:
    return world.nobody if form.page.startswith(NOBODYS) else world.owner


def names_the_field(body: str, form: Form, name: str) -> bool:
    """Whether an answer names the field: by its name, or by its label."""
    lowered = body.lower()
    label = form.labels.get(name, "").strip().lower().rstrip(":")
    return (
        name.lower() in lowered
        or name.replace("_", " ").lower() in lowered
        or (bool(label) and label in lowered)
    )


def post_all(form: Form, value: str, world: World, server_errors: ServerErrors) -> str:
    """Post the form with every field given `value`; what is wrong with the answer, or
    "" (a 400 must name one of the fields)."""
    fields = [(name, value) for name in form.names]
    return send(form, fields, form.names, world, server_errors)


def post(form: Form, name: str, value: str, world: World, server_errors: ServerErrors) -> str:
    """Post the form with one field changed; what is wrong with the answer, or ""."""
    return send(form, form.with_value(name, value), [name], world, server_errors)


def send(
    form: Form,
    fields: list[tuple[str, str]],
    names: list[str],
    world: World,
    server_errors: ServerErrors,
) -> str:
    client = client_of(form, world)
    cookies = client.cookies
    seen = len(server_errors.tracebacks)
    with rolled_back():
        response = client.generic(
            "POST",
            form.action,
            data=urlencoded(fields),
            content_type="application/x-www-form-urlencoded",
        )
    client.cookies = cookies  # a log-in or log-out the rollback undid
    if response.status_code >= 500 or len(server_errors.tracebacks) > seen:
        return f"server error {response.status_code}\n{server_errors.head(8)}"
    # A 400 or 422 refuses what was typed and must say where; another 4xx (another team's
    # object, a role, a throttle) need not.
    if response.status_code in (400, 422):
        body = response.content.decode(errors="replace")
        if not any(names_the_field(body, form, name) for name in names):
            return f"{response.status_code} naming none of {names}: {body[:300]!r}"
    return ""


@pytest.fixture
def server_errors():
    with ServerErrors() as recorder:
        yield recorder


def test_every_route_that_takes_a_post_is_a_form_found_on_a_page(world):
    uncovered = world.posting_routes - world.covered_routes
    assert not uncovered, f"routes taking a POST that no page's form posts to: {uncovered}"
    assert len(world.forms) > 40


# About 2,000 requests: minutes, not the suite's default five.
@pytest.mark.timeout(1500)
def test_hostile_values_in_every_field_of_every_form_get_no_server_error(world, server_errors):
    """Each form gets each hostile value in every field at once, then each number-like
    value in one field at a time (a 400 must name that field)."""
    failures, sent = [], 0
    for form in world.forms:
        if not form.names:
            continue
        for label, value in HOSTILE_VALUES:
            sent += 1
            problem = post_all(form, value, world, server_errors)
            if problem:
                request = f"POST {form.action} (from {form.page}) [every field = {label}]"
                failures.append(Failure(request, problem.split("\n")[0], problem))
        for name in form.names:
            for label, value in HOSTILE_NUMBERS:
                sent += 1
                problem = post(form, name, value, world, server_errors)
                if problem:
                    request = f"POST {form.action} (from {form.page}) [{name} = {label}]"
                    failures.append(Failure(request, problem.split("\n")[0], problem))
    if os.environ.get("RELEVO_PROPERTY_FORMS_SHOW"):
        print(f"{len(world.forms)} forms, {sent} requests")
    assert not failures, report(failures, sent)


@pytest.mark.timeout(900)
@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(data=st.data())
def test_generated_text_in_any_field_of_any_form_gets_no_server_error(world, server_errors, data):
    form = data.draw(st.sampled_from([form for form in world.forms if form.names]))
    name = data.draw(st.sampled_from(form.names))
    value = data.draw(
        st.one_of(
            st.text(max_size=40),
            st.integers(min_value=-(2**70), max_value=2**70).map(str),
            st.text(alphabet=st.characters(categories=["Nd", "No"]), min_size=1, max_size=8),
        )
    )
    problem = post(form, name, value, world, server_errors)
    assert not problem, f"POST {form.action} (from {form.page}) [{name} = {value!r}]: {problem}"
