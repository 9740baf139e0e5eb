"""Domain errors shared by services, views and the API.

Services raise these; one place in each interface (page or API) turns them into an
answer, so the rules and their messages live in exactly one spot.
"""


class DomainError(Exception):
    """A request that breaks a rule of the product. `field` names what was wrong, if any."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class NotAllowed(DomainError):
    """The person may not do this to this object (wrong role, not their slot)."""


class NotFound(DomainError):
    """No such object for this team: another team's objects do not exist for it (404)."""


class InvalidState(DomainError):
    """The object is not in a state that allows this (e.g. grading a finished evaluation)."""


class InvalidInput(DomainError):
    """The input is malformed. `problems` lists every problem with its location."""

    def __init__(self, problems: list[str] | dict[str, str], *, field: str | None = None) -> None:
        if isinstance(problems, dict):
            problems = [f"{name}: {reason}" for name, reason in problems.items()]
        super().__init__("; ".join(problems), field=field)
        self.problems = problems


class RateLimited(DomainError):
    """Asked too often lately (invitations sent, for example): allowed again after
    `retry_after` seconds. Pages show the message; the API answers 429 with Retry-After."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
