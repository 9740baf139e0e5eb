from pathlib import Path
from typing import Any, TextIO, cast

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.evaluations.models import Evaluation
from apps.interchange.cli import StreamTo
from apps.interchange.export import EXPORT_FORMATS


class Command(BaseCommand):
    help = "Export an evaluation as JSON, CSV, qrels, raw qrels (per grader) or a TREC run."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("evaluation", type=int, help="the evaluation's id")
        parser.add_argument("--format", default="json", choices=list(EXPORT_FORMATS))
        parser.add_argument("--output", type=Path, help="a file to write (default: stdout)")

    def handle(self, *args: Any, **options: Any) -> None:
        evaluation = Evaluation.objects.filter(id=options["evaluation"]).first()
        if evaluation is None:
            raise CommandError(f"no evaluation {options['evaluation']}")
        export = EXPORT_FORMATS[options["format"]][0]
        output: Path | None = options["output"]
        if output is None:
            export(evaluation, cast(TextIO, StreamTo(self.stdout)))
            return
        try:
            with output.open("w", encoding="utf-8", newline="") as out:
                export(evaluation, out)
        except OSError as error:
            raise CommandError(f"cannot write {output}: {error.strerror}") from error
