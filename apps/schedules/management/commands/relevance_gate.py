"""`manage.py relevance_gate`: the regression gate a CI job runs (apps/insights/gate.py).

Against a baseline, either a candidate evaluation (--candidate) or a search model run
now (--model: the baseline's keywords asked of it as a try, here, then copied into a
candidate evaluation: apps/schedules/candidates.py), waited for up to --wait seconds
while it is graded (by people, or by --judge).

Exit status: 0 pass, 1 a significant regression, 3 not decided yet (grading incomplete,
or the two judged by different sources without --sources people|any), 2 a usage problem
(an unknown team, evaluation, model or metric).
"""

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.http import Http404

from apps.accounts.models import Team
from apps.core.errors import InvalidInput
from apps.evaluations.metric_list import parse_metric_list
from apps.insights.gate import SAME_SOURCES, SOURCE_RULES, gate
from apps.schedules.candidates import candidate_start
from apps.schedules.models import RunState, ScheduledRun
from apps.schedules.runner import scheduled_runs_advance
from apps.tries.running import try_run

USAGE = 2
MAX_WAIT_SECONDS = 24 * 3600
POLL_SECONDS = 2.0
# How long the model's run may take on a worker that took it first, even with --wait 0:
# the candidate evaluation exists only once it is done.
TRY_WAIT_SECONDS = 600.0


class Command(BaseCommand):
    help = (
        "Compare a candidate (an evaluation, or a search model run now) with a baseline and "
        "exit 1 when it is worse, significantly and by at least --min-change; 0 otherwise; "
        "3 while grading is not done."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--team", required=True, help="the team's name")
        parser.add_argument("--baseline", required=True, type=int, help="the baseline's id")
        candidate = parser.add_mutually_exclusive_group(required=True)
        candidate.add_argument("--candidate", type=int, help="the candidate evaluation's id")
        candidate.add_argument(
            "--model", help="a search model (id or name) to run now on the baseline's keywords"
        )
        parser.add_argument("--judge", default="", help="with --model: an AI judge to grade it")
        parser.add_argument(
            "--wait",
            type=float,
            default=0.0,
            help="with --model: seconds to wait for the run to be graded (default 0)",
        )
        parser.add_argument(
            "--metrics",
            default="",
            help="metrics to gate on, e.g. 'ndcg@10, precision@5' (default: all both report)",
        )
        parser.add_argument(
            "--min-change",
            type=float,
            default=0.0,
            help="the smallest drop that matters, in the metric's units (default 0)",
        )
        parser.add_argument(
            "--sources",
            choices=SOURCE_RULES,
            default=SAME_SOURCES,
            help="when people graded one and an AI judge the other: same (default) leaves it "
            "undecided (exit 3); people compares the keywords no AI judge or click model "
            "graded; any compares them as they are",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        team = Team.objects.filter(name=options["team"]).first()
        if team is None:
            raise CommandError(f"--team: no team named {options['team']!r}", returncode=USAGE)
        if not 0 <= options["min_change"] <= 1000:
            raise CommandError("--min-change: a number from 0 to 1000", returncode=USAGE)
        if not 0 <= options["wait"] <= MAX_WAIT_SECONDS:
            raise CommandError(f"--wait: from 0 to {MAX_WAIT_SECONDS} seconds", returncode=USAGE)
        try:
            metrics = parse_metric_list(options["metrics"]) if options["metrics"].strip() else None
        except ValueError as error:
            raise CommandError(f"--metrics: {error}", returncode=USAGE) from error
        candidate = options["candidate"]
        if options["model"] is not None:
            candidate = self._run_model(team, options)
        try:
            verdict = gate(
                team_id=team.id,
                baseline_id=options["baseline"],
                candidate_id=candidate,
                metrics=metrics,
                min_change=options["min_change"],
                sources=options["sources"],
            )
        except InvalidInput as error:
            raise CommandError("; ".join(error.problems), returncode=USAGE) from error
        except Http404 as error:
            raise CommandError(
                "--baseline, --candidate: no such evaluation in this team", returncode=USAGE
            ) from error
        self.stdout.write(verdict.report())
        if verdict.exit_code:
            raise SystemExit(verdict.exit_code)

    def _run_model(self, team: Team, options: dict[str, Any]) -> int:
        """Run the model here as the candidate's try, make its evaluation, wait for its
        grading (moving runs on as beat would), and answer the evaluation's id."""
        try:
            run = candidate_start(
                team=team,
                baseline=options["baseline"],
                model=options["model"],
                judge=options["judge"] or None,
                min_change=options["min_change"],
            )
        except InvalidInput as error:
            problems = [f"--{problem}" for problem in error.problems]
            raise CommandError("; ".join(problems), returncode=USAGE) from error
        assert run.attempt_id is not None
        try_run(try_id=run.attempt_id)  # here; a worker that took it first runs it there
        give_up_at = time.monotonic() + max(options["wait"], TRY_WAIT_SECONDS)
        while _state(run) == RunState.TRYING and time.monotonic() < give_up_at:
            scheduled_runs_advance()
            if _state(run) == RunState.TRYING:
                time.sleep(POLL_SECONDS)
        run.refresh_from_db()
        evaluation = run.evaluation
        if evaluation is None:
            why = run.note or "its try is still running"
            raise CommandError(f"--model: the run did not start: {why}", returncode=USAGE)
        self.stdout.write(
            f"Candidate: evaluation {evaluation.id} ({evaluation.name}); "
            f"later: --candidate {evaluation.id}"
        )
        give_up_at = time.monotonic() + options["wait"]
        while time.monotonic() < give_up_at:
            scheduled_runs_advance()
            if _state(run) != RunState.STARTED:
                break
            time.sleep(POLL_SECONDS)
        return evaluation.id


def _state(run: ScheduledRun) -> str:
    return ScheduledRun.objects.filter(id=run.id).values_list("state", flat=True).get()
