"""The demo judge's model: a stand-in for a language model, served by Relevo itself.

NOT a language model: it grades by word overlap, the share of the keyword's words found
in a result's title and fields ("word-overlap"), or in its title alone
("title-overlap": a second, narrower view, so the demo's panel has members that differ),
spread over the scale. It speaks the OpenAI
chat-completions protocol (POST /demo/llm/v1/chat/completions), so `make run`'s demo
judge goes through the same client, prompt, answer reader and grade writer as a real
one, and a newcomer sees the whole flow without an API key. It answers 404 unless the
DEMO_SEARCH_API setting is on (by default, when DEBUG is).
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from apps.core import bounded_json

MODEL = "word-overlap"
TITLE_MODEL = "title-overlap"
_WORD = re.compile(r"\w+", re.UNICODE)
_RESULTS = re.compile(r"RESULTS BEGIN\n(.*)\nRESULTS END", re.DOTALL)
_KEYWORD = re.compile(r"^Keyword: (.*)$", re.MULTILINE)


def words(text: str) -> set[str]:
    return {word.lower() for word in _WORD.findall(text)}


def overlap_grade(keyword: str, document: dict[str, Any], grades: list[int]) -> tuple[int, str]:
    """The grade on `grades` (ascending) for the share of the keyword's words that the
    document holds, and a one-sentence reason."""
    wanted = words(keyword)
    found = words(" ".join(str(value) for value in document.values()))
    hits = len(wanted & found)
    share = hits / len(wanted) if wanted else 0.0
    grade = grades[round(share * (len(grades) - 1))]
    reason = f"Word overlap stand-in: {hits} of {len(wanted)} keyword words appear in the result."
    return grade, reason


@csrf_exempt
@require_POST
def chat_completions(request: HttpRequest) -> JsonResponse:
    if not settings.DEMO_SEARCH_API:
        raise Http404("the demo APIs are off")
    try:
        body = bounded_json.loads(request.body)
        prompt = next(m["content"] for m in body["messages"] if m.get("role") == "user")
        keyword = _found(_KEYWORD, prompt)
        results = json.loads(_found(_RESULTS, prompt))["results"]
        grades = _grades(body)
        model = str(body.get("model") or MODEL)
    except (ValueError, KeyError, TypeError, StopIteration):
        return JsonResponse({"error": {"message": "not a judge's prompt"}}, status=400)
    judgements = []
    for result in results:
        shown = {"title": result.get("title", "")} if model == TITLE_MODEL else result
        grade, reason = overlap_grade(keyword, shown, grades)
        # Sure only at the ends: all of the keyword's words, or none of them.
        confidence = 1.0 if grade in (grades[0], grades[-1]) else 0.5
        judgements.append(
            {"id": result["id"], "grade": grade, "confidence": confidence, "reason": reason}
        )
    content = json.dumps({"judgements": judgements})
    return JsonResponse(
        {
            "id": "demo",
            "object": "chat.completion",
            "created": 0,
            "model": TITLE_MODEL if model == TITLE_MODEL else MODEL,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content},
                }
            ],
            "usage": {
                "prompt_tokens": len(prompt) // 4,
                "completion_tokens": len(content) // 4,
                "total_tokens": (len(prompt) + len(content)) // 4,
            },
        }
    )


def _found(pattern: re.Pattern[str], text: str) -> str:
    match = pattern.search(text)
    if match is None:
        raise ValueError(f"no {pattern.pattern!r} in the prompt")
    return match.group(1)


def _grades(body: dict[str, Any]) -> list[int]:
    """The scale's grades, from the answer's JSON schema the judge sent."""
    schema = body["response_format"]["json_schema"]["schema"]
    grades = schema["properties"]["judgements"]["items"]["properties"]["grade"]["enum"]
    if not grades or not all(type(grade) is int for grade in grades):
        raise ValueError("no grades")
    return sorted(grades)
