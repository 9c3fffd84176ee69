"""Tests of the message model: immutability, ids, fingerprints and the plain-data form."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abridged.core.model import (
    File,
    Image,
    Message,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
    Usage,
    assign_ids,
    message_from_dict,
    message_to_dict,
)


def test_messages_are_immutable() -> None:
    m = Message.user("hi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.role = "assistant"  # type: ignore[misc]
    with pytest.raises(TypeError):
        m.meta["x"] = 1  # type: ignore[index]


def test_string_parts_and_content_are_coerced() -> None:
    m = Message("user", "hello")  # type: ignore[arg-type]
    assert m.parts == (Text("hello"),)
    r = ToolResult("c1", "ls", "out")  # type: ignore[arg-type]
    assert r.content == (Text("out"),)
    assert r.text == "out"


def test_id_is_stable_and_derived_from_content() -> None:
    assert Message.user("a").id == Message.user("a").id
    assert Message.user("a").id != Message.user("b").id
    assert Message.user("a", id="mine").id == "mine"


def test_fingerprint_ignores_id_and_meta_but_not_usage() -> None:
    a = Message.assistant("x", usage=Usage(input=5))
    assert a.fingerprint == a.replace(id="other", meta={"k": 1}).fingerprint
    assert a.fingerprint != a.replace(usage=Usage(input=6)).fingerprint


def test_assign_ids_makes_repeated_content_unique_and_is_deterministic() -> None:
    msgs = [Message.user("ok"), Message.user("ok"), Message.user("ok", id="keep")]
    first = assign_ids(msgs)
    assert len({m.id for m in first}) == 3
    assert [m.id for m in first] == [m.id for m in assign_ids(msgs)]
    assert first[2].id == "keep"


def test_assistant_constructor_orders_reasoning_text_calls() -> None:
    m = Message.assistant(
        "doing it",
        tool_calls=[ToolCall("c1", "read", '{"p": 1}')],
        reasoning=[Reasoning("think", signature="sig")],
    )
    assert [type(p) for p in m.parts] == [Reasoning, Text, ToolCall]
    assert m.tool_calls[0].parsed_arguments() == {"p": 1}


def test_invalid_arguments_are_kept_verbatim_and_flagged() -> None:
    call = ToolCall("c1", "read", '{"p": ')
    assert call.arguments == '{"p": '
    assert not call.arguments_valid
    assert call.parsed_arguments() is None


def test_usage_context_tokens() -> None:
    u = Usage(input=10, output=3, cache_read=100, cache_write=7, reasoning=2)
    assert u.context_tokens == 117
    assert u.total_tokens == 120


_text = st.text(max_size=30)
_parts = st.one_of(
    st.builds(Text, _text),
    st.builds(Reasoning, _text, st.none() | _text, st.none() | _text),
    st.builds(ToolCall, _text, _text, _text),
    st.builds(ToolResult, _text, _text, st.tuples(st.builds(Text, _text)), st.booleans()),
    st.builds(Image, st.none() | _text, st.none() | _text, st.none() | _text),
    st.builds(File, st.none() | _text, st.none() | _text),
)


@given(
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    parts=st.lists(_parts, max_size=4).map(tuple),
    usage=st.none() | st.builds(Usage, st.integers(0, 10**6), st.integers(0, 10**6)),
    meta=st.dictionaries(st.sampled_from(["kind", "x"]), _text, max_size=2),
)
def test_plain_data_round_trip(role: str, parts: tuple, usage: Usage | None, meta: dict) -> None:  # type: ignore[type-arg]
    m = Message(role, parts, meta=meta, usage=usage)  # type: ignore[arg-type]
    back = message_from_dict(message_to_dict(m))
    assert back == m
    assert back.fingerprint == m.fingerprint


def test_message_from_dict_rejects_unknown_role_and_part() -> None:
    with pytest.raises(ValueError, match="unknown role"):
        message_from_dict({"role": "robot", "parts": []})
    with pytest.raises(ValueError, match="unknown part type"):
        message_from_dict({"role": "user", "parts": [{"type": "video"}]})


_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_SURROGATE_TEXT = st.lists(
    st.one_of(st.text(max_size=5), st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)),
    max_size=6,
).map("".join)
# (a high surrogate followed by a low one is, in JSON, one astral character: not a lone surrogate)
_SURROGATE_TEXT = _SURROGATE_TEXT.filter(lambda s: not _PAIR.search(s))


@given(_SURROGATE_TEXT, _SURROGATE_TEXT)
def test_lone_surrogates_are_kept_and_fingerprinted(a: str, b: str) -> None:
    # "\ud800" is a valid JSON escape a provider or a tool can send: never a crash, kept as given
    m = Message.user(a)
    assert m.text == a
    assert len(m.fingerprint) == 32
    assert (m.fingerprint == Message.user(b).fingerprint) == (a == b)
    call = Message.assistant(a, tool_calls=[ToolCall("c1", "f", json.dumps({"x": b}))])
    assert call.tool_calls[0].parsed_arguments() == {"x": b}
    assert message_from_dict(message_to_dict(call)) == call
    assert len(assign_ids([m, call, Message.user(a).replace(id=b + "\ud800")])) == 3


def test_arguments_nested_too_deeply_are_kept_unparsed_and_flagged() -> None:
    call = ToolCall("c1", "f", "[" * 5_000 + "]" * 5_000)
    assert call.parsed_arguments() is None and not call.arguments_valid
    assert call.arguments == "[" * 5_000 + "]" * 5_000
    nested = ToolCall("c2", "f", '{"a":' * 5_000 + "1" + "}" * 5_000)
    assert nested.parsed_arguments() is None and not nested.arguments_valid
