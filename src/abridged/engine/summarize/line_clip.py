"""A long multi-line entry clipped to its most specific lines, in their order, gaps marked.

A user who pastes a config file, a table, a log or an e-mail into the conversation wants what
it says kept, and what it says is in a few lines of it: ``User=svc-ingest``, the table row with
the owner's name, the line with the path. Clipping such a paste to its head and tail
(``transcript.clip_middle``) keeps the boilerplate around a paste (``[Unit]``, ``|---|``,
``Restart=on-failure``) and drops its middle, where the values are; and a summary clipped again
at each compaction drops a little more of the middle each time. Here the lines are ranked by the
ledger's own signals (``signals.specificity`` and ``signals.modality``: exact references and
hyphenated names, a ``key: value`` shape, a person's name, rule words), the first line (what
the paste is) first, and as many of the best as fit are kept in their order; each run of
dropped lines becomes one marker with its count, so a clip of a clip merges its markers
instead of nesting them.

Pure: no I/O, deterministic.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable

from abridged.engine.summarize.ledger import kebab_names
from abridged.engine.summarize.references import reference_kinds
from abridged.engine.summarize.signals import combine, modality, specificity
from abridged.engine.summarize.transcript import OMISSION_LINE

__all__ = ["MIN_LINES", "clip_to_lines", "lines_marker", "without_markers"]

#: Below this many non-blank lines an entry is prose, clipped by its head and tail instead.
MIN_LINES = 4
#: What the first line adds to its rank: it says what the paste is (a command, a file's name,
#: a table's header, a subject line).
_FIRST_LINE_BONUS = 2.0
#: A marker of dropped lines (``lines_marker``): bookkeeping, never kept as a line of its own.
_LINES_MARKER = re.compile(r"^\s*\[\.\.\. (\d[\d,]*) lines? omitted \.\.\.\]\s*$")


def _is_marker(line: str) -> bool:
    """Whether ``line`` is a marker of this module's or ``transcript.omission_marker``'s."""
    return bool(_LINES_MARKER.match(line) or OMISSION_LINE.match(line))


def lines_marker(count: int) -> str:
    """The marker of ``count`` dropped lines.

    >>> lines_marker(1), lines_marker(12)
    ('[... 1 line omitted ...]', '[... 12 lines omitted ...]')
    """
    return f"[... {count:,} line{'s' if count != 1 else ''} omitted ...]"


def without_markers(text: str) -> str:
    """``text`` without its omission markers (their counts are no references).

    >>> without_markers("a\\n[... 3 lines omitted ...]\\nb")
    'a\\nb'
    """
    return "\n".join(line for line in text.split("\n") if not _is_marker(line))


#: A Markdown heading below the title (``## Decision``): it names a part of the paste, it
#: states nothing, whatever rule word it holds.
_SUBHEADING = re.compile(r"^\s{0,3}#{2,6}\s")


def _rank(line: str, first: bool) -> float:
    if not line.strip():
        return -1.0
    references = reference_kinds(line)
    if not first and not references and _SUBHEADING.match(line):
        return 0.0
    # A hyphenated name (``svc-ingest``, not ``on-failure``) is as exact as a reference.
    named = {value for value, _kind in references}
    references += [(name, "name") for name in kebab_names(line) if name not in named]
    values = {
        "specificity": specificity(references, line),
        "modality": modality(line),
    }
    return combine(values) + (_FIRST_LINE_BONUS if first else 0.0)


@functools.lru_cache(maxsize=8)  # the summary's fitter clips one entry at several sizes
def _ranks(text: str) -> tuple[float, ...]:
    """Each line's rank (``_rank``); a marker's below every line (never kept)."""
    return tuple(
        -2.0 if _is_marker(line) else _rank(line, first=i == 0)
        for i, line in enumerate(text.split("\n"))
    )


def _weight(line: str) -> int:
    """How many original lines ``line`` stands for (a marker stands for those it dropped)."""
    counted = _LINES_MARKER.match(line)
    return int(counted.group(1).replace(",", "")) if counted else 1


def _render(lines: list[str], kept: set[int]) -> str:
    out: list[str] = []
    dropped = 0
    for i, line in enumerate(lines):
        if i in kept:
            if dropped:
                out.append(lines_marker(dropped))
                dropped = 0
            out.append(line)
        else:
            dropped += _weight(line)
    if dropped:
        out.append(lines_marker(dropped))
    return "\n".join(out)


def clip_to_lines(text: str, max_tokens: int, size: Callable[[str], int]) -> str | None:
    """``text`` as its most specific lines (in their order, each run of dropped lines one
    marker) within ``max_tokens`` as ``size`` counts; ``None`` when it has fewer than
    ``MIN_LINES`` non-blank lines or not even its best line fits (the caller clips it as prose).

    >>> paste = "\\n".join(["[Service]", "Type=simple", "User=svc-ingest", "Restart=on-failure",
    ...     "RestartSec=5", "LimitNOFILE=4096", "ExecStart=/opt/ingest/bin/run --queue q-7731",
    ...     "Nice=5", "StandardOutput=journal"])
    >>> print(clip_to_lines(paste, 22, lambda t: len(t.split())))
    [... 2 lines omitted ...]
    User=svc-ingest
    [... 3 lines omitted ...]
    ExecStart=/opt/ingest/bin/run --queue q-7731
    [... 2 lines omitted ...]
    """
    lines = text.split("\n")
    # A clip of a paste is still a paste: its markers count the lines they stand for.
    if sum(_weight(line) for line in lines if line.strip()) < MIN_LINES:
        return None
    ranks = _ranks(text)
    marker_cost = size(lines_marker(len(lines)))
    kept: list[int] = []
    used = marker_cost  # all dropped: one marker
    # Best first, the earlier line first among equals; a line that does not fit is skipped
    # (a shorter one after it may fit). A line kept inside a run of dropped lines splits its
    # marker in two, at its edge keeps one, and filling the run removes it: an estimate by
    # parts, checked on the rendered text below.
    for i in sorted(range(len(lines)), key=lambda j: (-ranks[j], j)):
        if ranks[i] < 0:
            break
        at = bisect.bisect(kept, i)
        before = kept[at - 1] if at else -1
        after = kept[at] if at < len(kept) else len(lines)
        markers = (i - before > 1) + (after - i > 1) - 1
        cost = size(lines[i]) + 1 + markers * marker_cost
        if used + cost <= max_tokens:
            kept.insert(at, i)
            used += cost
    if not kept:
        return None
    clipped = _render(lines, set(kept))
    while size(clipped) > max_tokens and len(kept) > 1:
        kept.remove(min(kept, key=lambda j: (ranks[j], -j)))
        clipped = _render(lines, set(kept))
    return clipped if size(clipped) <= max_tokens else None
