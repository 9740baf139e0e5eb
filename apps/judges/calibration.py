"""Calibrating a judge on a gold set (gold_sets.py): the judge grades the set's results
with the model and prompt version it has now, and its grades are measured against
people's (calibration_figures.py). Nothing is written to any evaluation.

A calibration runs in one worker task (tasks.py): the results go keyword by keyword,
`results_per_call` to a call, `calls_at_once` calls at a time from threads (asking.py
touches no database; the task writes what comes back). Judgements already paid for
come from the team's cache; a rate limit or an outage is waited out and asked again (up
to RETRIES times, then listed with why); a rejected key or address stops it with the
reason; the judge's budgets hold per calibration as per run. A worker that dies leaves
the calibration running without news: the beat sweep (tasks.py) queues it again after
STALLED_AFTER, and it carries on with what is still ungraded (one grade per result and
calibration, by constraint).

A team may require a minimum agreement before a judge grades live evaluations
(JudgeGate): `gate_check` is what starting or resuming a run asks.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar, cast

from django.core.cache import cache
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps import engine
from apps.accounts.models import Team, User
from apps.core.errors import InvalidInput, InvalidState, NotFound
from apps.evaluations.scales import scale_of

from .asking import (
    Asked,
    ask,
    budget_reached,
    judgement_key,
    members_asked,
    most_spent,
    not_ready,
)
from .calibration_figures import (
    Ceiling,
    Figure,
    JudgeFigures,
    Pair,
    alpha_gap,
    judge_figures,
    people_ceiling,
)
from .calibration_verdict import CalibrationVerdict, calibration_verdict
from .call_log import log_call
from .combining import FITTED, MEDIAN
from .images import result_shown
from .models import (
    CachedJudgement,
    CalibrationGrade,
    CalibrationRun,
    CalibrationStatus,
    GoldItem,
    GoldSet,
    Judge,
    JudgeGate,
)
from .panel_figures import (
    MemberFigures,
    VoteAgreement,
    Voted,
    by_members,
    member_figures,
    vote_agreement,
    voted,
)
from .panels import fitted_weights_shown
from .prompting import JudgeTask, Prompt, default_prompt
from .prompts import pinned_prompt, version_for_new_run
from .providers import Failure
from .team_rule import refusal

REPORT_CACHE_SECONDS = 24 * 3600
RETRIES = 3
BACKOFF_BASE_S = 1.0  # doubles with each try
MAX_WAIT_S = 30.0
STALLED_AFTER = timedelta(minutes=2)
STOPPING_FAILURES = frozenset({Failure.REJECTED, Failure.REFUSED})
# Why a fitted panel calibrated before its fit has no grade of its own on a result.
UNFITTED = (
    "no grade of the panel's own: its weights are not fitted yet (fit them on this "
    "calibration, from its members' votes)"
)


def gold_scale(gold_set: GoldSet) -> engine.Scale:
    return scale_of(gold_set.scale, gold_set.scale_levels)


# --- Starting and stopping ------------------------------------------------------------


def calibration_create(
    *,
    gold_set: GoldSet,
    judge: Judge,
    created_by: User | None = None,
    with_images: bool | None = None,
) -> CalibrationRun:
    """A new calibration, running; the caller queues its task (controls.py). The judge
    is shown the results' images as it is set to (`with_images` None), or as asked: a
    lead measures a judge with and without them on the same gold set."""
    if judge.team_id != gold_set.team_id:
        raise NotFound("No such judge.")
    if CalibrationRun.objects.filter(
        gold_set=gold_set, judge=judge, status=CalibrationStatus.RUNNING
    ).exists():
        raise InvalidState(f"{judge.name} is already being calibrated on this gold set")
    version = version_for_new_run(judge)
    return CalibrationRun.objects.create(
        gold_set=gold_set,
        judge=judge,
        with_images=judge.shows_images() if with_images is None else with_images,
        model_name=judge.model_name,
        prompt=version,
        prompt_version=version.version if version else _default_version(gold_set),
        created_by=created_by,
        seen_at=timezone.now(),
    )


def calibration_reopen_failures(*, run: CalibrationRun) -> int:
    """Make the results the calibration could not grade ungraded again, and the
    calibration running; how many. The caller queues its task (controls.py)."""
    if run.status == CalibrationStatus.RUNNING:
        raise InvalidState("the calibration is still running")
    if run.judge_id is None:
        raise InvalidState("a judgement list is read, not asked: there is nothing to ask again")
    with transaction.atomic():
        retried, _ = CalibrationGrade.objects.filter(run=run, grade__isnull=True).delete()
        CalibrationRun.objects.filter(id=run.id).update(
            status=CalibrationStatus.RUNNING,
            note="",
            failed=F("failed") - retried,
            finished_at=None,
            alpha=None,
            seen_at=timezone.now(),
        )
    run.refresh_from_db()
    return retried


def calibration_cancel(*, run: CalibrationRun) -> None:
    stopped = CalibrationRun.objects.filter(id=run.id, status=CalibrationStatus.RUNNING).update(
        status=CalibrationStatus.STOPPED, note="cancelled by a lead", finished_at=timezone.now()
    )
    if not stopped:
        raise InvalidState(f"the calibration is {run.get_status_display().lower()}")
    run.refresh_from_db()


def stalled_calibrations() -> list[int]:
    """The running calibrations whose worker went quiet (it died), marked seen now: the
    caller queues them again."""
    stalled = list(
        CalibrationRun.objects.filter(
            status=CalibrationStatus.RUNNING, seen_at__lt=timezone.now() - STALLED_AFTER
        ).values_list("id", flat=True)
    )
    CalibrationRun.objects.filter(id__in=stalled).update(seen_at=timezone.now())
    return stalled


def _default_version(gold_set: GoldSet) -> str:
    return default_prompt(gold_scale(gold_set)).version


# --- Doing it -------------------------------------------------------------------------


def _judge(run: CalibrationRun) -> Judge:
    """The judge a calibration asks (a judgement list's is never executed)."""
    assert run.judge is not None, "a judgement list's calibration asks no one"
    return run.judge


@dataclass(frozen=True)
class _Batch:
    task: JudgeTask
    items: dict[str, GoldItem]  # result id in the call -> item


def calibration_execute(*, run_id: int) -> None:
    """Grade every gold item of the calibration not graded yet (see the docstring)."""
    run = CalibrationRun.objects.select_related("judge", "gold_set", "prompt").get(id=run_id)
    if run.status != CalibrationStatus.RUNNING:
        return
    judge, gold_set = _judge(run), run.gold_set
    scale = gold_scale(gold_set)
    prompt = pinned_prompt(run.prompt, scale)
    batches = _from_cache(run, prompt, list(_batches(run, scale)))
    width = max(1, judge.calls_at_once)
    asked = 0
    while asked < len(batches):
        why = _why_stop(run)
        chunk: list[_Batch] = []
        if not why:
            chunk, why = _paid_by_the_calls_budget(
                judge, prompt, run.calls, batches[asked:][:width]
            )
        if why:
            _stop(run, why)
            return
        with ThreadPoolExecutor(max_workers=len(chunk)) as pool:
            answers = list(pool.map(lambda batch: _ask_with_retries(judge, prompt, batch), chunk))
        for batch, tries in zip(chunk, answers, strict=True):
            stop = _store(run, prompt, batch, tries)
            if stop:
                _stop(run, stop)
                return
        asked += len(chunk)
        CalibrationRun.objects.filter(id=run.id).update(seen_at=timezone.now())
    _finish(run, scale)


def _paid_by_the_calls_budget(
    judge: Judge, prompt: Prompt, spent: int, chunk: list[_Batch]
) -> tuple[list[_Batch], str]:
    """The first asks of `chunk` that the judge's budget of calls still pays for, all
    of them; a panel's or a sampled judge's ask makes several calls, and none may pass
    the budget. None, and why, when not even the first fits."""
    if judge.budget_calls is None:
        return chunk, ""
    left = judge.budget_calls - spent
    paid: list[_Batch] = []
    for batch in chunk:
        calls = most_spent(judge, prompt, batch.task).calls
        if calls > left:
            break
        left -= calls
        paid.append(batch)
    if paid:
        return paid, ""
    calls = most_spent(judge, prompt, chunk[0].task).calls
    return [], (
        f"the budget of {judge.budget_calls} calls is reached: the next ask makes {calls} "
        f"calls, {max(left, 0)} are left"
    )


def _batches(run: CalibrationRun, scale: engine.Scale) -> Iterator[_Batch]:
    done = CalibrationGrade.objects.filter(run=run).values("item_id")
    items = GoldItem.objects.filter(gold_set=run.gold_set).exclude(id__in=done)
    by_keyword: dict[int, list[GoldItem]] = defaultdict(list)
    for item in items.order_by("keyword_index", "id"):
        by_keyword[item.keyword_index].append(item)
    size = max(1, _judge(run).results_per_call)
    for keyword_items in by_keyword.values():
        for start in range(0, len(keyword_items), size):
            part = keyword_items[start : start + size]
            ids = {f"r{number}": item for number, item in enumerate(part, start=1)}
            task = JudgeTask(
                keyword=part[0].keyword,
                results=[
                    result_shown(
                        rid, item.title, item.fields, item.image, sees_images=run.with_images
                    )
                    for rid, item in ids.items()
                ],
                scale=scale,
                guidelines=run.gold_set.guidelines,
            )
            yield _Batch(task, ids)


def _from_cache(run: CalibrationRun, prompt: Prompt, batches: list[_Batch]) -> list[_Batch]:
    """Grade from the team's cache what was already paid for; the batches left to ask."""
    judge = _judge(run)
    keys = {
        (index, rid): judgement_key(judge, prompt, replace(batch.task, results=[]), result)
        for index, batch in enumerate(batches)
        for rid, result in ((r.id, r) for r in batch.task.results)
    }
    cached = {
        entry.key: entry
        for entry in CachedJudgement.objects.filter(team_id=judge.team_id, key__in=keys.values())
    }
    hits: list[CalibrationGrade] = []
    left: list[_Batch] = []
    for index, batch in enumerate(batches):
        remaining = {}
        for rid, item in batch.items.items():
            entry = cached.get(keys[(index, rid)])
            if entry is None:
                remaining[rid] = item
            else:
                hits.append(
                    CalibrationGrade(
                        run=run,
                        item=item,
                        grade=entry.grade,
                        reason=entry.reason,
                        cached=True,
                        agreement=entry.agreement,
                        votes=entry.votes,
                    )
                )
        if remaining:
            results = [r for r in batch.task.results if r.id in remaining]
            left.append(_Batch(replace(batch.task, results=results), remaining))
    CalibrationGrade.objects.bulk_create(hits, ignore_conflicts=True)
    CalibrationRun.objects.filter(id=run.id).update(
        graded=F("graded") + len(hits), from_cache=F("from_cache") + len(hits)
    )
    return left


def _ask_with_retries(judge: Judge, prompt: Prompt, batch: _Batch) -> list[Asked]:
    """Every try of one call: the last one answered, or failed for good."""
    tries: list[Asked] = []
    for attempt in range(RETRIES):
        asked = _ask(judge, prompt, batch.task)
        tries.append(asked)
        if not asked.outcome.retryable or attempt == RETRIES - 1:
            break
        wait = asked.outcome.retry_after_s
        time.sleep(min(MAX_WAIT_S, wait if wait is not None else BACKOFF_BASE_S * 2.0**attempt))
    return tries


def _ask(judge: Judge, prompt: Prompt, task: JudgeTask) -> Asked:
    """The judge's grades of the task, asked as a run asks them; but a fitted panel
    before its fit has no grade yet, and its calibration is what its weights are fitted
    on: its members are asked, for their votes alone (_store keeps no grade of it)."""
    if judge.is_panel and not_ready(judge):
        return members_asked(judge, prompt, task, MEDIAN)
    return ask(judge, prompt, task)


def _store(run: CalibrationRun, prompt: Prompt, batch: _Batch, tries: list[Asked]) -> str:
    """Log every try, keep the grades (with a panel's or a sampled judge's votes), the
    reasons of what failed, and the cache's new entries; why the calibration must stop
    ("" to go on)."""
    judge = _judge(run)
    # A fitted panel before its fit: its members' votes are kept, with no grade of its own.
    unfitted = judge.is_panel and bool(not_ready(judge))
    asked = tries[-1]
    failure = asked.outcome.failure
    whole_call = f"{failure.value}: {asked.outcome.error}" if failure is not None else ""
    context = replace(batch.task, results=[])
    with transaction.atomic():
        calls = [log_call(each, judge, run.prompt_version, calibration=run) for each in tries]
        if failure is not None and failure in STOPPING_FAILURES:
            _count(run, tries, graded=0, failed=0)
            return whole_call
        grades, paid_for = [], []
        for result in batch.task.results:
            item = batch.items[result.id]
            judged = asked.judged.get(result.id)
            if judged is None:
                why = whole_call or asked.failed.get(result.id, "no grade in the answer")
                grades.append(CalibrationGrade(run=run, item=item, failure=why[:2000]))
                continue
            votes = list(judged.votes) or None
            if unfitted:
                why = UNFITTED
                grades.append(CalibrationGrade(run=run, item=item, failure=why, votes=votes))
                continue
            grades.append(
                CalibrationGrade(
                    run=run,
                    item=item,
                    grade=judged.grade,
                    reason=judged.reason,
                    agreement=judged.agreement,
                    votes=votes,
                )
            )
            paid_for.append(
                CachedJudgement(
                    team_id=judge.team_id,
                    key=judgement_key(judge, prompt, context, result),
                    grade=judged.grade,
                    reason=judged.reason,
                    confidence=judged.confidence,
                    agreement=judged.agreement,
                    votes=votes,
                    call=calls[-1],
                )
            )
        CalibrationGrade.objects.bulk_create(grades, ignore_conflicts=True)
        CachedJudgement.objects.bulk_create(paid_for, ignore_conflicts=True)
        _count(run, tries, graded=len(paid_for), failed=len(grades) - len(paid_for))
    return ""


def _count(run: CalibrationRun, tries: list[Asked], *, graded: int, failed: int) -> None:
    CalibrationRun.objects.filter(id=run.id).update(
        calls=F("calls") + sum(a.calls_sent for a in tries),
        input_tokens=F("input_tokens") + sum(a.outcome.input_tokens for a in tries),
        cached_input_tokens=F("cached_input_tokens")
        + sum(a.outcome.cached_input_tokens for a in tries),
        output_tokens=F("output_tokens") + sum(a.outcome.output_tokens for a in tries),
        cost=F("cost") + sum(a.cost for a in tries),
        graded=F("graded") + graded,
        failed=F("failed") + failed,
    )


def _why_stop(run: CalibrationRun) -> str:
    run.refresh_from_db()
    if run.status != CalibrationStatus.RUNNING:
        return run.note or "stopped"
    tokens = run.input_tokens + run.output_tokens
    return budget_reached(_judge(run), calls=run.calls, tokens=tokens, cost=run.cost)


def _stop(run: CalibrationRun, why: str) -> None:
    CalibrationRun.objects.filter(id=run.id, status=CalibrationStatus.RUNNING).update(
        status=CalibrationStatus.STOPPED, note=why[:500], finished_at=timezone.now()
    )


def _finish(run: CalibrationRun, scale: engine.Scale) -> None:
    figures = judge_figures(gold_pairs(run.gold_set, run), scale, samples=0)
    CalibrationRun.objects.filter(id=run.id, status=CalibrationStatus.RUNNING).update(
        status=CalibrationStatus.FINISHED,
        alpha=figures.alpha.value,
        finished_at=timezone.now(),
        seen_at=timezone.now(),
    )


# --- Reading it -----------------------------------------------------------------------


def gold_pairs(gold_set: GoldSet, run: CalibrationRun | None) -> list[Pair]:
    """The gold items as the figures take them, with the run's grades (None: no run)."""
    grades: dict[int, int | None] = {}
    if run is not None:
        grades = dict(CalibrationGrade.objects.filter(run=run).values_list("item_id", "grade"))
    return [
        Pair(
            item.keyword_index,
            tuple(item.people_grades),
            grades.get(item.id),
            item.baseline_position,
            item.candidate_position,
        )
        for item in GoldItem.objects.filter(gold_set=gold_set).order_by("keyword_index", "id")
    ]


def gold_votes(gold_set: GoldSet, run: CalibrationRun) -> list[Voted]:
    """The votes of a panel's members or a sampled judge's samples on each gold item, in
    gold_pairs' order (none where the calibration kept none)."""
    kept = {
        item_id: (votes, agreement)
        for item_id, votes, agreement in CalibrationGrade.objects.filter(
            run=run, votes__isnull=False
        ).values_list("item_id", "votes", "agreement")
    }
    items = GoldItem.objects.filter(gold_set=gold_set).order_by("keyword_index", "id")
    return [
        voted(keyword, *kept.get(item_id, ((), None)))
        for item_id, keyword in items.values_list("id", "keyword_index")
    ]


@dataclass(frozen=True)
class VotesReport:
    """Of a panel's calibration: each member's figures against people and the members'
    agreement with each other; of a sampled judge's: its samples' agreement."""

    members: list[MemberFigures] = field(default_factory=list)
    member_agreement: VoteAgreement | None = None
    sample_agreement: VoteAgreement | None = None


def votes_report(
    gold_set: GoldSet, run: CalibrationRun, scale: engine.Scale, *, samples: int
) -> VotesReport:
    """The calibration's votes measured (an empty report when it kept none)."""
    items = gold_votes(gold_set, run) if run.judge_id else []
    if not any(item.votes for item in items):
        return VotesReport()
    agreement = vote_agreement(items, scale, samples=samples)
    if not by_members(items):
        return VotesReport(sample_agreement=agreement)
    pairs = gold_pairs(gold_set, run)
    members = member_figures(pairs, items, scale, profile=gold_set.profile, samples=samples)
    return VotesReport(members, member_agreement=agreement)


@dataclass(frozen=True)
class RunReport:
    run: CalibrationRun
    figures: JudgeFigures
    stale: str  # why its figures no longer describe the judge ("" when they do)
    verdict: CalibrationVerdict | None = None  # None until the calibration is over
    votes: VotesReport = field(default_factory=VotesReport)
    # A panel's weights fitted on this calibration: (member id, name, weight) each.
    fitted_weights: list[tuple[int, str, float]] = field(default_factory=list)

    @property
    def can_fit_weights(self) -> bool:
        judge = self.run.judge
        finished = self.run.status == CalibrationStatus.FINISHED
        return finished and judge is not None and judge.is_panel


@dataclass(frozen=True)
class GoldReport:
    gold_set: GoldSet
    scale: engine.Scale
    keywords: int
    items: int
    ceiling: Ceiling
    runs: list[RunReport]


def gold_report(gold_set: GoldSet, *, samples: int = 1_000) -> GoldReport:
    """People's ceiling and every calibration on the gold set, side by side.

    The bootstrap intervals take most of a second per calibration, and the page polls
    while one runs: the ceiling (the gold set is frozen) and a finished calibration's
    figures are computed once and kept in the cache; a running one's are shown without
    intervals until it finishes."""
    scale = gold_scale(gold_set)
    metrics = (
        [(str(name), int(k)) for name, k in gold_set.metrics] if gold_set.candidate_name else []
    )
    people = gold_pairs(gold_set, None)
    ceiling = _cached(
        f"judges:ceiling:{gold_set.id}:{gold_set.created_at.isoformat()}:{samples}",
        lambda: people_ceiling(people, scale, samples=samples),
    )
    reports = []
    runs = gold_set.runs.select_related("judge", "judge__prompt", "judgement_list__source")
    for run in runs.order_by("created_at", "id"):

        def figures(run: CalibrationRun = run, samples: int = samples) -> JudgeFigures:
            pairs = gold_pairs(gold_set, run)
            return judge_figures(
                pairs, scale, profile=gold_set.profile, metrics=metrics, samples=samples
            )

        def gap(run: CalibrationRun = run) -> Figure:
            return alpha_gap(gold_pairs(gold_set, run), scale, samples=samples)

        def votes(run: CalibrationRun = run, samples: int = samples) -> VotesReport:
            return votes_report(gold_set, run, scale, samples=samples)

        if run.status == CalibrationStatus.RUNNING:
            reports.append(
                RunReport(run, figures(samples=0), _stale(run, gold_set), votes=votes(samples=0))
            )
            continue
        finished = run.finished_at.isoformat() if run.finished_at else ""
        key = f"{run.id}:{finished}:{run.graded}:{run.failed}:{samples}"
        measured = _cached(f"judges:calibration:{key}", figures)
        verdict = calibration_verdict(
            measured.alpha, ceiling.alpha, _cached(f"judges:calibration-gap:{key}", gap)
        )
        reports.append(
            RunReport(
                run,
                measured,
                _stale(run, gold_set),
                verdict,
                votes=_cached(f"judges:calibration-votes:{key}", votes),
                fitted_weights=_fitted_on(run),
            )
        )
    return GoldReport(
        gold_set,
        scale,
        len({pair.keyword for pair in people}),
        len(people),
        ceiling,
        reports,
    )


def _fitted_on(run: CalibrationRun) -> list[tuple[int, str, float]]:
    """The panel's weights by member, when they were fitted on this calibration."""
    panel = run.judge
    if panel is None or not panel.is_panel or (panel.panel_fit or {}).get("calibration") != run.id:
        return []
    return [(member.id, member.name, weight) for member, weight in fitted_weights_shown(panel)]


Computed = TypeVar("Computed")


def _cached(key: str, compute: Callable[[], Computed]) -> Computed:
    """What `compute` gives, kept under `key` (keys name everything the value rests on,
    with the moment it was made: ids alone come back after a database is reset)."""
    found = cache.get(key)
    if found is None:
        found = compute()
        cache.set(key, found, REPORT_CACHE_SECONDS)
    return cast(Computed, found)


def _stale(run: CalibrationRun, gold_set: GoldSet) -> str:
    judge = run.judge
    if judge is None:
        return ""  # a list's grades never change
    if judge.panel_rule == FITTED and _fitted_since(judge, run):
        return "the panel's weights were fitted since"
    if judge.model_name != run.model_name:
        return f"the judge's model is now {judge.model_name}"
    version = version_for_new_run(judge)
    current = version.version if version else _default_version(gold_set)
    if current != run.prompt_version:
        return f"the judge's prompt is now {current}"
    return ""


def _fitted_since(panel: Judge, run: CalibrationRun) -> bool:
    """Whether the fitted panel's weights are newer than the calibration: it graded
    with others, or with none."""
    fitted_at = (panel.panel_fit or {}).get("fitted_at")
    return isinstance(fitted_at, str) and datetime.fromisoformat(fitted_at) > run.created_at


# --- The team's gate ------------------------------------------------------------------


def gate_set(*, team: Team, min_alpha: Any) -> JudgeGate:
    """Require at least `min_alpha` (0 to 1; None or "" for no requirement)."""
    value = None
    if min_alpha not in (None, ""):
        try:
            value = float(min_alpha)
        except (TypeError, ValueError):
            value = -1.0
        if isinstance(min_alpha, bool) or not 0.0 <= value <= 1.0:
            raise InvalidInput(["min_alpha: a number from 0 to 1, or empty for none"])
    gate, _ = JudgeGate.objects.update_or_create(team=team, defaults={"min_alpha": value})
    return gate


def gate_check(judge: Judge, prompt_version: str) -> None:
    """InvalidState unless the team's rule (team_rule.py) lets the judge grade with this
    prompt version."""
    why = refusal(judge, prompt_version)
    if why:
        raise InvalidState(why, field="judge")
