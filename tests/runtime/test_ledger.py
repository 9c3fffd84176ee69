"""Tests of the ledger: exact sums where estimated, bounds elsewhere, truncation."""

from __future__ import annotations

from abridged.core.model import Message
from abridged.runtime.ledger import Ledger


def test_sums_bounds_and_truncation() -> None:
    history = [Message.user("x" * n) for n in (4, 8, 12, 16)]
    estimates: list[Message] = []

    def estimate(m: Message) -> int:
        estimates.append(m)
        return len(m.text)

    ledger = Ledger(estimate, lambda m: 10 * len(m.text))
    ledger.extend(history[:2])
    assert ledger.estimated == 0 and ledger.upper(0) == 120 and estimates == []
    ledger.materialize(history)
    assert ledger.estimated == 2 and ledger.exact(0, 2) == 12 and len(estimates) == 2
    ledger.extend(history[2:])
    assert ledger.upper(0) == 12 + 280 and ledger.upper(1, 3) == 8 + 120 and ledger.upper(3) == 160
    assert ledger.upper(2, 2) == 0
    ledger.truncate(3)
    assert ledger.length == 3 and ledger.upper(0) == 12 + 120
    ledger.materialize(history)
    assert ledger.exact(0, 3) == 24 and len(estimates) == 3
    ledger.truncate(1)
    assert ledger.estimated == 1 and ledger.upper(0) == 4
