"""What gave a judgement, as the grade writer records it (models.Source on the slot,
and for an AI judge or an import the JudgementSource row these functions find or make).

The kinds are written by the grade writer alone (judgements.py, new_slots.py): a person
grading or a lead editing is a person, an AI judge's call names its source here, an
import names its label. A copy by reuse keeps the source it copied.
"""

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from apps.evaluations.models import FeedbackSlot, JudgementSource, Source


@dataclass(frozen=True)
class JudgeMade:
    """An AI judge's grade: which judge of the team (0: none here, as for a grade a file
    says a judge made), with which model and prompt version, at which link of a chain."""

    judge_id: int
    name: str
    model_name: str = ""
    prompt_version: str = ""
    chain_link: str = ""


def judge_source(*, team_id: int, made: JudgeMade) -> int:
    """The id of the team's source row for grades `made` so, made on first use."""
    return _source_id(
        team_id=team_id,
        kind=Source.JUDGE,
        judge_id=made.judge_id,
        name=made.name[:200],
        model_name=made.model_name[:200],
        prompt_version=made.prompt_version[:64],
        chain_link=made.chain_link[:32],
    )


def import_source(*, team_id: int, label: str) -> int:
    """The id of the team's source row for grades an import labelled `label` brought."""
    return _source_id(
        team_id=team_id,
        kind=Source.IMPORT,
        judge_id=0,
        name=label[:200],
        model_name="",
        prompt_version="",
        chain_link="",
    )


def clicks_source(*, team_id: int, name: str, model: str, settings: str) -> int:
    """The id of the team's source row for a click model's judgements: `name` as pages
    tell it ("clicks: PBM, 2026-10-01 to 2026-10-31"), `settings` a short digest of what
    made them (the log, minimum and thresholds), so two sets of them never share a row."""
    return _source_id(
        team_id=team_id,
        kind=Source.CLICKS,
        judge_id=0,
        name=name[:200],
        model_name=model[:200],
        prompt_version=settings[:64],
        chain_link="",
    )


def _source_id(**fields: object) -> int:
    found = JudgementSource.objects.filter(**fields).values_list("id", flat=True).first()
    if found is not None:
        return found
    try:
        # A savepoint: two writers making the same row at once leave the caller's
        # transaction usable, and the loser reads the winner's row.
        with transaction.atomic():
            return JudgementSource.objects.create(**fields).id
    except IntegrityError:
        return JudgementSource.objects.filter(**fields).values_list("id", flat=True).get()


@dataclass(frozen=True)
class Provenance:
    """A graded slot's source as pages, the API and exports tell it. `reused_from`: the
    id and name of the evaluation a copy came from (None: given in this one, or that
    evaluation was deleted; `reused` says which); `reused_from_list`: the name of the
    imported judgement list it came from, if it did and the list is kept."""

    kind: str
    name: str = ""  # the judge's name or the import's label
    judge_id: int | None = None
    model_name: str = ""
    prompt_version: str = ""
    chain_link: str = ""
    reused: bool = False
    reused_from: tuple[int, str] | None = None
    reused_from_list: str = ""

    @property
    def is_judge(self) -> bool:
        return self.kind == Source.JUDGE

    @property
    def text(self) -> str:
        """One line: "AI judge Quick (gpt-4o-mini, v2), copied from Week 3"."""
        if self.kind == Source.JUDGE:
            made_by = ", ".join(filter(None, [self.model_name, self.prompt_version]))
            told = f"AI judge {self.name}" + (f" ({made_by})" if made_by else "")
            told += f", {self.chain_link}" if self.chain_link else ""
        elif self.kind == Source.IMPORT:
            told = f"Imported ({self.name})" if self.name else "Imported"
        elif self.kind == Source.CLICKS:
            told = self.name or "Clicks"
        else:
            told = "Person"
        if self.reused and self.reused_from:
            told += f", copied from {self.reused_from[1]}"
        elif self.reused and self.reused_from_list:
            told += f", copied from the judgement list {self.reused_from_list}"
        elif self.reused:
            told += ", copied"
        return told

    def as_json(self) -> dict[str, object]:
        """The API's and the JSON export's `source` object."""
        return {
            "kind": self.kind,
            "name": self.name or None,
            "judge": self.judge_id,
            "model": self.model_name or None,
            "prompt_version": self.prompt_version or None,
            "chain_link": self.chain_link or None,
            "reused_from": (
                {"id": self.reused_from[0], "name": self.reused_from[1]}
                if self.reused_from
                else None
            ),
        }


# What a read of slots joins to tell their provenance (select_related).
PROVENANCE_JOINS = ("source_detail", "reused_from", "reused_from_list")


def provenance_of(slot: FeedbackSlot) -> Provenance | None:
    """The slot's source, read with PROVENANCE_JOINS; None for an ungraded slot."""
    if slot.grade is None or not slot.source:
        return None
    detail = slot.source_detail
    copied = slot.reused_from
    return Provenance(
        kind=slot.source,
        name=detail.name if detail else "",
        judge_id=(detail.judge_id or None) if detail else None,
        model_name=detail.model_name if detail else "",
        prompt_version=detail.prompt_version if detail else "",
        chain_link=detail.chain_link if detail else "",
        reused=slot.reused,
        reused_from=(copied.id, copied.name) if copied else None,
        reused_from_list=slot.reused_from_list.name if slot.reused_from_list else "",
    )
