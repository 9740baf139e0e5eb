from django.core.management.base import BaseCommand

from apps.demo import seed as demo


class Command(BaseCommand):
    help = (
        "Load the demo team, catalogue and evaluations (once; later runs change nothing but "
        "the address the demo's search model and judge call)."
    )

    def handle(self, *args: object, **options: object) -> None:
        team, created = demo.seed_demo()
        verb = "Loaded" if created else "Already loaded:"
        self.stdout.write(
            f"{verb} demo team {team.name!r} with {team.evaluations.count()} evaluations."
        )
        for line in demo.demo_addresses_follow(team):
            self.stdout.write(line)
        self.stdout.write(f"Demo logins (password: {demo.PASSWORD}):")
        self.stdout.write(f"  owner   {demo.OWNER}")
        self.stdout.write(f"  lead    {demo.LEAD}")
        for grader in demo.GRADERS:
            self.stdout.write(f"  grader  {grader}")
