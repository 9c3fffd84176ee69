"""A long multi-line entry clipped to its most specific lines, in their order, gaps marked.

A user who pastes a config file, a table, a log or an e-mail into the conversation wants what
it says kept, and what it says is in a few lines of it: ``User=svc-ingest``, the table row with
the owner's name, the line with the path. Clipping such a paste to its head and tail
(``transcript.clip_middle``) keeps the boilerplate around a paste (``[Unit]``, ``|---|``,
``Restart=on-failure``) and drops its middle, where the values are; and a summary clipped again
at each compaction drops a little more of the middle each time. Here the lines are ranked by the
ledger's own signals (``signals.specificity`` and ``signals.modality``: exact references and
hyphenated names, a ``key: value`` shape, a person's name, rule words), the first line (what
the paste is) first, a routine line (a log's heartbeat, one shape repeated with other numbers)
by its shape alone, and as many of the best as fit are kept in their order; each run of
dropped lines becomes one marker with its count, so a clip of a clip merges its markers
instead of nesting them.

Pure: no I/O, deterministic.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections import Counter
from collections.abc import Callable, Collection, Sequence

from abridged.engine.summarize.ledger import kebab_names
from abridged.engine.summarize.references import reference_kinds
from abridged.engine.summarize.signals import combine, modality, specificity
from abridged.engine.summarize.transcript import OMISSION_LINE

__all__ = ["MIN_LINES", "clip_to_lines", "dropped_a_better_line", "lines_marker", "without_markers"]

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


#: A comment line of a config, a script or a query (``# never as root``, ``// pinned``,
#: ``-- only this tenant``): it says what the line after it is for.
_COMMENT = re.compile(r"^\s*(?:#(?![#!])|//|--\s|;|<!--)")


def _annotated(lines: list[str], ranks: list[float]) -> list[float]:
    """``ranks`` with each line a comment annotates (the next line that is neither blank nor a
    comment) raised just above the comment: *never as root* above ``User=svc-x`` is half a
    fact, and the half a reader cannot rebuild is the value under it. The first line lends its
    own rank, not its bonus (``_FIRST_LINE_BONUS``): being first says nothing of the next."""
    out = list(ranks)
    annotated: int | None = None  # the next line neither blank nor a comment (one pass back)
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        if not _COMMENT.match(line):
            if line.strip():
                annotated = i
            continue
        own = _own_rank(ranks, i)
        if own > 0 and annotated is not None and out[annotated] >= 0:
            out[annotated] = max(out[annotated], own + _ANNOTATED_EDGE)
    return out


def _own_rank(ranks: Sequence[float], i: int) -> float:
    """Line ``i``'s rank without the first line's bonus: what the line itself holds."""
    return ranks[i] - (_FIRST_LINE_BONUS if i == 0 else 0.0)


#: How far an annotated line ranks above its comment (kept first when only one fits).
_ANNOTATED_EDGE = 0.01


@functools.lru_cache(maxsize=8)  # the summary's fitter clips one entry at several sizes
def _ranks(text: str) -> tuple[float, ...]:
    """Each line's rank (``_rank``; a routine line's by its shape, ``_routine_shapes``; a
    commented line raised by ``_annotated``); a marker's below every line (never kept)."""
    lines = text.split("\n")
    shapes = _routine_shapes(lines)
    ranks = [
        -2.0 if _is_marker(line) else _rank(shapes.get(i, line), first=i == 0)
        for i, line in enumerate(lines)
    ]
    return tuple(_annotated(lines, ranks))


#: What tells two lines of one shape apart: numbers and hexadecimal ids (a log's stamps,
#: counts and durations, a listing's sizes).
_NUMBERS = re.compile(r"\b[0-9a-f]*\d[0-9a-f]*\b|\d+")


def _routine_shapes(lines: Sequence[str]) -> dict[int, str]:
    """The routine lines, each as its shape (numbers and hex ids masked as ``…``): the lines
    (the first aside: it says what the paste is) whose shape another line of the paste has too,
    a log's repeated heartbeat, a listing's rows. Such a line is ranked by its shape: the same
    line with other numbers says the same thing, and its numbers are exact but no news; the one
    line unlike the others (the warning among the heartbeats) is.

    >>> _routine_shapes(["log:", "12:00:01 INFO queue depth 338", "12:00:09 INFO queue depth 41",
    ...     "12:00:14 WARN the scheduler pod gets 41722 MiB"])
    {1: '…:…:… INFO queue depth …', 2: '…:…:… INFO queue depth …'}
    """
    shapes = {
        i: _NUMBERS.sub("…", line)  # a mark no reference is made of (``0ms`` is a quantity)
        for i, line in enumerate(lines)
        if i and line.strip() and not _is_marker(line)
    }
    same = {i: shape.strip().lower() for i, shape in shapes.items()}
    count = Counter(same.values())
    return {i: shape for i, shape in shapes.items() if count[same[i]] > 1}


def _pick_order(lines: list[str], ranks: tuple[float, ...]) -> list[int]:
    """The order lines are offered in: best first, the earlier among equals; but when the first
    line is a label (it binds nothing: a file's name, a command, a table's header), the body's
    best line goes before it. A label says what the paste is and the body what it states; where
    only one fits, the statement (which mostly names its subject too) is the one to keep. A
    first line that binds or asks (*Please fix ...*, *Never ...*, *Why does this fail?*) is the
    request itself: it stays first."""
    order = sorted(range(len(lines)), key=lambda j: (-ranks[j], j))
    if len(order) < 2 or order[0] != 0 or _asks(lines[0]):
        return order
    body = order[1]
    return [body, 0, *order[2:]] if ranks[body] >= _STATES else order


def _asks(line: str) -> bool:
    """Whether a first line is a request: it binds (*Please fix ...*, *Never ...*) or asks."""
    return modality(line) > 0 or line.rstrip().endswith("?")


def _weight(line: str) -> int:
    """How many original lines ``line`` stands for (a marker stands for those it dropped)."""
    counted = _LINES_MARKER.match(line)
    return int(counted.group(1).replace(",", "")) if counted else 1


def _render(lines: list[str], kept: set[int], gathered: bool = False) -> str:
    """The kept lines in order; each run of dropped lines one marker in its place, or with
    ``gathered`` all of them one marker at the end."""
    out: list[str] = []
    dropped = 0
    for i, line in enumerate(lines):
        if i in kept:
            if dropped and not gathered:
                out.append(lines_marker(dropped))
                dropped = 0
            out.append(line)
        else:
            dropped += _weight(line)
    if dropped:
        out.append(lines_marker(dropped))
    return "\n".join(out)


#: A line of at least this rank states something (it holds a reference or it binds); the
#: clip gathers its markers only when that keeps more of such lines.
_STATES = 1.0


def _select(
    lines: list[str],
    ranks: tuple[float, ...],
    max_tokens: int,
    sizes: list[int],
    *,
    marker_cost: int,
    gathered: bool,
) -> list[int]:
    """The lines kept within ``max_tokens``, ascending (see ``clip_to_lines``); ``sizes`` are
    the lines' and ``marker_cost`` a marker's."""
    kept: list[int] = []
    used = marker_cost  # all dropped: one marker

    # Best first (``_pick_order``); a line that does not fit is skipped (a shorter one after it
    # may fit). In place, a line kept inside a run of dropped lines splits its marker in two,
    # at its edge keeps one, and filling the run removes it: an estimate by parts, checked on
    # the rendered text by the caller.
    for i in _pick_order(lines, ranks):
        if ranks[i] < 0:
            break
        at = bisect.bisect(kept, i)
        markers = 0
        if not gathered:
            before = kept[at - 1] if at else -1
            after = kept[at] if at < len(kept) else len(lines)
            markers = (i - before > 1) + (after - i > 1) - 1
        cost = sizes[i] + 1 + markers * marker_cost
        if used + cost <= max_tokens:
            kept.insert(at, i)
            used += cost
    return kept


def _stated(kept: list[int], ranks: tuple[float, ...]) -> float:
    """The rank of the kept lines that state something (the first line's bonus aside)."""
    own = [_own_rank(ranks, j) for j in kept]
    return sum(r for r in own if r >= _STATES)


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
    # Each run of dropped lines is marked in its place; at a size where those markers would
    # crowd out a line that states something, the dropped lines are counted at the end instead.
    sizes = [size(line) if rank >= 0 else 0 for line, rank in zip(lines, ranks, strict=True)]
    marker_cost = size(lines_marker(len(lines)))
    kept = _select(lines, ranks, max_tokens, sizes, marker_cost=marker_cost, gathered=False)
    gathered_kept = _select(lines, ranks, max_tokens, sizes, marker_cost=marker_cost, gathered=True)
    gathered = _stated(gathered_kept, ranks) > _stated(kept, ranks)
    if gathered:
        kept = gathered_kept
    if not kept:
        return None
    clipped = _render(lines, set(kept), gathered)
    while size(clipped) > max_tokens and len(kept) > 1:
        kept.remove(min(kept, key=lambda j: (ranks[j], -j)))
        clipped = _render(lines, set(kept), gathered)
    return clipped if size(clipped) <= max_tokens else None


def dropped_a_better_line(text: str, clipped: str, holding: Collection[str]) -> bool:
    """Whether ``clipped`` (``clip_to_lines`` of ``text``) dropped a line holding one of
    ``holding`` that ranks above every line it kept: the clip kept the frame of a paste (a
    first line, fences) where its one statement did not fit.

    >>> paste = ("Pointing the config at the receiver you named:\\n```bash\\n"
    ...     "jq '.webhook_receiver = \\"https://a.example.dev/v2\\"' config/settings.json\\n```")
    >>> frame = "Pointing the config at the receiver you named:\\n```bash\\n```"
    >>> dropped_a_better_line(paste, frame, ["https://a.example.dev/v2"])
    True
    """
    lines = text.split("\n")
    # each line by what it states, the first too (its bonus says what a paste is, and a clip
    # lets such a label give way to a statement: ``_pick_order``)
    ranks = _ranks("\n" + text)[1:]
    kept = set(clipped.split("\n"))
    best_kept = max((r for line, r in zip(lines, ranks, strict=True) if line in kept), default=-2.0)
    return any(
        r > best_kept and any(h in line for h in holding)
        for line, r in zip(lines, ranks, strict=True)
        if line not in kept
    )
