"""What a server process does once it has started, for every request after."""

from __future__ import annotations

import gc

__all__ = ["YOUNG_THRESHOLD", "tune_gc_for_serving"]

YOUNG_THRESHOLD = 50_000
"""Container objects allocated (net) between two collections of the youngest generation in a
worker; CPython's default is 700."""


def tune_gc_for_serving() -> None:
    """Make the cyclic garbage collector's pauses rare and short in a worker process.

    First, every object made so far (imported modules, the app, the store's engines) leaves
    the collector's generations: they live as long as the process, yet a full collection
    walks them all, tens of milliseconds on whichever request allocates at the wrong moment
    (``bench/proxy.py``: p99 added latency 8.6 ms without, 4.5 ms with).

    Then the youngest generation is collected every ``YOUNG_THRESHOLD`` allocations instead of
    700. A worker with a hundred turns in flight keeps their objects alive across many
    collections, so at 700 they pile up in the middle generation, whose collections took
    9-13 ms each, two or three a second (``bench/service.py`` at 100 streams: 43 collections
    over 1 ms in 17 s, the longest 43 ms; after the change one, of 12 ms). Most objects die by
    reference counting, not by the collector: what waits longer is only garbage in cycles, a
    few megabytes at most.

    Called by the workers' application factories (a process of their own), never in a
    process that makes apps for tests; what requests make is collected as before."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
