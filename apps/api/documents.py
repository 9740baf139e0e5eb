"""The evaluation document (interchange.md) as an OpenAPI schema, for the import operation.

It documents the format on /api/docs/ and lets generated requests reach the importer
with plausible documents; the importer itself checks every rule and names each problem.
"""

from apps import engine
from apps.evaluations.models import Profile, Scale
from apps.interchange.checks import AI_JUDGE_LIMITS, SOURCE_KINDS, SOURCE_LIMITS

_TEXT = {"type": "string"}
_NAME = {"type": "string", "minLength": 1}
_VALUE = {"type": "number", "nullable": True, "readOnly": True, "description": "ignored"}
_METRIC = {
    "type": "object",
    "required": ["metric", "k"],
    "additionalProperties": False,
    "properties": {
        "metric": {"type": "string", "enum": sorted(engine.METRICS)},
        "k": {
            "type": "integer",
            "minimum": 0,
            "maximum": engine.MAX_CUTOFF,
            "nullable": True,
            "description": "the cutoff; null (or 0) for the whole list",
        },
        "value": _VALUE,
    },
}
_SCALE_LEVELS = {
    "type": "object",
    "nullable": True,
    "description": "for scale custom: whole levels from lowest to highest (at most 10), the "
    "lowest level the binary metrics count as relevant, optional labels and keys",
    "required": ["lowest", "highest"],
    "additionalProperties": False,
    "properties": {
        "lowest": {"type": "integer", "minimum": -100, "maximum": 100},
        "highest": {"type": "integer", "minimum": -100, "maximum": 100},
        "relevant_from": {"type": "integer", "default": 1},
        "labels": {"type": "array", "items": _NAME, "maxItems": 10},
        "keys": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 1}},
    },
}
_AI_JUDGE = {
    "type": "object",
    "nullable": True,
    "description": "an AI judge's grade (grader: the judge's name), as an export marks it; "
    "checked, not kept: the grade imports as the external grader's",
    "additionalProperties": False,
    "properties": {
        key: {"type": "string", "nullable": True, "maxLength": limit}
        for key, limit in AI_JUDGE_LIMITS.items()
    },
}
_SOURCE = {
    "type": "object",
    "nullable": True,
    "description": "who gave an imported or copied grade, as an export writes it: an "
    "earlier import's label is kept",
    "additionalProperties": False,
    "properties": {
        "kind": {"type": "string", "enum": list(SOURCE_KINDS)},
        **{
            key: {"type": "string", "nullable": True, "maxLength": limit}
            for key, limit in SOURCE_LIMITS.items()
        },
    },
}
_GRADE = {
    "nullable": True,
    "description": "a grade, null for an empty slot, or {grader, grade, reason, ai_judge, "
    "content_fingerprint, source}",
    "oneOf": [
        {"type": "integer", "minimum": -100, "maximum": 100},
        {
            "type": "object",
            "required": ["grade"],
            "additionalProperties": False,
            "properties": {
                "grader": {"type": "string", "description": "a member's email or an outside id"},
                "grade": {"type": "integer", "minimum": -100, "maximum": 100},
                "reason": _TEXT,
                "ai_judge": _AI_JUDGE,
                "content_fingerprint": {
                    "type": "string",
                    "pattern": "^[0-9a-f]{32}$",
                    "description": "the content the grade was given on (an export names it "
                    "for a grade copied from an earlier evaluation); when it differs from "
                    "the snapshot's, the imported grade is stale",
                },
                "source": _SOURCE,
            },
        },
    ],
}
_DECISION = {
    "type": "object",
    "nullable": True,
    "description": "a lead's final grade, used in place of the grades in the metrics",
    "required": ["grade"],
    "additionalProperties": False,
    "properties": {
        "grade": {"type": "integer", "minimum": -100, "maximum": 100},
        "by": {"type": "string", "nullable": True, "description": "the lead's email"},
        "reason": {"type": "string", "maxLength": 2000},
    },
}
_SNAPSHOT = {
    "type": "object",
    "required": ["position", "doc_id"],
    "additionalProperties": False,
    "properties": {
        "position": {"type": "integer", "minimum": 1, "description": "1-based, unique"},
        "doc_id": _NAME,
        "name": _TEXT,
        "image": _TEXT,
        "attributes": {"type": "object", "additionalProperties": True},
        "grades": {"type": "array", "maxItems": 3, "items": _GRADE},
        "decision": _DECISION,
        "value": _VALUE,
    },
}
_KEYWORD = {
    "type": "object",
    "required": ["keyword"],
    "additionalProperties": False,
    "properties": {
        "keyword": _NAME,
        "snapshots": {"type": "array", "items": _SNAPSHOT},
        "unretrieved": {
            "type": "array",
            "description": "judged documents that are not among the results (TREC qrels "
            "lines for documents the run did not retrieve): the trec profile counts them "
            "in R and the ideal ranking",
            "items": {
                "type": "object",
                "required": ["doc_id", "grade"],
                "additionalProperties": False,
                "properties": {
                    "doc_id": _NAME,
                    "grade": {"type": "integer", "minimum": -100, "maximum": 100},
                },
            },
        },
        "metrics": {"type": "array", "items": _METRIC, "readOnly": True},
    },
}
EVALUATION_DOCUMENT = {
    "type": "object",
    "required": ["format", "name", "scale", "metrics"],
    "additionalProperties": False,
    "properties": {
        "format": {"type": "string", "enum": ["relevo.evaluation/1"]},
        "name": _NAME,
        "description": _TEXT,
        "scale": {"type": "string", "enum": Scale.values},
        "scale_levels": _SCALE_LEVELS,
        "strategy": {"type": "integer", "enum": [1, 3]},
        "profile": {"type": "string", "enum": Profile.values},
        "show_position": {"type": "boolean"},
        "zero_without_results": {
            "type": "boolean",
            "description": "judged keywords without results count as 0 (trec_eval -c)",
        },
        "scoring_guidelines": _TEXT,
        "tags": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 60}},
        "transformers": {
            "type": "object",
            "description": "destination scale -> {source grade: destination grade}",
            "additionalProperties": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
        "metrics": {"type": "array", "items": _METRIC, "minItems": 1, "uniqueItems": True},
        "keywords": {"type": "array", "items": _KEYWORD},
        # What an export adds; an import ignores it.
        **{
            name: {"readOnly": True, "description": "ignored"}
            for name in ("id", "status", "progress", "created_at", "finished_at")
        },
    },
}
DOCUMENT_UPLOAD = {
    "type": "object",
    "required": ["file"],
    "properties": {"file": {"type": "string", "format": "binary"}},
}
