"""JSON read with limits (apps/core/bounded_json.py) and the picture-address rule."""

import io
import json

import pytest

from apps.core.bounded_json import JsonLimitError, SurrogateGuard, loads
from apps.core.image_sources import image_source, is_image_source


def test_json_within_the_depth_limit_reads_as_json_does():
    text = json.dumps({"a": [[[{"b": "[[[{{{ inside a string"}]]], "c": "\\\\ud800"})
    assert loads(text) == json.loads(text)


def test_json_nested_deeper_than_the_limit_is_refused_before_parsing():
    with pytest.raises(JsonLimitError, match="nested deeper than 20 levels"):
        loads("[" * 100_000 + "]" * 100_000)
    assert loads("[" * 20 + "]" * 20) == json.loads("[" * 20 + "]" * 20)


@pytest.mark.parametrize(
    "text, problem",
    [
        ('{"a": "x\\udfffy"}', "a: is not valid Unicode (a lone surrogate such as \\ud800)"),
        (
            '{"a": ["ok", "\\ud800"]}',
            "a[1]: is not valid Unicode (a lone surrogate such as \\ud800)",
        ),
        ('{"a": {"b\\u0000": 1}}', "a: a key must not contain NUL characters"),
        ('"\\u0000"', "body: must not contain NUL characters"),
    ],
)
def test_text_that_is_not_valid_unicode_is_refused_with_where(text, problem):
    with pytest.raises(JsonLimitError) as refused:
        loads(text)
    assert str(refused.value) == problem


def test_bytes_are_read_as_utf8_with_or_without_a_byte_order_mark():
    assert loads(b'\xef\xbb\xbf{"a": "\xc3\xa9"}') == {"a": "é"}
    with pytest.raises(JsonLimitError, match="not UTF-8 text"):
        loads(b'{"a": "\xff"}')


def read_through_guard(data: bytes, chunk: int) -> bytes:
    guard, out = SurrogateGuard(io.BytesIO(data)), b""
    while piece := guard.read(chunk):
        assert len(piece) <= chunk
        out += piece
    return out


@pytest.mark.parametrize("chunk", [1, 2, 5, 11, 13, 64, 65536])
def test_the_guard_passes_valid_json_through_unchanged_whatever_the_read_size(chunk):
    data = json.dumps({"emoji": "😀 x " * 40, "escaped": "\\ud800 " * 5}).encode()
    assert read_through_guard(data, chunk) == data
    assert read_through_guard(b"\xef\xbb\xbf" + data, chunk) == data


@pytest.mark.parametrize("chunk", [1, 3, 7, 65536])
@pytest.mark.parametrize(
    "bad", [b"\\udfff", b"\\ud800", b"\\ud800\\ud800", b"\\\\\\ud800", b"\\uDBFFx"]
)
def test_the_guard_refuses_every_lone_surrogate_escape_naming_its_line(chunk, bad):
    data = b'{\n"pad": "' + b"x" * 30 + b'",\n"a": "' + bad + b'"}'
    with pytest.raises(JsonLimitError, match="line 3: .* is a lone surrogate"):
        read_through_guard(data, chunk)


@pytest.mark.parametrize(
    "text",
    ["https://img.example.com/a.png", "http://x/y?z=1", "data:image/png;base64,iVBORw0KGgo="],
)
def test_web_addresses_and_inline_pictures_may_be_shown(text):
    assert is_image_source(text)
    assert image_source(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "java\nscript:alert(1)",
        "data:image/svg+xml;base64,PHN2Zz4=",
        "data:text/html,<script>alert(1)</script>",
        "//evil.example.com/a.png",
        "ftp://x/a.png",
        "https://",
        " https://x/a.png",
        "http://[::1",
    ],
)
def test_anything_else_is_never_shown(text):
    assert not is_image_source(text)
    assert image_source(text) == ""
