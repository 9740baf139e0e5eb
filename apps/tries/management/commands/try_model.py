"""`manage.py try_model`: try a change to a search model from a command line or a CI job
and exit as the regression gate does (0 better or no worse, 1 worse, 3 undecided: not
enough judged or no baseline, 2 a usage problem). The try runs here, in this process."""

import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.models import Team
from apps.core.errors import InvalidInput
from apps.tries.models import Try, TryState
from apps.tries.report import try_report
from apps.tries.running import try_run
from apps.tries.starting import DEFAULT_DEPTH, TryRequest, try_start
from apps.tries.verdict import EXIT_CODES
from apps.tries.wording import report_text

USAGE = 2
POLL_SECONDS = 0.5
MAX_WAIT_SECONDS = 24 * 3600


def _pairs(values: list[str], option: str) -> list[list[str]]:
    pairs = []
    for value in values:
        name, equals, text = value.partition("=")
        if not equals or not name.strip():
            raise CommandError(f"{option}: NAME=VALUE, got {value!r}", returncode=USAGE)
        pairs.append([name.strip(), text])
    return pairs


class Command(BaseCommand):
    help = "Run a search model with changed settings over a query set, score it from the "
    help += "team's judgement library against a baseline and print the verdict."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--team", required=True, help="the team's name")
        parser.add_argument("--model", required=True, help="a search model: id or name")
        queries = parser.add_mutually_exclusive_group(required=True)
        queries.add_argument("--evaluation", type=int, help="run this evaluation's keywords")
        queries.add_argument("--query", action="append", help="a query text (repeat it)")
        queries.add_argument("--query-set", help="run a saved query set's (id or name)")
        parser.add_argument("--param", action="append", default=[], help="NAME=VALUE override")
        parser.add_argument("--header", action="append", default=[], help="NAME=VALUE override")
        parser.add_argument("--knob", action="append", default=[], help="NAME=VALUE fills #NAME#")
        parser.add_argument("--body-file", help="a file holding the body template to send")
        parser.add_argument("--baseline-evaluation", type=int, help="compare with it")
        parser.add_argument("--baseline-try", type=int, help="compare with this try number")
        parser.add_argument("--metrics", default="", help="e.g. 'ndcg@10, p@5'")
        parser.add_argument("--depth", type=int, default=DEFAULT_DEPTH)
        parser.add_argument("--notes", default="")
        parser.add_argument(
            "--wait", type=float, default=600.0, help="seconds to wait for another runner"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        team = Team.objects.filter(name=options["team"]).first()
        if team is None:
            raise CommandError(f"--team: no team named {options['team']!r}", returncode=USAGE)
        if not 0 <= options["wait"] <= MAX_WAIT_SECONDS:
            raise CommandError(f"--wait: from 0 to {MAX_WAIT_SECONDS} seconds", returncode=USAGE)
        body = None
        if options["body_file"]:
            try:
                body = Path(options["body_file"]).read_text(encoding="utf-8")
            except (OSError, UnicodeError) as error:
                raise CommandError(f"--body-file: {error}", returncode=USAGE) from error
        asked = TryRequest(
            model=options["model"],
            evaluation=options["evaluation"],
            queries=options["query"],
            query_set=options["query_set"],
            params=_pairs(options["param"], "--param"),
            headers=_pairs(options["header"], "--header"),
            knobs=dict(_pairs(options["knob"], "--knob")),
            body=body,
            baseline_evaluation=options["baseline_evaluation"],
            baseline_try=options["baseline_try"],
            metrics=options["metrics"],
            depth=options["depth"],
            notes=options["notes"],
        )
        try:
            attempt = try_start(team=team, user=None, asked=asked)
        except InvalidInput as error:
            problems = [f"--{problem.replace('_', '-')}" for problem in error.problems]
            raise CommandError("; ".join(problems), returncode=USAGE) from error
        attempt = self._finished(attempt.id, options["wait"])
        report = try_report(attempt)
        self.stdout.write(report_text(report))
        exit_code = 3 if attempt.state != TryState.DONE else EXIT_CODES[report.verdict]
        if exit_code:
            raise SystemExit(exit_code)

    def _finished(self, try_id: int, wait: float) -> Try:
        """Run the try here; if a worker took it first, wait for that worker."""
        try_run(try_id=try_id)
        deadline = time.monotonic() + wait
        while True:
            attempt = Try.objects.select_related("search_model").get(id=try_id)
            if attempt.state in (TryState.DONE, TryState.FAILED):
                return attempt
            if time.monotonic() >= deadline:
                return attempt
            time.sleep(POLL_SECONDS)
