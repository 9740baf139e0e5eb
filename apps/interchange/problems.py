"""Collect every problem of an import, each with its location, up to a cap.

A broken file of a million snapshots could have a million problems; the answer lists the
first LIMIT and says how many more there were.
"""

from apps.core.errors import InvalidInput

LIMIT = 200


class Problems:
    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self.listed: list[str] = []
        self.count = 0

    def __bool__(self) -> bool:
        return self.count > 0

    def add(self, problem: str) -> None:
        self.count += 1
        if len(self.listed) < self.limit:
            self.listed.append(problem)

    def extend(self, problems: list[str]) -> None:
        for problem in problems:
            self.add(problem)

    def as_list(self) -> list[str]:
        hidden = self.count - len(self.listed)
        if hidden:
            return [*self.listed, f"... and {hidden} more problems"]
        return list(self.listed)

    def raise_if_any(self) -> None:
        if self:
            raise InvalidInput(self.as_list())
