"""The API's JSON parser: DRF's, with the limits every JSON Relevo reads has.

DRF's own parser recurses once per nesting level (a body nested 5,000 deep answered
500 RecursionError) and lets lone surrogates through to the database (500 again, or a
"?" stored in their place). This one refuses both with a 400 naming where.
"""

import json
from typing import IO, Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from apps.core import bounded_json
from apps.core.errors import InvalidInput


class BoundedJSONParser(JSONParser):
    def parse(
        self, stream: IO[bytes] | None, media_type: Any = None, parser_context: Any = None
    ) -> Any:
        # The body's size is bounded before any view reads it (core.request_limits).
        body = stream.read() if stream is not None else b""
        try:
            return bounded_json.loads(body)
        except bounded_json.JsonLimitError as error:
            message = str(error)
            raise InvalidInput([message if ": " in message else f"body: {message}"]) from None
        except (json.JSONDecodeError, ValueError) as error:
            raise ParseError(f"JSON parse error - {error}") from None
