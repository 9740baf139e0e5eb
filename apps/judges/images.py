"""Results' images for a judge that sees them: read once by Relevo and shown to the model
as bytes, so a judgement's cache key holds what the model saw and the provider fetches
nothing on a result's say-so.

An image is the mapper's `image` of a result: an http(s) URL, read through the
address-safety layer (its host checked and pinned, no redirects; private addresses only
where SEARCH_ALLOW_PRIVATE_ADDRESSES allows the search system's own), or a `data:` URL.
Either way at most MAX_IMAGE_BYTES, and only a PNG, JPEG, GIF or WebP raster, known by
its first bytes (what a server or a data: URL says it is counts for nothing). An image
that cannot be read leaves its result judged on its text, with why the image is missing
shown to the model and kept in the cache key.

Read images are kept in this process for a while (IMAGES_KEPT, by address): a run's
steps and a calibration's calls ask for the same ones again.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import threading
from collections import OrderedDict
from dataclasses import replace
from typing import Any

import httpx2 as httpx
from django.conf import settings

from apps.search.safe_transport import (
    ResponseTooLarge,
    UnusableURL,
    outbound_url,
    safe_http_client,
)
from apps.search.safety import AddressRefused

from .prompting import Result, ShownImage

# Anthropic's limit for one image, and well within OpenAI's.
MAX_IMAGE_BYTES = 5_000_000
MAX_REFERENCE_CHARS = 2_000  # a URL; a data: URL may hold a whole image
IMAGE_TIMEOUT_S = 10.0
IMAGES_KEPT = 64
# What a model is charged for one image at most, in input tokens: Anthropic's ~1,600 for
# the largest it takes without scaling, and above OpenAI's for a detailed tile set.
IMAGE_TOKENS_BOUND = 1_600

RASTERS = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)

_kept: OrderedDict[str, ShownImage | str] = OrderedDict()
_kept_lock = threading.Lock()


def image_read(reference: str) -> ShownImage | str:
    """The image at `reference` (an http(s) or data: URL), or why it cannot be shown."""
    reference = reference.strip()
    with _kept_lock:
        found = _kept.get(reference)
    if found is not None:
        return found
    read = _from_data_url(reference) if reference.startswith("data:") else _fetched(reference)
    shown = _raster(read) if isinstance(read, bytes) else read
    with _kept_lock:
        _kept[reference] = shown
        _kept.move_to_end(reference)
        while len(_kept) > IMAGES_KEPT:
            _kept.popitem(last=False)
    return shown


def result_shown(
    result_id: str, title: str, fields: dict[str, Any], image: str, *, sees_images: bool
) -> Result:
    """A result as a judge is shown it: with its image read when the judge sees images
    and the result has one (or why it is not shown)."""
    result = Result(result_id, title, fields)
    if not sees_images or not image:
        return result
    shown = image_read(image)
    if isinstance(shown, ShownImage):
        return replace(result, image=shown)
    return replace(result, image_note=shown)


def _from_data_url(reference: str) -> bytes | str:
    if len(reference) > MAX_IMAGE_BYTES * 4 // 3 + 200:
        return f"larger than {MAX_IMAGE_BYTES:,} bytes"
    header, comma, payload = reference.partition(",")
    if not comma or not header.endswith(";base64"):
        return "a data: URL of an image must be base64"
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return "its data: URL is not valid base64"


def _fetched(reference: str) -> bytes | str:
    if len(reference) > MAX_REFERENCE_CHARS:
        return f"its address is longer than {MAX_REFERENCE_CHARS:,} characters"
    try:
        url = outbound_url(reference)
    except UnusableURL as error:
        return str(error)
    client = safe_http_client(
        timeout_s=IMAGE_TIMEOUT_S,
        allow_private=settings.SEARCH_ALLOW_PRIVATE_ADDRESSES,
        max_bytes=MAX_IMAGE_BYTES,
    )
    try:
        with client:
            response = client.get(url)
    except AddressRefused as error:
        return f"its address may not be called: {error}"
    except ResponseTooLarge:
        return f"larger than {MAX_IMAGE_BYTES:,} bytes"
    except httpx.HTTPError as error:
        cause = error.__cause__ or error.__context__
        if isinstance(cause, AddressRefused):
            return f"its address may not be called: {cause}"
        return f"could not be read ({type(error).__name__})"
    if response.status_code != 200:
        return f"its address answered {response.status_code}"
    return response.content


def _raster(data: bytes) -> ShownImage | str:
    if len(data) > MAX_IMAGE_BYTES:
        return f"larger than {MAX_IMAGE_BYTES:,} bytes"
    media_type = next((kind for magic, kind in RASTERS if data.startswith(magic)), "")
    if not media_type and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        media_type = "image/webp"
    if not media_type:
        return "not a PNG, JPEG, GIF or WebP image"
    return ShownImage(media_type, data, hashlib.sha256(data).hexdigest())
