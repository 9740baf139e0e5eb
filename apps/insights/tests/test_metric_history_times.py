"""The evaluation page's metric history stands on a time axis: each point where its
minute is, so minutes without grading leave a gap instead of being squeezed out."""

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from apps.evaluations.models import EvaluationMetric, EvaluationMetricPoint
from tests.factories import client_for, make_evaluation

from .lead_pages import text

pytestmark = pytest.mark.django_db

START = datetime(2026, 4, 2, 9, 0, tzinfo=UTC)


def test_each_history_point_stands_where_its_minute_is(team_a, owner):
    evaluation = make_evaluation(team=team_a)
    ndcg = EvaluationMetric.objects.get(evaluation=evaluation, metric="ndcg")
    EvaluationMetricPoint.objects.bulk_create(
        EvaluationMetricPoint(evaluation_metric=ndcg, minute=START + timedelta(minutes=m), value=v)
        for m, v in [(0, 0.2), (1, 0.3), (10, 0.6)]
    )

    page = text(client_for(owner).get(f"/evaluations/{evaluation.id}/"))

    chart = json.loads(
        re.search(rf'<script id="history-{ndcg.id}" type="application/json">(.*?)</script>', page)
        .group(1)
    )  # fmt: skip
    assert chart["labels"] == ["2026-04-02 09:00", "2026-04-02 09:01", "2026-04-02 09:10"]
    start = START.timestamp() * 1000
    assert [time - start for time in chart["times"]] == [0, 60_000, 600_000]
