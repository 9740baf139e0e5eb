"""A keyword's information need (what its searcher wants; graders see it beside the
keyword) and the lead's notes on it. Either may change at any time: they move no grade
and no metric."""

from apps.core.errors import InvalidInput

from .models import Keyword, KeywordNotes

INFORMATION_NEED_MAX_LENGTH = 2000
NOTES_MAX_LENGTH = 5000


def keyword_notes_set(*, keyword: Keyword, information_need: str, notes: str) -> KeywordNotes:
    """Set both, trimmed; InvalidInput naming each that is too long (nothing saved)."""
    need, notes = (information_need or "").strip(), (notes or "").strip()
    problems = [
        f"{field}: at most {limit} characters ({len(text)} given)"
        for field, text, limit in (
            ("information_need", need, INFORMATION_NEED_MAX_LENGTH),
            ("notes", notes, NOTES_MAX_LENGTH),
        )
        if len(text) > limit
    ]
    if problems:
        raise InvalidInput(problems)
    written, _created = KeywordNotes.objects.update_or_create(
        keyword=keyword, defaults={"information_need": need, "notes": notes}
    )
    return written


def notes_of(keyword: Keyword) -> dict[str, str]:
    """The keyword's information need and notes ("" for none), from `keyword.notes`
    when it was read with it (select_related)."""
    try:
        written = keyword.notes
    except KeywordNotes.DoesNotExist:
        return {"information_need": "", "notes": ""}
    return {"information_need": written.information_need, "notes": written.notes}


def information_need_of(keyword_id: int) -> str:
    """The keyword's information need ("" without one): one read by primary key."""
    need = (
        KeywordNotes.objects.filter(keyword_id=keyword_id)
        .values_list("information_need", flat=True)
        .first()
    )
    return need or ""
