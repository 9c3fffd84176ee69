"""Tests for abridged.runtime.tools: schemas from signatures, concurrent calls, failures as error
results, result content, clipping big results."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any, Literal

import pytest

from abridged.core.model import Image, Message, Text, ToolCall, ToolResult
from abridged.core.tokens import estimate_message_tokens
from abridged.errors import SettingError
from abridged.runtime.tools import (
    ABORTED_TEXT,
    Tool,
    ToolContext,
    ToolRegistry,
    clip_tool_message,
    result_content,
    schema_from_signature,
    tool,
)


def call(name: str, arguments: Any = None, call_id: str = "c1") -> ToolCall:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return ToolCall(call_id, name, text)


# -- schemas -------------------------------------------------------------------------------------


def test_schema_from_annotations_marks_required_and_optional_arguments() -> None:
    def search(
        query: str,
        *,
        limit: int = 10,
        tags: list[str] | None = None,
        exact: bool = False,
        mode: Literal["fast", "deep"] = "fast",
        ctx: ToolContext | None = None,
    ) -> str:
        return ""

    schema = schema_from_signature(search)
    assert schema["required"] == ["query"]
    props = schema["properties"]
    assert props["query"] == {"type": "string"}
    assert props["limit"] == {"type": "integer"}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["exact"] == {"type": "boolean"}
    assert props["mode"] == {"enum": ["fast", "deep"]}


def test_tool_context_parameter_is_injected_not_described() -> None:
    seen: list[ToolContext] = []

    @tool
    async def compact_me(reason: str, context: ToolContext) -> str:
        """Ask for a compaction."""
        seen.append(context)
        return reason

    assert "context" not in compact_me.parameters["properties"]
    assert compact_me.description == "Ask for a compaction."
    result = asyncio.run(ToolRegistry([compact_me]).run([call("compact_me", {"reason": "x"})]))
    assert result[0].text == "x" and not result[0].is_error
    assert seen[0].call_id == "c1" and seen[0].tool == "compact_me"


def test_tool_settings_are_validated() -> None:
    with pytest.raises(SettingError):
        Tool("", "d", {"type": "object"}, lambda: None)
    with pytest.raises(SettingError):
        Tool("t", "d", {"type": "object"}, lambda: None, timeout=0)
    registry = ToolRegistry([tool(lambda: 1, name="one")])
    with pytest.raises(SettingError):
        registry.add(tool(lambda: 2, name="one"))


# -- running -------------------------------------------------------------------------------------


async def test_calls_of_one_message_run_concurrently() -> None:
    both = asyncio.Barrier(2)

    @tool
    async def wait(name: str) -> str:
        await asyncio.wait_for(both.wait(), 2)  # only returns when the other call runs too
        return name

    registry = ToolRegistry([wait])
    results = await registry.run(
        [call("wait", {"name": "a"}, "c1"), call("wait", {"name": "b"}, "c2")]
    )
    assert [r.text for r in results] == ["a", "b"]
    assert [r.call_id for r in results] == ["c1", "c2"]


async def test_sync_tools_run_in_worker_threads() -> None:
    threads: list[str] = []

    @tool
    def where() -> str:
        threads.append(threading.current_thread().name)
        time.sleep(0.01)
        return "ok"

    results = await ToolRegistry([where]).run([call("where", {}, "c1"), call("where", {}, "c2")])
    assert [r.text for r in results] == ["ok", "ok"]
    assert threading.main_thread().name not in threads


async def test_a_raising_tool_becomes_an_error_result() -> None:
    @tool
    def broken(path: str) -> str:
        raise FileNotFoundError(f"no such file: {path}")

    results = await ToolRegistry([broken]).run([call("broken", {"path": "a.py"})])
    assert results[0].is_error
    assert results[0].call_id == "c1" and results[0].name == "broken"
    assert "FileNotFoundError" in results[0].text and "no such file: a.py" in results[0].text


async def test_unknown_tools_bad_arguments_and_timeouts_are_error_results() -> None:
    @tool
    async def slow(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "late"

    registry = ToolRegistry([slow], timeout=0.05)
    results = await registry.run(
        [
            call("nope", {}, "c1"),
            call("slow", "{not json", "c2"),
            call("slow", {}, "c3"),
            call("slow", {"seconds": 1}, "c4"),
            call("slow", {"seconds": 0}, "c5"),
        ]
    )
    assert [r.is_error for r in results] == [True, True, True, True, False]
    assert "no tool named 'nope'" in results[0].text and "slow" in results[0].text
    assert "JSON object" in results[1].text
    assert "seconds" in results[2].text
    assert "0.05 s" in results[3].text
    assert results[4].text == "late"


async def test_cancelled_calls_become_aborted_error_results() -> None:
    started = asyncio.Event()

    @tool
    async def forever() -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    tasks: list[asyncio.Task[ToolResult]] = []
    registry = ToolRegistry([forever])
    running = asyncio.ensure_future(registry.run([call("forever")], on_task=tasks.append))
    await started.wait()
    tasks[0].cancel()
    results = await running
    assert results[0].is_error and results[0].text == ABORTED_TEXT


def test_what_a_tool_returns_becomes_result_content() -> None:
    image = Image(url="https://example.com/a.png")
    assert result_content(None) == (Text("(no output)"),)
    assert result_content("text") == (Text("text"),)
    assert result_content(b"bytes") == (Text("bytes"),)
    assert result_content({"a": [1, 2]}) == (Text('{"a": [1, 2]}'),)
    assert result_content([Text("see"), image]) == (Text("see"), image)
    assert result_content(image) == (image,)


# -- clipping ------------------------------------------------------------------------------------


def big_result(lines: int = 2_000) -> Message:
    text = "".join(
        f"line {i}: some output of the tool, with a value {i * 7}\n" for i in range(lines)
    )
    return Message.tool("c1", text, name="bash", id="m-big")


def test_a_big_result_is_clipped_to_head_and_tail_with_a_note() -> None:
    message = big_result()
    original = message.tool_results[0].text
    clipped = clip_tool_message(message, 1_000, estimate_message_tokens)
    text = clipped.tool_results[0].text
    assert estimate_message_tokens(clipped) <= 1_000
    assert clipped.id == message.id and clipped.tool_results[0].call_id == "c1"
    assert text.startswith("line 0: ") and text.rstrip().endswith(original.rstrip()[-40:])
    assert "characters left out of the middle of this tool result" in text
    assert "The whole result is stored" in text
    left = int(text.split("[... ")[1].split(" characters")[0].replace(",", ""))
    head, tail = text.split("\n[... ")[0], text.split("...]\n")[-1]
    assert len(head) + len(tail) + left == len(original)
    assert clipped.meta["clipped"] == {
        "chars": len(original),
        "tokens": estimate_message_tokens(message),
    }


def test_a_result_within_the_cap_is_left_alone() -> None:
    message = big_result(10)
    assert clip_tool_message(message, 1_000, estimate_message_tokens) is message
    user = Message.user("x " * 5_000)
    assert clip_tool_message(user, 100, estimate_message_tokens) is user


def test_clipping_is_deterministic() -> None:
    a = clip_tool_message(big_result(), 800, estimate_message_tokens)
    b = clip_tool_message(big_result(), 800, estimate_message_tokens)
    assert a == b and a.fingerprint == b.fingerprint


async def test_tool_context_requests_compaction_from_its_conversation() -> None:
    asked: list[str | None] = []

    class Convo:
        def request_compaction(self, focus: str | None = None) -> None:
            asked.append(focus)

    ToolContext("c1", "t", Convo()).request_compaction("the API")
    ToolContext("c2", "t").request_compaction()  # outside a conversation: nothing to ask
    assert asked == ["the API"]
