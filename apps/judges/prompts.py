"""A team's own prompts: a lead copies the default, edits it, and every edit is a new
version; the judgements a version made keep naming it.

A prompt's instructions are the system message; "{scale}" in them becomes the grading
scale's meanings (prompting.describe_scale), and the keyword, its need and notes, the
guidelines and the results always follow in the user message, delimited, whatever the
instructions say (prompting.messages_for). So an edited prompt can change what the model
is told about relevance, never let a result's text pass for instructions.

Which prompt a run judges with: the judge's team prompt, its newest version when the run
starts (JudgeRun.prompt keeps it for the whole run), or, without one, the default prompt
of the evaluation's scale.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Max

from apps import engine
from apps.accounts.models import Team, User
from apps.core.errors import InvalidInput, InvalidState
from apps.core.naming import save_with_unique_name

from .models import Judge, JudgePrompt, JudgePromptVersion, JudgeRun
from .prompting import DEFAULT_INSTRUCTIONS, Prompt, default_prompt

NAME_MAX = 100
INSTRUCTIONS_MAX = 20_000
SCALE_PLACEHOLDER = "{scale}"
ID_MAX = 2**31 - 1


@transaction.atomic
def prompt_create(
    *, team: Team, name: Any, instructions: Any = None, created_by: User | None = None
) -> JudgePrompt:
    """A new team prompt; without instructions, a copy of the default's."""
    text = DEFAULT_INSTRUCTIONS if instructions in (None, "") else instructions
    clean_name, clean_text = _checked(name, text)
    prompt = JudgePrompt(team=team, name=clean_name, created_by=created_by)
    _save_with_unique_name(prompt)
    _new_version(prompt, clean_text, created_by)
    return prompt


@transaction.atomic
def prompt_update(
    *,
    prompt: JudgePrompt,
    name: Any = None,
    instructions: Any = None,
    created_by: User | None = None,
) -> JudgePrompt:
    """Rename the prompt and/or give it new instructions (a new version, unless they are
    the newest version's already)."""
    clean_name, clean_text = _checked(
        prompt.name if name is None else name,
        newest_version(prompt).instructions if instructions is None else instructions,
    )
    if clean_name != prompt.name:
        prompt.name = clean_name
        _save_with_unique_name(prompt)
    if clean_text != newest_version(prompt).instructions:
        _new_version(prompt, clean_text, created_by)
    return prompt


@transaction.atomic
def prompt_delete(*, prompt: JudgePrompt) -> None:
    """Refused while a judge uses it or a run judged with one of its versions."""
    judges = list(Judge.objects.filter(prompt=prompt).values_list("name", flat=True))
    if judges:
        raise InvalidState(
            f"{', '.join(judges)} judge{'s' if len(judges) > 1 else ''} with this prompt; "
            "give them another before removing it.",
            field="prompt",
        )
    if JudgeRun.objects.filter(prompt__prompt=prompt).exists():
        raise InvalidState(
            "judges have graded with this prompt, and their grades name its versions; "
            "it can no longer be removed.",
            field="prompt",
        )
    prompt.delete()


def newest_version(prompt: JudgePrompt) -> JudgePromptVersion:
    return prompt.versions.order_by("-number").first() or _missing(prompt)


def team_prompt(team_id: int, prompt_id: Any) -> JudgePrompt:
    """The team's prompt of that id, or InvalidInput naming the field."""
    problem = [f"prompt: the team has no prompt {str(prompt_id)[:40]!r}"]
    if isinstance(prompt_id, bool) or not isinstance(prompt_id, int | str):
        raise InvalidInput(problem)
    try:
        number = int(prompt_id)
    except ValueError:
        raise InvalidInput(problem) from None
    if not 1 <= number <= ID_MAX:  # the database's ids end there: no lookup can match
        raise InvalidInput(problem)
    prompt = JudgePrompt.objects.filter(team_id=team_id, id=number).first()
    if prompt is None:
        raise InvalidInput(problem)
    return prompt


def version_for_new_run(judge: Judge) -> JudgePromptVersion | None:
    """The version a run starting now judges with (None: the scale's default)."""
    return newest_version(judge.prompt) if judge.prompt_id and judge.prompt else None


def pinned_prompt(version: JudgePromptVersion | None, scale: engine.Scale) -> Prompt:
    """What the calls of a run (or a calibration) that keeps `version` are made with
    (None: the scale's default)."""
    if version is None:
        return default_prompt(scale)
    return Prompt(version=version.version, instructions=version.instructions)


def _checked(name: Any, instructions: Any) -> tuple[str, str]:
    problems = []
    if not isinstance(name, str) or not name.strip():
        problems.append("name: required")
    elif len(name.strip()) > NAME_MAX:
        problems.append(f"name: at most {NAME_MAX} characters")
    if not isinstance(instructions, str) or not instructions.strip():
        problems.append("instructions: required")
    elif len(instructions) > INSTRUCTIONS_MAX:
        problems.append(
            f"instructions: at most {INSTRUCTIONS_MAX:,} characters (got {len(instructions):,})"
        )
    elif SCALE_PLACEHOLDER not in instructions:
        problems.append(
            f"instructions: keep the {SCALE_PLACEHOLDER} placeholder; it is where the "
            "grading scale's meanings go, and without them the model guesses what a grade means"
        )
    if problems:
        raise InvalidInput(problems)
    return str(name).strip(), str(instructions).replace("\r\n", "\n").strip()


def _new_version(prompt: JudgePrompt, text: str, created_by: User | None) -> JudgePromptVersion:
    # The prompt's row is locked first, so two edits at once number their versions one
    # after the other instead of both taking the same number.
    JudgePrompt.objects.select_for_update().filter(id=prompt.id).get()
    last = prompt.versions.aggregate(last=Max("number"))["last"] or 0
    number = last + 1
    return JudgePromptVersion.objects.create(
        prompt=prompt,
        number=number,
        version=f"prompt-{prompt.id}-v{number}",
        instructions=text,
        created_by=created_by,
    )


def _save_with_unique_name(prompt: JudgePrompt) -> None:
    save_with_unique_name(
        prompt,
        JudgePrompt.objects.filter(team_id=prompt.team_id, name=prompt.name),
        f"name: the team already has a prompt named {prompt.name!r}",
    )


def _missing(prompt: JudgePrompt) -> JudgePromptVersion:
    raise InvalidState(f"the prompt {prompt.name!r} has no version", field="prompt")
