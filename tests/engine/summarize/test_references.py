"""Exact references: a rate (a unit per a unit of time) is one quantity, never a path or a name."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from abridged.engine.summarize.anchors import anchors
from abridged.engine.summarize.references import reference_kinds

units = st.text(alphabet=string.ascii_letters, min_size=1, max_size=8)
per = st.sampled_from(["s", "sec", "second", "min", "minute", "h", "hour", "day", "week", "month"])
amounts = st.integers(min_value=1, max_value=10**6).map(lambda n: f"{n:,}")


@given(amount=amounts, unit=units, time=per)
def test_a_rate_is_one_quantity(amount: str, unit: str, time: str) -> None:
    rate = f"{amount} {unit}/{time}"
    assert reference_kinds(f"the limit is {rate} for now") == [(rate, "quantity")]
    # a unit is no thing's name: two limits of two things share it and nothing else
    assert anchors(f"the limit is {rate}") == frozenset()


def test_a_path_is_still_a_path() -> None:
    assert reference_kinds("see 3 src/main and kv/infra/db") == [
        ("src/main", "path"),
        ("kv/infra/db", "path"),
    ]
