"""The top-level settings of an evaluation document, checked for their JSON shape.

Their rules (names, scales, metrics, transformers...) are evaluation_create's, so they
live in one place; this module turns the document's values into its arguments and
reports what evaluation_create cannot be given.
"""

import json
from collections.abc import Mapping
from typing import Any

from apps import engine
from apps.evaluations.metric_list import cutoff_in
from apps.evaluations.scales import scale_levels_problems, scale_of

from .checks import TAG_LIMIT, is_text
from .problems import Problems

FORMAT = "relevo.evaluation/1"

SETTINGS_KEYS = {
    "format",
    "name",
    "description",
    "scale",
    "scale_levels",
    "strategy",
    "profile",
    "show_position",
    "zero_without_results",
    "scoring_guidelines",
    "tags",
    "transformers",
    "metrics",
    "keywords",
}
# What an export adds; an import ignores it.
READ_ONLY_KEYS = {"id", "status", "progress", "created_at", "finished_at"}
METRIC_KEYS = {"metric", "k", "value"}


def _hashable(value: Any) -> Any:
    """A JSON value that can sit in a set, for messages of evaluation_create."""
    return json.dumps(value) if isinstance(value, list | dict) else value


class SettingsCheck:
    """The top-level settings as evaluation_create's arguments, with shape problems.

    `flagged` holds the locations already reported, so evaluation_create's own message
    about a placeholder given in their place is not listed a second time.
    """

    def __init__(self, header: Mapping[str, Any], problems: Problems) -> None:
        self.problems = problems
        self.flagged: set[str] = set()
        self.arguments: dict[str, Any] = {}
        self.tag_names: list[str] = []
        self._check(header)

    def _flag(self, location: str, problem: str) -> None:
        self.flagged.add(location)
        self.problems.add(f"{location}: {problem}")

    def _text(self, header: Mapping[str, Any], key: str, *, required: bool = False) -> str:
        value = header.get(key)
        if value is None:
            if required:
                self._flag(key, "required")
            return ""
        if not is_text(value):
            self._flag(key, "must be a text without NUL characters")
            return ""
        return value

    def _check(self, header: Mapping[str, Any]) -> None:
        for key in header:
            if key not in SETTINGS_KEYS and key not in READ_ONLY_KEYS:
                self._flag(key, "unknown field")
        fmt = header.get("format")
        if fmt != FORMAT:
            shown = "required" if fmt is None else f"{fmt!r} is not supported"
            self._flag("format", f"{shown}; expected {FORMAT!r}")
        arguments = self.arguments
        arguments["name"] = self._text(header, "name", required=True)
        arguments["description"] = self._text(header, "description")
        arguments["scoring_guidelines"] = self._text(header, "scoring_guidelines")
        if "scale" not in header:
            self._flag("scale", "required (binary, graded, detail or custom)")
        arguments["scale"] = _hashable(header.get("scale"))
        arguments["scale_levels"] = header.get("scale_levels")
        arguments["strategy"] = _hashable(header.get("strategy", 1))
        arguments["profile"] = _hashable(header.get("profile", engine.PROFILES[0]))
        show_position = header.get("show_position", False)
        if not isinstance(show_position, bool):
            self._flag("show_position", "must be true or false")
        arguments["show_position"] = show_position is True
        zero_without_results = header.get("zero_without_results", False)
        if not isinstance(zero_without_results, bool):
            self._flag("zero_without_results", "must be true or false")
        arguments["zero_without_results"] = zero_without_results is True
        transformers = header.get("transformers")
        arguments["transformers"] = transformers if transformers is not None else {}
        arguments["metrics"] = self._metrics(header.get("metrics"))
        self._tags(header.get("tags"))

    def _metrics(self, metrics: Any) -> list[tuple[Any, Any]]:
        if metrics is None:
            self._flag("metrics", 'required: a list of {"metric", "k"}')
            return []
        if not isinstance(metrics, list):
            self._flag("metrics", 'must be a list of {"metric", "k"}')
            return []
        pairs: list[tuple[Any, Any]] = []
        for index, entry in enumerate(metrics):
            location = f"metrics[{index}]"
            if not isinstance(entry, dict):
                self._flag(location, 'must be an object {"metric", "k"}')
                self.flagged.update({f"{location}.metric", f"{location}.k"})
                pairs.append((None, None))
                continue
            for key in entry:
                if key not in METRIC_KEYS:
                    self._flag(f"{location}.{key}", "unknown field")
            if "k" not in entry:
                self._flag(f"{location}.k", "required (null for the whole list)")
            k = cutoff_in(entry.get("k"))
            pairs.append((_hashable(entry.get("metric")), _hashable(k)))
        return pairs

    def _tags(self, tags: Any) -> None:
        if tags is None:
            return
        if not isinstance(tags, list):
            self._flag("tags", "must be a list of tag names")
            return
        for index, name in enumerate(tags):
            if not is_text(name) or not name.strip() or len(name.strip()) > TAG_LIMIT:
                self._flag(f"tags[{index}]", f"must be a name of 1 to {TAG_LIMIT} characters")
            else:
                self.tag_names.append(name.strip())

    def add_service_problems(self, problems: list[str]) -> None:
        """evaluation_create's problems, less those about what was reported already."""
        for problem in problems:
            location = problem.split(":", 1)[0]
            if location not in self.flagged:
                self.problems.add(problem)

    @property
    def scale(self) -> engine.Scale | None:
        """The scale, when it is valid (grades cannot be checked otherwise)."""
        scale = self.arguments["scale"]
        levels = self.arguments["scale_levels"]
        if scale == "custom":
            return None if scale_levels_problems(levels) else scale_of(scale, levels)
        return engine.SCALES.get(scale) if isinstance(scale, str) else None

    @property
    def strategy(self) -> int | None:
        strategy = self.arguments["strategy"]
        valid = type(strategy) is int and strategy in (1, 3)
        return strategy if valid else None
