"""Calibrating a panel and a sampled judge: each member's figures against people and the
members' agreement with each other, worked by hand on small examples and measured on a
gold set through a real local server; every member's call counted against the budget;
a fitted panel calibrated before its fit keeps its members' votes, and its weights are
fitted on them from the gold set's page."""

import itertools
import threading

import pytest

from apps import engine
from apps.judges import calibration
from apps.judges.calibration_figures import Pair
from apps.judges.gold_sets import gold_set_create
from apps.judges.models import CalibrationGrade, CalibrationStatus, JudgeCall
from apps.judges.panel_figures import member_figures, vote_agreement, voted
from apps.judges.panels import panel_create
from apps.judges.services import judge_create
from tests.factories import client_for, make_evaluation, make_team

from .test_calibration import KEYWORDS, PEOPLE, grades_by_title, people_grade

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers_allowed")]

BINARY = engine.get_scale("binary")


def one_above_people(keyword: int, number: int) -> int:
    return min(3, PEOPLE(keyword, number) + 1)


# --- By hand ------------------------------------------------------------------------------


def test_the_members_agreement_as_worked_by_hand():
    # Two members on four results: (1,1) (0,0) (1,0) (1,1).
    # Coincidences o00=2, o11=4, o01=o10=1; n0=3, n1=5, n=8.
    # alpha = 1 - (n-1) * (o01+o10) / (2 n0 n1) = 1 - 7*2/30 = 8/15.
    # All agree on 3 of 4; the grade kept had the shares given.
    items = [
        voted(0, [{"by": "A", "grade": 1, "judge": 1}, {"by": "B", "grade": 1, "judge": 2}], 1.0),
        voted(0, [{"by": "A", "grade": 0, "judge": 1}, {"by": "B", "grade": 0, "judge": 2}], 1.0),
        voted(1, [{"by": "A", "grade": 1, "judge": 1}, {"by": "B", "grade": 0, "judge": 2}], 0.5),
        voted(1, [{"by": "A", "grade": 1, "judge": 1}, {"by": "B", "grade": 1, "judge": 2}], 1.0),
    ]
    agreement = vote_agreement(items, BINARY, samples=200)
    assert agreement.voters == 2
    assert agreement.alpha.value == pytest.approx(8 / 15)
    assert agreement.all_agree.value == 0.75
    assert agreement.mean_agreement.value == pytest.approx(3.5 / 4)
    assert agreement.alpha.n == 4


def test_each_member_is_measured_against_people_from_its_own_votes():
    # People: 1, 0, 0, 1. A gives 1, 0, 1, 1 (3 of 4 exact); B gives 1, 0, 0, 1 (all).
    pairs = [Pair(0, (1,), 1), Pair(0, (0,), 0), Pair(1, (0,), 0), Pair(1, (1,), 1)]
    a_grades, b_grades = (1, 0, 1, 1), (1, 0, 0, 1)
    items = [
        voted(pair.keyword, [{"by": "A", "grade": a, "judge": 7}, {"by": "B", "grade": b}])
        for pair, a, b in zip(pairs, a_grades, b_grades, strict=True)
    ]
    # B's votes name no judge: only members (with a judge id) are measured.
    [a] = member_figures(pairs, items, BINARY, samples=0)
    assert (a.judge, a.name, a.figures.compared) == (7, "A", 4)
    assert a.figures.exact.value == 0.75
    # (consensus, A): (1,1) (0,0) (0,1) (1,1): the hand-worked 8/15 again.
    assert a.figures.alpha.value == pytest.approx(8 / 15)


def test_votes_that_are_not_votes_are_left_out():
    item = voted(0, [{"by": "A", "grade": "2"}, "x", {"by": "B", "grade": True}, {"grade": 1}])
    assert item.votes == (("", "", 1),)
    assert voted(0, None).votes == ()


# --- On a gold set ------------------------------------------------------------------------


@pytest.fixture
def gold(team_a):
    """Eight keywords of four results graded alike by three people (PEOPLE), all drawn."""
    baseline = make_evaluation(team=team_a, scale="graded", strategy=3, keywords=KEYWORDS)
    people_grade(baseline, PEOPLE)
    return gold_set_create(team=team_a, name="Gold", baseline=baseline.id, seed=1)


def member(team, server, name, model, **settings):
    return judge_create(
        team=team,
        name=name,
        protocol="openai",
        base_url=server.openai_url,
        model_name=model,
        api_key="not-a-real-key-panel-calibration",
        **settings,
    )


def by_model(rules):
    """A server whose each model grades by its own rule (keyword, result number)."""
    answers = {model: grades_by_title(rule) for model, rule in rules.items()}
    return lambda seen: answers[seen.body["model"]](seen)


def panel_of(team, server, rule, **settings):
    """GPT grades as people do; Claude one grade above them (3 at most)."""
    gpt = member(team, server, "GPT", "gpt-test")
    claude = member(team, server, "Claude", "claude-test")
    server.respond_with(by_model({"gpt-test": PEOPLE, "claude-test": one_above_people}))
    panel = panel_create(team=team, name="Pair", members=[gpt.id, claude.id], rule=rule, **settings)
    return gpt, claude, panel


def calibrated(gold, judge):
    run = calibration.calibration_create(gold_set=gold, judge=judge)
    calibration.calibration_execute(run_id=run.id)
    run.refresh_from_db()
    return run


# GPT against Claude (and Claude against people, whose grades GPT's are), ordinal: the
# pairs (0,1) (1,2) (2,3) (3,3), eight of each. Coincidences o01=o12=o23=8 (both ways),
# o33=16; n0=8, n1=16, n2=16, n3=24, n=64. Squared distances d01=(24-12)^2=144,
# d12=(32-16)^2=256, d23=(40-20)^2=400, d02=28^2, d03=48^2, d13=36^2. Observed
# 2*8*(144+256+400) = 12,800; expected 2*(8*16*144 + 8*16*784 + 8*24*2304 + 16*16*256
# + 16*24*1296 + 16*24*400)/63 = 2,555,904/63; alpha = 1 - 12,800*63/2,555,904.
ONE_GRADE_APART_ALPHA = 1 - 12_800 * 63 / 2_555_904  # 0.6845


def test_a_panel_s_calibration_reports_the_panel_each_member_and_their_agreement(
    team_a, gold, server
):
    gpt, claude, panel = panel_of(team_a, server, "median", results_per_call=4)
    run = calibrated(gold, panel)
    assert (run.status, run.graded, run.failed) == (CalibrationStatus.FINISHED, 32, 0)
    # Eight asks of four results, each a call to both members.
    assert run.calls == 16 == JudgeCall.objects.filter(calibration=run).count()
    grade = CalibrationGrade.objects.filter(run=run, item__people_grades=[0, 0, 0]).first()
    assert grade.grade == 0 and grade.agreement == 0.5  # the lower of 0 and 1
    assert [(v["judge"], v["grade"]) for v in grade.votes] == [(gpt.id, 0), (claude.id, 1)]

    [report] = calibration.gold_report(gold, samples=100).runs
    assert report.figures.alpha.value == pytest.approx(1.0)  # the median is GPT's grade
    first, second = report.votes.members
    assert (first.judge, first.name, second.judge, second.name) == (
        gpt.id,
        "GPT",
        claude.id,
        "Claude",
    )
    assert first.figures.alpha.value == pytest.approx(1.0) and first.figures.exact.value == 1.0
    assert second.figures.alpha.value == pytest.approx(ONE_GRADE_APART_ALPHA)
    assert (second.figures.exact.value, second.figures.within_one.value) == (0.25, 1.0)
    agreement = report.votes.member_agreement
    assert agreement.alpha.value == pytest.approx(ONE_GRADE_APART_ALPHA)
    assert agreement.alpha.low <= agreement.alpha.value <= agreement.alpha.high
    assert agreement.all_agree.value == 0.25  # only where people gave 3
    assert agreement.mean_agreement.value == pytest.approx((8 * 1.0 + 24 * 0.5) / 32)
    assert report.votes.sample_agreement is None


def test_a_panel_s_judgements_from_the_cache_keep_their_votes(team_a, gold, server):
    _, _, panel = panel_of(team_a, server, "median")
    calibrated(gold, panel)
    asked = len(server.requests)
    again = calibrated(gold, panel)
    assert len(server.requests) == asked
    assert (again.graded, again.from_cache, again.calls) == (32, 32, 0)
    report = calibration.gold_report(gold, samples=0).runs[1]
    assert report.votes.member_agreement.all_agree.value == 0.25
    assert [m.name for m in report.votes.members] == ["GPT", "Claude"]


def test_a_sampled_judge_s_calibration_reports_how_its_samples_agree(team_a, gold, server):
    judge = member(
        team_a,
        server,
        "GPT x3",
        "gpt-test",
        temperature=0.8,
        samples=3,
        results_per_call=4,
        calls_at_once=1,  # one ask at a time: each takes three turns in a row
    )
    # Of each ask's three samples, two grade as people do and one a grade above.
    rules = itertools.cycle([PEOPLE, PEOPLE, one_above_people])
    turn = threading.Lock()

    def respond(seen):
        with turn:
            rule = next(rules)
        return grades_by_title(rule)(seen)

    server.respond_with(respond)
    run = calibrated(gold, judge)
    assert run.calls == 24  # eight asks, three samples each
    [report] = calibration.gold_report(gold, samples=0).runs
    assert report.figures.alpha.value == pytest.approx(1.0)
    assert report.votes.members == [] and report.votes.member_agreement is None
    samples = report.votes.sample_agreement
    assert samples.voters == 3
    assert samples.all_agree.value == 0.25
    assert samples.mean_agreement.value == pytest.approx((24 * 2 / 3 + 8 * 1.0) / 32)


def test_a_panel_s_calls_budget_counts_every_member_s_call(team_a, gold, server):
    _, _, panel = panel_of(
        team_a, server, "median", results_per_call=4, calls_at_once=4, budget_calls=5
    )
    run = calibrated(gold, panel)
    assert run.status == CalibrationStatus.STOPPED
    assert run.calls == 4  # two asks of two calls; a third would pass the budget
    assert run.note == "the budget of 5 calls is reached: the next ask makes 2 calls, 1 are left"


def test_a_fitted_panel_is_calibrated_on_its_members_votes_then_fitted_from_the_page(
    owner, team_a, gold, server
):
    gpt, claude, panel = panel_of(team_a, server, "fitted")
    run = calibrated(gold, panel)
    # No grade of its own before its weights are fitted, but every member's vote.
    assert (run.status, run.graded, run.failed) == (CalibrationStatus.FINISHED, 0, 32)
    votes = CalibrationGrade.objects.filter(run=run).values_list("votes", flat=True)
    assert [len(each) for each in votes] == [2] * 32
    assert set(CalibrationGrade.objects.filter(run=run).values_list("failure", flat=True)) == {
        calibration.UNFITTED
    }
    lead = client_for(owner)
    page = lead.get(f"/judges/calibration/{gold.id}/").content.decode()
    assert "Pair: each member against people" in page
    assert page.count('data-testid="member"') == 2
    assert "Fit the panel's weights on this calibration" in page
    assert 'data-testid="all-agree">25%' in page

    fitted = lead.post(f"/judges/calibrations/{run.id}/fit-weights/", follow=True)
    assert "Fitted Pair&#x27;s weights on this calibration: GPT 1.00, Claude 0.00." in (
        fitted.content.decode()
    )
    panel.refresh_from_db()
    # GPT always gives people's grade: all the weight is its.
    assert panel.panel_fit["weights"] == {str(gpt.id): 1.0, str(claude.id): 0.0}
    assert panel.panel_fit["squared_error"] == 0.0 and panel.panel_fit["items"] == 32
    # Fitted, it is another judge to the team's rule and the cache: its name says so.
    assert panel.model_name == "panel (fitted 1.00/0.00): gpt-test, claude-test"
    page = lead.get(f"/judges/calibration/{gold.id}/").content.decode()
    assert "The panel's weights were fitted on this calibration: GPT 1.00, Claude 0.00." in (page)

    # Fitted, it grades: calibrated again, it agrees with people as GPT does; the first
    # calibration no longer describes it.
    again = calibrated(gold, panel)
    assert (again.graded, again.alpha) == (32, pytest.approx(1.0))
    first, second = calibration.gold_report(gold, samples=0).runs
    assert (first.stale, second.stale) == ("the panel's weights were fitted since", "")


def test_fitting_on_too_few_items_or_a_running_calibration_is_refused_on_the_page(
    owner, team_a, server
):
    baseline = make_evaluation(
        team=team_a, scale="graded", strategy=3, keywords={"keyword 0": 4, "keyword 1": 4}
    )
    people_grade(baseline, PEOPLE)
    small = gold_set_create(team=team_a, name="Small", baseline=baseline.id, seed=1)
    _, _, panel = panel_of(team_a, server, "median")
    lead = client_for(owner)
    refused = lead.post(
        f"/judges/calibrations/{calibrated(small, panel).id}/fit-weights/", follow=True
    )
    assert (
        "8 gold items of the calibration have every member&#x27;s grade" in refused.content.decode()
    )
    running = calibration.calibration_create(gold_set=small, judge=panel)
    refused = lead.post(f"/judges/calibrations/{running.id}/fit-weights/", follow=True)
    assert "The calibration has not finished yet." in refused.content.decode()
    panel.refresh_from_db()
    assert panel.panel_fit is None


def test_another_team_s_calibration_cannot_be_fitted_on(owner, server):
    other = make_team("Other")
    evaluation = make_evaluation(team=other, strategy=3, keywords={"keyword 0": 2, "keyword 1": 2})
    people_grade(evaluation, lambda keyword, number: 1)
    theirs = gold_set_create(team=other, name="Theirs", baseline=evaluation.id, seed=1)
    _, _, panel = panel_of(other, server, "median")
    run = calibration.calibration_create(gold_set=theirs, judge=panel)
    assert client_for(owner).post(f"/judges/calibrations/{run.id}/fit-weights/").status_code == 404
