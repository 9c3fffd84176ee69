"""Tests of the caller's list tracking: new items, spot and full checks, edits, the head."""

from __future__ import annotations

from typing import Any

import pytest

from abridged.errors import FormatError
from abridged.runtime.token_sums import TokenSums
from abridged.runtime.tracking import TrackedList, spot_positions


def tracked(verify: str = "auto") -> TrackedList:
    return TrackedList(None, verify, lambda: TokenSums(lambda m: 1, lambda m: 2))  # type: ignore[arg-type]


def chat(n: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "system", "content": "s"}]
    for k in range(n):
        items.append({"role": "user" if k % 2 == 0 else "assistant", "content": f"m{k}"})
    return items


def test_spot_positions_are_logarithmic() -> None:
    assert len(list(spot_positions(0, 100_000))) <= 20
    assert list(spot_positions(0, 0)) == []
    assert list(spot_positions(3, 5)) == [4, 3, 3, 4]


def test_appends_are_read_alone() -> None:
    t = tracked()
    items = chat(4)
    change = t.sync(items, None)
    assert change.appended_at == 0 and change.edited is None and len(t.history) == 5
    items.append({"role": "user", "content": "more"})
    change = t.sync(items, None)
    assert change.appended_at == 5 and change.edited is None and t.sums.length == 6


def test_a_new_list_is_compared_in_full_and_an_edit_found() -> None:
    t = tracked()
    items = chat(40)
    t.sync(items, None)
    edited = [*items[:7], {"role": "assistant", "content": "changed"}, *items[8:]]
    change = t.sync(edited, None)
    assert change.edited == 7 and t.history[7].text == "changed" and len(t.history) == 41


def test_spot_checks_miss_an_in_place_replacement_that_full_checks_catch() -> None:
    for verify, found in (("spot", False), ("full", True)):
        t = tracked(verify)
        items = chat(40)
        t.sync(items, None)
        items[7] = {"role": "assistant", "content": "changed"}
        change = t.sync(items, None)
        assert (change.edited == 7) is found


def test_a_changed_system_message_is_a_head_change() -> None:
    t = tracked()
    items = chat(10)
    t.sync(items, None)
    change = t.sync([{"role": "system", "content": "new"}, *items[1:]], None)
    assert change.head and change.edited is None and t.history[0].text == "new"


def test_the_last_context_plus_new_items_continues() -> None:
    t = tracked()
    items = chat(10)
    t.sync(items, None)
    context = [items[0], {"role": "user", "content": "summary"}, *items[8:]]
    t.last_out = context
    change = t.sync([*context, {"role": "user", "content": "next"}], None)
    assert change.edited is None and len(t.history) == 12


def test_dropped_items_and_bad_input() -> None:
    t = tracked()
    items = chat(10)
    t.sync(items, None)
    change = t.sync(items[:4], None)
    assert change.edited == 4 and len(t.history) == 4
    with pytest.raises(FormatError):
        t.sync("not a list", None)  # type: ignore[arg-type]
    with pytest.raises(FormatError):
        t.sync(items, "a system prompt for openai")
