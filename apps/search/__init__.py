"""Calling a team's live search system: the pure core, no Django.

- ``paths``    the path and template language of the mapper (parsed, never evaluated)
- ``mapper``   validating a response mapper and turning a JSON response into documents
- ``request``  filling a search model's request template with one keyword, escaped for
               where the keyword goes
- ``safety``   which addresses may be called (the server-side request forgery guard)
- ``client``   sending a prepared request with address, size and time limits
- ``runner``   one keyword end to end, every outcome returned as data

Settings (timeouts, size cap, whether private addresses are allowed) are arguments, so
this package imports only the standard library and httpx and is tested without Django.
"""

from .client import ErrorKind, SearchResult, run_search
from .mapper import (
    Document,
    InvalidMapper,
    Mapper,
    MappingError,
    map_response,
    validate_mapper,
)
from .request import (
    PLACEHOLDER,
    PreparedSearch,
    RequestError,
    SearchTemplate,
    build_request,
)
from .runner import KeywordRun, run_keyword
from .safety import AddressRefused, addresses_to_call, blocked_reason, check_addresses

__all__ = [
    "PLACEHOLDER",
    "AddressRefused",
    "Document",
    "ErrorKind",
    "InvalidMapper",
    "KeywordRun",
    "Mapper",
    "MappingError",
    "PreparedSearch",
    "RequestError",
    "SearchResult",
    "SearchTemplate",
    "addresses_to_call",
    "blocked_reason",
    "build_request",
    "check_addresses",
    "map_response",
    "run_keyword",
    "run_search",
    "validate_mapper",
]
