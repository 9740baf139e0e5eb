"""Coverage: how far the judgements reach into each top k.

A metric treats a result nobody judged as not relevant, so a list with many unjudged
results looks worse than it may be, and a comparison between lists judged unevenly is
biased against the less judged one. A lead reads coverage beside every metric, at the
metric's own cutoff:

- judged@k of a keyword: the share of its top k (of its results, when fewer) with a
  value, as the engine's `judged` measure and ir_measures' Judged@k compute it; the
  evaluation's is the mean over its keywords with results;
- unjudged: the results in the top k nobody has judged, over all keywords.

A result counts as judged when the pipeline has its stage-1 value on the evaluation's
native scale (a grade, or a lead's decision; a tie among graders is no value, as the
metrics read it). Read from the stored values in one query, whatever the number of
cutoffs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Count, Q, QuerySet

from apps.core import live
from apps.engine import WHOLE_LIST
from apps.evaluations.models import Evaluation, Snapshot

# Two evaluations whose judged@k differ by this much or more are compared with a warning:
# the one with more unjudged results is held down by results nobody judged.
UNEVEN_COVERAGE = 0.05


@dataclass(frozen=True)
class Coverage:
    k: int
    judged: float | None  # mean judged@k over the keywords with results; None: none has
    unjudged: int  # unjudged results in the top k, all keywords together
    keywords: int  # keywords with results

    @property
    def complete(self) -> bool:
        return self.unjudged == 0


def coverage_by_cutoff(
    evaluation_id: int, cutoffs: Iterable[int], *, keyword_ids: Iterable[int] | None = None
) -> dict[int, Coverage]:
    """The evaluation's coverage at each cutoff (WHOLE_LIST: every result), over all its
    keywords or only ``keyword_ids``; one query."""
    cutoffs = sorted(set(cutoffs))
    if not cutoffs:
        return {}
    snapshots = Snapshot.objects.filter(keyword__evaluation_id=evaluation_id)
    if keyword_ids is not None:
        snapshots = snapshots.filter(keyword_id__in=list(keyword_ids))
    rows = _counts_by_keyword(snapshots, cutoffs)
    return {k: _coverage(k, rows) for k in cutoffs}


def evaluation_coverage(evaluation: Evaluation, cutoffs: Iterable[int]) -> dict[int, Coverage]:
    """coverage_by_cutoff over all the evaluation's keywords, computed once per change.

    Its page and every open page's live answer read it (37 ms on 100,000 results, most
    of a live answer; 200 open pages redraw at once after a grade), so it is kept in the
    shared cache under the evaluation's live token (apps/core/live.py), which renews
    whenever a grade or a recompute changes the values it reads, as the pages' own
    304s rely on. The key names the evaluation by id and creation time: a database made
    anew (tests, a restored copy) reuses ids, never both.
    """
    cutoffs = sorted(set(cutoffs))
    token = live.version(live.evaluation_topic(evaluation.id))
    if token is None:  # no cache to keep it in
        return coverage_by_cutoff(evaluation.id, cutoffs)
    made = evaluation.created_at.timestamp()
    key = f"coverage:{evaluation.id}:{made}:{token}:{','.join(map(str, cutoffs))}"
    found: dict[int, Coverage] | None = cache.get(key)
    if found is None:
        found = coverage_by_cutoff(evaluation.id, cutoffs)
        cache.set(key, found, live.VERSION_SECONDS)
    return found


def coverage_of_keywords(
    keyword_ids: dict[int, list[int]], cutoffs: dict[int, Iterable[int]]
) -> dict[int, dict[int, Coverage]]:
    """Several evaluations' coverage over some of their keywords (evaluation id -> keyword
    ids) at their cutoffs (evaluation id -> k), in one query whatever their number."""
    wanted = sorted({k for ks in cutoffs.values() for k in ks})
    if not wanted:
        return {evaluation_id: {} for evaluation_id in keyword_ids}
    snapshots = Snapshot.objects.filter(keyword__evaluation_id__in=list(keyword_ids))
    rows = {row["keyword_id"]: row for row in _counts_by_keyword(snapshots, wanted)}
    return {
        evaluation_id: {
            k: _coverage(k, [rows[keyword] for keyword in keywords if keyword in rows])
            for k in set(cutoffs[evaluation_id])
        }
        for evaluation_id, keywords in keyword_ids.items()
    }


def _counts_by_keyword(snapshots: QuerySet[Snapshot], cutoffs: list[int]) -> list[dict[str, int]]:
    """Per keyword: its results and judged results in the top k, for each k."""
    counts = {}
    for k in cutoffs:
        within = Q() if k == WHOLE_LIST else Q(position__lte=k)
        counts[f"shown_{k}"] = Count("id", filter=within)
        counts[f"judged_{k}"] = Count("value", filter=within)
    return list(snapshots.order_by().values("keyword_id").annotate(**counts))


def keyword_coverage(k: int, values: list[float | None]) -> Coverage:
    """One keyword's coverage at k from its results' stage-1 values in position order."""
    top = values if k == WHOLE_LIST else values[:k]
    judged = sum(1 for value in top if value is not None)
    return _coverage(k, [{f"shown_{k}": len(top), f"judged_{k}": judged}])


def _coverage(k: int, rows: list[dict[str, int]]) -> Coverage:
    shares = []
    unjudged = 0
    for row in rows:
        shown, judged = row[f"shown_{k}"], row[f"judged_{k}"]
        if shown:
            shares.append(judged / shown)
            unjudged += shown - judged
    mean = sum(shares) / len(shares) if shares else None
    return Coverage(k=k, judged=mean, unjudged=unjudged, keywords=len(shares))


def uneven(first: Coverage | None, second: Coverage | None) -> bool:
    """Whether two evaluations' coverage at one cutoff differs enough to bias a
    comparison of their metrics (UNEVEN_COVERAGE or more apart)."""
    if first is None or second is None or first.judged is None or second.judged is None:
        return False
    return abs(first.judged - second.judged) >= UNEVEN_COVERAGE - 1e-12
