"""Click models fitted to imported logs find the relevance the clicks were drawn from:
a million UBI events simulated from a known position-based model, and from a known
dynamic Bayesian network, go through the import into the database, and the models
fitted from the stored log order each query's documents as the truth does."""

import numpy as np
import pytest
from scipy.stats import kendalltau

from apps.behaviour.fitting import log_counts, log_estimates
from apps.behaviour.importing import click_log_import
from apps.engine import clicks

from .click_simulation import DOCS, QUERIES, cascade_log, doc_id, position_based_log, query_text

pytestmark = pytest.mark.django_db

EVENTS = 1_000_000
EXAMINATION = np.array([1.0, 0.85, 0.7, 0.6, 0.5, 0.42, 0.36, 0.3, 0.25, 0.2])


def imported(team, name, simulated):
    with simulated.queries.open("rb") as queries, simulated.events.open("rb") as events:
        return click_log_import(
            team=team, user=None, name=name, file_format="ubi", queries=queries, events=events
        )


def mean_tau(truth: np.ndarray, estimates: clicks.Estimates) -> float:
    """Kendall's tau between each query's true and fitted order, averaged over queries."""
    taus = []
    for query in range(QUERIES):
        fitted = [estimates[(query_text(query), doc_id(query, doc))].value for doc in range(DOCS)]
        taus.append(kendalltau(truth[query], fitted).statistic)
    return float(np.mean(taus))


def test_the_position_based_model_fitted_to_an_imported_log_recovers_relevance_and_examination(
    team_a, tmp_path
):
    simulated = position_based_log(tmp_path, seed=20150101, events=EVENTS, examination=EXAMINATION)
    assert abs(simulated.events_written - EVENTS) < EVENTS // 100

    log = imported(team_a, "PBM", simulated)

    assert log.problem_count == 0
    estimates = log_estimates(log, "pbm")
    assert mean_tau(simulated.relevance, estimates) >= 0.8
    fit = clicks.pbm(log_counts(log))
    fitted = np.array([fit.examination[rank] for rank in range(1, DOCS + 1)])
    assert np.abs(fitted - EXAMINATION).max() < 0.03


def test_the_dbn_fitted_to_an_imported_log_recovers_the_relevance_order(team_a, tmp_path):
    rng = np.random.default_rng(20090420)
    attractiveness = rng.uniform(0.1, 0.9, (QUERIES, DOCS))
    satisfaction = rng.uniform(0.1, 0.9, (QUERIES, DOCS))
    simulated = cascade_log(
        tmp_path,
        seed=7,
        events=EVENTS,
        attractiveness=attractiveness,
        satisfaction=satisfaction,
        continuation=0.9,
    )
    assert abs(simulated.events_written - EVENTS) < EVENTS // 100

    log = imported(team_a, "DBN", simulated)

    assert log.problem_count == 0
    assert mean_tau(simulated.relevance, log_estimates(log, "dbn")) >= 0.8
