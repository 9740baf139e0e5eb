"""What the import and export commands share: the team, the progress bar, the answer."""

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management.base import CommandError, OutputWrapper
from tqdm import tqdm

from apps.accounts.models import Team
from apps.core.errors import InvalidInput
from apps.core.typed import parse_id


def find_team(value: str) -> Team:
    """A team by id or by name."""
    team_id = parse_id(value)
    team = Team.objects.filter(id=team_id).first() if team_id else None
    team = team or Team.objects.filter(name=value).first()
    if team is None:
        raise CommandError(f"no team {value!r} (give its id or its name)")
    return team


@contextmanager
def progress_bar(stderr: OutputWrapper, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    """A progress callback that moves a bar on stderr by snapshots imported so far."""
    stream: Any = getattr(stderr, "_out", sys.stderr)
    with tqdm(unit=" snapshots", file=stream, disable=not enabled, mininterval=0.5) as bar:

        def move(done: int) -> None:
            bar.update(done - bar.n)

        yield move


def rejected(error: InvalidInput, what: str) -> CommandError:
    return CommandError("\n".join([f"{what} rejected; nothing was imported:", *error.problems]))


class StreamTo:
    """A text stream for the exporters that writes through a command's stdout as is
    (OutputWrapper.write would end every chunk with a newline)."""

    def __init__(self, stdout: OutputWrapper) -> None:
        self.stdout = stdout

    def write(self, text: str) -> int:
        self.stdout.write(text, ending="")
        return len(text)
