"""A metric list understands trec_eval's name of every metric that has one, as the
metric's definition in apps/engine/metrics.py gives it ("map", "P_10", "set_P")."""

import pytest

from apps.engine import WHOLE_LIST
from apps.engine.metrics import trec_eval_metrics
from apps.evaluations.metric_list import parse_metric_list


@pytest.mark.parametrize("metric", trec_eval_metrics(), ids=lambda metric: metric.id)
def test_every_trec_eval_name_of_the_registry_is_understood(metric):
    names = metric.trec_eval
    if names.whole_list is not None:
        assert parse_metric_list(names.whole_list) == [(metric.id, WHOLE_LIST)]
        assert parse_metric_list(f"{names.whole_list}@5") == [(metric.id, 5)]
    if names.at_cutoff is not None:
        assert parse_metric_list(names.at_cutoff.format(k=10)) == [(metric.id, 10)]
        stem = names.at_cutoff.removesuffix("_{k}")
        assert parse_metric_list(f"{stem}@20, {stem}") == [(metric.id, 20), (metric.id, WHOLE_LIST)]
