"""The agreement page and the disagreement queue: who may open them, what they show,
settling a disagreement with htmx and without, and their cost in queries."""

import html

import pytest

from apps.evaluations.models import EvaluationMetric, Snapshot
from apps.insights.tests.test_agreement_decisions import grade_snapshots
from apps.judging.judgements import Giver, slot_judge
from apps.judging.models import SnapshotDecision
from apps.scoring.services import recompute_marked
from tests.factories import client_for, make_evaluation, make_grader, slots_of

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def graders(team_a):
    return [make_grader(team_a, f"g{n}@a.test") for n in range(3)]


@pytest.fixture
def evaluation(team_a, graders):
    """Binary, three slots, two keywords: ties at q1#1 and q2#2, agreement elsewhere."""
    evaluation = make_evaluation(
        team=team_a,
        scale="binary",
        strategy=3,
        metrics=[("precision", 2)],
        keywords={"red shoes": 2, "blue shirt": 2},
    )
    grade_snapshots(evaluation, [[1, 0, None], [1, 1, 1], [0, 0, 1], [0, 1, None]], graders)
    recompute_marked()  # no commit in these tests, so no queued task ran
    return evaluation


def agreement_url(evaluation):
    return f"/evaluations/{evaluation.id}/agreement/"


def queue_url(evaluation):
    return f"/evaluations/{evaluation.id}/disagreements/"


def decide_url(evaluation, snapshot):
    return f"/evaluations/{evaluation.id}/disagreements/{snapshot.id}/decide/"


def clear_url(evaluation, snapshot):
    return f"/evaluations/{evaluation.id}/disagreements/{snapshot.id}/clear/"


def snapshot(evaluation, keyword, position):
    return Snapshot.objects.get(
        keyword__evaluation=evaluation, keyword__text=keyword, position=position
    )


# --- The agreement page -----------------------------------------------------------------


def test_the_agreement_page_shows_kappa_alpha_and_each_grader(evaluation, owner):
    response = client_for(owner).get(agreement_url(evaluation))

    assert response.status_code == 200
    page = response.content.decode()
    report = response.context["report"]
    assert report.kappa.name == "Fleiss' kappa" and report.kappa.items == 2
    assert report.alpha.name == "Krippendorff's alpha (nominal)"
    assert "Krippendorff&#x27;s alpha (nominal)" in page
    assert "Landis &amp; Koch (1977)" in page  # the reading is labelled as a convention
    assert f"{report.alpha.value:.3f}" in page
    assert "2 with fewer grades left out" in page
    # Least agreement first. g0: 1 of 3 compared (vs 0, vs 1-1 agreeing, vs 1); the tie
    # 0-1 at q2#1 is no consensus. g1 likewise; g2: 1 of 2.
    assert [
        (row.name, row.compared, row.agreeing) for row in response.context["agreement"].graders
    ] == [("g0@a.test", 3, 1), ("g1@a.test", 3, 1), ("g2@a.test", 2, 1)]
    assert "33.3%" in page and "50.0%" in page
    for email in ("g0@a.test", "g1@a.test", "g2@a.test"):
        assert email in page
    assert response.context["agreement"].open_disagreements == 2


def test_the_agreement_page_of_an_evaluation_without_grades_says_why_there_is_no_value(
    team_a, admin
):
    empty = make_evaluation(team=team_a, strategy=3)

    response = client_for(admin).get(agreement_url(empty))

    assert response.status_code == 200
    assert "Not defined: no result has all 3 grades yet." in response.content.decode()
    assert "No grades yet." in response.content.decode()


def test_a_grader_may_not_open_the_agreement_page(evaluation, evaluator):
    assert client_for(evaluator).get(agreement_url(evaluation)).status_code == 403


def test_another_teams_lead_gets_404_for_the_agreement_page(evaluation, outsider):
    assert client_for(outsider).get(agreement_url(evaluation)).status_code == 404


def test_an_anonymous_visitor_is_sent_to_log_in(evaluation):
    response = client_for(None).get(agreement_url(evaluation))

    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_agreement_page_costs_the_same_queries_for_many_graders_and_results(
    team_a, owner, django_assert_max_num_queries
):
    many = [make_grader(team_a) for _ in range(3)]
    big = make_evaluation(team=team_a, scale="graded", strategy=3, keywords={"a": 8, "b": 8})
    grade_snapshots(big, [[n % 4, (n + 1) % 4, (n * 3) % 4] for n in range(16)], many)
    for slot in slots_of(big)[1::3]:
        slot_judge(slot_id=slot.id, giver=Giver.recorded(None, f"vendor-{slot.id % 5}"), grade=2)
    client = client_for(owner)
    client.get(agreement_url(big))  # session and team are cached after the first request

    with django_assert_max_num_queries(8):
        assert client.get(agreement_url(big)).status_code == 200


# --- The disagreement queue -------------------------------------------------------------


def test_the_queue_lists_each_open_disagreement_with_every_grade_and_reason(evaluation, admin):
    response = client_for(admin).get(queue_url(evaluation))

    assert response.status_code == 200
    rows = response.context["rows"]
    assert [(row.snapshot.keyword.text, row.snapshot.position) for row in rows] == [
        ("red shoes", 1),
        ("blue shirt", 2),
    ]
    assert [slot.grade for slot in rows[0].slots] == [1, 0, None]
    assert rows[0].open_slots == 1 and rows[0].kind == "tie"
    page = response.content.decode()
    assert "g0@a.test" in page and "<q>r1</q>" in page and "<q>r0</q>" in page
    assert "1 slot still open" in page
    assert "Open (2)" in page


# Real commits: the recompute queued by the decision runs (in-process) when the
# decision's transaction commits, before the answer is rendered, as without a broker.
@pytest.mark.django_db(transaction=True)
def test_a_decision_with_htmx_answers_the_row_and_the_new_metric_means(evaluation, admin):
    tie = snapshot(evaluation, "red shoes", 1)
    before = EvaluationMetric.objects.get(evaluation=evaluation).value

    response = client_for(admin).post(
        decide_url(evaluation, tie), {"grade": "0", "reason": "wrong colour"}, **HTMX
    )

    assert response.status_code == 200
    decision = SnapshotDecision.objects.get(snapshot=tie)
    assert (decision.grade, decision.reason, decision.decided_by) == (0, "wrong colour", admin)
    html = response.content.decode()
    assert f'id="snapshot-{tie.id}"' in html
    assert 'data-testid="final-grade">0 · Irrelevant<' in html
    assert '(Relevant)">1 · Relevant</button>' in html  # the buttons label grades alike
    assert "by admin@a.test" in html and "Clear the decision" in html
    after = EvaluationMetric.objects.get(evaluation=evaluation).value
    # red shoes: P@2 from 1 (one judged, relevant) to 0.5; blue shirt stays 0 (tie at 2).
    assert (before, after) == (pytest.approx(0.5), pytest.approx(0.25))
    assert 'hx-swap-oob="true"' in html and "0.2500" in html


def test_a_decided_snapshot_leaves_the_open_queue_and_shows_under_settled(evaluation, admin):
    tie = snapshot(evaluation, "red shoes", 1)
    client = client_for(admin)
    client.post(decide_url(evaluation, tie), {"grade": "1"})

    open_rows = client.get(queue_url(evaluation)).context["rows"]
    settled = client.get(queue_url(evaluation) + "?show=settled").context["rows"]

    assert [row.snapshot.id for row in open_rows] == [snapshot(evaluation, "blue shirt", 2).id]
    assert [(row.snapshot.id, row.decision.grade) for row in settled] == [(tie.id, 1)]


def test_without_htmx_a_decision_redirects_back_to_the_queue(evaluation, owner):
    tie = snapshot(evaluation, "red shoes", 1)

    response = client_for(owner).post(
        decide_url(evaluation, tie), {"grade": "1", "show": "settled"}
    )

    assert response.status_code == 302
    assert response["Location"] == queue_url(evaluation) + "?show=settled"
    assert SnapshotDecision.objects.get(snapshot=tie).grade == 1


def test_a_decision_and_its_clearing_are_said_back_to_the_lead(evaluation, owner):
    tie = snapshot(evaluation, "red shoes", 1)
    client = client_for(owner)

    decided = client.post(decide_url(evaluation, tie), {"grade": "1"}, follow=True)
    said = [str(message) for message in decided.context["messages"]]
    assert said == [f"Saved: final grade 1 · Relevant for “red shoes”, {tie.name or tie.doc_id}."]

    cleared = client.post(clear_url(evaluation, tie), **HTMX).content.decode()
    assert 'id="decision-confirmation"' in cleared and 'hx-swap-oob="true"' in cleared
    assert "Cleared: the graders&#x27; grades count again for “red shoes”" in cleared


def test_clearing_a_decision_removes_it(evaluation, admin):
    tie = snapshot(evaluation, "red shoes", 1)
    client = client_for(admin)
    client.post(decide_url(evaluation, tie), {"grade": "1"})

    response = client.post(clear_url(evaluation, tie), **HTMX)

    assert response.status_code == 200
    assert not SnapshotDecision.objects.exists()
    assert "Clear the decision" not in response.content.decode()


@pytest.mark.parametrize(
    ("grade", "message"),
    [
        ("2", "grade: 2 is not a binary grade (0, 1)"),
        ("", "grade: '' is not a binary grade (0, 1)"),
        ("yes", "grade: 'yes' is not a binary grade (0, 1)"),
    ],
)
def test_a_grade_off_the_scale_is_refused_naming_the_field(evaluation, admin, grade, message):
    tie = snapshot(evaluation, "red shoes", 1)

    response = client_for(admin).post(decide_url(evaluation, tie), {"grade": grade}, **HTMX)

    assert response.status_code == 400
    # As the browser reads it (the row is drawn by Jinja2, which escapes ' as &#39;).
    assert message in html.unescape(response.content.decode())
    assert not SnapshotDecision.objects.exists()


def test_without_htmx_a_refused_grade_comes_back_as_a_message(evaluation, admin):
    tie = snapshot(evaluation, "red shoes", 1)
    client = client_for(admin)

    response = client.post(decide_url(evaluation, tie), {"grade": "7"}, follow=True)

    assert "grade: 7 is not a binary grade (0, 1)" in response.content.decode()


def test_a_grader_may_not_decide_clear_or_open_the_queue(evaluation, evaluator):
    tie = snapshot(evaluation, "red shoes", 1)
    client = client_for(evaluator)

    assert client.get(queue_url(evaluation)).status_code == 403
    assert client.post(decide_url(evaluation, tie), {"grade": "1"}).status_code == 403
    assert client.post(clear_url(evaluation, tie)).status_code == 403
    assert not SnapshotDecision.objects.exists()


def test_another_teams_lead_gets_404_everywhere(evaluation, outsider):
    tie = snapshot(evaluation, "red shoes", 1)
    client = client_for(outsider)

    assert client.get(queue_url(evaluation)).status_code == 404
    assert client.post(decide_url(evaluation, tie), {"grade": "1"}).status_code == 404
    assert client.post(clear_url(evaluation, tie)).status_code == 404
    assert not SnapshotDecision.objects.exists()


def test_a_snapshot_of_another_evaluation_of_the_team_is_404(evaluation, team_a, admin):
    other = make_evaluation(team=team_a, scale="binary")
    theirs = Snapshot.objects.filter(keyword__evaluation=other).first()

    response = client_for(admin).post(decide_url(evaluation, theirs), {"grade": "1"})

    assert response.status_code == 404
    assert not SnapshotDecision.objects.exists()


def test_deciding_needs_the_csrf_token_and_a_post(evaluation, admin):
    tie = snapshot(evaluation, "red shoes", 1)
    strict = client_for(admin, enforce_csrf_checks=True)

    assert strict.post(decide_url(evaluation, tie), {"grade": "1"}).status_code == 403
    assert strict.post(clear_url(evaluation, tie)).status_code == 403
    assert client_for(admin).get(decide_url(evaluation, tie)).status_code == 405
    assert not SnapshotDecision.objects.exists()


def test_the_settled_view_of_the_queue_pages_through_its_rows(team_a, admin, graders):
    wide = make_evaluation(team=team_a, scale="graded", strategy=3, keywords={"q": 30})
    grade_snapshots(wide, [[0, 3, None]] * 30, graders)
    client = client_for(admin)

    first = client.get(queue_url(wide))
    second = client.get(queue_url(wide) + "?page=2")

    assert len(first.context["rows"]) == 25 and len(second.context["rows"]) == 5
    assert "Open (30)" in first.content.decode()
    assert "Page 1 of 2" in first.content.decode()
    assert client.get(queue_url(wide) + "?show=nonsense").context["show"] == "open"


def test_the_queue_costs_the_same_queries_whatever_the_number_of_rows(
    team_a, admin, graders, django_assert_max_num_queries
):
    wide = make_evaluation(team=team_a, scale="detail", strategy=3, keywords={"a": 20, "b": 20})
    grade_snapshots(wide, [[1, 10, 5]] * 40, graders)
    client = client_for(admin)
    for row in client.get(queue_url(wide)).context["rows"][:10]:
        client.post(decide_url(wide, row.snapshot), {"grade": "5"})

    with django_assert_max_num_queries(12):
        assert client.get(queue_url(wide)).status_code == 200
    with django_assert_max_num_queries(12):
        assert client.get(queue_url(wide) + "?show=settled").status_code == 200
    row = client.get(queue_url(wide)).context["rows"][0]
    # Six of these are the test transaction's savepoints.
    with django_assert_max_num_queries(18):
        client.post(decide_url(wide, row.snapshot), {"grade": "5"}, **HTMX)


def test_the_admin_shows_decisions_but_never_changes_them(evaluation, admin):
    from apps.accounts.models import User

    tie = snapshot(evaluation, "red shoes", 1)
    client_for(admin).post(decide_url(evaluation, tie), {"grade": "1"})
    staff = client_for(User.objects.create_superuser(email="root@a.test", password="x" * 12))
    decision = SnapshotDecision.objects.get()

    listing = staff.get("/admin/judging/snapshotdecision/")
    assert listing.status_code == 200 and "admin@a.test" in listing.content.decode()
    assert staff.get("/admin/judging/snapshotdecision/add/").status_code == 403
    assert (
        staff.post(
            f"/admin/judging/snapshotdecision/{decision.id}/delete/", {"post": "yes"}
        ).status_code
        == 403
    )
    assert SnapshotDecision.objects.filter(id=decision.id).exists()


def test_the_links_partial_points_the_evaluation_page_to_both_pages(evaluation):
    from django.template.loader import render_to_string

    html = render_to_string("insights/_agreement_links.html", {"evaluation": evaluation})

    assert f'href="{agreement_url(evaluation)}"' in html
    assert f'href="{queue_url(evaluation)}"' in html


def test_an_ai_judge_among_the_graders_is_named_as_the_lead_named_it(team_a, owner):
    from apps.judges.services import judge_create

    judge = judge_create(
        team=team_a,
        name="Overlap",
        protocol="openai",
        base_url="https://api.openai.com/v1",
        model_name="m",
    )
    person = make_grader(team_a)
    evaluation = make_evaluation(team=team_a, scale="graded", strategy=3, keywords={"a": 2})
    for slot in slots_of(evaluation):
        if slot.index < 2:
            who = judge.user if slot.index == 0 else person
            slot_judge(slot_id=slot.id, giver=Giver.recorded(who), grade=2)

    page = client_for(owner).get(agreement_url(evaluation)).content.decode()

    assert "Overlap (AI judge)" in page
    assert "ai-judges.relevo.invalid" not in page
