"""Tell a text file from anything else before reading it: a picture or an archive chosen
by mistake gets one line naming it, not a problem for every line of its bytes."""

import os
from typing import IO, Any

SNIFF_BYTES = 8192
# A file whose start has more than this share of characters that text does not hold
# (bytes that are not UTF-8, NUL and the other control characters) is not text. A text
# file with a stray bad byte stays under it, and its reader names the line.
NOT_TEXT_SHARE = 0.1
_TEXT_CONTROLS = "\t\n\r\f"


def file_name(stream: Any, default: str) -> str:
    """The name of the file a person chose (an upload's name, a path's last part)."""
    name = getattr(stream, "name", None)
    return os.path.basename(name) if isinstance(name, str) and name else default


def not_text_problem(stream: IO[bytes], name: str) -> str | None:
    """The one problem of a file that is not text, else None. Reads the file's start and
    goes back there."""
    start = stream.tell()
    head = stream.read(SNIFF_BYTES)
    stream.seek(start)
    if isinstance(head, str) or not _looks_binary(head):
        return None
    return f"{name}: this is not a text file (JSON and TREC files are UTF-8 text)"


def _looks_binary(head: bytes) -> bool:
    text = head.decode("utf-8", errors="replace")
    odd = sum(char == "\ufffd" or (char < " " and char not in _TEXT_CONTROLS) for char in text)
    return odd > NOT_TEXT_SHARE * len(text)
