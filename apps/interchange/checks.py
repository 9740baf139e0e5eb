"""Validation of an evaluation document's keywords, each problem with its location.

Keywords are checked one at a time as they stream past and turned into the rows the
writer stores. (The settings: settings_check.py.)
"""

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

from apps import engine
from apps.accounts.models import Membership, Tag, Team
from apps.core.image_sources import RULE as IMAGE_RULE
from apps.core.image_sources import is_image_source
from apps.evaluations.fingerprints import content_fingerprint
from apps.evaluations.models import (
    Evaluation,
    FeedbackSlot,
    JudgementSource,
    Keyword,
    Snapshot,
    Source,
)
from apps.judging.judgements import REASON_MAX_LENGTH
from apps.judging.new_slots import SourceMark

from .problems import Problems
from .rows import Decision, SlotGrade, SnapshotRow, UnretrievedRow

# information_need and notes: what an export adds for leads; an import ignores them.
KEYWORD_KEYS = {"keyword", "snapshots", "unretrieved", "metrics", "information_need", "notes"}
UNRETRIEVED_KEYS = {"doc_id", "grade"}
SNAPSHOT_KEYS = {
    "position",
    "doc_id",
    "name",
    "image",
    "attributes",
    "grades",
    "decision",
    # what an export adds, read-only: ignored on import (a skip names a grader of the
    # exporting team, who may be nobody here)
    "value",
    "skips",
}
GRADE_KEYS = {"grader", "grade", "reason", "ai_judge", "content_fingerprint", "source"}
# A grade that names the content it was given on, or its source, takes the full check,
# which compares the content with its snapshot's (rare: an export's copied or imported
# grades).
QUICK_GRADE_KEYS = GRADE_KEYS - {"content_fingerprint", "source"}
FINGERPRINT = re.compile(r"[0-9a-f]{32}")
AI_JUDGE_KEYS = {"model", "prompt_version", "chain_link"}
SOURCE_KEYS = {"kind", "name", "reused_from"}
SOURCE_KINDS = tuple(Source.values)
DECISION_KEYS = {"grade", "by", "reason"}

MAX_POSITION = 2**31 - 1
GRADERS_REMEMBERED = 10_000


def _limit(model: Any, field: str) -> int:
    return int(model._meta.get_field(field).max_length)


KEYWORD_LIMIT = _limit(Keyword, "text")
DOC_ID_LIMIT = _limit(Snapshot, "doc_id")
NAME_LIMIT = _limit(Snapshot, "name")
IMAGE_LIMIT = _limit(Snapshot, "image")
GRADER_LIMIT = _limit(FeedbackSlot, "external_grader")
TAG_LIMIT = _limit(Tag, "name")
# what made an AI judge's grade, bounded as Relevo stores it
AI_JUDGE_LIMITS = {
    "model": _limit(JudgementSource, "model_name"),
    "prompt_version": _limit(JudgementSource, "prompt_version"),
    "chain_link": _limit(JudgementSource, "chain_link"),
}
# what a grade's source says beyond its kind: an import's label, a copy's evaluation
SOURCE_LIMITS = {
    "name": _limit(JudgementSource, "name"),
    "reused_from": _limit(Evaluation, "name"),
}


def is_text(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and "\x00" not in value


def _plain(value: str, limit: int) -> bool:
    return len(value) <= limit and "\x00" not in value


def _grader_name(value: Any) -> bool:
    return type(value) is str and _plain(value, GRADER_LIMIT) and bool(value.strip())


def _ai_judge_mark(value: Any) -> bool:
    """An AI judge's mark as an export writes it: null (none), or {"model",
    "prompt_version"}, each a text within its limit or null."""
    if value is None:
        return True
    if type(value) is not dict or not value.keys() <= AI_JUDGE_KEYS:
        return False
    return all(_judge_detail(value.get(key), limit) for key, limit in AI_JUDGE_LIMITS.items())


def _judge_detail(value: Any, limit: int) -> bool:
    return value is None or (type(value) is str and _plain(value, limit))


def judge_mark(grader: Any, judge: Any, source: Any = None) -> SourceMark | None:
    """What the grade's source records of what a file says gave it (already checked):
    an AI judge's mark (its `grader` is the judge's name), an earlier import's label or
    click judgements' source (`source`); None when the file says neither, so the grade
    is this import's."""
    if isinstance(judge, dict):
        name = grader if isinstance(grader, str) else ""
        model, prompt_version, link = (
            judge.get(key) or "" for key in ("model", "prompt_version", "chain_link")
        )
        return (Source.JUDGE, name, model, prompt_version, link)
    # An earlier import's grade keeps its label; clicks stay clicks, never people's.
    kept = (Source.IMPORT, Source.CLICKS)
    if isinstance(source, dict) and source.get("kind") in kept and source.get("name"):
        return (source["kind"], source["name"], "", "", "")
    return None


# Attributes as stored: JSON text, non-ASCII kept as is.
encode_json = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode


def team_members(team: Team) -> dict[str, int]:
    """Lower-cased email -> user id of every member of the team."""
    return {
        email.lower(): user_id
        for email, user_id in Membership.objects.filter(team=team).values_list(
            "user__email", "user_id"
        )
    }


class KeywordCheck:
    """Checks keywords one at a time and turns each into the writer's rows.

    Memory: one keyword's rows, and the texts of the keywords seen so far (to report a
    duplicate with the place of its first occurrence).
    """

    def __init__(
        self,
        *,
        scale: engine.Scale | None,
        strategy: int | None,
        members: Mapping[str, int],
        problems: Problems,
    ) -> None:
        self.scale = scale
        self.strategy = strategy
        self.members = members
        self.problems = problems
        self.seen: dict[str, int] = {}
        # grader name -> (user id, external name), for the names met so far
        self.graders: dict[str, tuple[int | None, str]] = {}
        valid = scale is not None and strategy is not None
        self.grade_set = frozenset(scale.grades) if valid and scale is not None else None

    def _unknown_fields(self, where: str, item: Mapping[str, Any], known: Any) -> None:
        """A field the format does not define is a problem, not silently dropped data."""
        for key in item:
            if key not in known:
                self.problems.add(f"{where}.{key}: unknown field")

    def check(
        self, index: int, item: Any
    ) -> tuple[str, list[SnapshotRow], list[UnretrievedRow]] | None:
        """The keyword's text, snapshot rows and judged unretrieved documents; None when
        it has a problem."""
        where = f"keywords[{index}]"
        before = self.problems.count
        add = self.problems.add
        if not isinstance(item, dict):
            add(f'{where}: must be an object {{"keyword", "snapshots"}}')
            return None
        self._unknown_fields(where, item, KEYWORD_KEYS)
        given = item.get("keyword")
        text = given.strip() if is_text(given) else ""
        if not text:
            add(f"{where}.keyword: required, a text")
        else:
            if len(text) > KEYWORD_LIMIT:
                add(f"{where}.keyword: at most {KEYWORD_LIMIT} characters (got {len(text)})")
            first = self.seen.setdefault(text, index)
            if first != index:
                add(f"{where}.keyword: duplicate of keywords[{first}]")
        snapshots = item.get("snapshots", [])
        if not isinstance(snapshots, list):
            add(f"{where}.snapshots: must be a list")
            return None
        positions: set[int] = set()
        rows: list[SnapshotRow] = []
        # doc_id -> the snapshot that had it first: a result is listed once per keyword
        # (two grades of one document would count twice in every metric).
        documents: dict[str, tuple[int, int]] = {}
        for number, snapshot in enumerate(snapshots):
            row = self._quick_row(snapshot, positions)
            if row is None:  # something is unusual: the full check says what
                row = self._snapshot(f"{where}.snapshots[{number}]", snapshot, positions)
            if row is None:
                continue
            first, first_position = documents.setdefault(row[1], (number, row[0]))
            if first != number:
                add(
                    f"{where}.snapshots[{number}].doc_id: {row[1]!r} is listed twice for "
                    f"keyword {text!r}: at position {first_position} (snapshots[{first}]) "
                    f"and at position {row[0]}"
                )
            else:
                rows.append(row)
        unretrieved = self._unretrieved(where, item.get("unretrieved", []), rows)
        return (text, rows, unretrieved) if self.problems.count == before else None

    def _unretrieved(self, where: str, given: Any, rows: list[SnapshotRow]) -> list[UnretrievedRow]:
        """Judged documents that are not among the results: each a doc_id that no
        snapshot of the keyword has, once, with a grade on the evaluation's scale."""
        where = f"{where}.unretrieved"
        if not isinstance(given, list):
            self.problems.add(f'{where}: must be a list of {{"doc_id", "grade"}}')
            return []
        retrieved = {row[1] for row in rows}
        seen: dict[str, int] = {}
        judged: list[UnretrievedRow] = []
        for number, entry in enumerate(given):
            location = f"{where}[{number}]"
            if not isinstance(entry, dict):
                self.problems.add(f'{location}: must be an object {{"doc_id", "grade"}}')
                continue
            self._unknown_fields(location, entry, UNRETRIEVED_KEYS)
            doc_id = entry.get("doc_id")
            if not is_text(doc_id) or not doc_id or len(doc_id) > DOC_ID_LIMIT:
                self.problems.add(f"{location}.doc_id: required, a text of 1 to {DOC_ID_LIMIT}")
                continue
            if doc_id in retrieved:
                self.problems.add(
                    f"{location}.doc_id: {doc_id!r} is among the keyword's results; judge it there"
                )
                continue
            first = seen.setdefault(doc_id, number)
            if first != number:
                self.problems.add(f"{location}.doc_id: duplicate of {where}[{first}]")
                continue
            if "grade" not in entry:
                self.problems.add(f"{location}.grade: required")
            elif self._grade(f"{location}.grade", entry["grade"]):
                judged.append((doc_id, entry["grade"]))
        return judged

    def _quick_row(self, snapshot: Any, positions: set[int]) -> SnapshotRow | None:
        """The row of a snapshot that is plainly valid, else None (then _snapshot checks
        it and lists its problems). Most snapshots of a large import take this path, so
        it builds no location and no message; it may refuse a valid snapshot, never
        accept an invalid one, and takes a position only when it returns a row."""
        grade_set = self.grade_set
        if type(snapshot) is not dict or grade_set is None or not snapshot.keys() <= SNAPSHOT_KEYS:
            return None
        get = snapshot.get
        position = get("position")
        if type(position) is not int or not 0 < position <= MAX_POSITION or position in positions:
            return None
        doc_id = get("doc_id")
        if type(doc_id) is not str or not _plain(doc_id, DOC_ID_LIMIT) or not doc_id.strip():
            return None
        name = get("name")
        if name is None:
            name = ""
        elif type(name) is not str or not _plain(name, NAME_LIMIT):
            return None
        image = get("image")
        if image is None:
            image = ""
        elif type(image) is not str or not _plain(image, IMAGE_LIMIT) or not is_image_source(image):
            return None
        attributes = get("attributes")
        if not attributes and (attributes is None or type(attributes) is dict):
            attributes_json = "{}"
        elif type(attributes) is dict:
            attributes_json = encode_json(attributes)
            if "\\u0000" in attributes_json:
                return None
        else:
            return None
        if get("decision") is not None:  # rare: the full check reads it
            return None
        slots = self._quick_slots(get("grades"), grade_set)
        if slots is None:
            return None
        positions.add(position)
        return (position, doc_id, name, image, attributes_json, slots, None)

    def _quick_slots(self, grades: Any, grade_set: frozenset[int]) -> list[SlotGrade | None] | None:
        if grades is None:
            return []
        if type(grades) is not list or len(grades) > (self.strategy or 0):
            return None
        slots: list[SlotGrade | None] = []
        graders: set[int | str] = set()
        for entry in grades:
            if entry is None:
                slots.append(None)
            elif type(entry) is int:
                if entry not in grade_set:
                    return None
                slots.append((entry, None, "", "", "", None))
            elif type(entry) is dict and entry.keys() <= QUICK_GRADE_KEYS:
                grade, grader, reason = entry.get("grade"), entry.get("grader"), entry.get("reason")
                if reason is None:
                    reason = ""
                elif type(reason) is not str or "\x00" in reason:
                    return None
                judge = entry.get("ai_judge")
                if not _ai_judge_mark(judge):
                    return None
                user: int | None = None
                external = ""
                if grader is not None:
                    resolved = self._quick_grader(grader, ai_judge=judge is not None)
                    if resolved is None:
                        return None
                    user, external = resolved
                if grade is None:
                    slots.append(None)
                    continue
                if type(grade) is not int or grade not in grade_set:
                    return None
                mark = judge_mark(grader, judge)
                if grader is None:
                    slots.append((grade, None, "", reason, "", mark))
                    continue
                identity: int | str = external if user is None else user
                if identity in graders:
                    return None
                graders.add(identity)
                slots.append((grade, user, external, reason, "", mark))
            else:
                return None
        return slots

    def _quick_grader(self, grader: Any, *, ai_judge: bool) -> tuple[int | None, str] | None:
        """(user id, external name) of a plainly valid grader, else None."""
        if type(grader) is not str:
            return None
        if ai_judge:
            return (None, grader) if _grader_name(grader) else None
        resolved = self.graders.get(grader)
        if resolved is None:
            if not _grader_name(grader):
                return None
            member = self.members.get(grader.lower())
            resolved = (member, "" if member is not None else grader)
            if len(self.graders) < GRADERS_REMEMBERED:
                self.graders[grader] = resolved
        return resolved

    def _snapshot(self, where: str, snapshot: Any, positions: set[int]) -> SnapshotRow | None:
        """The snapshot's row; None when it has a problem."""
        before = self.problems.count
        add = self.problems.add
        if not isinstance(snapshot, dict):
            add(f'{where}: must be an object {{"position", "doc_id", ...}}')
            return None
        self._unknown_fields(where, snapshot, SNAPSHOT_KEYS)
        given = snapshot.get("position")
        position = given if type(given) is int else 0
        if not 1 <= position <= MAX_POSITION:
            shown = "required" if given is None else f"{given!r} is not"
            add(f"{where}.position: {shown} a whole number from 1 to {MAX_POSITION}")
        elif position in positions:
            add(f"{where}.position: duplicate")
        else:
            positions.add(position)
        given = snapshot.get("doc_id")
        doc_id = given if is_text(given) else ""
        if not doc_id.strip():
            add(f"{where}.doc_id: required, a text")
        elif len(doc_id) > DOC_ID_LIMIT:
            add(f"{where}.doc_id: at most {DOC_ID_LIMIT} characters (got {len(doc_id)})")
        name = self._optional_text(where, snapshot, "name", NAME_LIMIT)
        image = self._optional_text(where, snapshot, "image", IMAGE_LIMIT)
        if image and not is_image_source(image):
            add(f"{where}.image: must be {IMAGE_RULE}")
        attributes = snapshot.get("attributes")
        attributes_json = "{}"
        if attributes is not None:
            if not isinstance(attributes, dict):
                add(f"{where}.attributes: must be an object")
            elif attributes:
                attributes_json = encode_json(attributes)
                if "\\u0000" in attributes_json:
                    add(f"{where}.attributes: must not contain NUL characters")
        grades = self._grades(
            where,
            snapshot.get("grades"),
            lambda: content_fingerprint(name, image, attributes or {}),
        )
        decision = self._decision(f"{where}.decision", snapshot.get("decision"))
        if self.problems.count != before:
            return None
        return (position, doc_id, name, image, attributes_json, grades, decision)

    def _optional_text(self, where: str, snapshot: dict[str, Any], key: str, limit: int) -> str:
        value = snapshot.get(key)
        if value is None:
            return ""
        if not is_text(value):
            self.problems.add(f"{where}.{key}: must be a text")
            return ""
        if len(value) > limit:
            self.problems.add(f"{where}.{key}: at most {limit} characters (got {len(value)})")
        return value

    def _grades(self, where: str, grades: Any, shown: Callable[[], str]) -> list[SlotGrade | None]:
        """`shown`: the fingerprint of the snapshot's content (fingerprints.py), read only
        for a grade that says which content it was given on."""
        add = self.problems.add
        if grades is None:
            return []
        if not isinstance(grades, list):
            add(f"{where}.grades: must be a list")
            return []
        if self.strategy is not None and len(grades) > self.strategy:
            add(f"{where}.grades: {len(grades)} entries, at most {self.strategy} (strategy)")
        slots: list[SlotGrade | None] = []
        graders: dict[tuple[str, Any], int] = {}
        for number, entry in enumerate(grades):
            location = f"{where}.grades[{number}]"
            if entry is None:
                slots.append(None)
            elif isinstance(entry, dict):
                slots.append(self._graded_entry(location, entry, number, graders, shown))
            elif self._grade(location, entry):
                slots.append((entry, None, "", "", "", None))
            else:
                slots.append(None)
        return slots

    def _grade(self, location: str, grade: Any) -> bool:
        if type(grade) is not int:
            scale = f"a {self.scale.name} grade" if self.scale else "a grade"
            self.problems.add(f"{location}: {grade!r} is not {scale}")
            return False
        if self.scale is not None and grade not in self.scale.grades:
            self.problems.add(
                f"{location}: {grade} is not a {self.scale.name} grade "
                f"{self.scale.describe_grades()}"
            )
            return False
        return True

    def _graded_entry(
        self,
        location: str,
        entry: dict[str, Any],
        number: int,
        graders: dict[tuple[str, Any], int],
        shown: Callable[[], str],
    ) -> SlotGrade | None:
        add = self.problems.add
        self._unknown_fields(location, entry, GRADE_KEYS)
        reason = entry.get("reason")
        if reason is None:
            reason = ""
        elif not is_text(reason):
            add(f"{location}.reason: must be a text")
            reason = ""
        judge = entry.get("ai_judge")
        self._ai_judge(f"{location}.ai_judge", judge)
        grader = entry.get("grader")
        user_id: int | None = None
        external = ""
        if grader is not None:
            if not is_text(grader) or not grader.strip() or len(grader) > GRADER_LIMIT:
                add(
                    f"{location}.grader: must be an email or a name "
                    f"of 1 to {GRADER_LIMIT} characters"
                )
            elif judge is not None:
                external = grader  # an AI judge's name (_ai_judge says why)
            else:
                user_id = self.members.get(grader.lower())
                external = "" if user_id is not None else grader
        grade = entry.get("grade")
        if grade is None:
            return None  # an empty slot: nobody's grade to keep
        if not self._grade(f"{location}.grade", grade):
            return None
        if grader is not None:
            identity = ("user", user_id) if user_id is not None else ("name", external)
            first = graders.setdefault(identity, number)
            if first != number:
                add(
                    f"{location}.grader: {grader!r} already graded this snapshot in grades[{first}]"
                )
        graded_on = self._graded_on(location, entry, shown)
        source = entry.get("source")
        self._source(f"{location}.source", source)
        return (grade, user_id, external, reason, graded_on, judge_mark(grader, judge, source))

    def _graded_on(self, location: str, entry: dict[str, Any], shown: Callable[[], str]) -> str:
        """The fingerprint of the content a grade was given on when the file names one
        that differs from its snapshot's (the grade is stale), else ""."""
        given = entry.get("content_fingerprint")
        if given is None:
            return ""
        if type(given) is not str or not FINGERPRINT.fullmatch(given):
            self.problems.add(f"{location}.content_fingerprint: must be 32 hexadecimal digits")
            return ""
        return "" if given == shown() else given

    def _ai_judge(self, where: str, given: Any) -> None:
        """An AI judge's mark: {"model", "prompt_version"}, each a text or null, or null.

        It is checked, then not kept: the grade is imported as an external grader's, named
        by its `grader` (the judge's name), and never as a member's, even when the name
        looks like a member's email (a judge is nobody's account). The importing team has
        no such judge (one is a model, an address and a key, which no file carries), and a
        slot has no place for the model and prompt version without one.
        """
        if given is None:
            return
        if not isinstance(given, dict):
            self.problems.add(f'{where}: must be an object {{"model", "prompt_version"}} or null')
            return
        self._unknown_fields(where, given, AI_JUDGE_KEYS)
        self._optional_texts(where, given, AI_JUDGE_LIMITS)

    def _optional_texts(self, where: str, given: dict[str, Any], limits: dict[str, int]) -> None:
        """Each of `limits`' keys in `given`: null, or a text within its limit."""
        for key, limit in limits.items():
            value = given.get(key)
            if value is None:
                continue
            if not is_text(value):
                self.problems.add(f"{where}.{key}: must be a text or null")
            elif len(value) > limit:
                self.problems.add(f"{where}.{key}: at most {limit} characters (got {len(value)})")

    def _source(self, where: str, given: Any) -> None:
        """A grade's source as an export writes it: {"kind", "name", "reused_from"}, or
        null. An import's label is kept; a copy's evaluation is not (it is not here)."""
        if given is None:
            return
        if not isinstance(given, dict):
            self.problems.add(f'{where}: must be an object {{"kind", "name", "reused_from"}}')
            return
        self._unknown_fields(where, given, SOURCE_KEYS)
        if given.get("kind") not in SOURCE_KINDS:
            self.problems.add(f"{where}.kind: must be one of {', '.join(SOURCE_KINDS)}")
        self._optional_texts(where, given, SOURCE_LIMITS)

    def _decision(self, where: str, given: Any) -> Decision | None:
        """A lead's decision: a grade on the scale, who decided (a member's email; any
        other name is not kept, as the decision has no place for it) and a reason."""
        if given is None:
            return None
        add = self.problems.add
        if not isinstance(given, dict):
            add(f'{where}: must be an object {{"grade", "by", "reason"}} or null')
            return None
        self._unknown_fields(where, given, DECISION_KEYS)
        grade = given.get("grade")
        if grade is None:
            add(f"{where}.grade: required, a grade on the evaluation's scale")
        elif not self._grade(f"{where}.grade", grade):
            grade = None
        reason = given.get("reason")
        if reason is None:
            reason = ""
        elif not is_text(reason):
            add(f"{where}.reason: must be a text")
        elif len(reason) > REASON_MAX_LENGTH:
            add(f"{where}.reason: at most {REASON_MAX_LENGTH} characters (got {len(reason)})")
        by = given.get("by")
        if by is not None and not is_text(by):
            add(f"{where}.by: must be the email of the lead who decided")
            by = None
        if grade is None or not isinstance(reason, str):
            return None
        return (grade, None if by is None else self.members.get(by.lower()), reason)
