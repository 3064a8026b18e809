"""paused(): Python's cyclic garbage collector held off while a job builds millions of objects.

A laid-out 131,072-GPU fabric is some ten million small objects (links, cage ends, media
choices, cables, bill items), all reachable and free of reference cycles, so the collector,
which runs every 700 new objects and now and then walks every object alive, finds nothing to
free yet cost over a quarter of the job's time (``bench/bench_gc.py``: 26.5 s with it,
19.3 s without, the same outputs). Reference counting still frees everything as usual; only cycles wait
until the collector is back on, as CPython's ``gc`` documentation describes ("automatic
collection can be disabled by calling gc.disable()"). Pauses nest, and a collector the caller
switched off stays off.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_depth = 0
_owner = False


@contextmanager
def paused() -> Iterator[None]:
    """Hold automatic collection off inside the block; the outermost pause turns it back on."""
    global _depth, _owner
    if _depth == 0:
        _owner = gc.isenabled()
        if _owner:
            gc.disable()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0 and _owner:
            _owner = False
            gc.enable()
