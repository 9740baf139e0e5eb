"""The library as a judgement list: one grade per query text and document on one scale,
the library grade (a lead's decision, else people's, else AI judges'), in the order of
the query texts. The lead's filters on the page choose which entries go."""

from __future__ import annotations

from collections.abc import Iterator

from apps.evaluations.models import Evaluation

from .browsing import CHUNK, Filters, team_query_texts
from .entries import JUDGES, scale_key, team_entries
from .models import JudgementList


def team_scales(*, team_id: int) -> list[str]:
    """The scale keys the team's evaluations and lists are on, most used first."""
    counts: dict[str, int] = {}
    for scale, levels in Evaluation.objects.filter(team_id=team_id).values_list(
        "scale", "scale_levels"
    ):
        key = scale_key(scale, levels)
        counts[key] = counts.get(key, 0) + 1
    for scale, levels in JudgementList.objects.filter(team_id=team_id).values_list(
        "scale", "scale_levels"
    ):
        key = scale_key(scale, levels)
        counts[key] = counts.get(key, 0) + 1
    return sorted(counts, key=lambda key: (-counts[key], key))


def library_rows(
    *, team_id: int, scale: str, filters: Filters, people_only: bool = False
) -> Iterator[tuple[str, str, int]]:
    """(query, doc id, library grade) for every entry on `scale` the filters keep; with
    `people_only`, those whose grade rests on people or a lead's decision."""
    texts = team_query_texts(team_id=team_id, contains=filters.query)
    while chunk := [text for _, text in zip(range(CHUNK), texts, strict=False)]:
        entries = team_entries(team_id=team_id, queries=chunk, scale=scale)
        order = {text: number for number, text in enumerate(chunk)}
        kept = sorted(
            (entry for entry in entries.values() if filters.keeps(entry)),
            key=lambda entry: (order[entry.query], entry.doc_id),
        )
        for entry in kept:
            grade = entry.grade
            if grade is None or (people_only and entry.basis_tier == JUDGES):
                continue
            yield entry.query, entry.doc_id, grade
