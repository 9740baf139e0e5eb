"""Measure a claim's cost for a grader who is far ahead of the others (strategy 3)."""

import time
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from apps.accounts.models import Membership
from apps.evaluations.models import FeedbackSlot
from apps.judging.services import slot_claim_next
from tests.factories import make_evaluation, make_grader


@pytest.mark.parametrize("ahead", [10, 1000, 10000])
@pytest.mark.django_db
def test_bench(postgres, ahead):
    ev = make_evaluation(strategy=3, keywords={f"k{n}": 10 for n in range(1200)})
    fast = Membership.objects.select_related("user").get(user=make_grader(ev.team), team=ev.team)
    fresh = Membership.objects.select_related("user").get(user=make_grader(ev.team), team=ev.team)
    ids = list(
        FeedbackSlot.objects.filter(evaluation=ev, index=0)
        .order_by("keyword_position", "snapshot_position")
        .values_list("id", "snapshot_id")[:ahead]
    )
    FeedbackSlot.objects.filter(id__in=[i for i, _ in ids]).update(grader=fast.user, grade=1)
    FeedbackSlot.objects.filter(snapshot_id__in=[s for _, s in ids]).update(snapshot_started=True)
    with connection.cursor() as c:
        c.execute("ANALYZE evaluations_feedbackslot")
    for m in (fast, fresh):
        t = time.perf_counter()
        with CaptureQueriesContext(connection) as q:
            slot_claim_next(membership=m)
        dt = time.perf_counter() - t
        slow = max(q.captured_queries, key=lambda x: float(x["time"]))
        print(
            f"\nahead={ahead} {'fast' if m is fast else 'fresh'}: {dt * 1000:.1f} ms, slowest query {float(slow['time']) * 1000:.1f} ms"
        )


@pytest.mark.django_db
def test_explain(postgres):
    ev = make_evaluation(strategy=3, keywords={f"k{n}": 10 for n in range(300)})
    fast = Membership.objects.select_related("user").get(user=make_grader(ev.team), team=ev.team)
    ids = list(
        FeedbackSlot.objects.filter(evaluation=ev, index=0)
        .order_by("keyword_position", "snapshot_position")
        .values_list("id", "snapshot_id")[:2000]
    )
    FeedbackSlot.objects.filter(id__in=[i for i, _ in ids]).update(grader=fast.user, grade=1)
    FeedbackSlot.objects.filter(snapshot_id__in=[s for _, s in ids]).update(snapshot_started=True)
    with connection.cursor() as c:
        c.execute("ANALYZE evaluations_feedbackslot")
    with CaptureQueriesContext(connection) as q:
        slot_claim_next(membership=fast)
    with connection.cursor() as c:
        for x in q.captured_queries:
            if "evaluations_feedbackslot" in x["sql"] and x["sql"].startswith("SELECT"):
                print("\n", x["sql"][:3000])
                c.execute("EXPLAIN (ANALYZE, COSTS OFF) " + x["sql"])
                print("\n".join(r[0] for r in c.fetchall()))
