"""The Content-Security-Policy header: on every page, with scripts from our own static files
only, and templates that need nothing more (no inline script, no on...= handler).

tests/browser/test_content_security_policy.py checks the pages in Chromium."""

import json
import re
from pathlib import Path

import pytest
from django.test import Client

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def policy(response) -> dict[str, list[str]]:
    """The response's Content-Security-Policy, as {directive: [sources]}."""
    header = response["Content-Security-Policy"]
    directives = {}
    for part in header.split(";"):
        name, *sources = part.split()
        directives[name] = sources
    return directives


@pytest.mark.django_db
def test_an_html_page_carries_a_policy_that_runs_no_inline_script():
    response = Client().get("/accounts/login/")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    directives = policy(response)
    assert directives["script-src"] == ["'self'"]
    assert "'unsafe-inline'" not in directives["script-src"]
    assert "'unsafe-eval'" not in directives["script-src"]
    assert directives["default-src"] == ["'self'"]
    assert directives["object-src"] == ["'none'"]
    assert directives["base-uri"] == ["'self'"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["form-action"] == ["'self'"]
    # A search result's image may come from any host.
    assert set(directives["img-src"]) == {"'self'", "data:", "https:", "http:"}


@pytest.mark.django_db
def test_the_api_docs_page_needs_no_exception_to_the_policy():
    client = Client()

    page = client.get("/api/docs/")
    script = client.get("/api/docs/?script=")

    assert policy(page)["script-src"] == ["'self'"]
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in script.content.decode()


@pytest.mark.django_db
def test_htmx_is_told_to_inject_no_style_and_to_evaluate_no_code():
    html = Client().get("/accounts/login/").content.decode()

    meta = re.search(r"<meta name=\"htmx-config\" content='([^']*)'>", html)
    assert meta, "no htmx-config"
    config = json.loads(meta.group(1))
    assert config["includeIndicatorStyles"] is False
    assert config["allowEval"] is False


# --- The templates ----------------------------------------------------------------------

ALL_TEMPLATES = sorted(TEMPLATES.rglob("*.html"))
# onclick="...", onchange='...': an inline handler, which the policy refuses to run.
INLINE_HANDLER = re.compile(r"""\son[a-z]+\s*=\s*["']""", re.IGNORECASE)
# <script> without src=: inline code (json_script's data blocks are made by a filter).
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)


# {# ... #} and {% comment %} ... {% endcomment %}: never sent to the browser.
TEMPLATE_COMMENT = re.compile(r"\{#.*?#\}|\{% comment %\}.*?\{% endcomment %\}", re.DOTALL)


def relative(path: Path) -> str:
    return str(path.relative_to(TEMPLATES))


def test_the_templates_were_found():
    assert "base.html" in map(relative, ALL_TEMPLATES)
    assert "jinja2/judging/card.html" in map(relative, ALL_TEMPLATES)


@pytest.mark.parametrize("template", ALL_TEMPLATES, ids=relative)
def test_no_template_has_an_inline_handler_or_script(template):
    text = TEMPLATE_COMMENT.sub("", template.read_text())

    assert not INLINE_HANDLER.findall(text)
    assert not INLINE_SCRIPT.findall(text)
    assert "javascript:" not in text.lower()
    assert "hx-on" not in text  # htmx would have to eval it (allowEval is off)
