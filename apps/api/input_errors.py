"""A serializer's errors as the API reports every bad input: one "field: message" line
each, a list's item named by its index (`queries[3]: ...`), a nested field by its path."""

from typing import Any


def serializer_problems(errors: Any, field: str = "") -> list[str]:
    if isinstance(errors, dict):
        problems = []
        for key, nested in errors.items():
            problems += serializer_problems(nested, _path(field, key))
        return problems
    if isinstance(errors, list) and any(isinstance(item, dict | list) for item in errors):
        problems = []
        for index, item in enumerate(errors):
            if item:  # an item without errors is an empty dict or list
                problems += serializer_problems(item, _path(field, index))
        return problems
    messages = errors if isinstance(errors, list) else [errors]
    return [f"{field}: {' '.join(str(message) for message in messages)}"]


def _path(field: str, key: object) -> str:
    if isinstance(key, int):
        return f"{field}[{key}]"
    return f"{field}.{key}" if field else str(key)
