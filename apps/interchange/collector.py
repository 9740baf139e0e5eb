"""Python's cycle collector, run less often while an import streams rows.

An import makes millions of short-lived lists and tuples, none in a cycle. With the
default thresholds the collector ran a full collection about fifty times over a
million-result run and took over 40 % of the import's time (bench/depth_bench.py); with
a first-generation threshold of 50,000 it runs none, and memory stays as flat.
"""

import gc
from collections.abc import Iterator
from contextlib import contextmanager

FIRST_GENERATION_THRESHOLD = 50_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    """The collector's first threshold raised for the block, then restored."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], FIRST_GENERATION_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
