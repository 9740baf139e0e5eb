"""A lead adds, renames and removes a pending evaluation's keywords.

Only while the evaluation is pending and not running its keywords, as for its settings
(editing.py): graders get none of its results then, so no grade arrives while a keyword
changes, and no worker is writing results.

- Add: after the existing keywords, trimmed, blanks and repeats skipped
  (services.keywords_add), at most MAX_ADDED_AT_ONCE at a time. With a search model
  they run at the next start or resume, which runs every keyword not yet run.
- Rename: trimmed, 1 to 500 characters, not another keyword's text. Its results were the
  search system's answer to the old text, so they go, with their grades and metric
  values, and the keyword runs again at the next start or resume. Without a search
  model nothing would bring results back: a keyword with (imported) results can only be
  removed, and imported again.
- Remove: the keyword with its results, grades and metric values.

Results that go take their slots out of the evaluation's counts under its row lock (the
pipeline moves them under the same lock). A renamed keyword that had metric values is
scored again as after a grade (pipeline.grades_changed: its judgements changed), which
moves the means from its old values to none; a removed one leaves no row to move them
from, so the evaluation is recomputed whole (pipeline.setup_changed).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from apps import engine
from apps.core.errors import InvalidInput, InvalidState
from apps.evaluations.models import Evaluation, FeedbackSlot, Keyword, Status, UnretrievedJudgement
from apps.evaluations.services import KEYWORD_LIMIT, keywords_add
from apps.scoring.models import KeywordMetric
from apps.scoring.pipeline import grades_changed, setup_changed

# What a run of the keyword wrote, cleared so that the next start runs it again.
RUN_FIELDS = (
    "executed_at",
    "failed",
    "http_status",
    "execution_message",
    "execution_ms",
    "attempts",
)
# Keywords added in one go: a few thousand lines from a spreadsheet, not a whole import.
MAX_ADDED_AT_ONCE = 10_000


def _lock_pending(evaluation_id: int) -> Evaluation:
    """The evaluation's row, locked (before any keyword's: the pipeline's lock order),
    if its keywords may change now."""
    current = Evaluation.objects.select_for_update().get(id=evaluation_id)
    if current.status != Status.PENDING or current.fetching:
        state = "running its keywords" if current.fetching else current.status
        raise InvalidState(f"only a pending evaluation's keywords can change; this one is {state}")
    return current


@transaction.atomic
def evaluation_keywords_add(*, evaluation: Evaluation, texts: Sequence[str]) -> list[Keyword]:
    """Add keywords after the existing ones; those the evaluation has already are skipped.
    Returns those added."""
    if len(texts) > MAX_ADDED_AT_ONCE:
        raise InvalidInput([f"keywords: at most {MAX_ADDED_AT_ONCE} at once (got {len(texts)})"])
    current = _lock_pending(evaluation.id)
    return keywords_add(evaluation=current, texts=texts)


@transaction.atomic
def keyword_rename(*, keyword: Keyword, text: str) -> Keyword:
    """Give the keyword a new text; its results, grades and values go (module docstring)."""
    evaluation = _lock_pending(keyword.evaluation_id)
    current = Keyword.objects.select_for_update().get(id=keyword.id)
    text = text.strip()
    if not text:
        raise InvalidInput(["keyword: required"])
    if len(text) > KEYWORD_LIMIT:
        raise InvalidInput([f"keyword: at most {KEYWORD_LIMIT} characters (got {len(text)})"])
    if text == current.text:
        return current
    if Keyword.objects.filter(evaluation=evaluation, text=text).exclude(id=current.id).exists():
        raise InvalidInput([f"keyword: '{text}' is already a keyword of this evaluation"])
    has_results = current.snapshots.exists() or current.unretrieved.exists()
    if has_results and evaluation.search_model_id is None:
        raise InvalidState(
            f"'{current.text}' has imported results, which belong to its text: remove it "
            "and import the new keyword's results instead"
        )
    had_values = _has_values(current)
    _drop_results(evaluation, current)
    current.text = text
    # Run again at the next start or resume, as a keyword never run.
    current.executed_at = None
    current.failed = False
    current.http_status = None
    current.execution_message = ""
    current.execution_ms = None
    current.attempts = 0
    current.save(update_fields=[*RUN_FIELDS, "text"])
    if had_values:
        # Its judgements are gone: scored again, its values become none and the means
        # move by the change, as for any grade (the keyword's row still holds the values
        # to move from, and the version guard keeps out a worker's older result).
        grades_changed(keyword_ids=[current.id])
    return current


@transaction.atomic
def keyword_remove(*, keyword: Keyword) -> None:
    """Remove the keyword with its results, grades and metric values."""
    evaluation = _lock_pending(keyword.evaluation_id)
    current = Keyword.objects.select_for_update().get(id=keyword.id)
    had_values = _has_values(current)
    _drop_results(evaluation, current)
    current.delete()  # its metric values with it
    if had_values:
        # No keyword is left to move the means from: they are recomputed whole.
        setup_changed(evaluation_id=evaluation.id)


def _has_values(keyword: Keyword) -> bool:
    return KeywordMetric.objects.filter(keyword=keyword).exists()


def _drop_results(evaluation: Evaluation, keyword: Keyword) -> None:
    """Delete the keyword's results (their slots, grades, skips and decisions go with
    them) and its judged documents not retrieved, and take its slots out of the
    evaluation's counts at once (graded never more than total)."""
    slots = FeedbackSlot.objects.filter(keyword=keyword).count()
    keyword.snapshots.all().delete()
    UnretrievedJudgement.objects.filter(keyword=keyword).delete()
    # The evaluation's graded count is the sum of its keywords' scored counts; with the
    # keyword's own set to 0 the pipeline finds no graded change left to count.
    graded = evaluation.graded_slots - keyword.graded_slots
    total = evaluation.total_slots - slots
    Evaluation.objects.filter(id=evaluation.id).update(
        graded_slots=graded, total_slots=total, progress=engine.progress(graded, total)
    )
    Keyword.objects.filter(id=keyword.id).update(graded_slots=0)
    keyword.graded_slots = 0
