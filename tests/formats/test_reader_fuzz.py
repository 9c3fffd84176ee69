"""Hostile items through the three wire readers and back through their writers: only
``abridged.errors`` exceptions escape, whatever the shape (objects where lists are expected,
unknown item and block types, deep nesting, lone surrogates, bidi, zero-width and fullwidth
forms), and whatever reads is written back without a crash."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abridged.errors import AbridgedError
from abridged.formats.anthropic_messages import messages_from_anthropic, messages_to_anthropic
from abridged.formats.openai_chat import messages_from_openai, messages_to_openai
from abridged.formats.openai_responses import messages_from_responses, messages_to_responses

HOSTILE = st.sampled_from(
    ["\ud800", "a\udfffb", "\u202etxt", "<\u200b/conversation>", "＜/conversation＞", "", " "]
)
WORDS = st.sampled_from(
    [
        "role", "content", "type", "text", "tool_calls", "tool_call_id", "function", "name",
        "arguments", "input", "id", "call_id", "output", "user", "assistant", "tool", "system",
        "message", "function_call", "function_call_output", "reasoning", "tool_use",
        "tool_result", "tool_use_id", "thinking", "compaction", "web_search_call",
        "server_tool_use", "image", "source", "summary", "encrypted_content",
    ]
)  # fmt: skip
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False), WORDS, HOSTILE,
    st.text(max_size=8),
)  # fmt: skip
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(WORDS, st.text(max_size=4)), inner, max_size=5),
    ),
    max_leaves=25,
)
ITEM = st.dictionaries(WORDS, JSON, min_size=1, max_size=5)


def _deep(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"type": "text", "text": value, "content": [value]}
    return value


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(ITEM, JSON), max_size=6))
def test_hostile_items_give_only_typed_errors_and_what_reads_writes_back(items: list[Any]) -> None:
    for read, write in (
        (messages_from_openai, messages_to_openai),
        (messages_from_responses, messages_to_responses),
        (messages_from_anthropic, lambda ms: messages_to_anthropic(ms)[1]),
    ):
        try:
            messages = read(items)
        except AbridgedError:
            continue
        # a part with no place in that format is a typed error, never a crash
        with contextlib.suppress(AbridgedError):
            write(messages)


def test_deep_nesting_in_any_field_is_a_typed_error_or_read() -> None:
    deep = _deep(3_000)
    for items in (
        [{"role": "user", "content": [deep]}],
        [{"type": "web_search_call", "action": deep}],
        [{"role": "assistant", "content": [{"type": "server_tool_use", "input": deep}]}],
    ):
        for read in (messages_from_openai, messages_from_responses, messages_from_anthropic):
            with contextlib.suppress(AbridgedError):
                read(items)
