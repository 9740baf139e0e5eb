"""`manage.py relevance_gate`: the regression gate a CI job runs (apps/insights/gate.py).

Exit status: 0 pass, 1 a significant regression, 3 not decided yet (grading incomplete),
2 a usage problem (an unknown team, evaluation or metric).
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.http import Http404

from apps.accounts.models import Team
from apps.core.errors import InvalidInput
from apps.evaluations.metric_list import parse_metric_list
from apps.insights.gate import gate

USAGE = 2


class Command(BaseCommand):
    help = (
        "Compare a candidate evaluation with a baseline and exit 1 when it is worse, "
        "significantly and by at least --min-change; 0 otherwise; 3 while grading is not done."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--team", required=True, help="the team's name")
        parser.add_argument("--baseline", required=True, type=int, help="the baseline's id")
        parser.add_argument("--candidate", required=True, type=int, help="the candidate's id")
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

    def handle(self, *args: Any, **options: Any) -> None:
        team = Team.objects.filter(name=options["team"]).first()
        if team is None:
            raise CommandError(f"--team: no team named {options['team']!r}", returncode=USAGE)
        if not 0 <= options["min_change"] <= 1000:
            raise CommandError("--min-change: a number from 0 to 1000", returncode=USAGE)
        try:
            metrics = parse_metric_list(options["metrics"]) if options["metrics"].strip() else None
            verdict = gate(
                team_id=team.id,
                baseline_id=options["baseline"],
                candidate_id=options["candidate"],
                metrics=metrics,
                min_change=options["min_change"],
            )
        except ValueError as error:
            raise CommandError(f"--metrics: {error}", returncode=USAGE) from error
        except InvalidInput as error:
            raise CommandError("; ".join(error.problems), returncode=USAGE) from error
        except Http404 as error:
            raise CommandError(
                "--baseline, --candidate: no such evaluation in this team", returncode=USAGE
            ) from error
        self.stdout.write(verdict.report())
        if verdict.exit_code:
            raise SystemExit(verdict.exit_code)
