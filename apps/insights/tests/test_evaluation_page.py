"""The lead's evaluation page: metric cards with their change and history, the live
progress, the keyword table, and pinning a metric to the dashboard."""

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from apps.evaluations.models import (
    Evaluation,
    EvaluationMetric,
    EvaluationMetricPoint,
    Status,
)
from apps.insights import metric_cards as selectors  # the evaluation page's card reads
from tests.factories import client_for, make_evaluation

from .lead_pages import finish, grade_slots, make_model, set_metric_values, text

pytestmark = pytest.mark.django_db


def day(number: int) -> datetime:
    return datetime(2026, 3, number, 9, 30, tzinfo=UTC)


@pytest.fixture
def evaluation(team_a):
    """Team A's active evaluation of three keywords with 2, 2 and 1 results."""
    return make_evaluation(team=team_a, keywords={"red shoes": 2, "blue hat": 2, "boots": 1})


def card(response, key: str) -> str:
    """The HTML of one metric card."""
    match = re.search(
        rf'<li class="card metric-card" data-metric="{key}">(.*?)</li>', text(response), re.S
    )
    assert match, text(response)
    return match.group(1)


def shown_change(card_html: str) -> str:
    """The change a card shows, as printed."""
    match = re.search(r'data-testid="change"[^>]*>([^<]*)</span>', card_html)
    assert match, card_html
    return match.group(1)


# --- Who may open it ----------------------------------------------------------------------


@pytest.mark.parametrize("lead", ["owner", "admin"])
def test_a_lead_sees_cards_progress_keywords_and_the_lifecycle(lead, request, evaluation):
    grade_slots(evaluation, {"red shoes": [3, 0]})

    response = client_for(request.getfixturevalue(lead)).get(f"/evaluations/{evaluation.id}/")

    page = text(response)
    assert response.status_code == 200
    assert 'data-testid="metric-cards"' in page
    assert 'data-metric="ndcg@10"' in page and 'data-metric="precision@5"' in page
    assert "2 of 5 grades" in page
    assert f"/evaluations/{evaluation.id}/export/?format=json" in page  # the lifecycle partial
    for keyword in ["red shoes", "blue hat", "boots"]:
        assert f'data-keyword="{keyword}"' in page


def test_an_evaluator_is_refused_the_evaluation_page(evaluation, evaluator):
    assert client_for(evaluator).get(f"/evaluations/{evaluation.id}/").status_code == 403


def test_the_outsider_gets_not_found(evaluation, outsider):
    assert client_for(outsider).get(f"/evaluations/{evaluation.id}/").status_code == 404


def test_someone_not_logged_in_is_sent_to_log_in(evaluation):
    response = client_for(None).get(f"/evaluations/{evaluation.id}/")

    assert response.status_code == 302 and response.url.startswith("/accounts/login/")


# --- Changes against the reference evaluation ---------------------------------------------


def test_the_change_is_against_the_models_previous_finished_evaluation(team_a, owner):
    model = make_model(team_a)
    older = finish(make_evaluation(team=team_a), day(1), model=model, values={"ndcg@10": 0.3})
    previous = finish(make_evaluation(team=team_a), day(2), model=model, values={"ndcg@10": 0.5})
    other_model = finish(
        make_evaluation(team=team_a),
        day(3),
        model=make_model(team_a, "Other"),
        values={"ndcg@10": 0.9},
    )
    baseline = finish(make_evaluation(team=team_a), day(4), values={"ndcg@10": 0.1})
    team_a.baseline_evaluation = baseline
    team_a.save()
    current = make_evaluation(team=team_a)
    Evaluation.objects.filter(id=current.id).update(search_model=model)
    set_metric_values(current, {"ndcg@10": 0.75, "precision@5": 0.4})

    response = client_for(owner).get(f"/evaluations/{current.id}/")

    ndcg = card(response, "ndcg@10")
    assert shown_change(ndcg) == "+0.2500"
    assert f'<a href="/evaluations/{previous.id}/">{previous.name}</a> (model\'s previous)' in ndcg
    # The previous evaluation has no precision value: nothing to compare it with.
    assert f"no value to compare with {previous.name}" in card(response, "precision@5")
    assert older.name not in ndcg and other_model.name not in ndcg


def test_a_finished_evaluation_is_compared_with_the_one_that_finished_before_it(team_a, admin):
    model = make_model(team_a)
    first = finish(make_evaluation(team=team_a), day(1), model=model, values={"ndcg@10": 0.6})
    second = finish(make_evaluation(team=team_a), day(2), model=model, values={"ndcg@10": 0.4})
    finish(make_evaluation(team=team_a), day(3), model=model, values={"ndcg@10": 0.9})

    cards = selectors.metric_cards(second, baseline_id=None)

    assert cards.reference.evaluation_id == first.id
    assert cards.cards[0].change == pytest.approx(-0.2)
    response = client_for(admin).get(f"/evaluations/{second.id}/")
    assert shown_change(card(response, "ndcg@10")) == "−0.2000"


def test_without_a_previous_one_the_change_is_against_the_team_baseline(team_a, owner):
    baseline = finish(make_evaluation(team=team_a), day(1), values={"ndcg@10": 0.5})
    team_a.baseline_evaluation = baseline
    team_a.save()
    model = make_model(team_a)
    current = make_evaluation(team=team_a)
    Evaluation.objects.filter(id=current.id).update(search_model=model)
    set_metric_values(current, {"ndcg@10": 0.5})

    response = client_for(owner).get(f"/evaluations/{current.id}/")

    assert shown_change(card(response, "ndcg@10")) == "±0.0000"
    assert "(team baseline)" in card(response, "ndcg@10")
    assert "the team's baseline" in text(response)


def test_with_no_previous_one_and_no_baseline_there_is_no_change(evaluation, owner):
    set_metric_values(evaluation, {"ndcg@10": 0.5})

    response = client_for(owner).get(f"/evaluations/{evaluation.id}/")

    assert "nothing to compare with" in card(response, "ndcg@10")
    assert 'data-testid="change"' not in text(response)
    assert selectors.metric_cards(evaluation, baseline_id=None).reference is None


def test_the_baseline_itself_shows_no_change(team_a, owner):
    baseline = finish(make_evaluation(team=team_a), day(1), values={"ndcg@10": 0.5})
    team_a.baseline_evaluation = baseline
    team_a.save()

    cards = selectors.metric_cards(baseline, baseline_id=baseline.id)

    assert cards.reference is None and cards.cards[0].change is None


def test_another_teams_evaluations_are_never_a_reference(team_a, team_b):
    foreign = finish(make_evaluation(team=team_b), day(1), values={"ndcg@10": 0.1})
    mine = make_evaluation(team=team_a)

    assert selectors.metric_cards(mine, baseline_id=foreign.id).reference is None


# --- History --------------------------------------------------------------------------------


def test_each_card_draws_its_history_and_lists_the_numbers(evaluation, owner):
    ndcg = EvaluationMetric.objects.get(evaluation=evaluation, metric="ndcg")
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=10)
    EvaluationMetricPoint.objects.bulk_create(
        EvaluationMetricPoint(
            evaluation_metric=ndcg, minute=start + timedelta(minutes=i), value=v, progress=p
        )
        for i, (v, p) in enumerate([(0.25, 0.2), (None, 0.4), (0.5, 0.6)])
    )

    response = client_for(owner).get(f"/evaluations/{evaluation.id}/")

    page = text(response)
    data = json.loads(
        re.search(
            rf'<script id="history-{ndcg.id}" type="application/json">(.*?)</script>', page
        ).group(1)
    )
    assert data["kind"] == "line"
    assert data["series"] == [{"name": "nDCG@10", "values": [0.25, None, 0.5]}]
    assert len(data["labels"]) == 3
    assert f'<canvas data-chart="history-{ndcg.id}"' in page
    numbers = page.split('data-testid="history-ndcg@10"')[1].split("</table>")[0]
    assert "0.2500" in numbers and "0.5000" in numbers and "60.0%" in numbers
    # The precision metric has no history yet: no chart, a note instead.
    assert "history chart starts with the second minute" in card(response, "precision@5")


def test_grading_writes_history_the_page_charts(evaluation, owner):
    grade_slots(evaluation, {"red shoes": [3, 1]})

    [point] = EvaluationMetricPoint.objects.filter(evaluation_metric__metric="ndcg")
    cards = selectors.metric_cards(evaluation, baseline_id=None).cards

    assert [p.value for p in cards[0].history] == [point.value]


def test_a_long_history_is_thinned_for_the_chart(evaluation):
    ndcg = EvaluationMetric.objects.get(evaluation=evaluation, metric="ndcg")
    start = datetime(2026, 1, 1, tzinfo=UTC)
    EvaluationMetricPoint.objects.bulk_create(
        EvaluationMetricPoint(evaluation_metric=ndcg, minute=start + timedelta(minutes=i), value=i)
        for i in range(1000)
    )

    history = selectors.metric_histories(evaluation)[ndcg.id]

    assert len(history) == 120
    assert history[0].value == 0 and history[-1].value == 999


# --- Live progress ----------------------------------------------------------------------------


def live_url(evaluation) -> str:
    return f"/live/evaluation/{evaluation.id}/"


def test_an_active_evaluations_page_is_live(evaluation, owner):
    page = text(client_for(owner).get(f"/evaluations/{evaluation.id}/"))

    assert f'data-live-url="{live_url(evaluation)}?shown=Active"' in page
    assert re.search(r'data-live-etag="&quot;[0-9a-f]{16}&quot;"', page)
    assert 'data-live-every="1500"' in page


def test_a_finished_evaluations_page_is_not_live(evaluation, owner):
    finish(evaluation, day(1))

    page = text(client_for(owner).get(f"/evaluations/{evaluation.id}/"))

    assert "data-live-url" not in page and "hx-trigger" not in page


def test_the_live_answer_shows_fresh_progress_and_metric_values(evaluation, owner):
    client = client_for(owner)
    grade_slots(evaluation, {"red shoes": [3, 3]})
    ndcg = EvaluationMetric.objects.get(evaluation=evaluation, metric="ndcg")

    response = client.get(live_url(evaluation), {"shown": "Active"})

    fragment = text(response)
    assert response.status_code == 200 and "X-Live-Reload" not in response
    assert re.fullmatch(r'"[0-9a-f]{16}"', response["ETag"])
    assert "2 of 5 grades" in fragment and 'id="live-progress"' in fragment
    assert f'id="metric-value-{ndcg.id}"' in fragment
    assert f">{ndcg.value:.4f}</p>" in fragment
    assert 'id="judge-panel"' in fragment
    assert "<html" not in fragment


def test_each_card_says_how_much_of_its_top_k_is_judged(evaluation, owner):
    # red shoes: both results judged; blue hat (2 results) and boots (1) not at all.
    grade_slots(evaluation, {"red shoes": [3, 0]})
    client = client_for(owner)

    response = client.get(f"/evaluations/{evaluation.id}/")
    live = text(client.get(live_url(evaluation), {"shown": "Active"}))

    # The mean of the keywords' judged@k: (1 + 0 + 0) / 3; 3 results unjudged.
    assert "judged@10: 33.3 % · 3 unjudged" in card(response, "ndcg@10")
    assert "judged@5: 33.3 % · 3 unjudged" in card(response, "precision@5")
    ndcg = EvaluationMetric.objects.get(evaluation=evaluation, metric="ndcg")
    assert re.search(rf'id="metric-coverage-{ndcg.id}"[^>]*>judged@10: 33.3 %', live)


def test_coverage_is_computed_once_per_change_whatever_the_pages_asking(
    evaluation, owner, monkeypatch
):
    from apps.insights import coverage

    computed = []
    original = coverage.coverage_by_cutoff
    monkeypatch.setattr(
        coverage, "coverage_by_cutoff", lambda *a, **kw: computed.append(1) or original(*a, **kw)
    )
    client = client_for(owner)

    for _ in range(3):  # three open pages ask after the same change
        client.get(live_url(evaluation), {"shown": "Active"})
    assert len(computed) == 1
    grade_slots(evaluation, {"red shoes": [3, 0]})  # a change renews the evaluation's token

    live = text(client.get(live_url(evaluation), {"shown": "Active"}))
    assert len(computed) == 2
    assert "judged@10: 33.3 % · 3 unjudged" in live


def test_coverage_follows_the_cutoff_and_a_fully_judged_top_k_has_no_unjudged(team_a, owner):
    evaluation = make_evaluation(
        team=team_a, metrics=[("ndcg", 1), ("ndcg", 0)], keywords={"red shoes": 3}
    )
    grade_slots(evaluation, {"red shoes": [2]})

    response = client_for(owner).get(f"/evaluations/{evaluation.id}/")

    assert re.search(r">judged@1: 100.0 %</p>", card(response, "ndcg@1"))
    assert "judged: 33.3 % · 2 unjudged" in card(response, "ndcg")


def test_rbp_reads_plus_or_minus_its_residual_on_the_card_and_live(team_a, owner):
    evaluation = make_evaluation(
        team=team_a,
        scale="binary",
        metrics=[("rbp_50", 3), ("rbp_50_res", 3)],
        keywords={"red shoes": 3},
    )
    # Relevant, not relevant, unjudged: RBP(0.5)@3 = 0.5; residual 0.125 + 0.5^3 = 0.25.
    grade_slots(evaluation, {"red shoes": [1, 0]})
    client = client_for(owner)

    page_card = card(client.get(f"/evaluations/{evaluation.id}/"), "rbp_50@3")
    live = text(client.get(live_url(evaluation), {"shown": "Active"}))

    assert '0.5000 <span class="residual"' in page_card and "± 0.2500" in page_card
    rbp = EvaluationMetric.objects.get(evaluation=evaluation, metric="rbp_50")
    assert re.search(rf'id="metric-value-{rbp.id}"[^>]*>0.5000 <span[^>]*>± 0.2500', live)
    # The residual's own card reads as a plain value.
    assert "± " not in card(client.get(f"/evaluations/{evaluation.id}/"), "rbp_50_res@3")


def test_the_live_answer_is_304_until_a_grade_changes_it(evaluation, owner):
    client = client_for(owner)
    first = client.get(live_url(evaluation), {"shown": "Active"})
    etag = first["ETag"]

    again = client.get(live_url(evaluation), {"shown": "Active"}, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""

    grade_slots(evaluation, {"red shoes": [3]})  # the pipeline stores it (eager tasks)
    changed = client.get(live_url(evaluation), {"shown": "Active"}, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed["ETag"] != etag
    assert "1 of 5 grades" in text(changed)


def test_the_live_answer_reloads_the_page_once_its_status_changed(evaluation, owner):
    Evaluation.objects.filter(id=evaluation.id).update(status=Status.FINISHED)

    response = client_for(owner).get(live_url(evaluation), {"shown": "Active"})

    assert response["X-Live-Reload"] == "1"


def test_the_live_answer_refuses_evaluators_and_outsiders(evaluation, evaluator, outsider):
    assert client_for(evaluator).get(live_url(evaluation)).status_code == 403
    assert client_for(outsider).get(live_url(evaluation)).status_code == 404


def test_the_live_answer_costs_a_few_queries(evaluation, owner, django_assert_max_num_queries):
    client = client_for(owner)
    client.get("/")  # the session is warm

    with django_assert_max_num_queries(8):
        client.get(live_url(evaluation), {"shown": "Active"})
