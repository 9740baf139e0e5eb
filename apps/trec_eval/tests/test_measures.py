"""trec_eval's names come from each metric's definition in apps/engine/metrics.py: the
line names and the -m names read that one table (a metric list's names too:
apps/evaluations/tests/test_metric_list_names.py)."""

import pytest

from apps.engine import WHOLE_LIST, EngineError
from apps.engine.metrics import trec_eval_metrics
from apps.trec_eval.measures import WITH_CUTOFFS, measure_name, requested_metrics


@pytest.mark.parametrize("metric", trec_eval_metrics(), ids=lambda metric: metric.id)
def test_every_trec_eval_name_of_the_registry_is_read_everywhere(metric):
    names = metric.trec_eval
    if names.whole_list is not None:
        assert measure_name(metric.id, WHOLE_LIST) == names.whole_list
    if names.at_cutoff is not None:
        assert measure_name(metric.id, 10) == names.at_cutoff.format(k=10)
        stem = names.at_cutoff.removesuffix("_{k}")
        assert WITH_CUTOFFS[stem] == metric.id
        assert requested_metrics([f"{stem}.10"]) == [(metric.id, 10)]


def test_a_metric_relevo_does_not_have_has_no_line_name():
    with pytest.raises(EngineError, match="ndcg_gain"):
        measure_name("ndcg_gain", 10)
