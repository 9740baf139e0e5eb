"""Saved query sets: query texts a team keeps under a name, to run tries over. The same
rules check a set's texts and a try's list: each a text of 1 to 500 characters, without
NUL, kept once in the order given, at most MAX_QUERIES."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from apps.accounts.models import Team, User
from apps.core.errors import InvalidInput
from apps.core.lookup import by_id_or_name

from .models import SavedQuerySet, TryQuery

MAX_QUERIES = 1_000
MAX_QUERY_LENGTH = TryQuery._meta.get_field("text").max_length or 500
MAX_NAME = SavedQuerySet._meta.get_field("name").max_length or 200


def query_texts_checked(value: Any, field: str, problems: list[str]) -> list[str]:
    """The texts of `value` (a list), each problem named as field[index]."""
    if not isinstance(value, list | tuple):
        problems.append(f"{field}: a list of query texts")
        return []
    texts: list[str] = []
    for index, text in enumerate(value[: MAX_QUERIES + 1]):
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_QUERY_LENGTH:
            problems.append(f"{field}[{index}]: a text of 1 to {MAX_QUERY_LENGTH} characters")
        elif "\x00" in text:
            problems.append(f"{field}[{index}]: must not contain NUL (0x00) characters")
        elif text.strip() not in texts:
            texts.append(text.strip())
    if len(value) > MAX_QUERIES:
        problems.append(f"{field}: at most {MAX_QUERIES:,}")
    elif not texts and not problems:
        problems.append(f"{field}: at least one")
    return texts


def query_set_save(*, team: Team, user: User | None, name: Any, queries: Any) -> SavedQuerySet:
    problems: list[str] = []
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME or "\x00" in name:
        problems.append(f"name: a text of 1 to {MAX_NAME} characters, without NUL")
    elif SavedQuerySet.objects.filter(team=team, name=name.strip()).exists():
        problems.append(f"name: the team already has a query set named {name.strip()!r}")
    texts = query_texts_checked(queries, "queries", problems)
    if problems:
        raise InvalidInput(problems)
    try:
        with transaction.atomic():
            return SavedQuerySet.objects.create(
                team=team, name=name.strip(), queries=texts, created_by=user
            )
    except IntegrityError:  # the same name saved a moment ago
        taken = f"name: the team already has a query set named {name.strip()!r}"
        raise InvalidInput([taken]) from None


def team_query_set(team: Team, chosen: int | str, problems: list[str]) -> SavedQuerySet | None:
    """The team's set by id or name; a problem named `query_set` when there is none."""
    sets = SavedQuerySet.objects.filter(team=team)
    return by_id_or_name(sets, chosen, field="query_set", label="query set", problems=problems)
