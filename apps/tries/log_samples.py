"""A query set sampled from one of the team's behaviour logs, saved with its design.

A query's frequency is its searches: the sum of its rank-1 impressions in the log's
counts, as every search that showed a result showed one at rank 1. The engine draws the
sample (apps/engine/query_sampling.py: the most searched, a random sample by band of
searches, or probability proportional to searches); the set is saved with the design
that drew it: the log, the method, the sizes asked and got, the seed, the population,
the bands and each chosen query's searches and inclusion probability, and when, so the
sample can be drawn again and estimates over it weighted back to the whole log.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from apps.accounts.models import Team, User
from apps.behaviour.models import ClickCount, ClickLog
from apps.core.errors import InvalidInput, NotFound
from apps.core.lookup import NAME_LIMIT, by_id_or_name
from apps.core.typed import INTEGER_MAX, parse_int
from apps.engine.query_sampling import (
    DEFAULT_BANDS,
    MAX_BANDS,
    METHODS,
    QuerySample,
    sample_queries,
)

from .models import SavedQuerySet
from .query_sets import MAX_NAME, MAX_QUERIES, query_set_save

MAX_SEED = INTEGER_MAX
METHOD_NAMES = {
    "top": "the most searched",
    "bands": "a random sample by band of searches",
    "pps": "probability proportional to searches",
}


def log_frequencies(log: ClickLog) -> dict[str, int]:
    """Each query's searches in the log, read in one grouped query. Texts are trimmed
    (two that differ only in spaces are one query, their searches added) and a text a
    query set cannot hold (blank, or with NUL) is left out."""
    rows = (
        ClickCount.objects.filter(log=log, rank=1)
        .values("query")
        .annotate(searches=Sum("impressions"))
        .values_list("query", "searches")
    )
    frequencies: dict[str, int] = {}
    for query, searches in rows:
        text = query.strip()
        if text and "\x00" not in text and searches:
            frequencies[text] = frequencies.get(text, 0) + searches
    return frequencies


def query_set_sample(
    *,
    team: Team,
    user: User | None,
    name: Any,
    log: Any,
    method: Any,
    size: Any,
    seed: Any = None,
    bands: Any = None,
) -> SavedQuerySet:
    """A new query set of `size` queries drawn from the team's `log` (id or name) by
    `method`, with its design. InvalidInput names each bad field; a log the team does not
    have is NotFound. A seed not given is drawn, and recorded."""
    problems: list[str] = []
    _check_name(team, name, problems)
    if _blank_or_bad(log):
        problems.append("log: a behaviour log of the team, by id or name")
    if method not in METHODS:
        problems.append(f"method: one of {', '.join(METHODS)}")
    asked = parse_int(size, 1, MAX_QUERIES)
    if asked is None:
        problems.append(f"size: a whole number from 1 to {MAX_QUERIES:,}")
    chosen_seed = secrets.randbelow(MAX_SEED + 1) if seed is None else parse_int(seed, 0, MAX_SEED)
    if chosen_seed is None:
        problems.append(f"seed: a whole number from 0 to {MAX_SEED:,}")
    band_count = _band_count(method, bands, problems)
    if problems or asked is None or chosen_seed is None:
        raise InvalidInput(problems)

    found = _team_log(team, log)
    frequencies = log_frequencies(found)
    if not frequencies:
        raise InvalidInput([f"log: {found.name} has no searches to sample (no result at rank 1)"])
    sample = sample_queries(
        frequencies, method=method, size=asked, seed=chosen_seed, bands=band_count
    )
    with transaction.atomic():
        saved = query_set_save(
            team=team, user=user, name=name, queries=[one.query for one in sample.picked]
        )
        saved.design = design_of(found, sample, bands=band_count if method == "bands" else None)
        saved.save(update_fields=["design"])
    return saved


def _check_name(team: Team, name: Any, problems: list[str]) -> None:
    """query_set_save's rule for the name, checked with the other fields' so every
    problem is named at once; query_set_save checks it again as it saves."""
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME or "\x00" in name:
        problems.append(f"name: a text of 1 to {MAX_NAME} characters, without NUL")
    elif SavedQuerySet.objects.filter(team=team, name=name.strip()).exists():
        problems.append(f"name: the team already has a query set named {name.strip()!r}")


def _blank_or_bad(log: Any) -> bool:
    if isinstance(log, bool) or not isinstance(log, int | str):
        return True
    text = str(log).strip()
    return not text or len(text) > NAME_LIMIT or "\x00" in text


def _band_count(method: Any, bands: Any, problems: list[str]) -> int:
    if bands is None:
        return DEFAULT_BANDS
    if method != "bands":
        problems.append("bands: only for the method bands")
        return DEFAULT_BANDS
    count = parse_int(bands, 1, MAX_BANDS)
    if count is None:
        problems.append(f"bands: a whole number from 1 to {MAX_BANDS}")
        return DEFAULT_BANDS
    return count


def _team_log(team: Team, chosen: Any) -> ClickLog:
    """The team's log by id or name; another team's is not found, as one nobody has."""
    problems: list[str] = []
    logs = ClickLog.objects.filter(team=team)
    found = by_id_or_name(logs, chosen, field="log", label="behaviour log", problems=problems)
    if found is None:
        raise NotFound("; ".join(problems), field="log")
    return found


def design_of(log: ClickLog, sample: QuerySample, *, bands: int | None) -> dict[str, Any]:
    """What the set records of how it was drawn (SavedQuerySet.design)."""
    return {
        "log": {
            "id": log.id,
            "name": log.name,
            "first_event_at": log.first_event_at,
            "last_event_at": log.last_event_at,
        },
        "method": sample.method,
        "size_asked": sample.size_asked,
        "size": sample.size,
        "seed": sample.seed,
        "population": {
            "queries": sample.population_queries,
            "searches": sample.population_searches,
        },
        "bands_asked": bands,
        "bands": None
        if sample.bands is None
        else [
            {
                "band": band.number,
                "low": band.low,
                "high": band.high,
                "queries": band.queries,
                "searches": band.searches,
                "sampled": band.sampled,
            }
            for band in sample.bands
        ],
        "certain": sample.certain if sample.method == "pps" else None,
        "queries": [
            {
                "query": one.query,
                "searches": one.searches,
                "probability": one.probability,
                "band": one.band,
            }
            for one in sample.picked
        ],
        "sampled_at": timezone.now().isoformat(),
    }


# --- The design in plain words ------------------------------------------------------------


def design_in_words(design: dict[str, Any]) -> str:
    """How the set was drawn, as a lead reads it: "120 of 48,213 queries, probability
    proportional to searches, seed 7; each query's chance of being picked ..."."""
    log = design["log"]
    population = design["population"]
    size, queries, searches = design["size"], population["queries"], population["searches"]
    covered = _covered(log)
    source = f"from the log {log['name']}{covered} ({searches:,} searches)"
    if design["method"] == "top":
        return (
            f"The {size:,} most searched of {queries:,} queries {source}, ties broken by "
            "text. Not a random sample: the queries left out are not represented, so no "
            "weights apply."
        )
    head = (
        f"{size:,} of {queries:,} queries {source}, "
        f"{METHOD_NAMES[design['method']]}, seed {design['seed']}"
    )
    if size < design["size_asked"]:
        head += f" (asked {design['size_asked']:,}: the log has no more)"
    if design["method"] == "bands":
        count = len(design["bands"])
        return (
            f"{head}; the searches are cut into {count} band{'s' if count != 1 else ''} "
            "equally wide on a log scale and the sample shared equally between them (a band "
            "with fewer queries gives them all). Within a band each query's chance of being "
            "picked is the same: the band's sampled over its queries. Weight each query by "
            "1 ÷ its chance to estimate for the whole log."
        )
    certain = design["certain"] or 0
    rest = size - certain
    left = searches - sum(one["searches"] for one in design["queries"][:certain])
    if not certain:
        chance = f"each query's chance of being picked is {size:,} × its searches ÷ {searches:,}"
    elif not rest:
        chance = "every query was certain to be picked (chance 1)"
    else:
        many = certain != 1
        chance = (
            f"{certain:,} {'queries' if many else 'query'} searched so often "
            f"{'they were' if many else 'it was'} certain; each other query's chance of being "
            f"picked is {rest:,} × its searches ÷ {left:,} (the searches of the queries not "
            "certain)"
        )
    return f"{head}; {chance}. Weight each query by 1 ÷ its chance to estimate for the whole log."


def _covered(log: dict[str, Any]) -> str:
    first, last = (log.get("first_event_at") or "")[:10], (log.get("last_event_at") or "")[:10]
    if first and last:
        return f", {first} to {last}" if first != last else f", {first}"
    return ""
