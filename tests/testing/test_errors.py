"""The wire checks of the local provider and the providers' error texts they produce."""

from __future__ import annotations

from typing import Any

from abridged.core.model import Message, ToolCall
from abridged.testing.errors import (
    anthropic_overflow,
    check_anthropic_pairing,
    check_anthropic_signatures,
    check_breakpoints,
    check_chat_pairing,
    check_responses_pairing,
    core_pairing_issue,
    openai_overflow,
    sign_thinking,
)


def call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}


def test_chat_pairing_accepts_answered_calls() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]},
        {"role": "tool", "tool_call_id": "b", "content": "2"},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "assistant", "content": "done"},
    ]
    assert check_chat_pairing(messages) is None


def test_chat_orphan_tool_message() -> None:
    error = check_chat_pairing(
        [{"role": "user", "content": "go"}, {"role": "tool", "tool_call_id": "x", "content": "1"}]
    )
    assert error is not None and error.status == 400
    assert error.body == {
        "error": {
            "message": "Invalid parameter: messages with role 'tool' must be a response to a "
            "preceeding message with 'tool_calls'.",
            "type": "invalid_request_error",
            "param": "messages.[1].role",
            "code": None,
        }
    }


def test_chat_tool_message_after_another_message_is_an_orphan() -> None:
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call("a")]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "user", "content": "more"},
        {"role": "tool", "tool_call_id": "a", "content": "again"},
    ]
    error = check_chat_pairing(messages)
    assert error is not None and "preceeding message with 'tool_calls'" in error.message


def test_chat_unanswered_calls_are_listed() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "user", "content": "next"},
    ]
    error = check_chat_pairing(messages)
    assert error is not None
    assert error.message == (
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: b"
    )
    assert error.body["error"]["param"] == "messages.[1].role"


def test_responses_pairing() -> None:
    fc = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    out = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    assert check_responses_pairing([fc, out]) is None
    orphan = check_responses_pairing([out])
    assert orphan is not None
    assert orphan.message == "No tool call found for function call output with call_id c1."
    assert orphan.body["error"]["param"] == "input"
    missing = check_responses_pairing([fc, {"role": "user", "content": "hi"}])
    assert missing is not None and missing.message == "No tool output found for function call c1."


def use(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "f", "input": {}}


def result(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}


def test_anthropic_pairing_accepts_results_first_in_the_next_message() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [use("t1"), use("t2")]},
        {"role": "user", "content": [result("t2"), result("t1"), {"type": "text", "text": "ok"}]},
    ]
    assert check_anthropic_pairing(messages) is None


def test_anthropic_unexpected_tool_result() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "sure"},
        {"role": "user", "content": [{"type": "text", "text": "x"}, result("toolu_9")]},
    ]
    error = check_anthropic_pairing(messages)
    assert error is not None
    assert error.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` "
            "blocks: toolu_9. Each `tool_result` block must have a corresponding `tool_use` "
            "block in the previous message.",
        },
    }


def test_anthropic_tool_use_without_results_right_after() -> None:
    late = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [use("t1")]},
        {"role": "user", "content": [{"type": "text", "text": "first"}, result("t1")]},
    ]
    error = check_anthropic_pairing(late)
    assert error is not None
    assert error.message == (
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "t1. Each `tool_use` block must have a corresponding `tool_result` block in the next "
        "message."
    )
    last = check_anthropic_pairing([{"role": "user", "content": "go"}, late[1]])
    assert last is not None and "messages.1: `tool_use` ids" in last.message


def test_thinking_signatures_issued_here_must_match() -> None:
    good = {"type": "thinking", "thinking": "plan", "signature": sign_thinking("plan")}
    edited = {**good, "thinking": "plan, edited"}
    foreign = {"type": "thinking", "thinking": "x", "signature": "EqQBCgIYAhIM..."}
    ok = [{"role": "user", "content": "q"}, {"role": "assistant", "content": [good, foreign]}]
    assert check_anthropic_signatures(ok) is None
    bad = [{"role": "user", "content": "q"}, {"role": "assistant", "content": [edited]}]
    error = check_anthropic_signatures(bad)
    assert error is not None
    assert error.message == "messages.1.content.0: Invalid `signature` in `thinking` block"


def test_at_most_four_breakpoints() -> None:
    cc = {"cache_control": {"type": "ephemeral"}}
    body = {
        "system": [{"type": "text", "text": "s", **cc}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": str(i), **cc}]} for i in range(3)
        ],
    }
    assert check_breakpoints(body) is None
    body["tools"] = [{"name": "f", "input_schema": {}, **cc}]
    error = check_breakpoints(body)
    assert error is not None
    assert error.message == "A maximum of 4 blocks with cache_control may be provided. Found 5."


def test_overflow_texts() -> None:
    assert openai_overflow(16_384, 20_123, None).body == {
        "error": {
            "message": "This model's maximum context length is 16384 tokens. However, your "
            "messages resulted in 20123 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
    assert openai_overflow(16_384, 15_000, 4_096).message == (
        "This model's maximum context length is 16384 tokens. However, you requested 19096 "
        "tokens (15000 in the messages, 4096 in the completion). Please reduce the length of the "
        "messages or completion."
    )
    assert anthropic_overflow(16_384, 20_123, 10).body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 20123 tokens > 16384 maximum",
        },
    }
    assert anthropic_overflow(16_384, 15_000, 4_096).message == (
        "input length and `max_tokens` exceed context limit: 15000 + 4096 > 16384, decrease "
        "input length or `max_tokens` and try again"
    )


def test_core_validation_backs_the_wire_checks() -> None:
    paired = [
        Message.user("go"),
        Message.assistant(tool_calls=[ToolCall("a", "f")]),
        Message.tool("a", "1"),
    ]
    assert core_pairing_issue(paired) is None
    issue = core_pairing_issue([Message.user("go"), Message.tool("zz", "1")])
    assert issue is not None and issue.startswith("messages.1:") and "'zz'" in issue
