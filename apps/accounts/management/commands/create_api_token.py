from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.api_tokens import api_token_create
from apps.accounts.models import Team
from apps.core.errors import InvalidInput


class Command(BaseCommand):
    help = "Create a named API token for a team and print it (it is shown only this once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("team", help="team name")
        parser.add_argument("name", help="what the token is for, e.g. 'nightly import'")

    def handle(self, *args: object, **options: str) -> None:
        team = Team.objects.filter(name=options["team"].strip()).first()
        if team is None:
            raise CommandError(f"team: no team named {options['team']!r}")
        try:
            _token, text = api_token_create(team=team, name=options["name"])
        except InvalidInput as error:
            raise CommandError(error.message) from error
        self.stderr.write(f"API token {options['name']!r} for {team.name!r} (store it now):")
        self.stdout.write(text)
