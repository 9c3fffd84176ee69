"""What a unified diff's lines say: which of them it removes, and whether it patches code.

A removed line states what no longer holds; the fact ledger keeps it only to replace what it
restates (``ledger._iter_facts``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from abridged.engine.summarize.references import is_source_file

#: A unified diff's own lines: after one, every ``-`` line is a removal, whatever follows it.
_DIFF_HEADER = re.compile(r"^(?:@@ |diff --git |--- (?:a/|/dev/null)|\+\+\+ (?:b/|/dev/null))")
#: A removed and an added line with no space after the mark (``- item`` is a bullet, ``--x`` a
#: flag, ``+1`` a vote).
_BARE_REMOVED = re.compile(r"^-(?![-\s\d])")
_BARE_ADDED = re.compile(r"^\+(?![+\s\d])")


def removed_lines(units: Sequence[str]) -> frozenset[int]:
    """The positions of ``units`` that a diff removes: the ``-`` lines of a diff with a header
    (``@@``, ``--- a/``), or of lines with both a ``-x`` and a ``+y`` line and no header.

    >>> sorted(removed_lines(["-port: 80", "+port: 8080", "- a bullet"]))
    [0]
    >>> sorted(removed_lines(["- one", "- two"])), sorted(removed_lines(["-x", "--- a/f"]))
    ([], [0])
    """
    if any(_DIFF_HEADER.match(u) for u in units):
        return frozenset(
            i for i, u in enumerate(units) if u.startswith("-") and not _DIFF_HEADER.match(u)
        )
    bare = [i for i, u in enumerate(units) if _BARE_REMOVED.match(u)]
    if not bare or not any(_BARE_ADDED.match(u) for u in units):
        return frozenset()
    return frozenset(bare)


#: The file a diff's header names (``diff --git a/x b/x``, ``+++ b/x``).
_DIFF_FILE = re.compile(r"^(?:diff --git a/\S+ b/|\+\+\+ b/|--- a/)(\S+)")


def patches_code(units: Sequence[str]) -> bool:
    """Whether a diff's header names a source file (``src/app.py``), not a setting's file."""
    for unit in units:
        found = _DIFF_FILE.match(unit)
        if found is not None and is_source_file(found.group(1)):
            return True
    return False


__all__ = ["patches_code", "removed_lines"]
