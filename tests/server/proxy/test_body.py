"""The proxy's body reader: a growing history read again only from where it ended, always the
value ``parse_json`` gives."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from abridged.server.proxy.body import BodyReader, parse_json

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
items = (
    st.dictionaries(st.sampled_from(["role", "content", "id", "x"]), values, max_size=3) | values
)
members = st.dictionaries(
    st.sampled_from(["model", "tools", "stream", "temperature", "input"]), values, max_size=3
)


def _dumps(value: Any, style: int) -> bytes:
    """``value`` as JSON in one of a few spellings clients use."""
    if style == 0:
        return json.dumps(value).encode()
    if style == 1:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    return json.dumps(value, indent=1).encode()


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@settings(max_examples=150, deadline=None)
@given(
    head=members,
    tail=members,
    steps=st.lists(st.lists(items, max_size=3), min_size=1, max_size=5),
    style=st.integers(0, 2),
    history_first=st.booleans(),
)
def test_a_growing_history_reads_as_parse_json_reads_it(
    head: dict[str, Any],
    tail: dict[str, Any],
    steps: list[list[Any]],
    style: int,
    history_first: bool,
) -> None:
    reader = BodyReader()
    history: list[Any] = []
    for step in steps:
        history = [*history, *step]
        body = {"messages": history, **head} if history_first else {**head, "messages": history}
        body.update({k: v for k, v in tail.items() if k not in body})
        raw = _dumps(body, style)
        value, problem = reader.parse(raw, "messages", "client")
        expected, expected_problem = parse_json(raw)
        assert problem == expected_problem is None
        assert _same(value, expected)
        assert list(value) == list(expected)  # the members in the same order


def test_the_items_read_before_are_the_same_objects_and_only_the_new_ones_are_parsed() -> None:
    reader = BodyReader()
    history: list[Any] = [{"role": "system", "content": "s"}]
    before: list[Any] = []
    for i in range(4):
        history = [*history, {"role": "user", "content": f"q{i}"}]
        raw = json.dumps({"model": "m", "messages": history, "stream": True}).encode()
        value, _ = reader.parse(raw, "messages", "client")
        assert value["messages"] == history and list(value) == ["model", "messages", "stream"]
        assert all(a is b for a, b in zip(before, value["messages"], strict=False))
        before = value["messages"]
    assert reader.continued == 3


def test_another_client_or_an_edited_history_is_read_whole() -> None:
    reader = BodyReader()
    first = json.dumps({"messages": [{"content": "a"}, {"content": "b"}]}).encode()
    edited = json.dumps({"messages": [{"content": "a"}, {"content": "B"}, {"c": 1}]}).encode()
    reader.parse(first, "messages", "one")
    assert reader.parse(edited, "messages", "two")[0] == json.loads(edited)
    assert reader.parse(edited, "messages", "one")[0] == json.loads(edited)
    assert reader.continued == 0


def test_bodies_in_other_shapes_get_parse_jsons_value_and_errors() -> None:
    reader = BodyReader()
    deep = b'{"messages":[' + b"[" * 200 + b"]" * 200 + b"]}"
    cases = [
        b'{"messages":[1,2],"messages":[3]}',  # a repeated member: the last one wins
        b'{"messages":[{"a":1}]} x',
        b"[1]",
        b'{"messages": {"a": 1}}',
        b"{}",
        b' {"messages" : [ ] } ',
        b"\xef\xbb\xbf" + b'{"messages":[]}',
        b'{"messages":["\xff"]}',
        deep,
        b'{"messages":[NaN]}',
    ]
    for raw in cases:
        reader.parse(b'{"messages":[1]}', "messages", "c")  # a previous body of the client
        value, problem = reader.parse(raw, "messages", "c")
        expected, expected_problem = parse_json(raw)
        assert problem == expected_problem, raw
        if isinstance(expected, dict) and expected.get("messages") == [math.nan]:
            assert math.isnan(value["messages"][0])
        else:
            assert value == expected, raw


def test_a_longer_number_after_the_known_text_is_not_taken_for_the_same_item() -> None:
    reader = BodyReader()
    reader.parse(b'{"messages":[12]}', "messages", "c")
    assert reader.parse(b'{"messages":[123]}', "messages", "c") == ({"messages": [123]}, None)
