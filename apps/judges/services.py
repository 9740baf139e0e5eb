"""A team's AI judges: add, change, remove, and the settings one call is made with.

The API key goes in through `api_key` and is stored encrypted at once; an update that
gives no key, or a blank one (a form shows the key's field empty), keeps the stored
one. Nothing returns the key except `model_settings`, for the call to the provider.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import transaction

from apps.accounts.models import Team, User
from apps.core.errors import InvalidInput, InvalidState
from apps.core.naming import save_with_unique_name
from apps.core.secrets import decrypt_secret, encrypt_secret, secret_hint
from apps.evaluations.models import FeedbackSlot

from .models import Judge
from .prompts import team_prompt
from .providers import ModelSettings, Protocol
from .validation import judge_values


@transaction.atomic
def judge_create(*, team: Team, created_by: User | None = None, **given: Any) -> Judge:
    values = _values(team.id, given, creating=True)
    judge = Judge(team=team, created_by=created_by)
    _apply(judge, values)
    judge.user = grader_identity(judge.name)
    save_with_unique_judge_name(judge)
    return judge


def judge_update(*, judge: Judge, keep_key_when_blank: bool = True, **given: Any) -> Judge:
    """Change the fields given. A blank api_key keeps the stored key (a form shows the
    key's field empty) unless `keep_key_when_blank` is off (the API's explicit "")."""
    if judge.is_panel:
        raise InvalidState(f"{judge.name} is a panel: change it as a panel", field="judge")
    if keep_key_when_blank and given.get("api_key") == "":
        given.pop("api_key")
    values = _values(judge.team_id, given, creating=False, current=judge)
    with transaction.atomic():
        _apply(judge, values)
        save_with_unique_judge_name(judge)
        User.objects.filter(id=judge.user_id).update(first_name=_shown_name(judge.name))
        for panel in Judge.objects.filter(seats__member=judge).distinct():
            panel.describe_panel(panel.members())  # its members' models name it
            panel.save(update_fields=["model_name", "timeout_seconds", "updated_at"])
    return judge


@transaction.atomic
def judge_delete(*, judge: Judge) -> None:
    """Refused once the judge has graded: its grades keep saying who gave them."""
    graded = FeedbackSlot.objects.filter(grader_id=judge.user_id, grade__isnull=False).count()
    if graded:
        raise InvalidState(
            f"{judge.name} has graded {graded} results, and their grades name it; "
            "it can no longer be removed (its runs can be cancelled).",
            field="judge",
        )
    panels = list(Judge.objects.filter(seats__member=judge).values_list("name", flat=True))
    if panels:
        raise InvalidState(
            f"{judge.name} sits on the panel {', '.join(sorted(panels))}; take it off first.",
            field="judge",
        )
    user_id = judge.user_id
    judge.delete()
    User.objects.filter(id=user_id).delete()


def model_settings(judge: Judge) -> ModelSettings:
    """What one call to the judge's model is made with, its key decrypted."""
    return ModelSettings(
        protocol=Protocol(judge.protocol),
        base_url=judge.base_url,
        model=judge.model_name,
        api_key=decrypt_secret(judge.api_key_encrypted) if judge.api_key_encrypted else "",
        temperature=judge.temperature,
        timeout_s=float(judge.timeout_seconds),
        max_output_tokens=judge.max_output_tokens,
        structured=judge.structured_output,
        allow_private=settings.AI_JUDGES_ALLOW_PRIVATE_ADDRESSES,
    )


def grader_identity(name: str) -> User:
    """The user the judge's slots name: inactive and without a password, so it can
    never log in, and a member of no team."""
    return User.objects.create_user(
        email=f"judge-{uuid.uuid4().hex}@ai-judges.relevo.invalid",
        password=None,
        first_name=_shown_name(name),
        is_active=False,
    )


def _shown_name(name: str) -> str:
    return name[:150]  # the length of a user's first name


def _values(
    team_id: int, given: dict[str, Any], *, creating: bool, current: Judge | None = None
) -> dict[str, Any]:
    """The checked values, the prompt (an id of the team's prompts, or None for the
    scale's default) among them; every problem at once. Samples need a temperature
    above 0 (the same prompt at 0 gives the same answer N times)."""
    given = dict(given)
    problems: list[str] = []
    prompt: Any = _KEEP
    if "prompt" in given:
        chosen = given.pop("prompt")
        try:
            prompt = None if chosen in (None, "") else team_prompt(team_id, chosen)
        except InvalidInput as error:
            problems.extend(error.problems)
    try:
        values = judge_values(given, creating=creating)
    except InvalidInput as error:
        problems.extend(error.problems)
        values = {}
    samples = values.get("samples", current.samples if current else 1)
    temperature = values.get("temperature", current.temperature if current else None)
    sampling = samples is not None and samples > 1
    changed = "samples" in values or "temperature" in values
    if changed and sampling and not (temperature and temperature > 0):
        problems.append(
            "samples: asking more than once needs a temperature above 0 (at 0 a model "
            "gives the same answer every time)"
        )
    if problems:
        raise InvalidInput(problems)
    if prompt is not _KEEP:
        values["prompt"] = prompt
    return values


_KEEP = object()


def _apply(judge: Judge, values: dict[str, Any]) -> None:
    key = values.pop("api_key", None)
    if key is not None:
        judge.api_key_encrypted = encrypt_secret(key) if key else ""
        judge.api_key_hint = secret_hint(key) if key else ""
    for name, value in values.items():
        setattr(judge, name, value)


def save_with_unique_judge_name(judge: Judge) -> None:
    save_with_unique_name(
        judge,
        Judge.objects.filter(team_id=judge.team_id, name=judge.name),
        f"name: the team already has a judge named {judge.name!r}",
    )
