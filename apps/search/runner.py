"""One keyword end to end: build the request, call the endpoint, map the response.

This is what the evaluation start task will call per keyword. It returns every outcome
as data, so the task only has to store it (or retry when `retryable`): a keyword that
breaks the request template, a failed call and a response the mapper does not fit are
all per-keyword failures, not crashes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .client import ErrorKind, SearchResult, run_search
from .mapper import Document, Mapper, MappingError
from .request import RequestError, SearchTemplate
from .safety import Resolver


@dataclass(frozen=True, slots=True)
class KeywordRun:
    """The call's result, and the documents when the call worked and the mapper fit."""

    keyword: str
    result: SearchResult
    documents: list[Document] = field(default_factory=list)
    mapping_error: MappingError | None = None

    @property
    def failed(self) -> bool:
        return self.result.error is not None or self.mapping_error is not None

    @property
    def message(self) -> str | None:
        """What to record as the keyword's execution message."""
        if self.result.error is not None:
            return self.result.error
        if self.mapping_error is not None:
            return f"mapping failed: {self.mapping_error.message}"
        return None

    @property
    def retryable(self) -> bool:
        # A mapping error is a property of the response, so it would come back.
        return self.result.retryable


def run_keyword(
    template: SearchTemplate,
    keyword: str,
    mapper: Mapper | Mapping[str, object],
    *,
    timeout_s: float,
    max_bytes: int,
    allow_private: bool,
    resolver: Resolver | None = None,
) -> KeywordRun:
    """Run `keyword` through the model's template and mapper.

    Only a broken mapper spec raises (`InvalidMapper`): that is the model's
    configuration, the same for every keyword, and is checked when the model is saved.
    Pass a compiled `Mapper` to check it once for a whole evaluation.
    """
    compiled = mapper if isinstance(mapper, Mapper) else Mapper.compile(mapper)
    try:
        prepared = template.build(keyword)
    except RequestError as exc:
        result = SearchResult(
            status=None,
            elapsed_ms=0,
            body_text="",
            json=None,
            error=f"the request could not be built: {exc}",
            error_kind=ErrorKind.INVALID_REQUEST,
        )
        return KeywordRun(keyword, result)
    result = run_search(
        prepared,
        timeout_s=timeout_s,
        max_bytes=max_bytes,
        allow_private=allow_private,
        resolver=resolver,
    )
    if not result.ok:
        return KeywordRun(keyword, result)
    try:
        documents = compiled.apply(result.json)
    except MappingError as exc:
        return KeywordRun(keyword, result, mapping_error=exc)
    return KeywordRun(keyword, result, documents)
