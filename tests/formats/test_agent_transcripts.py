"""Claude Code project sessions and Codex rollouts: detection, messages, usage, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abridged.core.model import Reasoning, ToolCall, ToolResult
from abridged.core.validate import validate_messages
from abridged.errors import FormatError
from abridged.formats.transcripts import (
    CLAUDE_CODE,
    CODEX,
    FORMATS,
    detect_format,
    load_transcripts,
)

DATA = Path(__file__).parent / "data"
CLAUDE = DATA / "claude_code.jsonl"
ROLLOUT = DATA / "codex_rollout.jsonl"


def _write(path: Path, lines: list[object]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_both_formats_are_named_and_detected() -> None:
    assert CLAUDE_CODE in FORMATS and CODEX in FORMATS
    assert detect_format(CLAUDE) == CLAUDE_CODE
    assert detect_format(ROLLOUT) == CODEX


def test_claude_code_joins_streamed_replies_and_skips_bookkeeping() -> None:
    (t,) = load_transcripts(CLAUDE)
    assert t.id == "4f35e220-c435-4cf7-b9b9-f40426042847"
    assert t.meta["model"] == "claude-sonnet-4-5-20250929"
    assert t.meta["cwd"] == "/home/dev/ledger"
    roles = [m.role for m in t.messages]
    # summary, snapshot, system, sidechain and synthetic entries are gone
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant", "user"]
    first = t.messages[1]
    assert [type(p) for p in first.parts] == [Reasoning, type(first.parts[1]), ToolCall]
    assert first.parts[0].signature  # type: ignore[union-attr]
    # the usage of the last streamed entry of the reply
    assert first.usage is not None and first.usage.output == 64
    assert first.usage.cache_write == 2800
    result = t.messages[2].parts[0]
    assert isinstance(result, ToolResult) and result.name == "Read"
    assert "ROUND_HALF_EVEN" in result.text
    assert "sub-agent chatter" not in json.dumps([m.text for m in t.messages])
    assert all(i.severity != "error" for i in validate_messages(t.messages))
    assert t.stats.usage_reports == 3


def test_codex_reads_items_calls_and_token_counts() -> None:
    (t,) = load_transcripts(ROLLOUT)
    assert t.id == "0199a213-81c0-7800-8aa1-bbab2a035a53"
    assert t.meta["model"] == "gpt-5-codex"
    assert t.meta["skipped_items"] == 1  # the ghost snapshot
    roles = [m.role for m in t.messages]
    assert roles == ["user", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    first = t.messages[2]
    assert isinstance(first.parts[0], Reasoning) and isinstance(first.parts[1], ToolCall)
    assert first.usage is not None
    assert first.usage.context_tokens == 2900 and first.usage.reasoning == 64
    patch = t.messages[4].tool_calls[0]
    assert patch.name == "apply_patch" and patch.arguments.startswith("*** Begin Patch")
    second = t.messages[4].usage
    assert second is not None and second.cache_read == 2816 and second.context_tokens == 3100
    assert t.messages[5].parts[0].name == "apply_patch"  # type: ignore[union-attr]
    assert all(i.severity != "error" for i in validate_messages(t.messages))


def test_codex_base_instructions_become_the_system_message(tmp_path: Path) -> None:
    lines = [json.loads(x) for x in ROLLOUT.read_text(encoding="utf-8").splitlines()]
    lines[0]["payload"]["base_instructions"] = {"text": "You are Codex, a coding agent."}
    (t,) = load_transcripts(_write(tmp_path / "rollout-base.jsonl", lines))
    assert t.meta["base_instructions"] is True
    assert t.messages[0].role == "system" and t.messages[0].text.startswith("You are Codex")
    (plain,) = load_transcripts(ROLLOUT)
    assert "base_instructions" not in plain.meta
    # the usage reports stay on the same replies
    assert [m.usage for m in t.messages[1:]] == [m.usage for m in plain.messages]


def test_legacy_codex_rollouts_without_envelope(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "rollout-old.jsonl",
        [
            {"id": "old-1", "timestamp": "2025-05-01T10:00:00Z", "instructions": None},
            {"record_type": "state"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "hello"}],
            },
        ],
    )
    assert detect_format(path) == CODEX
    (t,) = load_transcripts(path)
    assert t.id == "old-1"
    assert [m.text for m in t.messages] == ["hi", "hello"]


def test_a_one_line_claude_code_file_is_detected(tmp_path: Path) -> None:
    line = json.loads(CLAUDE.read_text(encoding="utf-8").splitlines()[2])
    path = _write(tmp_path / "one.jsonl", [line])
    (t,) = load_transcripts(path)
    assert t.source_format == CLAUDE_CODE and [m.role for m in t.messages] == ["user"]


def test_bad_lines_name_the_line(tmp_path: Path) -> None:
    lines = CLAUDE.read_text(encoding="utf-8").splitlines()
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([*lines[:4], "{not json", *lines[4:]]) + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        load_transcripts(broken)
    assert info.value.line == 5 and info.value.format == CLAUDE_CODE
    (t,) = load_transcripts(broken, strict=False)
    assert t.stats.skipped_lines == (5,)

    no_message = _write(
        tmp_path / "no_message.jsonl",
        [json.loads(lines[2]), {"type": "user", "sessionId": "s", "uuid": "u"}],
    )
    with pytest.raises(FormatError) as info:
        load_transcripts(no_message, CLAUDE_CODE)
    assert info.value.line == 2 and "message" in str(info.value.expected)

    rollout = ROLLOUT.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "bad-rollout.jsonl"
    bad.write_text(
        "\n".join([*rollout[:3], json.dumps({"type": "response_item", "payload": 3})]) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(FormatError) as info:
        load_transcripts(bad)
    assert info.value.line == 4 and info.value.format == CODEX


def test_converter_errors_name_the_line_of_the_entry(tmp_path: Path) -> None:
    rollout = ROLLOUT.read_text(encoding="utf-8").splitlines()
    nameless = {"type": "response_item", "payload": {"type": "function_call", "call_id": "x"}}
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join([*rollout[:3], json.dumps(nameless)]) + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        load_transcripts(path)
    assert info.value.line == 4 and info.value.format == CODEX
    assert "name" in str(info.value)


def test_a_sub_agent_file_loads_its_own_conversation(tmp_path: Path) -> None:
    # subagents/agent-*.jsonl: every line is isSidechain, the sub-agent's own conversation
    entries = [json.loads(line) for line in CLAUDE.read_text(encoding="utf-8").splitlines()]
    side = [{**e, "isSidechain": True, "agentId": "a1b2"} for e in entries if "message" in e]
    path = _write(tmp_path / "agent-a1b2.jsonl", side)
    (t,) = load_transcripts(path)
    assert t.source_format == CLAUDE_CODE and t.meta["sidechain"] is True
    assert t.id == "agent-a1b2"
    assert [m.role for m in t.messages][:3] == ["user", "assistant", "tool"]
    # in a main session file the sub-agent's entries are still left out
    (main,) = load_transcripts(CLAUDE)
    assert "sidechain" not in main.meta


@pytest.mark.parametrize(
    ("lines", "fmt"),
    [
        # only bookkeeping entries: nothing the model saw
        ([{"type": "summary", "summary": "x", "leafUuid": "l"}] * 2, None),
        ([{"type": "summary", "summary": "x", "leafUuid": "l"}], CLAUDE_CODE),
        # a Claude Code session read as a Codex rollout
        (None, CODEX),
        # a rollout with only metadata
        ([{"type": "session_meta", "payload": {"id": "s"}}] * 2, None),
    ],
)
def test_a_file_that_yields_no_message_is_an_error(
    tmp_path: Path, lines: list[object] | None, fmt: str | None
) -> None:
    path = _write(tmp_path / "empty.jsonl", lines) if lines is not None else CLAUDE
    for strict in (True, False):
        with pytest.raises(FormatError) as info:
            load_transcripts(path, fmt, strict=strict)
        error = info.value
        assert error.path == str(path) and "no message" in error.message
        assert error.format == (fmt or detect_format(path))
