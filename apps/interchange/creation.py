"""What both importers share: the evaluation created through the service, its writer."""

from collections.abc import Callable, Container, Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from apps.accounts.models import Team
from apps.accounts.services import tags_get_or_create
from apps.core.errors import InvalidInput
from apps.evaluations.models import Evaluation
from apps.evaluations.services import evaluation_create

from .problems import Problems
from .writer import EvaluationWriter


def evaluation_for_import(
    *,
    team: Team,
    arguments: Mapping[str, Any],
    tag_names: list[str],
    created_by: Any,
    problems: Problems,
    reported: Container[str] = (),
) -> Evaluation | None:
    """A pending evaluation with these settings, or None with its problems added.

    evaluation_create holds the rules of the settings; its problems about locations in
    `reported` (already listed by the importer's own checks) are left out. Call inside
    the import's transaction: tags are created in the team, and all of it goes if the
    import is rejected later.
    """
    try:
        evaluation = evaluation_create(
            team=team,
            tags=tags_get_or_create(team=team, names=tag_names) if not problems else [],
            created_by=created_by,
            **arguments,
        )
    except InvalidInput as error:
        for problem in error.problems:
            if problem.split(":", 1)[0] not in reported:
                problems.add(problem)
        return None
    return None if problems else evaluation


def writer_for(
    evaluation: Evaluation | None,
    progress: Callable[[int], None] | None,
    graders: Iterable[int] = (),
    *,
    source_label: str,
) -> AbstractContextManager[EvaluationWriter | None]:
    """The evaluation's writer as a context manager; None when there is no evaluation
    (its settings have problems, so there is nothing to write). `source_label` names
    the source of the grades it brings ("JSON import")."""
    if evaluation is None:
        return nullcontext()
    return EvaluationWriter(
        evaluation, progress=progress, graders=graders, source_label=source_label
    )
