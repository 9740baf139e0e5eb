"""An export as a file download, for the lead's page and the API alike."""

import io
import tempfile

from django.http import FileResponse

from apps.core.errors import InvalidInput
from apps.evaluations.models import Evaluation

EXPORT_FORMAT_NAMES = ["json", "csv", "qrels", "qrels-raw", "run", "topics", "trec_eval"]


def export_download(evaluation: Evaluation, format_name: str) -> FileResponse:
    """The evaluation exported in `format_name`, as an attachment.

    The export is written to a spooled file: a small one stays in memory, a large one
    goes to disk, so memory does not grow with the evaluation.
    """
    from .export import EXPORT_FORMATS

    if format_name not in EXPORT_FORMATS:
        raise InvalidInput(
            [f"format: {format_name!r} is not one of {', '.join(EXPORT_FORMATS)}"],
            field="format",
        )
    export, content_type, extension = EXPORT_FORMATS[format_name]
    buffer = tempfile.SpooledTemporaryFile(max_size=8 * 1024 * 1024, mode="w+b")  # noqa: SIM115
    text = io.TextIOWrapper(buffer, encoding="utf-8", newline="")
    export(evaluation, text)
    text.flush()
    text.detach()  # the response owns the buffer now and closes it when sent
    buffer.seek(0)
    # The extension tells the formats apart: evaluation-5.csv, evaluation-5.raw.qrels.
    charset = "" if content_type == "application/json" else "; charset=utf-8"
    return FileResponse(
        buffer,
        content_type=f"{content_type}{charset}",
        as_attachment=True,
        filename=f"evaluation-{evaluation.id}{extension}",
    )
