from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.models import Team
from apps.accounts.services import member_add
from apps.core.errors import InvalidInput


class Command(BaseCommand):
    help = "Add a person to a team as evaluator or admin (or change their role and tags)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("team", help="team name")
        parser.add_argument("email")
        parser.add_argument("--role", required=True, choices=["evaluator", "admin"])
        parser.add_argument("--password", help="set the person's password")
        parser.add_argument("--tags", default="", help="comma-separated tag names")

    def handle(self, *args: object, **options: str) -> None:
        team = Team.objects.filter(name=options["team"].strip()).first()
        if team is None:
            raise CommandError(f"team: no team named {options['team']!r}")
        try:
            membership = member_add(
                team=team,
                email=options["email"],
                role=options["role"],
                password=options["password"],
                tag_names=options["tags"].split(","),
            )
        except InvalidInput as error:
            raise CommandError(error.message) from error
        tags = ", ".join(membership.tags.values_list("name", flat=True)) or "no tags"
        self.stdout.write(f"{membership.user.email} is {membership.role} of {team.name!r} ({tags})")
