"""The app's HTML forms as a browser finds them, for the property tests of every form
(tests/test_property_forms.py): each page's forms that post, with the fields a person
fills in and what the page puts in them, and the app's routes outside /api/ and /admin/
with their ids filled in from a world of objects.
"""

import inspect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote_from_bytes, urljoin, urlsplit

from django.urls import Resolver404, URLPattern, URLResolver, get_resolver, resolve

# Routes that are no page a person fills in: the API and the admin have their own
# property tests and Django's own forms; the live stream's and the demo's APIs answer JSON;
# an identity provider posts SAML's answers (apps/sso/tests: hostile ones included).
OUTSIDE = ("api/", "admin/", "live/", "demo/", "favicon.ico", "sso/saml/")


@dataclass
class Form:
    """A form that posts: where to, its fields' names and values as the page filled them
    (a checkbox left unticked is left out, as a browser leaves it out), and the label of
    each field, to find it named in an answer."""

    page: str
    action: str
    fields: list[tuple[str, str]] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        """The fields a person can change (not the CSRF token), each once."""
        seen: dict[str, None] = {}
        for name, _ in self.fields:
            if name != "csrfmiddlewaretoken":
                seen.setdefault(name, None)
        return list(seen)

    def with_value(self, name: str, value: str) -> list[tuple[str, str]]:
        """The fields as the page filled them, with `name` given `value` (once)."""
        kept = [(n, v) for n, v in self.fields if n != name]
        return [*kept, (name, value)]


class _FormParser(HTMLParser):
    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.forms: list[Form] = []
        self._form: Form | None = None
        self._label_for: str | None = None
        self._label_text: list[str] = []
        self._ids: dict[str, str] = {}  # element id -> field name
        self._textarea: str | None = None
        self._text: list[str] = []
        self._select: str | None = None
        self._options: list[tuple[str, bool]] = []
        self._option_value: str | None = None
        self._option_selected = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {key: value or "" for key, value in attrs}
        if tag == "form":
            if a.get("method", "get").lower() == "post":
                self._form = Form(self.page, urljoin(self.page, a.get("action") or self.page))
            return
        if tag == "label":
            self._label_for, self._label_text = a.get("for"), []
        form = self._form
        if form is None or not a.get("name"):
            if tag == "option" and self._select is not None:
                self._option_value, self._option_selected = a.get("value"), "selected" in a
            return
        name = a["name"]
        if a.get("id"):
            self._ids[a["id"]] = name
        if tag == "input":
            kind = a.get("type", "text").lower()
            if kind in ("checkbox", "radio") and "checked" not in a:
                form.labels.setdefault(name, "")
                return
            if kind in ("submit", "button", "image", "reset", "file"):
                return
            form.fields.append((name, a.get("value", "")))
        elif tag == "button" and a.get("type", "submit") == "submit":
            if not any(n == name for n, _ in form.fields):
                form.fields.append((name, a.get("value", "")))
        elif tag == "textarea":
            self._textarea, self._text = name, []
        elif tag == "select":
            self._select, self._options = name, []

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._text.append(data)
        if self._label_for is not None:
            self._label_text.append(data)

    def handle_endtag(self, tag: str) -> None:
        form = self._form
        if tag == "label" and self._label_for is not None:
            name = self._ids.get(self._label_for, self._label_for)
            if form is not None:
                form.labels[name] = " ".join("".join(self._label_text).split())
            self._label_for = None
        elif tag == "textarea" and form is not None and self._textarea is not None:
            form.fields.append((self._textarea, "".join(self._text).removeprefix("\n")))
            self._textarea = None
        elif tag == "option" and self._option_value is not None:
            self._options.append((self._option_value, self._option_selected))
            self._option_value = None
        elif tag == "select" and form is not None and self._select is not None:
            chosen = [value for value, selected in self._options if selected]
            values = [value for value, _ in self._options]
            value = chosen[0] if chosen else (values[0] if values else "")
            form.fields.append((self._select, value))
            self._select = None
        elif tag == "form" and form is not None:
            self.forms.append(form)
            self._form = None


def forms_on(page: str, html: str) -> list[Form]:
    """The forms of a page that post."""
    parser = _FormParser(page)
    parser.feed(html)
    return parser.forms


def routes() -> Iterator[tuple[str, Callable[..., Any]]]:
    """Every route of the app outside /api/ and /admin/, as written ("/evaluations/<int:
    evaluation_id>/edit/"), with its view."""

    def walk(patterns: list, prefix: str) -> Iterator[tuple[str, Callable[..., Any]]]:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern), pattern.callback

    for route, view in walk(get_resolver().url_patterns, ""):
        if not route.startswith(OUTSIDE):
            yield "/" + route, view


def takes_post(view: Callable[..., Any]) -> bool:
    """Whether a view reads a POST: its own code (under its decorators) says POST, or it
    is a class with a post method."""
    view_class = getattr(view, "view_class", None)
    if view_class is not None:
        return hasattr(view_class, "post")
    return bool(re.search(r"\bPOST\b", inspect.getsource(inspect.unwrap(view))))


_PARAMETER = re.compile(r"<(?:\w+:)?(\w+)>")


def filled(route: str, ids: dict[str, str]) -> str | None:
    """The route with each parameter given its world's value; None if one has none."""
    missing = [name for name in _PARAMETER.findall(route) if name not in ids]
    if missing:
        return None
    return _PARAMETER.sub(lambda match: ids[match.group(1)], route)


def route_of(url: str) -> str | None:
    """The route a URL of the app resolves to, as routes() writes it; None if none."""
    try:
        return "/" + resolve(urlsplit(url).path).route
    except Resolver404:
        return None


def urlencoded(fields: list[tuple[str, str]]) -> bytes:
    """An application/x-www-form-urlencoded body, each value's UTF-8 bytes as they are (a
    lone surrogate too: the test client would refuse to encode it)."""
    return b"&".join(
        quote_from_bytes(name.encode()).encode()
        + b"="
        + quote_from_bytes(value.encode("utf-8", "surrogatepass")).encode()
        for name, value in fields
    )
