"""What the extractive summarizer holds while it reads a long conversation: plain tuples the
garbage collector stops tracking, not objects it keeps tracking (enough survivors of those set
off full collections, which stop every thread, the caller's event loop too)."""

from __future__ import annotations

import gc

from hypothesis import given
from hypothesis import strategies as st

from abridged.core.model import Message
from abridged.engine.summarize.extractive import ExtractiveSummarizer
from abridged.engine.summarize.ledger import (
    Fact,
    _fact,
    _iter_facts,
    _resolve_rows,
    _row,
    resolve,
)


def _conversation(n: int) -> list[Message]:
    out: list[Message] = []
    for k in range(n):
        out.append(Message.user(f"Use retry_limit = {k % 7} for job-{k}. Never push to main."))
        out.append(Message.assistant(f"The queue_{k} limit is {k} ms; ticket OPS-{k} tracks it."))
    return out


def _untracked_after_collect(items: list[object]) -> bool:
    gc.collect()
    return not any(gc.is_tracked(item) for item in items)


def test_resolved_facts_are_held_untracked() -> None:
    messages = _conversation(200)
    rows, _users, _values = _resolve_rows(_iter_facts(messages, per_message=3, start_order=0))
    assert len(rows) > 100
    assert _untracked_after_collect(list(rows))


def test_user_entries_are_held_untracked() -> None:
    entries = ExtractiveSummarizer()._user_entries({}, _conversation(200))
    assert len(entries) == 200
    assert _untracked_after_collect(list(entries))


def test_resolve_gives_the_same_facts_as_rows() -> None:
    facts = [f for f in _iter_facts(_conversation(30), per_message=3, start_order=0)]
    via_rows = [_fact(r) for r in _resolve_rows(facts)[0]]
    assert resolve(facts).facts == via_rows


_texts = st.text(max_size=12)
_facts = st.builds(
    Fact,
    text=_texts,
    key=st.none() | _texts,
    source=st.sampled_from(["user", "assistant", "tool", "carried"]),
    kind=st.sampled_from(["rule", "decision", "finding", "error", "value"]),
    weight=st.floats(allow_nan=False),
    order=st.integers(),
    was=st.none() | _texts,
    message=st.integers(),
    values=st.lists(_texts, max_size=4).map(tuple),
    listed=st.booleans(),
    topic=st.frozensets(_texts, max_size=4),
)


@given(_facts)
def test_a_fact_survives_its_row(fact: Fact) -> None:
    assert _fact(_row(fact)) == fact
