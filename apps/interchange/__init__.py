"""Evaluations in and out of Relevo: the JSON document, TREC files, CSV (README.md here).

    import_document   JSON document -> a pending evaluation with its grades and metrics
    import_trec       run (+ qrels, + topics) -> the same
    export_document   the JSON document, with the read-only results
    export_csv / export_qrels / export_run / export_topics    text exports
    EXPORT_FORMATS    format name -> (function, content type, file extension)

(document.py, trec.py and export.py; this package is a Django app for its commands, so it
imports no model here.) Imports are all or nothing: InvalidInput lists every problem with
its location.
"""
