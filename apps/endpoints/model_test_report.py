"""What "Test model" shows: one keyword's call, described for the lead.

The raw response is kept as the search system sent it when it is not JSON (so a lead
sees the HTML error page or the broken JSON), and pretty-printed when it is, cut to a
length a page can show.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from apps.core.image_sources import is_image_source
from apps.search import Document, InvalidMapper, KeywordRun, RequestError

from .model_calls import ModelCall

# Characters of the raw response shown on the page; the whole body can be megabytes.
RAW_SHOWN_CHARS = 20_000
# What each kind of failure is, in a heading a lead understands at a glance.
ERROR_TITLES = {
    "invalid_request": "The request could not be built",
    "refused": "The address was refused",
    "transport": "The call failed",
    "timeout": "No answer in time",
    "redirect": "Redirect not followed",
    "http_status": "The search system answered with an error",
    "too_large": "The response is too large",
    "invalid_json": "The response is not JSON",
    "mapping": "The mapper does not fit this response",
    "mapper": "The endpoint's mapper is broken",
}


@dataclass(frozen=True)
class ModelTest:
    keyword: str
    method: str
    url: str  # with the keyword in it; "" when the request could not be built
    status: int | None
    elapsed_ms: int
    raw: str  # at most RAW_SHOWN_CHARS
    raw_chars: int  # of the whole raw text
    documents: list[Document] = field(default_factory=list)
    error: str | None = None
    # apps.search.ErrorKind values, "mapping" (the mapper does not fit the response) or
    # "mapper" (the stored mapper itself is broken).
    error_kind: str | None = None
    error_path: str | None = None  # the mapper path that found nothing or the wrong kind
    error_result: int | None = None  # 1-based number of the result at fault

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def raw_truncated(self) -> bool:
        return self.raw_chars > len(self.raw)

    @property
    def error_title(self) -> str:
        return ERROR_TITLES.get(self.error_kind or "", "The test failed")

    @property
    def rows(self) -> list[tuple[Document, bool]]:
        """Each document, and whether its image is a web address to show as a picture
        (anything else the search system sent is shown as text)."""
        return [(document, is_image_source(document.image)) for document in self.documents]


def describe_run(call: ModelCall, run: KeywordRun) -> ModelTest:
    result = run.result
    if result.json is not None:
        raw = json.dumps(result.json, indent=2, ensure_ascii=False)
    else:
        raw = result.body_text
    method, url = _request_line(call, run.keyword)
    mapping = run.mapping_error
    return ModelTest(
        keyword=run.keyword,
        method=method,
        url=url,
        status=result.status,
        elapsed_ms=result.elapsed_ms,
        raw=raw[:RAW_SHOWN_CHARS],
        raw_chars=len(raw),
        documents=run.documents,
        error=run.message,
        error_kind="mapping"
        if mapping
        else (result.error_kind.value if result.error_kind else None),
        error_path=mapping.path if mapping else None,
        error_result=mapping.result if mapping else None,
    )


def mapper_broken(keyword: str, error: InvalidMapper) -> ModelTest:
    """The endpoint's stored mapper is not valid (edited outside the forms): no call."""
    return ModelTest(
        keyword=keyword,
        method="",
        url="",
        status=None,
        elapsed_ms=0,
        raw="",
        raw_chars=0,
        error=f"the endpoint's mapper is not valid: {error}",
        error_kind="mapper",
    )


def _request_line(call: ModelCall, keyword: str) -> tuple[str, str]:
    try:
        prepared = call.template.build(keyword)
    except RequestError:
        return call.template.method, ""
    return prepared.method, prepared.url
