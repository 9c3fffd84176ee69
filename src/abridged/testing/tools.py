"""Deterministic tools for tests, benchmarks and the service's demo (``--tools
abridged.testing.tools:TOOLS``): their output is bulky, like a real agent's, and the same for
the same arguments, so that runs compare."""

from __future__ import annotations

import hashlib

from abridged.runtime.tools import Tool, tool

__all__ = ["TOOLS", "read_record", "search_records"]

_WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
]


def _lines(seed: str, count: int) -> list[str]:
    out = []
    for i in range(count):
        digest = hashlib.sha256(f"{seed}:{i}".encode()).digest()
        words = " ".join(_WORDS[b % len(_WORDS)] for b in digest[:10])
        out.append(f"{i + 1:4d}  {words}")
    return out


@tool
def read_record(key: str, lines: int = 40) -> str:
    """Read a stored record by its key (returns its lines, numbered)."""
    lines = max(1, min(int(lines), 400))
    return f"record {key} ({lines} lines)\n" + "\n".join(_lines(key, lines))


@tool
def search_records(query: str) -> str:
    """Search the records for a query; returns matching keys with a line of context."""
    hits = _lines("search:" + query, 12)
    return "\n".join(f"rec-{i:03d}: {line.strip()}" for i, line in enumerate(hits))


TOOLS: list[Tool] = [read_record, search_records]
"""The demo tools, for ``--tools abridged.testing.tools:TOOLS``."""
