"""Judgement lists in and out of the library: a list imported whole or not at all, with
every problem named by its place; the library downloaded in any list format; an imported
list removed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Team
from apps.core.errors import InvalidInput
from apps.evaluations.models import Scale
from apps.evaluations.scales import levels_found, scale_of
from apps.judging.sources import JudgeMade, import_source, judge_source

from . import formats
from .browsing import Filters
from .entries import scale_key
from .exporting import library_rows, team_scales
from .models import JudgementList, ListedJudgement

# The companion of a qrels download: each qid's query text.
QRELS_QUERIES = "qrels-queries"
BATCH = 5_000


def format_choices() -> list[tuple[str, str]]:
    return [(name, spec.label) for name, spec in formats.FORMATS.items()]


@dataclass(frozen=True)
class Download:
    text: str
    file_name: str
    media_type: str


def library_download(
    *, team_id: int, file_format: str, scale: str, filters: Filters, people_only: bool = False
) -> Download:
    """The library grades the filters keep on `scale`, written in `file_format` (or the
    queries file that goes with a qrels download)."""
    problems = []
    if file_format not in formats.FORMATS and file_format != QRELS_QUERIES:
        problems.append(f"format: one of {', '.join([*formats.FORMATS, QRELS_QUERIES])}")
    if scale not in team_scales(team_id=team_id):
        problems.append("scale: not a scale of this team's judgements")
    if problems:
        raise InvalidInput(problems)
    rows = list(
        library_rows(team_id=team_id, scale=scale, filters=filters, people_only=people_only)
    )
    stem = "judgements-" + "".join(c if c.isalnum() else "-" for c in scale)
    qrels = formats.FORMATS["qrels"].companion
    spec = qrels if file_format == QRELS_QUERIES else formats.FORMATS[file_format]
    assert spec is not None
    try:
        text = spec.write(rows)
    except formats.FormatError as error:
        raise InvalidInput([str(problem) for problem in error.problems]) from None
    suffix = "-queries" if file_format == QRELS_QUERIES else ""
    return Download(text, f"{stem}{suffix}.{spec.extension}", spec.media_type)


def judgement_list_import(
    *,
    team: Team,
    name: str,
    file_format: str,
    judgements: IO[bytes],
    queries: IO[bytes] | None,
    scale: str,
    made_by: str,
    imported_by: Any = None,
) -> JudgementList:
    """Read a judgement list and keep it in the team's library, whole or not at all."""
    problems = _setting_problems(team, name, file_format, scale, made_by)
    if problems:
        raise InvalidInput(problems)
    read = formats.FORMATS[file_format].read(
        judgements.read(), queries.read() if queries is not None else None
    )
    problems = read.messages()
    if not problems and not read.judgements:
        problems.append("the file holds no judgement")
    levels = levels_found([j.grade for j in read.judgements]) if scale == Scale.CUSTOM else None
    problems += _off_scale(read.judgements, scale, levels)
    if problems:
        raise InvalidInput(problems)
    with transaction.atomic():
        judgement_list = JudgementList.objects.create(
            team=team,
            name=name,
            file_format=file_format,
            scale=scale,
            scale_levels=levels,
            source_id=_source_id(team.id, name, made_by),
            imported_by=imported_by,
            imported_at=timezone.now(),
            judgement_count=len(read.judgements),
        )
        rows = (
            ListedJudgement(
                judgement_list=judgement_list,
                team_id=team.id,
                query=j.query,
                doc_id=j.doc_id,
                grade=j.grade,
            )
            for j in read.judgements
        )
        ListedJudgement.objects.bulk_create(rows, batch_size=BATCH)
    return judgement_list


def judgement_list_delete(*, judgement_list: JudgementList) -> None:
    judgement_list.delete()


def _setting_problems(
    team: Team, name: str, file_format: str, scale: str, made_by: str
) -> list[str]:
    problems = []
    if not name:
        problems.append("name: a list needs a name")
    elif JudgementList.objects.filter(team=team, name=name).exists():
        problems.append(f"name: the library already has a list named {name}")
    if file_format not in formats.FORMATS:
        problems.append(f"format: one of {', '.join(formats.FORMATS)}")
    if scale not in Scale.values:
        problems.append(f"scale: one of {', '.join(Scale.values)}")
    if made_by not in ("people", "judge"):
        problems.append("made_by: people or judge")
    return problems


def _off_scale(listed: list[formats.ListedJudgement], scale: str, levels: Any) -> list[str]:
    allowed = scale_of(scale, levels).grades
    problems = [
        f"{j.where}: grade {j.grade} is not on the {scale_key(scale, levels)} scale"
        f" ({min(allowed)} to {max(allowed)})"
        for j in listed
        if j.grade not in allowed
    ]
    if len(problems) > 200:
        problems = [*problems[:200], f"... and {len(problems) - 200} more problems"]
    return problems


def _source_id(team_id: int, name: str, made_by: str) -> int:
    """Whose judgements the list holds: an import of people's work, or an AI judge's
    (no judge of this team: the list names it)."""
    if made_by == "judge":
        return judge_source(team_id=team_id, made=JudgeMade(judge_id=0, name=name))
    return import_source(team_id=team_id, label=name)
