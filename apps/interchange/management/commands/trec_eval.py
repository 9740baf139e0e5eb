"""`manage.py trec_eval QRELS RUN [-q] [-c] [-l N] [-J] [-M N] [-m MEASURE ...]`.

manage.py runs apps/trec_eval/cli.py itself, before Django starts; this command is the
same one for `call_command` and `manage.py help`."""

import argparse
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.trec_eval.cli import USAGE
from apps.trec_eval.cli import main as trec_eval


class Command(BaseCommand):
    help = "Score a TREC run against qrels as trec_eval does; nothing is stored. " + USAGE

    def add_arguments(self, parser: CommandParser) -> None:
        # trec_eval's own options (-q, -c, -l ...) are not Django's: hand them on as typed.
        parser.add_argument("arguments", nargs=argparse.REMAINDER, help=USAGE)

    def handle(self, *args: Any, **options: Any) -> None:
        status = trec_eval(options["arguments"], self.stdout, self.stderr)
        if status:
            raise CommandError("trec_eval could not score these files", returncode=status)
