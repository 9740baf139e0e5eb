from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.errors import InvalidInput
from apps.interchange.cli import find_team, progress_bar, rejected
from apps.interchange.document import import_document


class Command(BaseCommand):
    help = (
        "Import an evaluation document (relevo.evaluation/1) into a "
        "team as a pending evaluation. Prints the new evaluation's id."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="the JSON document")
        parser.add_argument("--team", required=True, help="the team's id or name")
        parser.add_argument(
            "--name", default="", help="the new evaluation's name instead of the document's"
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        team = find_team(options["team"])
        path: Path = options["file"]
        try:
            source = path.open("rb")
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error.strerror}") from error
        with source, progress_bar(self.stderr, not options["no_progress"]) as progress:
            try:
                evaluation = import_document(
                    team=team, source=source, name=options["name"], progress=progress
                )
            except InvalidInput as error:
                raise rejected(error, str(path)) from error
        self.stdout.write(str(evaluation.id))
