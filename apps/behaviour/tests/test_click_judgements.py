"""Judgements from clicks: a click model's estimates on a stored log become grades kept
in the library as a list whose source says they are clicks; thresholds are the lead's or
fitted against people's grades; the list is calibrated on a gold set as a judge is, and
grades an evaluation only when the team's rule lets it, never counting as people's."""

import io

import pytest
from django.core.management import CommandError, call_command

from apps.behaviour.click_judgements import click_judgements_make
from apps.behaviour.grading import evaluation_grade_with_clicks
from apps.behaviour.models import ClickCount, ClickJudgementSet
from apps.core.errors import InvalidInput, InvalidState, NotFound
from apps.evaluations.models import FeedbackSlot, Source
from apps.evaluations.source_mix import MixKind, evaluation_mix
from apps.judges.calibration import gate_set
from apps.judges.gold_sets import gold_set_create
from apps.judges.list_calibration import NOT_IN_LIST, list_calibration_make
from apps.judges.models import CalibrationGrade, CalibrationStatus
from apps.judging.judgements import Giver, slot_judge
from apps.library.grades import library_grades
from apps.library.models import JudgementList, ListedJudgement
from tests.factories import make_evaluation, make_team, slots_of

from .click_logs import KEYWORDS, log_with_rates, people_grade_of, rates_following_people

pytestmark = pytest.mark.django_db

# --- Making them -------------------------------------------------------------------------


def test_a_leads_thresholds_turn_click_rates_into_grades_kept_with_their_source(team_a):
    rates = {("shoes", "a"): 0.7, ("shoes", "b"): 0.3, ("shoes", "c"): 0.02}
    log = log_with_rates(team_a, rates)
    ClickCount.objects.create(
        log=log, query="shoes", doc_id="rare", rank=2, impressions=3, clicks=3
    )

    made = click_judgements_make(
        team=team_a, user=None, log=log, model="ctr", scale="graded", thresholds="0.1, 0.25, 0.5"
    )

    listed = made.judgement_list
    assert listed.name == "clicks: CTR, 2026-10-01 to 2026-10-31"
    assert listed.source.kind == Source.CLICKS
    assert str(listed.source) == "clicks: CTR, 2026-10-01 to 2026-10-31"
    grades = dict(
        ListedJudgement.objects.filter(judgement_list=listed).values_list("doc_id", "grade")
    )
    # 0.7 reaches all three thresholds, 0.3 two, 0.02 none; "rare" rests on 3 impressions.
    assert grades == {"a": 3, "b": 2, "c": 0}
    assert (made.estimated, made.too_thin, made.min_impressions) == (4, 1, 10)
    assert made.thresholds == [0.1, 0.25, 0.5]
    assert made.fitted_on == 0


def test_thresholds_fitted_against_peoples_grades_reproduce_them(graded_by_people):
    team = graded_by_people.team
    log = log_with_rates(team, rates_following_people(KEYWORDS))

    made = click_judgements_make(team=team, user=None, log=log, model="ctr", scale="graded")

    assert made.fitted_on == 32
    assert made.fitted_agreement == 1.0
    listed = ListedJudgement.objects.filter(judgement_list=made.judgement_list)
    assert all(row.grade == people_grade_of(int(row.doc_id.rsplit("-", 1)[1])) for row in listed)


def test_fitting_with_too_few_of_peoples_grades_asks_for_thresholds(team_a):
    log = log_with_rates(team_a, rates_following_people(["never judged"]))

    with pytest.raises(InvalidInput) as refused:
        click_judgements_make(team=team_a, user=None, log=log, model="pbm", scale="graded")

    assert "thresholds: only 0 pairs" in refused.value.problems[0]
    assert "set them by hand" in refused.value.problems[0]
    assert not JudgementList.objects.exists()


@pytest.mark.parametrize(
    ("asked", "problem"),
    [
        ({"model": "bandit"}, "model: one of ctr, coec, pbm, dbn"),
        ({"scale": "custom"}, "scale: one of binary, graded, detail"),
        ({"min_impressions": 0}, "min_impressions: a whole number from 1 to 1,000,000"),
        ({"min_impressions": "ten"}, "min_impressions: a whole number from 1 to 1,000,000"),
        ({"thresholds": [0.5, 0.2, 0.9]}, "thresholds: 3 ascending numbers from 0"),
        ({"thresholds": "0.1 0.2"}, "thresholds: 3 ascending numbers from 0"),
        ({"thresholds": ["nan", 1, 2]}, "thresholds: 3 ascending numbers from 0"),
        ({"min_impressions": 500}, "min_impressions: no document of the log was shown 500"),
        ({"name": "x" * 201}, "name: a text of 1 to 200 characters"),
    ],
)
def test_bad_settings_are_named_and_nothing_is_kept(team_a, asked, problem):
    log = log_with_rates(team_a, {("shoes", "a"): 0.5})
    settings = {"model": "ctr", "scale": "graded", "thresholds": [0.1, 0.2, 0.3], **asked}

    with pytest.raises(InvalidInput) as refused:
        click_judgements_make(team=team_a, user=None, log=log, **settings)

    assert any(given.startswith(problem) for given in refused.value.problems), refused.value
    assert not JudgementList.objects.exists()
    assert not ClickJudgementSet.objects.exists()


def test_a_name_the_library_has_is_refused(team_a):
    log = log_with_rates(team_a, {("shoes", "a"): 0.5})
    click_judgements_make(
        team=team_a, user=None, log=log, model="ctr", scale="binary", thresholds=[0.3]
    )

    with pytest.raises(InvalidInput, match="already has a list named clicks: CTR"):
        click_judgements_make(
            team=team_a, user=None, log=log, model="ctr", scale="binary", thresholds=[0.6]
        )

    again = click_judgements_make(
        team=team_a, user=None, log=log, model="ctr", scale="binary", thresholds=[0.6], name="B"
    )
    first = JudgementList.objects.exclude(id=again.judgement_list_id).get()
    # Other thresholds are another source, though the pages name both alike.
    assert first.source_id != again.judgement_list.source_id


def test_the_library_ranks_clicks_below_people_and_names_them(graded_by_people):
    team = graded_by_people.team
    rates = {("keyword 0", "keyword 0-doc-1"): 0.01, ("only clicks", "z"): 0.9}
    log = log_with_rates(team, rates)
    click_judgements_make(
        team=team, user=None, log=log, model="ctr", scale="graded", thresholds=[0.1, 0.2, 0.3]
    )

    grades = library_grades(
        team_id=team.id,
        pairs=[("keyword 0", "keyword 0-doc-1"), ("only clicks", "z")],
        scale="graded",
    )

    assert (
        grades[("keyword 0", "keyword 0-doc-1")].basis,
        grades[("keyword 0", "keyword 0-doc-1")].grade,
    ) == ("people", 3)
    assert (grades[("only clicks", "z")].basis, grades[("only clicks", "z")].grade) == ("clicks", 3)


# --- Calibrating them --------------------------------------------------------------------


def clicks_on(team, rates, thresholds=(0.1, 0.3, 0.5), name=None):
    log = log_with_rates(team, rates, name=name or "October")
    return click_judgements_make(
        team=team,
        user=None,
        log=log,
        model="ctr",
        scale="graded",
        thresholds=list(thresholds),
        name=name,
    ).judgement_list


def test_a_click_list_is_calibrated_on_a_gold_set_as_a_judge_is(graded_by_people):
    team = graded_by_people.team
    gold = gold_set_create(team=team, name="Gold", baseline=graded_by_people.id, keywords=8, seed=3)
    rates = rates_following_people(list(KEYWORDS)[:6])  # two keywords have no clicks
    listed = clicks_on(team, rates)

    run = list_calibration_make(gold_set=gold, judgement_list=listed)

    assert run.status == CalibrationStatus.FINISHED
    assert (run.graded, run.failed) == (24, 8)
    assert run.alpha == pytest.approx(1.0)
    assert run.graded_by == listed.name
    assert run.model_name == "CTR"
    missing = CalibrationGrade.objects.filter(run=run, grade__isnull=True)
    assert {grade.failure for grade in missing} == {NOT_IN_LIST}


def test_a_list_on_another_scale_or_of_another_team_is_not_calibrated(graded_by_people):
    team = graded_by_people.team
    gold = gold_set_create(team=team, name="Gold", baseline=graded_by_people.id, keywords=8, seed=3)
    log = log_with_rates(team, {("keyword 0", "keyword 0-doc-1"): 0.5})
    binary = click_judgements_make(
        team=team, user=None, log=log, model="ctr", scale="binary", thresholds=[0.3]
    ).judgement_list
    theirs = clicks_on(make_team("Other"), {("keyword 0", "keyword 0-doc-1"): 0.5})

    with pytest.raises(InvalidInput, match="judgement_list: its grades are on the binary scale"):
        list_calibration_make(gold_set=gold, judgement_list=binary)
    with pytest.raises(NotFound):
        list_calibration_make(gold_set=gold, judgement_list=theirs)


# --- Grading with them -------------------------------------------------------------------


@pytest.fixture
def open_evaluation(team_a):
    return make_evaluation(team=team_a, scale="graded", strategy=3, keywords={"shoes": 3})


def test_clicks_grade_one_free_slot_of_each_result_they_know(open_evaluation):
    team = open_evaluation.team
    listed = clicks_on(team, {("shoes", "shoes-doc-1"): 0.6, ("shoes", "shoes-doc-2"): 0.2})
    people_slot = slots_of(open_evaluation)[0]  # result 1's first slot
    slot_judge(slot_id=people_slot.id, giver=Giver.recorded(None, "ann"), grade=1)

    done = evaluation_grade_with_clicks(
        evaluation=open_evaluation, judgement_list=listed, user=None
    )

    assert (done.graded, done.unknown, done.taken) == (2, 1, 0)
    by_clicks = FeedbackSlot.objects.filter(evaluation_id=open_evaluation.id, source="clicks")
    assert sorted(by_clicks.values_list("snapshot__position", "grade")) == [(1, 3), (2, 1)]
    people_slot.refresh_from_db()
    assert (people_slot.grade, people_slot.source) == (1, Source.PERSON)
    mix = evaluation_mix(open_evaluation)
    assert mix.kind == MixKind.MIXED
    assert ("clicks: CTR, 2026-10-01 to 2026-10-31", 2) in mix.parts()
    assert "clicks: CTR, 2026-10-01 to 2026-10-31 2 (67 %)" in mix.text

    again = evaluation_grade_with_clicks(
        evaluation=open_evaluation, judgement_list=listed, user=None
    )
    assert (again.graded, again.taken) == (0, 2)


def test_an_evaluation_graded_by_clicks_alone_says_so(open_evaluation):
    team = open_evaluation.team
    listed = clicks_on(team, {("shoes", f"shoes-doc-{n}"): 0.6 for n in (1, 2, 3)})

    evaluation_grade_with_clicks(evaluation=open_evaluation, judgement_list=listed, user=None)

    mix = evaluation_mix(open_evaluation)
    assert (mix.kind, mix.badge, mix.by_people, mix.by_clicks) == (MixKind.CLICKS, "Clicks", 0, 3)


def test_the_teams_rule_keeps_uncalibrated_clicks_from_grading(graded_by_people):
    team = graded_by_people.team
    gate_set(team=team, min_alpha=0.8)
    listed = clicks_on(team, rates_following_people(KEYWORDS))
    target = make_evaluation(team=team, scale="graded", keywords={"keyword 1": 4})

    with pytest.raises(InvalidState, match="it has no calibration"):
        evaluation_grade_with_clicks(evaluation=target, judgement_list=listed, user=None)
    assert not FeedbackSlot.objects.filter(evaluation_id=target.id, grade__isnull=False).exists()

    gold = gold_set_create(team=team, name="Gold", baseline=graded_by_people.id, keywords=8, seed=3)
    list_calibration_make(gold_set=gold, judgement_list=listed)
    done = evaluation_grade_with_clicks(evaluation=target, judgement_list=listed, user=None)
    assert done.graded == 4


def test_only_click_lists_on_the_evaluations_scale_grade_it(open_evaluation):
    team = open_evaluation.team
    log = log_with_rates(team, {("shoes", "shoes-doc-1"): 0.5})
    binary = click_judgements_make(
        team=team, user=None, log=log, model="ctr", scale="binary", thresholds=[0.3]
    ).judgement_list
    theirs = clicks_on(make_team("Other"), {("shoes", "shoes-doc-1"): 0.5})

    with pytest.raises(InvalidInput, match="on the binary scale, the evaluation's on the graded"):
        evaluation_grade_with_clicks(evaluation=open_evaluation, judgement_list=binary, user=None)
    with pytest.raises(NotFound):
        evaluation_grade_with_clicks(evaluation=open_evaluation, judgement_list=theirs, user=None)


def test_reuse_never_copies_click_grades(open_evaluation):
    team = open_evaluation.team
    listed = clicks_on(team, {("shoes", f"shoes-doc-{n}"): 0.6 for n in (1, 2, 3)})
    evaluation_grade_with_clicks(evaluation=open_evaluation, judgement_list=listed, user=None)

    later = make_evaluation(
        team=team, scale="graded", keywords={"shoes": 3}, reuse="keyword_doc", reuse_judges=True
    )

    assert not FeedbackSlot.objects.filter(evaluation_id=later.id, grade__isnull=False).exists()


def test_the_command_makes_judgements_from_a_log_and_names_bad_options(team_a):
    log_with_rates(team_a, {("shoes", "a"): 0.7, ("shoes", "b"): 0.05}, name="Big log")
    out = io.StringIO()

    call_command(
        "click_judgements",
        "--team=Team A",
        "--log=Big log",
        "--model=ctr",
        "--scale=binary",
        "--thresholds=0.3",
        stdout=out,
    )
    with pytest.raises(CommandError) as refused:
        call_command("click_judgements", "--team=Team A", "--log=Big log", "--min-impressions=0")

    assert out.getvalue().startswith(
        "Made 2 judgements: clicks: CTR, 2026-10-01 to 2026-10-31 (thresholds 0.3); "
    )
    assert refused.value.returncode == 2
    assert "--min-impressions: a whole number from 1 to 1,000,000" in str(refused.value)
