from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.errors import InvalidInput
from apps.evaluations.metric_list import parse_metric_list
from apps.interchange.cli import find_team, progress_bar, rejected
from apps.interchange.trec import import_trec


def parse_metrics(text: str) -> list[tuple[str, int]]:
    try:
        return parse_metric_list(text)
    except ValueError as error:
        raise CommandError(f"--metrics: {error}") from None


class Command(BaseCommand):
    help = (
        "Import a TREC run (and qrels, topics) into a team as a pending evaluation: one "
        "keyword per qid, the qrels as grades. Prints the new evaluation's id, and on "
        "stderr what the import did."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--team", required=True, help="the team's id or name")
        parser.add_argument("--run", required=True, type=Path, help="qid Q0 docno rank score tag")
        parser.add_argument("--qrels", type=Path, help="qid iteration docno grade")
        parser.add_argument("--topics", type=Path, help="qid<TAB>keyword text")
        parser.add_argument(
            "--scale",
            required=True,
            choices=["binary", "graded", "detail", "custom"],
            help="custom: the levels the qrels hold (e.g. -2..4), as trec_eval reads them",
        )
        parser.add_argument(
            "--relevant-from",
            type=int,
            default=1,
            help="custom scale: the lowest relevant level (trec_eval -l; default 1)",
        )
        parser.add_argument("--metrics", required=True, help="e.g. ndcg@10,precision@5")
        parser.add_argument("--profile", default="searchtweak", choices=["searchtweak", "trec"])
        parser.add_argument("--strategy", type=int, default=1, choices=[1, 3])
        parser.add_argument("--name", help="the evaluation's name (default: the run's file name)")
        parser.add_argument(
            "--keep-rank",
            action="store_true",
            help="positions from the rank column instead of trec_eval's score order",
        )
        parser.add_argument(
            "--zero-without-results",
            action="store_true",
            help="judged queries without results count as 0 in the means (trec_eval -c)",
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        team = find_team(options["team"])
        metrics = parse_metrics(options["metrics"])
        run: Path = options["run"]
        with ExitStack() as files:

            def opened(path: Path) -> IO[bytes]:
                try:
                    return files.enter_context(path.open("rb"))
                except OSError as error:
                    raise CommandError(f"cannot read {path}: {error.strerror}") from error

            run_file = opened(run)
            given = {role: opened(options[role]) for role in ("qrels", "topics") if options[role]}
            progress = files.enter_context(progress_bar(self.stderr, not options["no_progress"]))
            try:
                imported = import_trec(
                    team=team,
                    run=run_file,
                    qrels=given.get("qrels"),
                    topics=given.get("topics"),
                    name=options["name"] or run.name,
                    scale=options["scale"],
                    relevant_from=options["relevant_from"],
                    metrics=metrics,
                    profile=options["profile"],
                    strategy=options["strategy"],
                    keep_rank=options["keep_rank"],
                    zero_without_results=options["zero_without_results"],
                    progress=progress,
                )
            except InvalidInput as error:
                raise rejected(error, str(run)) from error
        # The id alone on stdout (scripts read it); what the import did on stderr.
        self.stderr.write(f"Imported {imported.report.summary()}.")
        self.stdout.write(str(imported.evaluation.id))
