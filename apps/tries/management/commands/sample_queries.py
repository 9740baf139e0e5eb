"""`manage.py sample_queries`: a query set sampled from one of a team's behaviour logs
(docs/query-sets-from-logs.md), printed with its design: how it was drawn in words, the
bands, and each query's searches and chance of being picked. Exits 2 naming each bad
option when nothing is saved."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.models import Team
from apps.core.errors import InvalidInput, NotFound
from apps.tries.log_samples import design_in_words, query_set_sample
from apps.tries.models import SavedQuerySet

USAGE = 2


class Command(BaseCommand):
    help = "Sample a query set from a team's behaviour log: top, bands or pps."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--team", required=True, help="the team's name")
        parser.add_argument("--log", required=True, help="the behaviour log: id or name")
        parser.add_argument(
            "--method",
            required=True,
            help="top (the most searched), bands (a random sample by band of searches) or "
            "pps (probability proportional to searches)",
        )
        parser.add_argument("--size", required=True, help="how many queries, 1 to 1,000")
        parser.add_argument("--name", required=True, help="the query set's name")
        parser.add_argument("--seed", help="the same seed draws the same set; drawn if not given")
        parser.add_argument("--bands", help="bands only: how many bands of searches (3)")

    def handle(self, *args: Any, **options: Any) -> None:
        team = Team.objects.filter(name=options["team"]).first()
        if team is None:
            raise CommandError(f"--team: no team named {options['team']!r}", returncode=USAGE)
        try:
            saved = query_set_sample(
                team=team,
                user=None,
                **{
                    name: options[name]
                    for name in ("name", "log", "method", "size", "seed", "bands")
                },
            )
        except (InvalidInput, NotFound) as error:
            problems = error.problems if isinstance(error, InvalidInput) else [error.message]
            raise CommandError("; ".join(f"--{p}" for p in problems), returncode=USAGE) from error
        self.stdout.write(_printed(saved))


def _printed(saved: SavedQuerySet) -> str:
    design = saved.design or {}
    lines = [
        f"Saved the query set {saved.name} (id {saved.id}) with {len(saved.queries):,} queries.",
        design_in_words(design),
    ]
    for band in design.get("bands") or []:
        lines.append(
            f"  band {band['band']}: searched {band['low']:,} to {band['high']:,} times, "
            f"{band['sampled']:,} of {band['queries']:,} queries sampled"
        )
    lines.append(f"{'searches':>12}  {'chance':>10}  {'band':>4}  query")
    for one in design.get("queries", []):
        chance = "-" if one["probability"] is None else f"{one['probability']:.4g}"
        band = "" if one["band"] is None else str(one["band"])
        lines.append(f"{one['searches']:>12,}  {chance:>10}  {band:>4}  {one['query']}")
    return "\n".join(lines)
