"""Tests of the token sums: exact sums where estimated, bounds elsewhere, truncation."""

from __future__ import annotations

from abridged.core.model import Message
from abridged.runtime.token_sums import TokenSums


def test_sums_bounds_and_truncation() -> None:
    history = [Message.user("x" * n) for n in (4, 8, 12, 16)]
    estimates: list[Message] = []

    def estimate(m: Message) -> int:
        estimates.append(m)
        return len(m.text)

    sums = TokenSums(estimate, lambda m: 10 * len(m.text))
    sums.extend(history[:2])
    assert sums.estimated == 0 and sums.upper(0) == 120 and estimates == []
    sums.materialize(history)
    assert sums.estimated == 2 and sums.exact(0, 2) == 12 and len(estimates) == 2
    sums.extend(history[2:])
    assert sums.upper(0) == 12 + 280 and sums.upper(1, 3) == 8 + 120 and sums.upper(3) == 160
    assert sums.upper(2, 2) == 0
    sums.truncate(3)
    assert sums.length == 3 and sums.upper(0) == 12 + 120
    sums.materialize(history)
    assert sums.exact(0, 3) == 24 and len(estimates) == 3
    sums.truncate(1)
    assert sums.estimated == 1 and sums.upper(0) == 4
