"""`manage.py click_judgements`: a click model's judgements from one of a team's behaviour
logs, kept in its library as the clicks' (what a log's page asks a worker to do, done here
in this process and waited for: for scripts). Exits 2 naming each problem when nothing is
made."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.models import Team
from apps.behaviour.click_judgements import click_judgements_make, thresholds_text
from apps.behaviour.fitting import ClickModel
from apps.behaviour.models import ClickLog
from apps.core.errors import InvalidInput
from apps.engine.clicks import MIN_IMPRESSIONS

USAGE = 2


class Command(BaseCommand):
    help = "Make a click model's judgements from a team's behaviour log, into its library."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--team", required=True, help="the team's name")
        parser.add_argument("--log", required=True, help="the behaviour log's name")
        parser.add_argument("--model", default=ClickModel.PBM, help="pbm, dbn, coec or ctr")
        parser.add_argument("--scale", default="graded", help="binary, graded or detail")
        parser.add_argument("--min-impressions", default=str(MIN_IMPRESSIONS))
        parser.add_argument(
            "--thresholds", default="", help="ascending, e.g. '0.1 0.3 0.6'; none: fitted"
        )
        parser.add_argument("--name", default="", help="the list's name (default: its source)")

    def handle(self, *args: Any, **options: Any) -> None:
        team = Team.objects.filter(name=options["team"]).first()
        if team is None:
            raise CommandError(f"--team: no team named {options['team']!r}", returncode=USAGE)
        log = ClickLog.objects.filter(team=team, name=options["log"]).first()
        if log is None:
            raise CommandError(
                f"--log: the team has no log named {options['log']!r}", returncode=USAGE
            )
        try:
            made = click_judgements_make(
                team=team,
                user=None,
                log=log,
                model=options["model"],
                scale=options["scale"],
                min_impressions=options["min_impressions"],
                thresholds=options["thresholds"],
                name=options["name"],
            )
        except InvalidInput as error:
            problems = [_as_flag(problem) for problem in error.problems]
            raise CommandError("; ".join(problems), returncode=USAGE) from error
        fitted = f", fitted on {made.fitted_on:,} of people's grades" if made.fitted_on else ""
        self.stdout.write(
            f"Made {made.judgement_list.judgement_count:,} judgements: "
            f"{made.judgement_list.name} (thresholds {thresholds_text(made)}{fitted}); "
            f"{made.too_thin:,} pairs had fewer than {made.min_impressions} impressions."
        )


def _as_flag(problem: str) -> str:
    """ "min_impressions: ..." as the option is spelt: "--min-impressions: ..."."""
    field, colon, rest = problem.partition(":")
    return f"--{field.replace('_', '-')}{colon}{rest}"
