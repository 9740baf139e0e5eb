"""Relevo's scoring engine: pure Python (plus numpy), no Django.

The authoritative definitions are in the metric specification (metrics.md); this
package follows its sections:

- ``scales``        the binary, graded and detail scales (section 1)
- ``transformers``  mapping grades between scales (section 2)
- ``aggregate``     stage 1, one value per snapshot (section 3)
- ``decisions``     a lead's decision standing in for a snapshot's grades in stage 1
- ``conventions``   the profiles, cutoffs and condensed lists every metric shares
- ``metrics``       the metric registry: one definition per metric, its label, family,
                    formulas, explainer steps, additivity and trec_eval names (section 4)
- ``formulas``      stage 2 for one keyword, each metric's formula
- ``keyword``       one keyword from raw grades to all its metrics (``metric_value``)
- ``batch``         the same for many keywords at once, vectorised with numpy
                    (its formulas in ``batch_formulas``)
- ``evaluation``    means over keywords and grading progress
- ``clicks``        click models: CTR, COEC, the position-based model and the DBN,
                    fitted from aggregated click counts (``click_grades`` maps their
                    estimates to a scale's grades)
"""

from .aggregate import snapshot_value
from .batch import BatchScores, score_keywords_batch
from .conventions import CONDENSED, MAX_CUTOFF, PROFILES, WHOLE_LIST, split_condensed
from .decisions import with_decisions
from .errors import EngineError
from .evaluation import mean_from_sum, mean_of, metric_mean, progress
from .keyword import KeywordScore, metric_value, score_keyword
from .metrics import COVERAGE, METRICS, MetricDef, get_metric, metric_label, metric_scale
from .scales import SCALES, Scale, custom_scale, custom_scale_problems, get_scale
from .transformers import default_rules, resolve_rules, validate_rules

__all__ = [
    "CONDENSED",
    "COVERAGE",
    "MAX_CUTOFF",
    "METRICS",
    "PROFILES",
    "SCALES",
    "WHOLE_LIST",
    "BatchScores",
    "EngineError",
    "KeywordScore",
    "MetricDef",
    "Scale",
    "default_rules",
    "custom_scale",
    "custom_scale_problems",
    "get_metric",
    "get_scale",
    "mean_from_sum",
    "mean_of",
    "metric_mean",
    "metric_label",
    "metric_scale",
    "metric_value",
    "progress",
    "resolve_rules",
    "score_keyword",
    "score_keywords_batch",
    "snapshot_value",
    "split_condensed",
    "validate_rules",
    "with_decisions",
]
