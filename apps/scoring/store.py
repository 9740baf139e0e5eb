"""Store what the engine computed, guarded so that only fresher results ever land.

Every write checks the keyword's `scored_version` under a row lock: a result computed
from slots read at grade version v is stored only if nothing at v or later is stored
yet. The keyword stays marked while its grade version is ahead of what was stored.

Every transaction here takes its row locks in one order (the evaluation, its keywords in
id order, their values and snapshots, the metric rows, the history points), and its
locking queries name their own ordering; why, and the deadlock that taught it, are in
docs/architecture.md, "Lock order". The soak test is
apps/scoring/tests/test_scoring_deadlocks.py.
"""

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Case, F, Field, FloatField, IntegerField, Q, Value, When
from django.db.models.functions import Exp
from django.utils import timezone

from apps import engine
from apps.core import live
from apps.core.bulk import bulk_set, bulk_upsert
from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    Keyword,
    Snapshot,
)

from .finishing import finish_when_complete
from .loading import (
    EvaluationSettings,
    KeywordInputs,
    evaluation_slot_rows,
    evaluation_unretrieved,
    group_slots,
    load_settings,
)
from .means import lock_evaluation, record_history_point, store_exact_means
from .models import KeywordMetric

MetricKey = tuple[str, int]


def store_keyword_score(*, inputs: KeywordInputs, scored: engine.KeywordScore) -> bool:
    """Store one keyword's result; returns True when the keyword is still marked."""
    return bool(store_keyword_scores(inputs=[inputs], scores=[scored]))


def store_keyword_scores(
    *, inputs: list[KeywordInputs], scores: list[engine.KeywordScore]
) -> set[int]:
    """Store the results of keywords of one evaluation together, each only if fresher
    than what is stored, and move the evaluation's means and progress by their changes
    in one UPDATE each; release the keywords' leases. Returns the keywords still marked
    (graded again since they were read)."""
    if not inputs:
        return set()
    evaluation_id = inputs[0].settings.evaluation_id
    by_keyword = {i.keyword_id: (i, s) for i, s in zip(inputs, scores, strict=True)}
    with transaction.atomic():
        evaluation = lock_evaluation(evaluation_id)
        locked = {
            row["id"]: row
            for row in Keyword.objects.select_for_update(no_key=True)
            .filter(id__in=by_keyword)
            .order_by("id")  # no join on the evaluation (module docstring, "Lock order")
            .values("id", "scored_version", "grade_version", "graded_slots")
        }
        fresh = [
            by_keyword[keyword_id]
            for keyword_id, row in locked.items()
            if row["scored_version"] < by_keyword[keyword_id][0].version
        ]
        if fresh:
            old_values = _keywords_metric_values([i.keyword_id for i, _ in fresh])
            _upsert_keyword_metrics(evaluation_id, {i.keyword_id: s.metrics for i, s in fresh})
            _update_snapshot_values([i for i, _ in fresh], [s for _, s in fresh])
            _apply_keyword_changes(
                evaluation=evaluation,
                changes=[(old_values.get(i.keyword_id, {}), s.metrics) for i, s in fresh],
                graded_delta=sum(
                    i.graded_slots - locked[i.keyword_id]["graded_slots"] for i, _ in fresh
                ),
            )
            live.changed(evaluation_id=evaluation_id, team_id=evaluation.team_id)
        fresh_ids = {i.keyword_id for i, _ in fresh}
        scored_versions = {
            keyword_id: by_keyword[keyword_id][0].version
            if keyword_id in fresh_ids
            else row["scored_version"]
            for keyword_id, row in locked.items()
        }
        still_marked = {
            keyword_id
            for keyword_id, row in locked.items()
            if row["grade_version"] > scored_versions[keyword_id]
        }
        ids = list(locked)
        bulk_set(
            Keyword,
            ids,
            {
                "scored_version": [scored_versions[keyword_id] for keyword_id in ids],
                "needs_scoring": [keyword_id in still_marked for keyword_id in ids],
                "scoring_lease_until": [None] * len(ids),
                "graded_slots": [
                    by_keyword[keyword_id][0].graded_slots
                    if keyword_id in fresh_ids
                    else locked[keyword_id]["graded_slots"]
                    for keyword_id in ids
                ],
            },
        )
    return still_marked


def _keywords_metric_values(keyword_ids: list[int]) -> dict[int, dict[MetricKey, float | None]]:
    values: dict[int, dict[MetricKey, float | None]] = {}
    for keyword_id, metric, k, value in KeywordMetric.objects.filter(
        keyword_id__in=keyword_ids
    ).values_list("keyword_id", "metric", "k", "value"):
        values.setdefault(keyword_id, {})[(metric, k)] = value
    return values


def _upsert_keyword_metrics(
    evaluation_id: int, values_by_keyword: dict[int, dict[MetricKey, float | None]]
) -> None:
    rows = [
        (keyword_id, metric, k, value)
        for keyword_id, values in values_by_keyword.items()
        for (metric, k), value in values.items()
    ]
    now = timezone.now()
    bulk_upsert(
        KeywordMetric,
        {
            "keyword": [row[0] for row in rows],
            "evaluation": [evaluation_id] * len(rows),
            "metric": [row[1] for row in rows],
            "k": [row[2] for row in rows],
            "value": [row[3] for row in rows],
            "computed_at": [now] * len(rows),
        },
        unique_fields=["keyword", "metric", "k"],
        update_fields=["value", "computed_at"],
    )


def _update_snapshot_values(
    inputs: Iterable[KeywordInputs], scores: Iterable[engine.KeywordScore]
) -> None:
    ids: list[int] = []
    values: list[float | None] = []
    for keyword_inputs, scored in zip(inputs, scores, strict=True):
        for snapshot, value in zip(keyword_inputs.snapshots, scored.snapshot_values, strict=True):
            if snapshot.stored_value != value:
                ids.append(snapshot.snapshot_id)
                values.append(value)
    bulk_set(Snapshot, ids, {"value": values})


def _apply_keyword_changes(
    *,
    evaluation: Evaluation,
    changes: list[tuple[dict[MetricKey, float | None], dict[MetricKey, float | None]]],
    graded_delta: int,
) -> None:
    """Move the evaluation's means and progress by keywords' changes (old values, new
    values), in O(metrics) statements. The caller holds the evaluation's row lock
    (`lock_evaluation`)."""
    evaluation_id = evaluation.id
    _move_progress(evaluation, graded_delta)
    deltas: dict[MetricKey, tuple[float, int]] = {}
    for old_values, new_values in changes:
        for key, new in new_values.items():
            old = old_values.get(key)
            sum_delta, count_delta = deltas.get(key, (0.0, 0))
            deltas[key] = (
                sum_delta + ((new or 0.0) - (old or 0.0)),
                count_delta + (new is not None) - (old is not None),
            )
    deltas = {key: delta for key, delta in deltas.items() if delta != (0.0, 0)}
    if deltas:
        _move_means(evaluation_id, deltas)
    record_history_point(evaluation_id=evaluation_id, progress=evaluation.progress)
    if graded_delta:
        finish_when_complete(evaluation)


def _move_means(evaluation_id: int, deltas: dict[MetricKey, tuple[float, int]]) -> None:
    """Add (sum delta, count delta) to each metric's sum and count and re-divide, in one
    UPDATE whatever the number of metrics: each row picks its own deltas by (metric, k)."""

    def per_metric(expression: Callable[[float, int], Any], output_field: Field) -> Case:
        return Case(
            *(
                When(metric=metric, k=k, then=expression(sum_delta, count_delta))
                for (metric, k), (sum_delta, count_delta) in deltas.items()
            ),
            output_field=output_field,
        )

    def new_count(sum_delta: float, count_delta: int) -> Any:
        return F("value_count") + count_delta

    def new_sum(sum_delta: float, count_delta: int) -> Any:
        # When no keyword has a value any more, the sum is exactly 0 (no float residue).
        return Case(
            When(value_count=-count_delta, then=Value(0.0)),
            default=F("value_sum") + sum_delta,
        )

    def new_mean(metric: str) -> Callable[[float, int], Any]:
        def mean(sum_delta: float, count_delta: int) -> Any:
            value = (F("value_sum") + sum_delta) / (F("value_count") + count_delta)
            return Case(
                When(value_count=-count_delta, then=Value(None)),
                # A geometric metric's keyword values are logarithms (engine.mean_from_sum).
                default=Exp(value) if engine.get_metric(metric).geometric else value,
                output_field=FloatField(),
            )

        return mean

    def per_metric_mean() -> Case:
        return Case(
            *(
                When(metric=metric, k=k, then=new_mean(metric)(sum_delta, count_delta))
                for (metric, k), (sum_delta, count_delta) in deltas.items()
            ),
            output_field=FloatField(),
        )

    which = Q()
    for metric, k in deltas:
        which |= Q(metric=metric, k=k)
    EvaluationMetric.objects.filter(which, evaluation_id=evaluation_id).update(
        value_count=per_metric(new_count, IntegerField()),
        value_sum=per_metric(new_sum, FloatField()),
        value=per_metric_mean(),
        means_exact=False,
    )


def _move_progress(evaluation: Evaluation, graded_delta: int) -> None:
    """Add graded_delta to the graded slots of the evaluation the caller has locked."""
    if graded_delta:
        evaluation.graded_slots += graded_delta
        evaluation.progress = engine.progress(evaluation.graded_slots, evaluation.total_slots)
        Evaluation.objects.filter(id=evaluation.id).update(
            graded_slots=evaluation.graded_slots, progress=evaluation.progress
        )


# --- Whole evaluation --------------------------------------------------------------------

KEYWORDS_PER_BATCH = 500


@dataclass(frozen=True)
class _Computed:
    inputs: KeywordInputs
    scored: engine.KeywordScore


def _read_evaluation_inputs(
    evaluation: Evaluation, settings: EvaluationSettings
) -> Iterator[KeywordInputs]:
    """Stream every keyword's slots in one ordered query; memory holds one keyword's slots
    (and the grades of the evaluation's judged, unretrieved documents). Keywords without
    results come too: they score 0 when the evaluation counts them so."""
    # Versions are read before the slots, so every slot read is at least that fresh.
    versions = dict(
        Keyword.objects.filter(evaluation_id=evaluation.id)
        .order_by("id")
        .values_list("id", "grade_version")
    )
    unretrieved = evaluation_unretrieved(evaluation_id=evaluation.id)
    without_results = iter(versions)

    def inputs(keyword_id: int, rows: list[tuple[Any, ...]]) -> KeywordInputs:
        return KeywordInputs(
            keyword_id,
            versions[keyword_id],
            settings,
            group_slots(rows),
            unretrieved.get(keyword_id, []),
        )

    def keywords_before(keyword_id: int | None) -> Iterator[KeywordInputs]:
        """The keywords without slots whose ids come before keyword_id (None: all left)."""
        if keyword_id is not None and keyword_id not in versions:
            return  # created after the versions were read: not this recompute's
        for other in without_results:
            if other == keyword_id:
                return
            yield inputs(other, [])

    current: int | None = None
    buffered: list[tuple[Any, ...]] = []
    for row in evaluation_slot_rows(evaluation_id=evaluation.id):
        keyword_id = row[0]
        if keyword_id != current:
            if current is not None:
                yield inputs(current, buffered)
                buffered = []
            yield from keywords_before(keyword_id)
        current = keyword_id
        buffered.append(row[1:])
    if current is not None:
        yield inputs(current, buffered)
    yield from keywords_before(None)


def store_evaluation_scores(*, evaluation: Evaluation) -> None:
    """Recompute every keyword, store in batches, then set exact means and progress."""
    settings = load_settings(evaluation)
    batch: list[KeywordInputs] = []
    for inputs in _read_evaluation_inputs(evaluation, settings):
        batch.append(inputs)
        if len(batch) >= KEYWORDS_PER_BATCH:
            _store_batch(evaluation.id, _score_batch(settings, batch))
            batch = []
    if batch:
        _store_batch(evaluation.id, _score_batch(settings, batch))
    with transaction.atomic():
        locked = lock_evaluation(evaluation.id)
        store_exact_means(evaluation_id=evaluation.id)
        finish_when_complete(locked)
        live.changed(evaluation_id=evaluation.id, team_id=locked.team_id)


def _score_batch(settings: EvaluationSettings, batch: list[KeywordInputs]) -> list[_Computed]:
    """Score a batch with the engine's numpy path: the same KeywordScore per keyword as
    score_keyword gives, several times faster than scoring keywords one by one."""
    scores = settings.score_many(
        [inputs.snapshots for inputs in batch], [inputs.unretrieved for inputs in batch]
    )
    return [_Computed(inputs, scores.keyword_score(i)) for i, inputs in enumerate(batch)]


def _store_batch(evaluation_id: int, batch: list[_Computed]) -> None:
    with transaction.atomic():
        evaluation = lock_evaluation(evaluation_id)
        locked = {
            row["id"]: row
            for row in Keyword.objects.select_for_update(no_key=True)
            .filter(id__in=[c.inputs.keyword_id for c in batch])
            .order_by("id")
            .values("id", "scored_version", "grade_version", "graded_slots")
        }
        fresh = [
            c
            for c in batch
            if c.inputs.keyword_id in locked
            and locked[c.inputs.keyword_id]["scored_version"] < c.inputs.version
        ]
        if not fresh:
            return
        _upsert_keyword_metrics(
            evaluation_id, {c.inputs.keyword_id: c.scored.metrics for c in fresh}
        )
        _update_snapshot_values([c.inputs for c in fresh], [c.scored for c in fresh])
        graded_delta = sum(
            c.inputs.graded_slots - locked[c.inputs.keyword_id]["graded_slots"] for c in fresh
        )
        bulk_set(
            Keyword,
            [c.inputs.keyword_id for c in fresh],
            {
                "scored_version": [c.inputs.version for c in fresh],
                "graded_slots": [c.inputs.graded_slots for c in fresh],
                "needs_scoring": [
                    locked[c.inputs.keyword_id]["grade_version"] > c.inputs.version for c in fresh
                ],
            },
        )
        _move_progress(evaluation, graded_delta)
        EvaluationMetric.objects.filter(evaluation_id=evaluation_id).update(means_exact=False)
