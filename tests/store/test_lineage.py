"""The lineage arithmetic (no database): segments against a brute-force model of the design."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from abridged.store.lineage import Node, chain_from, child_segments, clip, floor, walk


def test_clip_and_walk_by_hand() -> None:
    assert clip([("a", 1, 5), ("b", 5, 9)], 6) == [("b", 6, 9)]
    root = Node("r", None, "start", 1, 1)
    child = Node("c", "r", "compaction", 11, 5)
    assert walk([child, root], 3, 15) == [("r", 3, 11), ("c", 11, 15)]
    assert walk([child, root], 12, 15) == [("c", 12, 15)]
    assert child_segments(child, [("r", 5, 11)], 7, 15) == [("r", 7, 11), ("c", 11, 15)]
    assert child_segments(child, [("r", 5, 11)], 4, 15) is None
    assert floor([child, root]) == 1
    fresh = Node("n", "r", "new", 20, 20)
    assert floor([fresh, root]) == 20 and walk([fresh, root], 20, 25) == [("n", 20, 25)]
    assert [n.id for n in chain_from([root, child, fresh], "c")] == ["c", "r"]


@st.composite
def histories(draw: st.DrawFn) -> list[tuple[str, int]]:
    """A random history of operations: append k messages, or compact with a cut offset."""
    return draw(
        st.lists(
            st.one_of(
                st.tuples(st.just("append"), st.integers(1, 5)),
                st.tuples(st.just("compact"), st.integers(0, 12)),
                st.tuples(st.just("new"), st.just(0)),
            ),
            max_size=25,
        )
    )


@given(histories())
def test_segments_equal_the_designs_definition(ops: list[tuple[str, int]]) -> None:
    """A session's context = messages of its lineage from its carry-from on. The model keeps,
    per session, the explicit list of message seqs in its context; the segments must say the
    same, whatever the cut (fast path or walk)."""
    nodes = {"s0": Node("s0", None, "start", 1, 1)}
    segments: dict[str, list[tuple[str, int, int]]] = {"s0": []}
    owner: dict[int, str] = {}
    context: dict[str, list[int]] = {"s0": []}
    current, next_seq = "s0", 1
    for op, k in ops:
        if op == "append":
            for _ in range(k):
                owner[next_seq] = current
                context[current].append(next_seq)
                next_seq += 1
        elif op == "compact":
            parent = nodes[current]
            chain = chain_from(nodes.values(), current)
            low = floor(chain)
            cut = min(next_seq, max(low, next_seq - k))
            fast = child_segments(parent, segments[current], cut, next_seq)
            slow = walk(chain, cut, next_seq)
            segs = fast if fast is not None else slow
            if fast is not None:
                assert fast == slow
            sid = f"s{len(nodes)}"
            nodes[sid] = Node(sid, current, "compaction", next_seq, cut)
            segments[sid] = segs
            carried = [s for s in context[current] if s >= cut]
            if fast is None:  # moving back: the lineage's earlier messages come back
                carried = [s for s in range(cut, next_seq) if _in_lineage(s, chain, owner)]
            context[sid] = carried
            current = sid
        else:
            sid = f"s{len(nodes)}"
            nodes[sid] = Node(sid, current, "new", next_seq, next_seq)
            segments[sid] = []
            context[sid] = []
            current = sid
        # The segments of every session reproduce the model's context.
        for sid, node in nodes.items():
            from_segments = sorted(
                s
                for s, o in owner.items()
                if o == sid or any(o == x and lo <= s < hi for x, lo, hi in segments[sid])
            )
            assert from_segments == context[sid], (sid, node)


def _in_lineage(seq: int, chain: list[Node], owner: dict[int, str]) -> bool:
    hi = None
    for node in chain:
        if owner.get(seq) == node.id and (hi is None or seq < hi):
            return True
        if node.reason != "compaction":
            return False
        hi = node.start_seq
    return False
