"""Tests of message-list validation: every issue code, its index and field."""

from __future__ import annotations

import pytest

from abridged.core.model import Image, Message, Reasoning, Text, ToolCall, ToolResult
from abridged.core.validate import check_messages, is_paired, validate_messages
from abridged.errors import MessageValidationError


def _codes(messages: list[Message]) -> list[tuple[int, str, str]]:
    return [(i.index, i.field, i.code) for i in validate_messages(messages)]


def _call(*ids: str) -> Message:
    return Message.assistant(tool_calls=[ToolCall(i, "t", "{}") for i in ids])


def test_valid_conversation_with_parallel_calls_has_no_issues() -> None:
    msgs = [
        Message.system("s"),
        Message.user("u"),
        Message.assistant(
            "", tool_calls=[ToolCall("a", "t"), ToolCall("b", "t")], reasoning=[Reasoning("r")]
        ),
        Message.tool("b", "rb"),
        Message.tool("a", "ra"),
        Message.assistant("done"),
    ]
    assert validate_messages(msgs) == []
    assert is_paired(msgs)


def test_orphan_tool_result_names_index_and_field() -> None:
    msgs = [Message.user("u"), Message.tool("zz", "out")]
    assert _codes(msgs) == [(1, "parts[0].call_id", "orphan_tool_result")]
    with pytest.raises(MessageValidationError) as info:
        check_messages(msgs, conversation_id="conv-1")
    assert info.value.index == 1
    assert info.value.conversation_id == "conv-1"
    assert "zz" in str(info.value)


def test_duplicate_call_ids() -> None:
    msgs = [_call("a"), Message.tool("a", "x"), _call("a")]
    assert (2, "parts[0].id", "duplicate_call_id") in _codes(msgs)


def test_missing_result_before_next_model_message_or_user() -> None:
    assert (0, "parts", "missing_tool_result") in _codes(
        [_call("a", "b"), Message.tool("a", "x"), Message.assistant("next")]
    )
    assert (0, "parts", "missing_tool_result") in _codes([_call("a"), Message.user("hey")])
    # A pending call at the very end is a step in progress, not an error.
    assert _codes([Message.user("u"), _call("a")]) == []


def test_result_in_a_later_step_is_misplaced() -> None:
    msgs = [_call("a"), Message.tool("a", "x"), Message.assistant("ok"), Message.tool("a", "y")]
    assert (3, "parts[0].call_id", "misplaced_tool_result") in _codes(msgs)
    assert not is_paired(msgs)


def test_empty_assistant_and_empty_tool_message() -> None:
    assert _codes([Message.assistant("  ")]) == [(0, "parts", "empty_assistant")]
    assert _codes([Message("tool", (Text("x"),))]) == [(0, "parts", "empty_tool_message")]


def test_invalid_json_arguments_are_a_warning_not_an_error() -> None:
    msgs = [Message.assistant(tool_calls=[ToolCall("a", "t", "{oops")]), Message.tool("a", "r")]
    issues = validate_messages(msgs)
    assert [(i.code, i.severity, i.field) for i in issues] == [
        ("invalid_arguments", "warning", "parts[0].arguments")
    ]
    assert check_messages(msgs) == issues


def test_parts_not_allowed_for_role() -> None:
    msgs = [
        Message("system", (Image(url="http://x/y.png"),)),
        Message("user", (ToolCall("a", "t"),)),
    ]
    assert _codes(msgs) == [
        (0, "parts[0]", "part_not_allowed"),
        (1, "parts[0]", "part_not_allowed"),
    ]


def test_unknown_role_is_reported() -> None:
    bad = Message("robot", (Text("x"),))  # type: ignore[arg-type]
    assert _codes([bad]) == [(0, "role", "unknown_role")]


def test_tool_result_with_error_flag_is_valid() -> None:
    msgs = [_call("a"), Message("tool", (ToolResult("a", "t", "boom", is_error=True),))]
    assert validate_messages(msgs) == []


def test_deeply_nested_arguments_are_a_warning_not_a_crash() -> None:
    deep = "[" * 5_000 + "]" * 5_000
    messages = [
        Message.user("go"),
        Message.assistant("", tool_calls=[ToolCall("c1", "f", deep)]),
        Message.tool("c1", "ok", name="f"),
    ]
    (issue,) = validate_messages(messages)
    assert (issue.index, issue.field, issue.code) == (1, "parts[0].arguments", "invalid_arguments")
