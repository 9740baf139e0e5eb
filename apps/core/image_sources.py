"""Which texts may be shown as a result's picture (`<img src>`).

A result's image comes from a search system, an import or the API, so it is data from
outside. Only web addresses (http, https, with a host) and inline raster pictures
(`data:image/png;base64,...` and the like) are stored or shown; anything else, such as
`javascript:` or `data:text/html`, is refused when it arrives and never rendered.
SVG is not among the inline types: it is a document that can carry script.
"""

import re
from urllib.parse import urlsplit

_INLINE_PICTURE = re.compile(r"data:image/(png|jpeg|gif|webp|avif);base64,[A-Za-z0-9+/=\s]*\Z")
RULE = "an http(s) address, or a data:image/png, jpeg, gif, webp or avif picture"


def is_image_source(text: str) -> bool:
    """True for a text Relevo may store and render as a picture's address."""
    if text[:5].lower() == "data:":
        return bool(_INLINE_PICTURE.match(text.lower()[:40] + text[40:]))
    try:
        parts = urlsplit(text)
    except ValueError:  # e.g. an unbalanced "[" in the host
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc) and _printable(text)


def _printable(text: str) -> bool:
    # Browsers drop tabs and newlines inside URLs, which lets "java\\nscript:" through some
    # filters; an address with control characters or spaces is refused outright.
    return not any(ord(char) < 33 or ord(char) == 127 for char in text)


def image_source(text: str) -> str:
    """The text when it may be shown as a picture, else "" (for data stored before the
    rule, which pages never render)."""
    return text if text and is_image_source(text) else ""
