from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.services import team_create
from apps.core.errors import InvalidInput


class Command(BaseCommand):
    help = "Create a team with its owner (the owner's account is created if new)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--owner", required=True, metavar="EMAIL")
        parser.add_argument("--password", help="set the owner's password")

    def handle(self, *args: object, **options: str) -> None:
        try:
            team = team_create(
                name=options["name"],
                owner_email=options["owner"],
                owner_password=options["password"],
            )
        except InvalidInput as error:
            raise CommandError(error.message) from error
        self.stdout.write(f"Created team {team.name!r} (id {team.id}) owned by {options['owner']}")
