"""Which stored messages a session carries: segments of its ancestors, computed without I/O.

A segment ``(session_id, lo, hi)`` stands for the messages written in ``session_id`` with
``lo <= seq < hi``. A session's context is its summary, the messages of its segments and all of
its own messages, in sequence order. Only compaction children carry their parent's messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Segment = tuple[str, int, int]


@dataclass(frozen=True, slots=True)
class Node:
    """What the lineage needs of a session."""

    id: str
    parent_id: str | None
    reason: str
    start_seq: int
    carry_from: int


def clip(segments: Iterable[Segment], cut: int) -> list[Segment]:
    """The segments restricted to ``seq >= cut``; empty ones dropped."""
    out: list[Segment] = []
    for session_id, lo, hi in segments:
        start = max(lo, cut)
        if hi > start:
            out.append((session_id, start, hi))
    return out


def floor(chain: Sequence[Node]) -> int:
    """The lowest sequence number a session's lineage reaches (``chain`` from the session up)."""
    low = chain[0].start_seq
    for node in chain:
        low = node.start_seq
        if node.reason != "compaction":
            break
    return min(low, chain[0].carry_from)


def walk(chain: Sequence[Node], cut: int, next_seq: int) -> list[Segment]:
    """Segments a child of ``chain[0]`` carries from ``cut`` on, created at ``next_seq``.

    ``chain`` is the parent, then its ancestors, as far as needed: the walk stops at the first
    session that does not carry its parent's messages, or whose messages start at or before
    ``cut``. The parent's own segment comes last; the list is ordered newest ancestor last.
    """
    out: list[Segment] = []
    hi = next_seq
    for node in chain:
        lo = max(cut, node.start_seq)
        if hi > lo:
            out.append((node.id, lo, hi))
        if node.reason != "compaction" or node.start_seq <= cut:
            break
        hi = node.start_seq
    out.reverse()
    return out


def child_segments(
    parent: Node, parent_segments: Sequence[Segment], cut: int, next_seq: int
) -> list[Segment] | None:
    """The fast path of ``walk``: when ``cut`` is within the parent's context the child carries
    the parent's segments clipped at ``cut`` plus the parent's own messages. ``None`` when the
    cut moves back before the parent's carry-from (a re-summarisation): walk the chain then."""
    if cut < parent.carry_from:
        return None
    own_lo = max(cut, parent.start_seq)
    own = [(parent.id, own_lo, next_seq)] if next_seq > own_lo else []
    return clip(parent_segments, cut) + own


def chain_from(nodes: Iterable[Node], session_id: str) -> list[Node]:
    """The session and its ancestors, nearest first (from all of a conversation's sessions)."""
    by_id = {n.id: n for n in nodes}
    out: list[Node] = []
    current: str | None = session_id
    while current is not None and current in by_id and len(out) <= len(by_id):
        node = by_id[current]
        out.append(node)
        current = node.parent_id
    return out
