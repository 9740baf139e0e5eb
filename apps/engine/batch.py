"""Score many keywords at once with numpy: the same numbers as ``score_keyword``, faster.

Recomputing a whole evaluation (a changed profile or transformer, a bulk import, a
benchmark) scores tens of thousands of keywords; doing that one keyword at a time in
Python is the slow part. Here every keyword is a row of a keywords x positions matrix
(NaN = null; shorter keywords are padded with NaN, which every formula already treats
like an ungraded snapshot at the end of the list) and each formula runs once per rank
over all keywords.

Bit-for-bit agreement with the per-keyword path is a requirement, not an accident:
- sums run column by column, rank 1 first, like the Python loops (numpy's own
  ``sum`` adds in a different order and can differ in the last bit);
- per-rank constants (log2 discounts, rank^0.18) come from the helpers in formulas.py;
- 2^v is computed by Python's float power for each distinct (grade sum, slot count)
  pair and looked up, because numpy's SIMD ``power`` may round differently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from .batch_formulas import FloatArray, StageOneMatrix, metric_array
from .conventions import check_cutoff, check_profile, split_condensed
from .decisions import Decisions, with_decisions
from .errors import EngineError
from .keyword import KeywordScore, MetricRequest, SnapshotGrades
from .metrics import MetricDef, get_metric, metric_scale
from .pool import take_out_unjudged_level_arrays
from .scales import Scale, get_scale
from .transformers import resolve_rules


@dataclass(frozen=True, eq=False)
class BatchScores:
    """Scores of many keywords, row i = keyword i of the input.

    ``snapshot_values``: stage 1 on the native scale, keywords x positions, NaN = null
    and padding (``snapshot_counts`` says how many positions each keyword really has).
    ``metrics``: (metric id, k) -> one value per keyword, NaN = null.
    """

    snapshot_counts: np.ndarray
    snapshot_values: FloatArray
    metrics: dict[MetricRequest, FloatArray]

    def __len__(self) -> int:
        return len(self.snapshot_counts)

    def metric_values(self, metric: str, k: int) -> list[float | None]:
        """One metric for every keyword as plain floats, None for null."""
        return _floats_or_none(self.metrics[(metric, k)])

    def keyword_score(self, index: int) -> KeywordScore:
        """Keyword ``index`` in the same shape ``score_keyword`` returns."""
        positions = int(self.snapshot_counts[index])
        return KeywordScore(
            snapshot_values=_floats_or_none(self.snapshot_values[index, :positions]),
            metrics={
                request: _float_or_none(float(values[index]))
                for request, values in self.metrics.items()
            },
        )


def score_keywords_batch(
    keywords: Sequence[SnapshotGrades],
    *,
    scale: str | Scale,
    metrics: Sequence[MetricRequest],
    profile: str = "searchtweak",
    rules: Mapping[str, Mapping[int, int]] | None = None,
    decisions: Sequence[Decisions | None] | None = None,
    unretrieved: Sequence[Sequence[int]] | None = None,
    zero_without_results: bool = False,
) -> BatchScores:
    """``score_keyword`` for many keywords: ``keywords[i]`` is what ``score_keyword``
    takes as ``snapshot_grades`` for keyword i, and ``decisions[i]`` and
    ``unretrieved[i]`` (when given) what it takes as ``decisions`` and ``unretrieved``.
    Same checks and EngineErrors, except that grades are checked by value (1.0 passes
    for 1).
    """
    native = get_scale(scale)
    check_profile(profile)
    targets = {}
    definitions: dict[str, MetricDef] = {}
    for metric, k in metrics:
        definitions[metric] = get_metric(metric)
        targets[metric] = metric_scale(metric, native)
        check_cutoff(k)
    resolved_rules = resolve_rules(native, rules)
    if decisions is not None:
        if len(decisions) != len(keywords):
            raise EngineError(
                f"decisions: expected one entry per keyword ({len(keywords)}), got {len(decisions)}"
            )
        keywords = [
            with_decisions(snapshots, decided, native)
            for snapshots, decided in zip(keywords, decisions, strict=True)
        ]
    grades, snapshot_counts = _grade_array(keywords)
    _check_grades(grades, native)
    judged_elsewhere = _unretrieved_array(unretrieved, len(keywords))
    _check_grades(judged_elsewhere, native)
    pooled = take_out_unjudged_level_arrays(grades, judged_elsewhere, native, profile)
    grades, judged_elsewhere = pooled.grades, pooled.unretrieved

    stage_one: dict[tuple[str, bool], StageOneMatrix] = {}

    def on_scale(target: Scale, condensed: bool = False) -> StageOneMatrix:
        if (target.name, condensed) not in stage_one:
            mapping = resolved_rules[target.name]
            source, counts = (
                _condense(grades, on_scale(native))
                if condensed
                else (
                    grades,
                    snapshot_counts,
                )
            )
            stage_one[(target.name, condensed)] = StageOneMatrix(
                _transform(source, native, mapping),
                target,
                snapshot_counts=counts,
                unretrieved=_transform(judged_elsewhere, native, mapping),
                listed_counts=snapshot_counts,
                # The condensed list holds judged results only.
                unjudged_in_pool=None if condensed else pooled.unjudged_in_pool,
                pooled_anywhere=pooled.pooled_anywhere,
            )
        return stage_one[(target.name, condensed)]

    # Nulls flow through as NaN; 0/0 and NaN comparisons are expected, not warnings.
    with np.errstate(invalid="ignore", divide="ignore"):
        results = {
            (metric, k): metric_array(
                split_condensed(metric)[0],
                definitions[metric].batch_formula,
                k,
                on_scale(targets[metric], condensed=split_condensed(metric)[1]),
                profile,
                coverage=definitions[metric].coverage,
                zero_without_results=zero_without_results,
            )
            for metric, k in metrics
        }
        native_values = on_scale(native).values
    return BatchScores(
        snapshot_counts=snapshot_counts, snapshot_values=native_values, metrics=results
    )


# --- input --------------------------------------------------------------------------


def _grade_array(keywords: Sequence[SnapshotGrades]) -> tuple[FloatArray, np.ndarray]:
    """Raw grades as keywords x positions x slots (NaN = empty or padding) and the number
    of snapshots of each keyword.

    Flattening with itertools and converting one flat list is several times faster than
    handing numpy the nested lists; ragged input is scattered into place with index
    arrays instead of a Python loop.
    """
    snapshots = list(chain.from_iterable(keywords))
    try:
        # numpy turns None into NaN when asked for floats.
        flat = np.array(list(chain.from_iterable(snapshots)), dtype=float)
    except (TypeError, ValueError):
        raise EngineError("grades must be whole numbers or None") from None
    if flat.ndim != 1:
        raise EngineError("grades must be whole numbers or None")

    snapshot_lengths = set(map(len, keywords))
    slot_lengths = set(map(len, snapshots))
    if len(snapshot_lengths) <= 1 and len(slot_lengths) <= 1:
        positions = snapshot_lengths.pop() if snapshot_lengths else 0
        slots = slot_lengths.pop() if slot_lengths else 0
        counts = np.full(len(keywords), positions, dtype=np.intp)
        return flat.reshape(len(keywords), positions, slots), counts

    counts = np.fromiter(map(len, keywords), dtype=np.intp, count=len(keywords))
    slot_counts = np.fromiter(map(len, snapshots), dtype=np.intp, count=len(snapshots))
    grades = np.full((len(keywords), counts.max(), slot_counts.max()), np.nan)
    keyword_of_snapshot = np.repeat(np.arange(len(keywords)), counts)
    position_of_snapshot = np.arange(len(snapshots)) - np.repeat(counts.cumsum() - counts, counts)
    snapshot_of_grade = np.repeat(np.arange(len(snapshots)), slot_counts)
    slot_of_grade = np.arange(len(flat)) - np.repeat(
        slot_counts.cumsum() - slot_counts, slot_counts
    )
    grades[
        keyword_of_snapshot[snapshot_of_grade],
        position_of_snapshot[snapshot_of_grade],
        slot_of_grade,
    ] = flat
    return grades, counts


def _unretrieved_array(unretrieved: Sequence[Sequence[int]] | None, keywords: int) -> FloatArray:
    """Each keyword's judged, unretrieved grades as keywords x documents (NaN = padding)."""
    if unretrieved is None:
        return np.full((keywords, 0), np.nan)
    if len(unretrieved) != keywords:
        raise EngineError(
            f"unretrieved: expected one entry per keyword ({keywords}), got {len(unretrieved)}"
        )
    widest = max(map(len, unretrieved), default=0)
    matrix = np.full((keywords, widest), np.nan)
    for row, grades in enumerate(unretrieved):
        if grades:
            try:
                matrix[row, : len(grades)] = grades
            except (TypeError, ValueError):
                raise EngineError("grades must be whole numbers or None") from None
    return matrix


def _check_grades(grades: FloatArray, scale: Scale) -> None:
    given = grades[~np.isnan(grades)]
    on_scale = np.isin(given, scale.grades)
    if not on_scale.all():
        bad = given[~on_scale][0]
        shown = int(bad) if bad.is_integer() else float(bad)
        raise EngineError(f"{shown!r} is not a {scale.name} grade {scale.describe_grades()}")


def _condense(grades: FloatArray, native: StageOneMatrix) -> tuple[FloatArray, np.ndarray]:
    """The condensed lists: each keyword's results with a native stage-1 value moved up in
    their order, the rest dropped (NaN padding), and each list's new length."""
    judged = native.judged
    # A stable sort of "not judged" keeps the judged results' order and puts them first.
    order = np.argsort(~judged, axis=1, kind="stable")
    condensed = np.take_along_axis(grades, order[:, :, None], axis=1)
    counts = judged.sum(axis=1)
    condensed[np.arange(grades.shape[1]) >= counts[:, None]] = np.nan
    return condensed, counts.astype(np.intp)


def _transform(grades: FloatArray, source: Scale, mapping: Mapping[int, int]) -> FloatArray:
    """Map every raw grade through ``mapping`` with a lookup table (NaN stays NaN)."""
    if all(mapping[grade] == grade for grade in source.grades):
        return grades
    # Indexed from the lowest grade, which a custom scale may put below 0.
    table = np.full(source.highest - source.lowest + 1, np.nan)
    for grade, target in mapping.items():
        table[grade - source.lowest] = target
    empty = np.isnan(grades)
    transformed = table[(np.where(empty, source.lowest, grades) - source.lowest).astype(np.intp)]
    transformed[empty] = np.nan
    return transformed


def _float_or_none(value: float) -> float | None:
    return None if value != value else value  # only NaN differs from itself


def _floats_or_none(values: FloatArray) -> list[float | None]:
    floats = values.tolist()
    if not np.isnan(values).any():
        return floats  # the common case, and the cheap one: no value to turn into None
    return [None if value != value else value for value in floats]  # NaN: None
