"""What a server process does once it has started, for every request after."""

from __future__ import annotations

import gc
import sys

__all__ = ["SWITCH_INTERVAL", "YOUNG_THRESHOLD", "shorten_gil_switch", "tune_gc_for_serving"]

YOUNG_THRESHOLD = 50_000
"""Container objects allocated (net) between two collections of the youngest generation in a
service worker; CPython's default is 700."""

SWITCH_INTERVAL = 0.001
"""Seconds a thread runs Python before one waiting for the interpreter lock gets it, in a
service worker; CPython's default is 0.005."""


def tune_gc_for_serving(young_threshold: int | None = None) -> None:
    """Make the cyclic garbage collector's pauses rare and short in a worker process.

    First, every object made so far (imported modules, the app, the store's engines) leaves
    the collector's generations: they live as long as the process, yet a full collection
    walks them all, on whichever request allocates at the wrong moment.

    Then, given ``young_threshold`` (the service passes ``YOUNG_THRESHOLD``), the youngest
    generation is collected every that many allocations instead of 700. A worker with many
    turns in flight keeps their objects alive across many collections, so at 700 they pile up
    in the middle generation, whose collections are long and frequent. Most objects die by
    reference counting, not by the collector: what waits longer is only garbage in cycles, a
    few megabytes at most. The proxy keeps 700: its requests are short and few are in flight,
    and it measured slightly slower with the larger one. The figures behind both choices are
    in ``bench/RESULTS.md`` ("moved from docstrings"; ``bench/proxy.py``, ``bench/service.py``).

    Called by the workers' application factories (a process of their own), never in a
    process that makes apps for tests."""
    gc.collect()
    gc.freeze()
    if young_threshold is not None:
        _, middle, old = gc.get_threshold()
        gc.set_threshold(young_threshold, middle, old)


def shorten_gil_switch(interval: float = SWITCH_INTERVAL) -> None:
    """Let the event loop's thread have the interpreter lock back sooner.

    A service worker runs tools (plain functions) in threads, and a SQLite transaction in a
    thread when another connection holds the lock; while one of them runs Python code, the
    event loop waiting for the lock waits up to the switch interval (CPython's default 5 ms),
    once per step of every turn in flight: a shorter interval cuts the tail latency of every
    stream a worker holds (``bench/service.py``; the figures are in ``bench/RESULTS.md``,
    "moved from docstrings"). Threads that compute for long switch more often, a few
    microseconds each time.

    Called by the service's application factory (a worker process of its own)."""
    sys.setswitchinterval(interval)
