"""Evaluations in and out of Relevo: the JSON document, TREC files, CSV (README.md here).

    import_document   JSON document -> a pending evaluation with its grades and metrics
    import_trec       run (+ qrels, + topics) -> the same
    export_document   the JSON document, with the read-only results
    export_csv / export_qrels / export_run    text exports
    EXPORT_FORMATS    format name -> (function, content type, file extension)

Imports are all or nothing: InvalidInput lists every problem with its location.
"""

from .document import import_document
from .export import (
    EXPORT_FORMATS,
    export_csv,
    export_document,
    export_qrels,
    export_qrels_raw,
    export_run,
)
from .trec import TrecImport, TrecReport, import_trec

__all__ = [
    "EXPORT_FORMATS",
    "export_csv",
    "export_document",
    "export_qrels",
    "export_qrels_raw",
    "export_run",
    "import_document",
    "import_trec",
    "TrecImport",
    "TrecReport",
]
