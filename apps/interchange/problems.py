"""Collect every problem of an import, each with its location, up to a cap.

A broken file of a million snapshots could have a million problems; the answer lists the
first LIMIT and says how many more there were.
"""

import heapq

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

    def take(self, other: "Problems") -> None:
        """Add another list's problems after these, with the count of those it did not list."""
        for problem in other.listed:
            self.add(problem)
        self.count += other.count - len(other.listed)


class ProblemsByLine:
    """One file's problems found out of line order (an import reads it query by query):
    keeps the `limit` earliest lines and counts them all."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self.count = 0
        self._earliest: list[tuple[int, int, str]] = []  # a max-heap: (-line, -order, text)

    def __bool__(self) -> bool:
        return self.count > 0

    def add(self, line: int, problem: str) -> None:
        self.count += 1
        entry = (-line, -self.count, problem)
        if len(self._earliest) < self.limit:
            heapq.heappush(self._earliest, entry)
        elif entry > self._earliest[0]:
            heapq.heapreplace(self._earliest, entry)

    def move_to(self, problems: Problems) -> None:
        """Add these problems to `problems` in line order (then in the order found)."""
        ordered = sorted(self._earliest, reverse=True)
        for _, _, problem in ordered:
            problems.add(problem)
        problems.count += self.count - len(ordered)
