"""Building the HTTP request for one keyword from a search model's template.

The `#query#` placeholder may appear in the URL, parameter values, header values and the
body. Each place has its own escaping, and getting it wrong either breaks the request or
lets a keyword rewrite it (a `&` adding a parameter, a `"` ending a JSON string):

- URL path and query, parameter values: percent-encoded (space as %20, `&=#%+/` encoded);
- JSON body: inside a string literal, the keyword becomes that string's content (quotes,
  backslashes, control characters and non-ASCII escaped); outside one, a whole string;
- form body: form-encoded (space as `+`);
- text body and header values: verbatim (a header value may not hold line breaks or
  other control characters, so such a keyword is refused rather than smuggled through).

Everything is checked and every problem reported at once, each with its location.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import SplitResult, quote, quote_plus, urlencode, urlsplit, urlunsplit

from apps.core import bounded_json

PLACEHOLDER = "#query#"
METHODS = ("GET", "POST", "PUT")
BODY_TYPES = ("json", "form", "text")
CONTENT_TYPES = {
    "json": "application/json",
    "form": "application/x-www-form-urlencoded",
    "text": "text/plain; charset=utf-8",
}
# Framing and routing headers are the client's job; a template that set them could
# desynchronise the connection (Content-Length) or fight the address check (Host).
RESERVED_HEADERS = ("host", "content-length", "transfer-encoding", "connection")
# RFC 9110 token characters.
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
# Stands in for `#query#` while the URL is split: `#` would otherwise start a fragment.
_URL_MARK = "relevo0query0mark"
# What `SearchTemplate.problems` tries the template with: if this keyword fits, the
# escaping holds for any keyword (line breaks aside, which only header values refuse).
SAMPLE_KEYWORD = 'say "hi" \\ & = # % + / é'


class RequestError(ValueError):
    """The template (or the keyword put into it) cannot make a valid request."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True, slots=True)
class PreparedSearch:
    """A request ready to send: the URL has the parameters, the body is encoded."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...]
    body: bytes | None


def build_request(
    method: str,
    url: str,
    params: Sequence[tuple[str, str]],
    headers: Sequence[tuple[str, str]],
    body_template: str | None,
    body_type: str,
    keyword: str,
) -> PreparedSearch:
    """Put `keyword` into the template; raise `RequestError` listing every problem."""
    problems: list[str] = []
    if not isinstance(keyword, str) or keyword == "":
        problems.append("keyword: required")
        keyword = ""
    normalized_method = method.upper() if isinstance(method, str) else ""
    if normalized_method not in METHODS:
        problems.append(f"method: must be one of {', '.join(METHODS)} (got {method!r})")
    if body_type not in BODY_TYPES:
        problems.append(f"body_type: must be one of {', '.join(BODY_TYPES)} (got {body_type!r})")

    full_url = _fill_url(url, params, keyword, problems)
    filled_headers = _fill_headers(headers, keyword, problems)
    body = (
        _fill_body(body_template, body_type, keyword, problems) if body_type in BODY_TYPES else None
    )

    if problems or full_url is None:
        raise RequestError(problems)
    if body is not None and not any(name.lower() == "content-type" for name, _ in filled_headers):
        filled_headers.append(("Content-Type", CONTENT_TYPES[body_type]))
    return PreparedSearch(normalized_method, full_url, tuple(filled_headers), body)


@dataclass(frozen=True, slots=True)
class SearchTemplate:
    """A search model's request template, built once and filled per keyword."""

    method: str
    url: str
    params: Sequence[tuple[str, str]] = ()
    headers: Sequence[tuple[str, str]] = ()
    body_template: str | None = None
    body_type: str = "json"

    def build(self, keyword: str) -> PreparedSearch:
        return build_request(
            self.method,
            self.url,
            self.params,
            self.headers,
            self.body_template,
            self.body_type,
            keyword,
        )

    def problems(self) -> list[str]:
        """What is wrong with the template itself, for the model form: it is built with
        a sample keyword full of characters that need escaping, and it must use
        `#query#` somewhere, or every keyword would get the same results."""
        try:
            self.build(SAMPLE_KEYWORD)
        except RequestError as exc:
            problems = exc.problems
        else:
            problems = []
        places = [self.url, self.body_template or ""]
        places += [value for _, value in self.params] + [value for _, value in self.headers]
        if not any(PLACEHOLDER in place for place in places if isinstance(place, str)):
            problems.append(
                f"url: {PLACEHOLDER} appears nowhere (URL, parameters, headers or body), "
                "so every keyword would get the same results"
            )
        return problems


def _fill_url(
    url: str, params: Sequence[tuple[str, str]], keyword: str, problems: list[str]
) -> str | None:
    if not isinstance(url, str) or not url.strip():
        problems.append("url: required")
        return None
    parts = urlsplit(url.strip().replace(PLACEHOLDER, _URL_MARK))
    if parts.scheme.lower() not in ("http", "https"):
        got = f" (got '{parts.scheme}')" if parts.scheme else ""
        problems.append(f"url: must start with http:// or https://{got}")
        return None
    if not parts.hostname:
        problems.append("url: has no host")
        return None
    if _URL_MARK in parts.netloc:
        problems.append(f"url: {PLACEHOLDER} may only be in the path or the query")
        return None
    try:
        parts.port  # noqa: B018 - urllib validates the port only when it is read
    except ValueError:
        problems.append("url: the port is not a number between 0 and 65535")
        return None

    encoded = quote(keyword, safe="")
    path = parts.path.replace(_URL_MARK, encoded)
    query = parts.query.replace(_URL_MARK, encoded)
    extra = _encode_params(params, keyword, problems)
    if extra:
        query = f"{query}&{extra}" if query else extra
    # The fragment is dropped: it is never sent to the server anyway.
    return urlunsplit(SplitResult(parts.scheme.lower(), parts.netloc, path, query, ""))


def _encode_params(params: Sequence[tuple[str, str]], keyword: str, problems: list[str]) -> str:
    pairs: list[tuple[str, str]] = []
    for index, pair in enumerate(params):
        if not _is_text_pair(pair):
            problems.append(f"params[{index}]: must be a (name, value) pair of text")
            continue
        name, value = pair
        if not name.strip():
            problems.append(f"params[{index}].name: required")
            continue
        pairs.append((name, value.replace(PLACEHOLDER, keyword)))
    # quote (not quote_plus): %20 for spaces reads the same to form parsers and to
    # servers that follow RFC 3986 strictly, while `+` would be a literal plus to them.
    return urlencode(pairs, quote_via=quote, safe="")


def _fill_headers(
    headers: Sequence[tuple[str, str]], keyword: str, problems: list[str]
) -> list[tuple[str, str]]:
    filled: list[tuple[str, str]] = []
    for index, pair in enumerate(headers):
        if not _is_text_pair(pair):
            problems.append(f"headers[{index}]: must be a (name, value) pair of text")
            continue
        name, value = pair
        name = name.strip()
        if not _HEADER_NAME.fullmatch(name):
            problems.append(f"headers[{index}].name: {name!r} is not a valid header name")
            continue
        if name.lower() in RESERVED_HEADERS:
            problems.append(f"headers[{index}].name: {name} is set by Relevo itself")
            continue
        # Values are sent as they are; colons and quotes are fine in a header value.
        filled_value = value.replace(PLACEHOLDER, keyword)
        if _CONTROL.search(filled_value):
            where = "the keyword puts" if not _CONTROL.search(value) else "it has"
            problems.append(
                f"headers[{index}].value: {where} a line break or control character in it"
            )
            continue
        filled.append((name, filled_value))
    return filled


def _fill_body(
    template: str | None, body_type: str, keyword: str, problems: list[str]
) -> bytes | None:
    if template is None or template == "":
        return None
    if not isinstance(template, str):
        problems.append("body: must be text")
        return None
    if body_type == "form":
        # Form encoding: space becomes `+`, and `&`, `=` and `+` are encoded so the
        # keyword stays one value.
        return template.replace(PLACEHOLDER, quote_plus(keyword, safe="")).encode("utf-8")
    if body_type == "text":
        return template.replace(PLACEHOLDER, keyword).encode("utf-8")
    body = fill_json_template(template, keyword)
    try:
        bounded_json.loads(body)
    except bounded_json.JsonLimitError as exc:
        problems.append(f"body: {exc}")
        return None
    except json.JSONDecodeError as exc:
        problems.append(
            f"body: not valid JSON after putting in the keyword: {exc.msg} "
            f"(line {exc.lineno}, column {exc.colno})"
        )
        return None
    return body.encode("utf-8")


def fill_json_template(template: str, keyword: str) -> str:
    """Replace `#query#` in a JSON template, escaped for where it stands.

    Inside a string literal (`"q": "#query# shoes"`) it becomes string content; outside
    (`"q": #query#`) it becomes a whole JSON string. ASCII-only escapes keep the body
    valid whatever encoding a server assumes.
    """
    as_string = json.dumps(keyword, ensure_ascii=True)
    as_content = as_string[1:-1]
    out: list[str] = []
    in_string = False
    position = 0
    while position < len(template):
        if template.startswith(PLACEHOLDER, position):
            out.append(as_content if in_string else as_string)
            position += len(PLACEHOLDER)
            continue
        char = template[position]
        if in_string and char == "\\":
            out.append(template[position : position + 2])
            position += 2
            continue
        if char == '"':
            in_string = not in_string
        out.append(char)
        position += 1
    return "".join(out)


def _is_text_pair(pair: object) -> bool:
    return (
        isinstance(pair, tuple | list)
        and len(pair) == 2
        and isinstance(pair[0], str)
        and isinstance(pair[1], str)
    )
