"""A fingerprint of a result's document content: what a grader saw when they graded it.

Two results of one document (the same keyword and doc id, in two evaluations) may show
different content when the document changed between the two searches: a new title, a
new image, a price in its attributes. A grade copied from the first to the second would
then judge what nobody looked at, so reuse compares the two fingerprints and marks such
a grade stale (apps/lifecycle/reuse.py).

The fingerprint is 32 hex digits of BLAKE2b over the name, the image address and the
attributes as canonical JSON (keys sorted, no spaces), so the same content always gives
the same fingerprint whatever order the search system listed its fields in.
"""

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def content_fingerprint(name: str, image: str, attributes: Mapping[str, Any]) -> str:
    canonical = json.dumps(
        [name, image, attributes], sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.blake2b(canonical.encode(), digest_size=16).hexdigest()
