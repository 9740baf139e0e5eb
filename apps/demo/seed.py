"""A realistic demo: a shop's search team, a small catalogue, evaluations on each scale.

Grades are drawn from a fixed seed and a simple notion of relevance (a product matches a
query when they share a category and colour), so the metrics look like real ones.
"""

import io
import random
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Team, User
from apps.accounts.services import member_add, team_create, user_get_or_create
from apps.endpoints.models import SearchEndpoint, SearchModel
from apps.evaluations.models import Evaluation, FeedbackSlot, Status
from apps.evaluations.services import (
    Document,
    evaluation_create,
    evaluation_create_with_keywords,
    keywords_add,
    snapshots_add,
)
from apps.judges.models import Judge
from apps.judging.judgements import Giver, slot_judge
from apps.lifecycle.steps import evaluation_start
from apps.schedules.models import Schedule
from apps.search.safety import refused_without_lookup

TEAM_NAME = "Acme Outdoor Shop"
PASSWORD = "relevo-demo"
OWNER = "owner@relevo.test"
LEAD = "lead@relevo.test"
GRADERS = ["ada@relevo.test", "ben@relevo.test"]

COLOURS = ["red", "blue", "black", "green", "grey", "yellow"]
CATEGORIES = {
    "running shoes": ("Trail runner", "Road racer", "Cushioned trainer"),
    "rain jacket": ("Packable shell", "Insulated parka", "Storm jacket"),
    "hiking backpack": ("Daypack 20L", "Trekking pack 45L", "Hydration pack"),
    "wool socks": ("Merino crew socks", "Hiking socks", "Liner socks"),
    "camping tent": ("Two-person tent", "Ultralight tarp tent", "Family dome tent"),
    "water bottle": ("Insulated bottle", "Soft flask", "Filter bottle"),
}
BRANDS = ["Acme", "Northfell", "Tarn & Co", "Ridgeline"]


@dataclass(frozen=True)
class Product:
    sku: str
    name: str
    category: str
    colour: str
    brand: str
    price: float


def catalogue(rng: random.Random) -> list[Product]:
    products: list[Product] = []
    for category, models in CATEGORIES.items():
        for model in models:
            for colour in rng.sample(COLOURS, 3):
                sku = f"sku-{len(products) + 100}"
                products.append(
                    Product(
                        sku,
                        f"{model}, {colour}",
                        category,
                        colour,
                        rng.choice(BRANDS),
                        round(rng.uniform(9, 320), 2),
                    )
                )
    return products


def relevance(query: str, product: Product) -> int:
    """0..3: category and colour both match -> 3, category only -> 2, colour only -> 1."""
    category = product.category in query
    colour = product.colour in query
    return 3 if category and colour else 2 if category else 1 if colour else 0


def results_for(
    query: str, products: list[Product], rng: random.Random, n: int, noise: float = 2.2
) -> list[Product]:
    """An imperfect search engine: mostly relevant first, with some noise (more noise, a
    worse ranking)."""
    scored = sorted(
        products, key=lambda p: relevance(query, p) + rng.uniform(0, noise), reverse=True
    )
    return scored[:n]


def on_scale(grade: int, scale: str, rng: random.Random) -> int:
    noisy = max(0, min(3, grade + rng.choice([0, 0, 0, 1, -1])))
    if scale == "binary":
        return 1 if noisy >= 2 else 0
    if scale == "detail":
        return max(1, min(10, 1 + noisy * 3 + rng.choice([-1, 0, 0, 1])))
    return noisy


DEMO_SEED = 20261121


def demo_search(query: str, size: int) -> list[Product]:
    """The demo's search engine, for the demo search API: the same catalogue as the
    seeded evaluations, the same imperfect ranking, the same answer for a query."""
    products = catalogue(random.Random(DEMO_SEED))
    return results_for(query, products, random.Random(f"{DEMO_SEED}:{query}"), n=size)


QUERIES = [
    "red running shoes",
    "blue rain jacket",
    "black hiking backpack",
    "grey wool socks",
    "green camping tent",
    "yellow water bottle",
    "running shoes",
    "rain jacket",
]

EVALUATIONS = [
    # name, scale, strategy, metrics, share of slots graded
    (
        "Catalogue search, binary 1",
        "binary",
        1,
        [("precision", 5), ("ap", 10), ("rr", 10), ("recall", 10)],
        1.0,
    ),
    (
        "Catalogue search, graded 2",
        "graded",
        3,
        [("ndcg", 10), ("dcg", 10), ("err", 10), ("precision", 5)],
        0.6,
    ),
    ("Catalogue search, detail 1", "detail", 1, [("ndcg_d", 10), ("cg_d", 5)], 0.4),
]


@transaction.atomic
def seed_demo() -> tuple[Team, bool]:
    """Create the demo once, all or nothing. Returns the team and whether it was created now.

    The metrics are computed right after the commit, as for any grade.
    """
    existing = Team.objects.filter(name=TEAM_NAME).first()
    if existing is not None:
        return existing, False
    rng = random.Random(DEMO_SEED)
    team = team_create(name=TEAM_NAME, owner_email=OWNER, owner_password=PASSWORD)
    owner = user_get_or_create(email=OWNER)
    owner.is_staff = owner.is_superuser = True  # the demo owner can use the admin
    owner.save(update_fields=["is_staff", "is_superuser"])
    lead = member_add(team=team, email=LEAD, role="admin", password=PASSWORD).user
    graders = [
        member_add(
            team=team, email=email, role="evaluator", password=PASSWORD, tag_names=["apparel"]
        ).user
        for email in GRADERS
    ]
    products = catalogue(rng)
    people = [*graders, lead]
    created = []
    for name, scale, strategy, metrics, share in EVALUATIONS:
        evaluation = evaluation_create(
            team=team,
            name=name,
            scale=scale,
            strategy=strategy,
            metrics=metrics,
            created_by=owner,
            scoring_guidelines=GUIDELINES,
        )
        _add_results(evaluation, products, rng)
        evaluation_start(evaluation=evaluation)
        _grade_some(evaluation, products, people, share, rng)
        created.append(evaluation)
    model = _add_live_search(team, owner)
    _add_model_history(team, owner, model, products, people, rng)
    judge = None if demo_judge_refusal() else _add_demo_judge(team, owner)
    _add_demo_gold_set(team, owner, next(e for e in created if e.strategy > 1))
    _add_demo_schedule(team, owner, judge)
    _add_demo_clicks(team, owner, rng)
    return team, True


DEMO_JUDGE = "Demo judge (word overlap, not a language model)"
DEMO_TITLE_JUDGE = "Demo judge (title overlap, not a language model)"
DEMO_PANEL = "Demo panel (median of the two stand-ins)"
DEMO_ENDPOINT = "Demo catalogue"
DEMO_SCHEDULE = "Nightly catalogue search"


def demo_judge_refusal() -> str | None:
    """Why the demo judge could not work here, or None when it can: its model is this
    app's demo API (judge_api.py), reached at DEMO_JUDGE_URL, usually on loopback."""
    if not settings.DEMO_SEARCH_API:
        return "the demo APIs are off here (DEMO_SEARCH_API=0)"
    return _private_address_refused(
        settings.DEMO_JUDGE_URL,
        allowed=settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES,
        setting="AI_JUDGES_ALLOW_PRIVATE_ADDRESSES",
    )


def demo_search_refusal() -> str | None:
    """Why the demo search model's calls would fail here, or None when they can."""
    if not settings.DEMO_SEARCH_API:
        return "the demo APIs are off here (DEMO_SEARCH_API=0)"
    return _private_address_refused(
        settings.DEMO_SEARCH_URL,
        allowed=settings.SEARCH_ALLOW_PRIVATE_ADDRESSES,
        setting="SEARCH_ALLOW_PRIVATE_ADDRESSES",
    )


def _private_address_refused(url: str, *, allowed: bool, setting: str) -> str | None:
    reason = refused_without_lookup(urlsplit(url).hostname or "")
    return f"{reason} and {setting} is off" if reason and not allowed else None


def demo_addresses_follow(team: Team) -> list[str]:
    """Point the demo's search model and judge at DEMO_SEARCH_URL and DEMO_JUDGE_URL (the
    address `make run` serves at, which may have changed since the demo was loaded), add
    the demo judge if it was left out and can work now, and say what each calls or why
    it cannot."""
    SearchEndpoint.objects.filter(team=team, name=DEMO_ENDPOINT).exclude(
        url=settings.DEMO_SEARCH_URL
    ).update(url=settings.DEMO_SEARCH_URL)
    search_refused = demo_search_refusal()
    lines = [
        f"The demo search model calls {settings.DEMO_SEARCH_URL}"
        + (f", which fails here: {search_refused}." if search_refused else ".")
    ]
    judge = Judge.objects.filter(team=team, name=DEMO_JUDGE).first()
    judge_refused = demo_judge_refusal()
    if judge_refused:
        kept = "kept, but its calls fail" if judge else "left out"
        return [*lines, f"The demo judge is {kept}: {judge_refused}."]
    owner = User.objects.get(email=OWNER)
    judge = _add_demo_judge(team, owner)
    Schedule.objects.filter(team=team, name=DEMO_SCHEDULE, judge=None).update(judge=judge)
    Judge.objects.filter(team=team, name__in=[DEMO_JUDGE, DEMO_TITLE_JUDGE]).exclude(
        base_url=settings.DEMO_JUDGE_URL
    ).update(base_url=settings.DEMO_JUDGE_URL)
    return [*lines, f"The demo judge calls {settings.DEMO_JUDGE_URL}."]


def _add_demo_judge(team: Team, owner: User) -> Judge:
    """AI judges whose "models" are the app's own word-overlap stand-ins (judge_api.py),
    and a panel of the two: the whole AI judging flow, no key needed. The word-overlap
    judge (made here, or found when it is there already)."""
    from apps.judges.panels import panel_create
    from apps.judges.services import judge_create

    made = {j.name: j for j in Judge.objects.filter(team=team)}
    for name, model in ((DEMO_JUDGE, "word-overlap"), (DEMO_TITLE_JUDGE, "title-overlap")):
        if name not in made:
            made[name] = judge_create(
                team=team,
                created_by=owner,
                name=name,
                protocol="openai",
                base_url=settings.DEMO_JUDGE_URL,
                model_name=model,
                results_per_call=8,
                calls_at_once=2,
                timeout_seconds=10,
            )
    if DEMO_PANEL not in made:
        panel_create(
            team=team,
            created_by=owner,
            name=DEMO_PANEL,
            members=[made[DEMO_JUDGE].id, made[DEMO_TITLE_JUDGE].id],
            rule="median",
        )
    return made[DEMO_JUDGE]


def _add_demo_schedule(team: Team, owner: User, judge: Judge | None) -> None:
    """The live evaluation's setup, run again every night at 06:00, graded by the demo
    judge (where it works) beside people and compared with the night before
    (Evaluations -> Schedules)."""
    from apps.schedules.services import schedule_create

    live = Evaluation.objects.get(team=team, name="Live catalogue search 1")
    schedule_create(
        team=team,
        created_by=owner,
        name=DEMO_SCHEDULE,
        source=live.id,
        cron="0 6 * * *",
        judge=judge.id if judge else None,
        min_change="0.02",
    )


def _add_demo_gold_set(team: Team, owner: User, graded: Evaluation) -> None:
    """A gold set drawn from the evaluation three people graded, for the demo judge to be
    calibrated on (AI judges -> Calibration): the figures with people's ceiling."""
    from apps.judges.gold_sets import gold_set_create

    gold_set_create(
        team=team,
        name="Demo gold set",
        baseline=graded.id,
        keywords=len(QUERIES),
        seed=DEMO_SEED,
        created_by=owner,
    )


# A shopper examines rank r with this chance, and clicks an examined product by its
# relevance: the position-based model the demo's clicks are drawn from.
DEMO_EXAMINATION = [1.0, 0.8, 0.65, 0.55, 0.45, 0.4, 0.35, 0.3, 0.27, 0.25]
DEMO_ATTRACTION = {0: 0.03, 1: 0.12, 2: 0.35, 3: 0.7}
DEMO_SESSIONS_PER_QUERY = 150


def _add_demo_clicks(team: Team, owner: User, rng: random.Random) -> None:
    """A month of shoppers' clicks on the demo search (Team -> Behaviour logs), and the
    position-based model's judgements made from them, in the library as clicks."""
    from apps.behaviour.click_judgements import click_judgements_make
    from apps.behaviour.importing import click_log_import

    rows = ["session,query,document,position,clicked,timestamp"]
    for query in QUERIES:
        shown = demo_search(query, len(DEMO_EXAMINATION))
        for number in range(DEMO_SESSIONS_PER_QUERY):
            day = 1 + number % 31
            for rank, product in enumerate(shown, start=1):
                chance = DEMO_EXAMINATION[rank - 1] * DEMO_ATTRACTION[relevance(query, product)]
                clicked = int(rng.random() < chance)
                stamp = f"2026-10-{day:02d}T12:00:00Z"
                rows.append(f"{query}-{number},{query},{product.sku},{rank},{clicked},{stamp}")
    log = click_log_import(
        team=team,
        user=owner,
        name="October shoppers",
        file_format="csv",
        log=io.BytesIO("\n".join(rows).encode()),
    )
    click_judgements_make(
        team=team, user=owner, log=log, model="pbm", scale="graded", thresholds=[0.1, 0.3, 0.55]
    )


def _add_live_search(team: Team, owner: User) -> SearchModel:
    """An endpoint and model on the demo search API, and a pending evaluation of it that a
    lead can start (the app answers the calls itself: see search_api.py)."""
    from apps.endpoints.services import endpoint_create, model_create

    endpoint = endpoint_create(
        team=team,
        name=DEMO_ENDPOINT,
        method="GET",
        url=settings.DEMO_SEARCH_URL,
        headers="Accept: application/json",
        timeout_seconds=5,
        created_by=owner,
        mapper={
            "results": "hits.hits[*]",
            "id": "_id",
            "name": "_source.title",
            "attributes": {
                "brand": "_source.brand",
                "colour": "_source.colour",
                "price": "_source.price",
            },
        },
    )
    model = model_create(
        team=team,
        endpoint=endpoint,
        name="Demo catalogue, default ranking",
        params="q=#query#\nsize=8",
        headers="",
        body="",
        body_type="json",
        default_keywords="\n".join(QUERIES),
        tags=[],
        created_by=owner,
    )
    evaluation_create_with_keywords(
        team=team,
        name="Live catalogue search 1",
        scale="graded",
        metrics=[("ndcg", 10), ("precision", 5)],
        keywords=QUERIES,
        search_model=model,
        reuse="keyword_doc",
        scoring_guidelines=GUIDELINES,
        created_by=owner,
    )
    return model


# The model's earlier weekly runs, each finished and fully graded, its ranking a little
# better than the week before: the model's history has something to draw.
HISTORY = [(3, 3.2), (2, 2.7), (1, 2.2)]  # (weeks ago, the ranking's noise)


def _add_model_history(
    team: Team,
    owner: User,
    model: SearchModel,
    products: list[Product],
    people: list,
    rng: random.Random,
) -> None:
    now = timezone.now()
    for number, (weeks_ago, noise) in enumerate(HISTORY, start=1):
        evaluation = evaluation_create(
            team=team,
            name=f"Default ranking, week {number}",
            scale="graded",
            metrics=[("ndcg", 10), ("precision", 5)],
            created_by=owner,
            scoring_guidelines=GUIDELINES,
        )
        _add_results(evaluation, products, rng, noise=noise)
        evaluation_start(evaluation=evaluation)
        _grade_some(evaluation, products, people, 1.0, rng)
        finished = now - timedelta(weeks=weeks_ago)
        Evaluation.objects.filter(id=evaluation.id).update(
            search_model=model,
            status=Status.FINISHED,
            created_at=finished - timedelta(days=1),
            started_at=finished - timedelta(days=1),
            finished_at=finished,
        )


def _add_results(
    evaluation: Evaluation, products: list[Product], rng: random.Random, noise: float = 2.2
) -> None:
    for keyword in keywords_add(evaluation=evaluation, texts=QUERIES):
        documents = [
            Document(p.sku, p.name, "", {"brand": p.brand, "colour": p.colour, "price": p.price})
            for p in results_for(keyword.text, products, rng, n=8, noise=noise)
        ]
        snapshots_add(keyword=keyword, documents=documents)


def _grade_some(
    evaluation: Evaluation,
    products: list[Product],
    people: list,
    share: float,
    rng: random.Random,
) -> None:
    by_sku = {p.sku: p for p in products}
    slots = (
        FeedbackSlot.objects.filter(evaluation=evaluation)
        .select_related("keyword", "snapshot")
        .order_by("keyword__position", "snapshot__position", "index")
    )
    for slot in slots:
        if rng.random() >= share:
            continue
        product = by_sku[slot.snapshot.doc_id]
        grade = on_scale(relevance(slot.keyword.text, product), evaluation.scale, rng)
        slot_judge(slot_id=slot.id, giver=Giver.recorded(people[slot.index]), grade=grade)


GUIDELINES = """\
**Judge the result as a shopper who typed the query.**

- *Perfect*: the product is exactly what the query asks for (category and colour).
- *Good*: the right kind of product in another colour.
- *Fair*: related (the colour matches, or an accessory of the category).
- *Poor*: unrelated.
"""
