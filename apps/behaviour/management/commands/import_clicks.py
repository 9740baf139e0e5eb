"""`manage.py import_clicks`: a behaviour log into a team's store of clicks, from UBI's
JSON Lines exports (--ubi-queries and --ubi-events) or a CSV click log (--csv). Exits 2
naming the problem when nothing is stored; prints what could not be read otherwise."""

from contextlib import ExitStack
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.models import Team
from apps.behaviour.importing import click_log_import
from apps.behaviour.models import LogFormat
from apps.core.errors import InvalidInput

USAGE = 2


class Command(BaseCommand):
    help = "Import a behaviour log (UBI queries and events, or a CSV click log) for a team."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--team", required=True, help="the team's name")
        parser.add_argument("--name", required=True, help="the log's name in Relevo")
        parser.add_argument("--ubi-queries", help="the ubi_queries export, JSON Lines")
        parser.add_argument("--ubi-events", help="the ubi_events export, JSON Lines")
        parser.add_argument(
            "--csv", help="a CSV click log: query,document,position,clicked[,session,timestamp]"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        team = Team.objects.filter(name=options["team"]).first()
        if team is None:
            raise CommandError(f"--team: no team named {options['team']!r}", returncode=USAGE)
        file_format = LogFormat.CSV if options["csv"] else LogFormat.UBI
        paths = {
            "log": options["csv"],
            "queries": options["ubi_queries"],
            "events": options["ubi_events"],
        }
        with ExitStack() as files:
            try:
                opened = {
                    part: files.enter_context(open(path, "rb"))  # noqa: SIM115
                    for part, path in paths.items()
                    if path
                }
            except OSError as error:
                raise CommandError(
                    f"{error.filename}: {error.strerror}", returncode=USAGE
                ) from error
            try:
                log = click_log_import(
                    team=team, user=None, name=options["name"], file_format=file_format, **opened
                )
            except InvalidInput as error:
                flags = {"log": "--csv", "queries": "--ubi-queries", "events": "--ubi-events"}
                problems = [_as_flag(problem, flags) for problem in error.problems]
                raise CommandError("; ".join(problems), returncode=USAGE) from error
        self.stdout.write(
            f"Imported {log.name}: {log.events_read:,} events, {log.clicks:,} clicks, "
            f"{log.query_count:,} queries"
            + (f" ({log.first_event_at} to {log.last_event_at})" if log.first_event_at else "")
            + "."
        )
        if log.problem_count:
            self.stdout.write(f"{log.problem_count:,} lines could not be read and were left out:")
            for problem in log.problems:
                self.stdout.write(f"  {problem}")


def _as_flag(problem: str, flags: dict[str, str]) -> str:
    field, colon, rest = problem.partition(":")
    return f"{flags.get(field, '--' + field.replace('_', '-'))}{colon}{rest}"
