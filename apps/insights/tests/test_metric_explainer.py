"""The metric explainer: a click on a keyword's value shows how it was computed."""

import html
import re

import pytest
from django.test import TestCase

from apps.evaluations.models import UnretrievedJudgement
from apps.judging.judgements import Giver, slot_judge
from apps.scoring.models import KeywordMetric
from tests.factories import client_for, make_evaluation, slots_of

from .lead_pages import grade_slots, text

pytestmark = pytest.mark.django_db


@pytest.fixture
def evaluation(team_a):
    """A trec evaluation: 'red shoes' graded [3, 0, -, 2], a 3 the search did not return."""
    evaluation = make_evaluation(
        team=team_a, profile="trec", metrics=[("ndcg", 3), ("ap", 0)], keywords={"red shoes": 4}
    )
    keyword = evaluation.keywords.get()
    UnretrievedJudgement.objects.create(keyword=keyword, doc_id="elsewhere", grade=3)
    grade_slots(evaluation, {"red shoes": [3, 0]})
    with TestCase.captureOnCommitCallbacks(execute=True):
        slot_judge(slot_id=slots_of(evaluation)[3].id, giver=Giver.recorded(None, "x"), grade=2)
    return evaluation


def explain_url(evaluation, metric, k):
    keyword = evaluation.keywords.get()
    return f"/evaluations/{evaluation.id}/keywords/{keyword.id}/explain/?metric={metric}&k={k}"


def test_a_value_in_the_keyword_table_links_to_its_explanation(evaluation, owner):
    page = text(client_for(owner).get(f"/evaluations/{evaluation.id}/"))

    assert html.escape(explain_url(evaluation, "ndcg", 3)) in page


def test_the_explanation_walks_the_list_the_ideal_list_and_the_other_profile(evaluation, owner):
    stored = KeywordMetric.objects.get(evaluation=evaluation, metric="ndcg", k=3).value

    response = client_for(owner).get(explain_url(evaluation, "ndcg", 3))

    page = html.unescape(text(response))
    assert response.status_code == 200
    assert f">{stored:.4f}</span>" in page  # the value the page shows, the stored one
    ranks = page[page.index('data-testid="explained-ranks"') :]
    assert "red shoes-doc-1" in ranks and "red shoes-doc-3" in ranks
    ideal = page[page.index('data-testid="explained-ideal"') :]
    assert re.findall(
        r"<tr><td class=\"num\">\d</td><td class=\"num\">(\d\.\d{4})</td>", ideal
    ) == [
        "3.0000",
        "3.0000",
        "2.0000",
    ]
    assert "Under the searchtweak profile" in page
    assert "nDCG@3 would be <strong>1.0000</strong>" in page
    assert "did not return (graded 3)" in page


def test_a_metric_the_evaluation_does_not_report_or_a_bad_cutoff_is_404(evaluation, owner):
    client = client_for(owner)

    assert client.get(explain_url(evaluation, "ndcg", 10)).status_code == 404
    assert client.get(explain_url(evaluation, "precision", 3)).status_code == 404
    assert client.get(explain_url(evaluation, "ndcg", "x3")).status_code == 404
    assert client.get(explain_url(evaluation, "ndcg", "9" * 40)).status_code == 404


def test_only_a_lead_of_the_team_reads_it(evaluation, evaluator, outsider):
    assert client_for(evaluator).get(explain_url(evaluation, "ndcg", 3)).status_code == 403
    assert client_for(outsider).get(explain_url(evaluation, "ndcg", 3)).status_code == 404
