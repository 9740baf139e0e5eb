"""Stored behaviour logs built for tests: counts whose click rates the test chooses."""

from apps.behaviour.models import ClickCount, ClickLog

KEYWORDS = {f"keyword {n}": 4 for n in range(8)}


def people_grade_of(position: int) -> int:
    """People's grade of the result at `position` (1 to 4): the top one Perfect."""
    return 4 - position


def log_with_rates(team, rates, *, name="October", shown=100, first="2026-10-01T08:00:00Z"):
    """A stored log where document `doc` of `query` was shown `shown` times at rank 1 and
    clicked at `rates[(query, doc)]` of them."""
    log = ClickLog.objects.create(
        team=team,
        name=name,
        file_format="csv",
        first_event_at=first,
        last_event_at="2026-10-31T23:00:00Z",
    )
    ClickCount.objects.bulk_create(
        ClickCount(
            log=log,
            query=query,
            doc_id=doc,
            rank=1,
            impressions=shown,
            clicks=round(rate * shown),
        )
        for (query, doc), rate in rates.items()
    )
    return log


def rates_following_people(texts):
    """Click rates that rise with people's grade: 0.05, 0.25, 0.45, 0.65 for 0 to 3."""
    return {
        (text, f"{text}-doc-{position}"): 0.05 + 0.2 * people_grade_of(position)
        for text in texts
        for position in range(1, 5)
    }
