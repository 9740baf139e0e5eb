"""Gold sets: what a judge is calibrated on (calibration.py runs it, calibration_figures.py
measures it).

A lead draws one from a baseline evaluation people graded, and, to see whether a judge
would change a decision, a candidate evaluation of the same keywords: a random sample of
the keywords people graded (seeded, so the draw can be told and repeated), and for each
the results people graded, with their grades (a lead's decision, where there is one,
alone) and their positions in each list. The sample is frozen: copies, so later grading,
edits or a deleted evaluation change nothing in it, and every calibration of every judge
on it is measured on the same results.

People's grades are those given by anyone but an AI judge (imported grades count as
people's: they came from the team's own graders elsewhere).
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from apps.accounts.models import Team, User
from apps.core.errors import InvalidInput, InvalidState
from apps.core.naming import save_with_unique_name
from apps.core.typed import parse_int
from apps.evaluations.models import Evaluation, EvaluationMetric, FeedbackSlot, Keyword, Snapshot
from apps.judging.models import SnapshotDecision

from .models import CalibrationStatus, GoldItem, GoldSet

NAME_MAX = 100
KEYWORDS_MIN = 2
KEYWORDS_MAX = 500
KEYWORDS_DEFAULT = 30
SEED_MAX = 2**31 - 1


@transaction.atomic
def gold_set_create(
    *,
    team: Team,
    name: Any,
    baseline: Any,
    candidate: Any = None,
    keywords: Any = KEYWORDS_DEFAULT,
    seed: Any = None,
    created_by: User | None = None,
) -> GoldSet:
    """Draw and freeze a gold set; every problem at once, each naming its field."""
    problems: list[str] = []
    clean_name = _name(name, problems)
    count = _whole("keywords", keywords, KEYWORDS_MIN, KEYWORDS_MAX, problems)
    chosen_seed = (
        random.SystemRandom().randrange(SEED_MAX)
        if seed in (None, "")
        else _whole("seed", seed, 0, SEED_MAX, problems)
    )
    base = _evaluation(team, "baseline", baseline, problems)
    other = None if candidate in (None, "") else _evaluation(team, "candidate", candidate, problems)
    if base and other and base.id == other.id:
        problems.append("candidate: choose an evaluation other than the baseline")
    elif base and other and (base.scale, base.scale_levels) != (other.scale, other.scale_levels):
        problems.append(
            f"candidate: graded on {other.scale_text}, the baseline on {base.scale_text}; "
            "a gold set needs one scale"
        )
    if problems or base is None or chosen_seed is None:
        raise InvalidInput(problems)
    texts = _keywords_people_graded(base, other)
    if not texts and other is None:
        raise InvalidInput(["baseline: no keyword of it has people's grades yet"])
    if not texts:
        raise InvalidInput(["candidate: none of the keywords people graded in the baseline"])
    sampled = random.Random(chosen_seed).sample(texts, min(count or 0, len(texts)))
    gold = GoldSet(
        team=team,
        name=clean_name,
        baseline=base,
        candidate=other,
        baseline_name=base.name[:200],
        candidate_name=other.name[:200] if other else "",
        scale=base.scale,
        scale_levels=base.scale_levels,
        profile=base.profile,
        metrics=[
            [m.metric, m.k] for m in EvaluationMetric.objects.filter(evaluation=base).order_by("id")
        ],
        guidelines=base.scoring_guidelines,
        seed=chosen_seed,
        created_by=created_by,
    )
    save_with_unique_name(
        gold,
        GoldSet.objects.filter(team=team, name=clean_name),
        f"name: the team already has a gold set named {clean_name!r}",
    )
    GoldItem.objects.bulk_create(_items(gold, sampled, base, other))
    return gold


def gold_set_delete(*, gold_set: GoldSet) -> None:
    """A gold set and its calibrations go together (the judges' live grades stay);
    refused while a calibration on it runs (its worker writes beside the items)."""
    if gold_set.runs.filter(status=CalibrationStatus.RUNNING).exists():
        raise InvalidState(
            "a calibration on this gold set is running; cancel it first", field="gold_set"
        )
    gold_set.delete()


# --- Drawing --------------------------------------------------------------------------


def _keywords_people_graded(base: Evaluation, other: Evaluation | None) -> list[str]:
    graded = set(
        FeedbackSlot.objects.filter(evaluation=base, grade__isnull=False)
        .by_people()
        .values_list("keyword__text", flat=True)
        .distinct()
    )
    if other is not None:
        graded &= set(Keyword.objects.filter(evaluation=other).values_list("text", flat=True))
    return sorted(graded)  # sorted: the seed alone decides the draw


@dataclass
class _Result:
    """A sampled keyword's result as one evaluation has it."""

    position: int
    title: str
    fields: dict[str, Any]
    image: str = ""
    people: list[int] = field(default_factory=list)


def _results(evaluation: Evaluation, texts: list[str]) -> dict[str, dict[str, _Result]]:
    """keyword text -> doc id -> the result (its first position when listed twice)."""
    snapshots = Snapshot.objects.filter(keyword__evaluation=evaluation, keyword__text__in=texts)
    by_snapshot: dict[int, tuple[str, str]] = {}
    results: dict[str, dict[str, _Result]] = defaultdict(dict)
    for row in snapshots.order_by("keyword__position", "position").values(
        "id", "keyword__text", "position", "doc_id", "name", "attributes", "image"
    ):
        text, doc_id = row["keyword__text"], row["doc_id"]
        if doc_id in results[text]:
            continue
        attributes = row["attributes"] if isinstance(row["attributes"], dict) else {}
        results[text][doc_id] = _Result(row["position"], row["name"], attributes, row["image"])
        by_snapshot[row["id"]] = (text, doc_id)
    decided = dict(
        SnapshotDecision.objects.filter(snapshot_id__in=by_snapshot).values_list(
            "snapshot_id", "grade"
        )
    )
    grades = (
        FeedbackSlot.objects.filter(snapshot_id__in=by_snapshot, grade__isnull=False)
        .by_people()
        .values_list("snapshot_id", "grade")
    )
    for snapshot_id, grade in grades:
        if snapshot_id not in decided and grade is not None:
            text, doc_id = by_snapshot[snapshot_id]
            results[text][doc_id].people.append(grade)
    for snapshot_id, grade in decided.items():
        text, doc_id = by_snapshot[snapshot_id]
        results[text][doc_id].people = [grade]
    return results


def _items(
    gold: GoldSet, sampled: list[str], base: Evaluation, other: Evaluation | None
) -> list[GoldItem]:
    in_base = _results(base, sampled)
    in_other = _results(other, sampled) if other else {}
    items = []
    for index, text in enumerate(sampled):
        base_results, other_results = in_base.get(text, {}), in_other.get(text, {})
        for doc_id in [*base_results, *(d for d in other_results if d not in base_results)]:
            first, second = base_results.get(doc_id), other_results.get(doc_id)
            shown = first or second
            assert shown is not None
            people = (first.people if first and first.people else None) or (
                second.people if second else []
            )
            if not people:
                continue  # nobody graded it: nothing to calibrate against
            items.append(
                GoldItem(
                    gold_set=gold,
                    keyword_index=index,
                    keyword=text,
                    doc_id=doc_id,
                    title=shown.title,
                    fields=shown.fields,
                    image=shown.image,
                    people_grades=sorted(people),
                    baseline_position=first.position if first else None,
                    candidate_position=second.position if second else None,
                )
            )
    return items


# --- Checking what was given ----------------------------------------------------------


def _name(value: Any, problems: list[str]) -> str:
    if not isinstance(value, str) or not value.strip():
        problems.append("name: required")
        return ""
    if len(value.strip()) > NAME_MAX:
        problems.append(f"name: at most {NAME_MAX} characters")
    return value.strip()


def _whole(name: str, value: Any, low: int, high: int, problems: list[str]) -> int | None:
    number = parse_int(value, low, high)
    if number is None:
        problems.append(f"{name}: a whole number from {low} to {high:,}")
        return None
    return number


def _evaluation(team: Team, name: str, value: Any, problems: list[str]) -> Evaluation | None:
    if value in (None, ""):
        problems.append(f"{name}: required")
        return None
    number = _whole(name, value, 1, SEED_MAX, [])
    evaluation = (
        Evaluation.objects.filter(team=team, id=number).first() if number is not None else None
    )
    if evaluation is None:
        problems.append(f"{name}: the team has no evaluation {str(value)[:40]!r}")
    return evaluation
