"""A try runs a search model's draft over a query set on a real local search server and
scores it from the team's judgement library against a baseline."""

import pytest

from apps.core.errors import InvalidInput
from apps.tries.models import Try, TryState
from apps.tries.report import try_report
from apps.tries.starting import TryRequest, try_start
from apps.tries.verdict import Verdict

from .tuned import KEYWORDS, doc_id, import_grades

pytestmark = pytest.mark.django_db


def run_try(team, capture, **asked):
    """Make a try and let its queued run happen, as a worker would."""
    with capture(execute=True):
        attempt = try_start(team=team, user=None, asked=TryRequest(**asked))
    return Try.objects.get(id=attempt.id)


def best_then(team, capture, **changes):
    """Try 1 as the model ranks (best first), then try 2 with `changes`, against try 1."""
    run_try(team, capture, model="Tuned", queries=KEYWORDS, metrics="ndcg@5")
    return run_try(team, capture, model="Tuned", queries=KEYWORDS, metrics="ndcg@5", **changes)


def test_a_try_runs_every_query_through_the_draft_and_keeps_its_lists(
    team_a, tuned_model, django_capture_on_commit_callbacks
):
    attempt = run_try(
        team_a, django_capture_on_commit_callbacks, model="Tuned", queries=KEYWORDS[:3]
    )
    assert attempt.state == TryState.DONE
    assert attempt.number == 1
    assert (attempt.queries_done, attempt.queries_total) == (3, 3)
    first = attempt.queries.order_by("position").first()
    assert first.doc_ids == [doc_id(KEYWORDS[0], rank) for rank in (1, 2, 3, 4, 5)]


def test_a_worse_boost_says_worse_against_the_earlier_try(
    team_a, tuned_model, django_capture_on_commit_callbacks
):
    import_grades(team_a, ranks=range(1, 11))
    worse = best_then(
        team_a, django_capture_on_commit_callbacks, params=[["boost", "1"]], baseline_try=1
    )
    report = try_report(worse)
    assert report.baseline_label == "try 1"
    assert report.verdict == Verdict.WORSE
    line = report.metrics[0]
    assert line.judged_tried == line.judged_baseline == 1.0
    assert line.paired.losses == len(KEYWORDS) and line.paired.ci_high < 0
    row = report.queries[0]
    assert row.new == [doc_id(KEYWORDS[0], rank) for rank in (10, 9, 8, 7, 6)]
    assert row.rbo == 0.0


def test_the_same_boost_says_no_change_at_once_from_the_library(
    team_a, tuned_model, django_capture_on_commit_callbacks
):
    import_grades(team_a, ranks=range(1, 6))
    capture = django_capture_on_commit_callbacks
    run_try(team_a, capture, model="Tuned", queries=KEYWORDS)
    same = run_try(team_a, capture, model="Tuned", queries=KEYWORDS, knobs={"unused": 1})
    report = try_report(same)
    assert report.verdict == Verdict.NO_CHANGE
    assert report.rbo_mean == 1.0 and report.tau_mean == 1.0
    assert report.bases == {"people": 50} and report.unjudged == 0


def test_an_unjudged_hole_says_not_enough_judged_until_it_is_graded(
    team_a, tuned_model, django_capture_on_commit_callbacks
):
    import_grades(team_a, ranks=range(1, 6))
    worse = best_then(
        team_a,
        django_capture_on_commit_callbacks,
        params=[["boost", "#boost#"]],
        knobs={"boost": 1},
    )
    report = try_report(worse)
    assert report.verdict == Verdict.NOT_ENOUGH_JUDGED
    assert report.metrics[0].judged_tried == 0.0 and report.unjudged == 50

    import_grades(team_a, ranks=range(6, 11), name="The hole, graded")
    assert try_report(worse).verdict == Verdict.WORSE


def test_a_condensed_metric_is_offered_when_the_coverage_differs(
    team_a, tuned_model, django_capture_on_commit_callbacks, search_server
):
    import_grades(team_a, ranks=range(1, 7))  # the worse ranking's top 5 is 1/5 judged
    worse = best_then(team_a, django_capture_on_commit_callbacks, params={"boost": 1})
    line = try_report(worse).metrics[0]
    assert line.judged_tried == pytest.approx(0.2)
    assert line.condensed is not None and line.condensed.metric == "ndcg_cond"


def test_tries_of_a_model_are_numbered_in_order(
    team_a, tuned_model, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    numbers = [
        run_try(team_a, capture, model=tuned_model.id, queries=["a"]).number for _ in range(3)
    ]
    assert numbers == [1, 2, 3]


def test_every_problem_is_named_and_nothing_is_made(team_a, tuned_model):
    with pytest.raises(InvalidInput) as raised:
        try_start(
            team=team_a,
            user=None,
            asked=TryRequest(
                model="No such model",
                queries=["ok", ""],
                params=[["boost"]],
                knobs={"Bad Name": 1},
                metrics="nonsense@5",
                depth=0,
            ),
        )
    problems = " | ".join(raised.value.problems)
    for field in ("model:", "queries[1]:", "params[0]:", "knobs.Bad Name:", "metrics:", "depth:"):
        assert field in problems
    assert not Try.objects.exists()


def test_another_teams_evaluation_is_not_a_query_set(team_a, team_b, tuned_model):
    from apps.evaluations.models import Evaluation

    theirs = Evaluation.objects.create(team=team_b, name="Theirs")
    with pytest.raises(InvalidInput, match=f"evaluation: the team has no evaluation {theirs.id}"):
        try_start(team=team_a, user=None, asked=TryRequest(model="Tuned", evaluation=theirs.id))


def test_two_models_side_by_side_before_anyone_grades(
    team_a, tuned_model, search_server, django_capture_on_commit_callbacks
):
    from apps.endpoints.tests.factories import make_model

    make_model(team_a, tuned_model.endpoint, name="Other", params="q=#query#\nboost=1")
    capture = django_capture_on_commit_callbacks
    ours = run_try(team_a, capture, model="Tuned", queries=KEYWORDS[:4])
    theirs = run_try(team_a, capture, model="Other", queries=KEYWORDS[:4])
    search_server.results = 8  # a longer list overlaps: documents 3 to 8 are in both
    longer = run_try(team_a, capture, model="Other", queries=KEYWORDS[:4], depth=8)

    apart = try_report(ours, against=theirs)
    assert apart.baseline_label == "Other, try 1"
    assert apart.rbo_mean == 0.0 and apart.tau_mean is None
    assert apart.unjudged == apart.baseline_unjudged == 20
    assert apart.verdict == Verdict.NOT_ENOUGH_JUDGED

    row = try_report(ours, against=longer).queries[0]
    assert [r.other_rank for r in row.tried.results] == [None, None, 8, 7, 6]
    assert row.tau == -1.0
