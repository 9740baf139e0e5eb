"""The calibration page says in one sentence what each judge is worth beside its figures:
as good as people, worse than people by how much, or worse than chance."""

import pytest

from apps.judges import calibration
from apps.judges.gold_sets import gold_set_create
from apps.judges.services import judge_create
from tests.factories import client_for, make_evaluation

from .test_calibration import KEYWORDS, PEOPLE, grades_by_title, people_grade

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_model_servers_allowed")]


def calibrated(gold, server, name, rule):
    # A model of its own each: the team's cache would give one the grades another paid for.
    judge = judge_create(
        team=gold.team, name=name, protocol="openai", base_url=server.openai_url, model_name=name
    )
    server.respond_with(grades_by_title(rule))
    run = calibration.calibration_create(gold_set=gold, judge=judge)
    calibration.calibration_execute(run_id=run.id)
    return run


def test_the_calibration_page_tells_each_judge_s_verdict_in_a_sentence(owner, team_a, server):
    baseline = make_evaluation(team=team_a, scale="graded", strategy=3, keywords=KEYWORDS)
    people_grade(baseline, PEOPLE)
    gold = gold_set_create(team=team_a, name="Gold", baseline=baseline.id, keywords=8, seed=3)
    calibrated(gold, server, "Faithful", PEOPLE)
    calibrated(
        gold, server, "Sloppy", lambda keyword, number: (PEOPLE(keyword, number) + number % 2) % 4
    )
    calibrated(gold, server, "Contrary", lambda keyword, number: (PEOPLE(keyword, number) + 2) % 4)

    page = client_for(owner).get(f"/judges/calibration/{gold.id}/").content.decode()
    verdicts = page.split('data-testid="verdicts"')[1].split("</ul>")[0]
    faithful, sloppy, contrary = verdicts.split('data-testid="verdict"')[1:]
    assert "Faithful" in faithful
    assert "Agrees with people as well as people agree with each other" in faithful
    assert "warns" not in page.split('data-testid="verdicts"')[1].split("Faithful")[0]
    assert "Sloppy" in sloppy and "Worse than people: alpha " in sloppy
    assert "lower (95% interval " in sloppy
    assert "Contrary" in contrary and "Worse than chance" in contrary
    assert "do not use this judge." in contrary
    assert page.count('class="verdict warns"') == 2


def test_a_running_calibration_has_its_verdict_once_it_is_over(owner, team_a, server):
    baseline = make_evaluation(team=team_a, scale="graded", strategy=3, keywords=KEYWORDS)
    people_grade(baseline, PEOPLE)
    gold = gold_set_create(team=team_a, name="Gold", baseline=baseline.id, keywords=4, seed=3)
    judge = judge_create(
        team=team_a, name="Busy", protocol="openai", base_url=server.openai_url, model_name="m"
    )
    calibration.calibration_create(gold_set=gold, judge=judge)
    page = client_for(owner).get(f"/judges/calibration/{gold.id}/").content.decode()
    assert "the verdict comes when the calibration is over." in page
