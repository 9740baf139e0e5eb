"""Keyword texts, document ids and grader names as TREC file columns.

TREC files split their columns on whitespace, so a column cannot hold a space. A text
becomes a column by percent-encoding every whitespace character and the percent sign
itself (UTF-8 bytes, as in URLs): "red running shoes" -> "red%20running%20shoes",
"100%" -> "100%25". Reading a column decodes it again, so an export read back gives
the same texts, and a column without a "%" (every ordinary TREC qid) reads as itself.
"""

from urllib.parse import quote, unquote


def to_column(text: str) -> str:
    if not any(char.isspace() or char == "%" for char in text):
        return text
    return "".join(quote(char, safe="") if char.isspace() or char == "%" else char for char in text)


def from_column(column: str) -> str:
    return unquote(column) if "%" in column else column
