"""The one exception the engine raises for bad input."""


class EngineError(ValueError):
    """Bad input to the scoring engine: unknown scale, metric or profile, k < 1, a grade
    that is not on its scale, or invalid transformer rules.

    It subclasses ValueError so callers that already treat ValueError as "the user sent
    something wrong" keep working, while services can still catch engine problems alone.
    """
