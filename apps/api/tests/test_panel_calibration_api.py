"""/api/v1/gold-sets/{id}/ reports a panel's calibration with each member's figures and
the members' agreement (a sampled judge's with its samples'), and
/api/v1/judges/{id}/fit-weights/ fits a panel's weights on its finished calibration:
every refusal names its field, and another team's panel or calibration answers 404."""

import pytest

from apps.judges import calibration
from apps.judges.gold_sets import gold_set_create
from apps.judges.tests.fake_provider import FakeProvider
from apps.judges.tests.test_calibration import KEYWORDS, PEOPLE, grades_by_title, people_grade
from apps.judges.tests.test_panel_calibration import (
    ONE_GRADE_APART_ALPHA,
    calibrated,
    member,
    panel_of,
)
from tests.factories import make_evaluation, make_team

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def server():
    with FakeProvider() as fake:
        yield fake


@pytest.fixture(autouse=True)
def local_model_servers_allowed(settings):
    settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES = True


def gold_of(team, keywords=KEYWORDS, name="Gold"):
    baseline = make_evaluation(team=team, scale="graded", strategy=3, keywords=keywords)
    people_grade(baseline, PEOPLE)
    return gold_set_create(team=team, name=name, baseline=baseline.id, seed=1)


def post(api, path, body):
    return api.post(path, body, content_type="application/json")


def errors(answer) -> list[tuple[str | None, str]]:
    return [(error["field"], error["message"]) for error in answer.json()["errors"]]


def test_the_report_gives_each_member_s_figures_and_the_members_agreement(api, team_a, server):
    gold = gold_of(team_a)
    gpt, claude, panel = panel_of(team_a, server, "median")
    run = calibrated(gold, panel)

    report = api.get(f"/api/v1/gold-sets/{gold.id}/?samples=0").json()["report"]
    [calibrated_panel] = report["calibrations"]
    assert calibrated_panel["calibration"]["id"] == run.id
    assert calibrated_panel["alpha"]["value"] == pytest.approx(1.0)
    first, second = calibrated_panel["members"]
    assert (first["judge"], first["name"], first["compared"]) == (gpt.id, "GPT", 32)
    assert first["alpha"]["value"] == pytest.approx(1.0)
    assert (second["judge"], second["name"]) == (claude.id, "Claude")
    assert second["alpha"]["value"] == pytest.approx(ONE_GRADE_APART_ALPHA)
    assert (second["exact"]["value"], second["within_one"]["value"]) == (0.25, 1.0)
    agreement = calibrated_panel["member_agreement"]
    assert agreement["voters"] == 2
    assert agreement["alpha"]["value"] == pytest.approx(ONE_GRADE_APART_ALPHA)
    assert agreement["all_agree"] == {
        "value": 0.25,
        "low": None,
        "high": None,
        "n": 32,
        "reason": "",
    }
    assert agreement["mean_agreement"]["value"] == pytest.approx(0.625)
    assert calibrated_panel["sample_agreement"] is None
    assert calibrated_panel["fitted_weights"] == []


def test_a_plain_judge_s_report_has_no_members_nor_agreement(api, team_a, server):
    gold = gold_of(team_a)
    gpt, _, _ = panel_of(team_a, server, "median")
    calibrated(gold, gpt)
    [report] = api.get(f"/api/v1/gold-sets/{gold.id}/?samples=0").json()["report"]["calibrations"]
    assert report["members"] == []
    assert report["member_agreement"] is None and report["sample_agreement"] is None


def test_a_panel_s_weights_are_fitted_on_its_calibration(api, team_a, server):
    gold = gold_of(team_a)
    gpt, claude, panel = panel_of(team_a, server, "fitted")
    run = calibrated(gold, panel)

    fitted = post(api, f"/api/v1/judges/{panel.id}/fit-weights/", {"calibration": run.id})
    assert fitted.status_code == 200, fitted.content
    answer = fitted.json()
    assert answer["weights"] == [
        {"judge": gpt.id, "name": "GPT", "weight": 1.0},
        {"judge": claude.id, "name": "Claude", "weight": 0.0},
    ]
    assert (answer["judge"], answer["rule"], answer["calibration"], answer["gold_set"]) == (
        panel.id,
        "fitted",
        run.id,
        gold.id,
    )
    assert (answer["items"], answer["squared_error"]) == (32, 0.0)

    [report] = api.get(f"/api/v1/gold-sets/{gold.id}/?samples=0").json()["report"]["calibrations"]
    assert report["fitted_weights"] == answer["weights"]
    assert [m["name"] for m in report["members"]] == ["GPT", "Claude"]


def test_every_refusal_of_a_fit_names_its_field(api, team_a, server):
    gold = gold_of(team_a)
    small = gold_of(team_a, keywords={"keyword 0": 4, "keyword 1": 4}, name="Small")
    gpt, _, panel = panel_of(team_a, server, "median")
    fit = f"/api/v1/judges/{panel.id}/fit-weights/"

    for body in ({}, {"calibration": "one"}, {"calibration": 0}, {"calibration": True}):
        refused = post(api, fit, body)
        assert refused.status_code == 400, body
        assert [field for field, _ in errors(refused)] == ["calibration"]
    assert errors(post(api, fit, {"calibration": 1, "colour": "red"})) == [
        ("colour", "not a field of a fit of weights")
    ]
    assert errors(post(api, fit, [1])) == [("body", "must be a JSON object")]

    on_gpt = calibrated(gold, gpt)
    not_a_panel = post(api, f"/api/v1/judges/{gpt.id}/fit-weights/", {"calibration": on_gpt.id})
    assert not_a_panel.status_code == 409
    assert errors(not_a_panel) == [("judge", "GPT is not a panel")]

    another_judge_s = post(api, fit, {"calibration": on_gpt.id})
    assert another_judge_s.status_code == 400
    assert errors(another_judge_s) == [
        ("calibration", f"the panel has no calibration '{on_gpt.id}'")
    ]

    too_few = post(api, fit, {"calibration": calibrated(small, panel).id})
    assert too_few.status_code == 409
    [(field, message)] = errors(too_few)
    assert field == "calibration" and message.startswith(
        "8 gold items of the calibration have every member's"
    )

    running = calibration.calibration_create(gold_set=gold, judge=panel)
    still_running = post(api, fit, {"calibration": running.id})
    assert still_running.status_code == 409
    assert errors(still_running) == [("calibration", "The calibration has not finished yet.")]

    unknown = post(api, fit, {"calibration": 10**15})
    assert unknown.status_code == 404
    assert unknown.json()["detail"] == f"calibration: the team has no calibration {10**15}"
    panel.refresh_from_db()
    assert panel.panel_fit is None


def test_another_team_s_panel_or_calibration_answers_404(api, team_a, server):
    other = make_team("Other")
    _, _, theirs = panel_of(other, server, "median")
    their_run = calibration.calibration_create(gold_set=gold_of(other, name="Theirs"), judge=theirs)
    _, _, ours = panel_of(team_a, server, "median")

    assert post(
        api, f"/api/v1/judges/{theirs.id}/fit-weights/", {"calibration": their_run.id}
    ).status_code == (404)
    on_theirs = post(api, f"/api/v1/judges/{ours.id}/fit-weights/", {"calibration": their_run.id})
    assert on_theirs.status_code == 404
    assert on_theirs.json()["detail"] == f"calibration: the team has no calibration {their_run.id}"


def test_a_sampled_judge_s_report_gives_its_samples_agreement(api, team_a, server):
    gold = gold_of(team_a)
    judge = member(team_a, server, "GPT x2", "gpt-test", temperature=0.8, samples=2)
    server.respond_with(grades_by_title(PEOPLE))
    calibrated(gold, judge)
    [report] = api.get(f"/api/v1/gold-sets/{gold.id}/?samples=0").json()["report"]["calibrations"]
    samples = report["sample_agreement"]
    assert samples["voters"] == 2
    assert (samples["all_agree"]["value"], samples["mean_agreement"]["value"]) == (1.0, 1.0)
    assert report["members"] == [] and report["member_agreement"] is None
