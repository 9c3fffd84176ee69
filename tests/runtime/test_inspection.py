"""``inspect_call``: each message of a call labelled with its part of the layout."""

from __future__ import annotations

from abridged.core.model import Message, ToolCall, Usage
from abridged.runtime.inspection import inspect_call


def _tokens(message: Message) -> int:
    return 10 * (1 + len(message.parts))


def test_parts_of_the_layout_and_the_cached_prefix() -> None:
    call = ToolCall("c1", "read", {"path": "a"})
    pruned = Message.tool("c1", "[pruned]", name="read", meta={"pruned": {"c1": 1}})
    messages = [
        Message.system("Be brief."),
        Message.user("The first task."),
        Message.user("Summary of earlier history", meta={"kind": "summary"}),
        Message.assistant("", tool_calls=[call]),
        pruned,
        Message.user("Go on."),
    ]
    usage = Usage(input=10, output=5, cache_read=50)
    inspection = inspect_call(
        3, epoch=2, messages=messages, estimate=120, usage=usage, tokens=_tokens
    )
    assert [m.section for m in inspection.messages] == [
        "system",
        "pinned",
        "summary",
        "kept",
        "pruned",
        "kept",
    ]
    # 20 + 20 = 40 tokens fit the 50 cached; the summary's 20 would pass it
    assert [m.cached for m in inspection.messages] == [True, True, False, False, False, False]
    assert inspection.by_section == {
        "system": 20,
        "pinned": 20,
        "summary": 20,
        "pruned": 20,
        "kept": 40,
    }
    assert sum(inspection.by_section.values()) == sum(m.tokens for m in inspection.messages)


def test_without_a_summary_nothing_is_pinned_and_nothing_cached_without_usage() -> None:
    messages = [Message.user("hi"), Message.assistant("hello")]
    inspection = inspect_call(
        0, epoch=0, messages=messages, estimate=20, usage=None, tokens=_tokens
    )
    assert [m.section for m in inspection.messages] == ["kept", "kept"]
    assert not any(m.cached for m in inspection.messages)
