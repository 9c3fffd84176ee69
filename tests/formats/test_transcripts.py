"""Tests of the transcript loaders: mini-swe-agent's text protocol recovered as tool steps, the
exact inverse, format detection, errors naming the line, and the real shared sessions."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from abridged.core.model import Message, Text, ToolCall, ToolResult, Usage
from abridged.errors import FormatError
from abridged.formats.transcripts import (
    ABRIDGED_JSON,
    ANTHROPIC_MESSAGES,
    FORMATS,
    MINI_SWE_AGENT_TRAJ,
    OPENAI_CHAT,
    OPENAI_CHAT_JSONL,
    SWEBENCH_JSONL,
    LoaderStats,
    Transcript,
    bash_commands,
    detect_format,
    load_swebench_jsonl,
    load_traj_json,
    load_transcripts,
    messages_from_text_protocol,
    messages_to_text_protocol,
    observation_is_error,
    text_protocol_call_id,
    transcript_to_dict,
)
from abridged.formats.usage import usage_from_openai

DATA = Path(__file__).parent / "data"
JSONL = DATA / "mini_swe_agent.jsonl"
TRAJ = DATA / "demo__count-1.traj.json"
OPENAI_JSON = DATA / "openai_chat.json"
OPENAI_JSONL = DATA / "openai_chat.jsonl"
ANTHROPIC_JSON = DATA / "anthropic_messages.json"


def _raw_sessions(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _assert_paired(transcript: Transcript) -> None:
    """Every result answers a call of the assistant message just before it, and every call of an
    assistant message is answered by the messages right after it."""
    messages = transcript.messages
    for i, message in enumerate(messages):
        for result in message.tool_results:
            previous = messages[i - 1]
            assert i > 0 and previous.role == "assistant", (transcript.id, i)
            assert result.call_id in {c.id for c in previous.tool_calls}, (transcript.id, i)
        if message.tool_calls:
            answered: set[str] = set()
            for following in messages[i + 1 :]:
                if not following.tool_results:
                    break
                answered.update(r.call_id for r in following.tool_results)
            assert {c.id for c in message.tool_calls} <= answered, (transcript.id, i)


def _assert_stats_add_up(stats: LoaderStats) -> None:
    assert stats.tool_steps + stats.plain_assistant == stats.assistant_messages
    assert stats.no_block + stats.multi_block + stats.unanswered == stats.plain_assistant


# -- the text protocol, pure --------------------------------------------------------------------


def test_bash_commands_follow_mini_swe_agents_regex() -> None:
    assert bash_commands("THOUGHT\n\n```bash\n  ls -la  \n```") == ["ls -la"]
    assert bash_commands("```bash\na\n```\ntext\n```bash\nb\n```") == ["a", "b"]
    assert bash_commands("```bash ls```") == []  # the body must sit on its own lines
    assert bash_commands("```python\nprint(1)\n```") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<returncode>0</returncode>\n<output>\nok\n</output>", False),
        ("<returncode>2</returncode>\n<output>\n</output>", True),
        ("<exception>boom</exception>\n<returncode>-1</returncode>\n<output></output>", True),
        ("The last command <command>sleep 9</command> timed out and has been killed.", True),
        ("diff --git a/x b/x\n", False),
        ("<output>\n<returncode>1</returncode>\n</output>", False),  # not the template's position
    ],
)
def test_observation_is_error(text: str, expected: bool) -> None:
    assert observation_is_error(text) is expected


def test_one_bash_block_and_its_observation_become_a_tool_step() -> None:
    items: list[dict[str, Any]] = [
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": "THOUGHT: x\n\n```bash\n ls \n```",
            "usage": {"prompt_tokens": 9},
        },
        {"role": "user", "content": "<returncode>1</returncode>\n<output>\nno\n</output>"},
    ]
    messages, stats = messages_from_text_protocol(items, transcript_id="t-1")
    user, call, result = messages
    assert user == Message("user", (Text("task"),), id=user.id)
    call_id = text_protocol_call_id("t-1", 1)
    assert call.role == "assistant"
    assert call.parts == (Text(items[1]["content"]), ToolCall(call_id, "bash", '{"command": "ls"}'))
    assert dict(call.meta) == {"text_protocol": True}
    assert call.usage == Usage(input=9)
    assert result.role == "tool"
    assert result.parts == (ToolResult(call_id, "bash", (Text(items[2]["content"]),), True),)
    assert dict(result.meta) == {"text_protocol": True, "wire_role": "user"}
    assert stats == LoaderStats(messages=3, assistant_messages=1, tool_steps=1, usage_reports=1)


def test_plain_assistant_messages_and_the_notice_after_them_stay_plain() -> None:
    items = [
        {"role": "assistant", "content": "no block"},
        {"role": "user", "content": "notice 0"},
        {"role": "assistant", "content": "```bash\na\n```\n```bash\nb\n```"},
        {"role": "user", "content": "notice 2"},
        {"role": "assistant", "content": "```bash\nfinal\n```"},  # nothing follows
    ]
    messages, stats = messages_from_text_protocol(items, transcript_id="t")
    assert [m.role for m in messages] == ["assistant", "user", "assistant", "user", "assistant"]
    assert all(not m.tool_calls and not m.tool_results and not m.meta for m in messages)
    assert [m.text for m in messages] == [i["content"] for i in items]
    assert (stats.no_block, stats.multi_block, stats.unanswered) == (1, 1, 1)
    assert (stats.plain_assistant, stats.plain_user_after, stats.tool_steps) == (3, 2, 0)
    assert stats.usage_reports == 0


def test_call_ids_are_deterministic_and_distinct() -> None:
    items = _raw_sessions(JSONL)[0]["messages"]
    first, _ = messages_from_text_protocol(items, transcript_id="a")
    again, _ = messages_from_text_protocol(items, transcript_id="a")
    other, _ = messages_from_text_protocol(items, transcript_id="b")
    ids = [c.id for m in first for c in m.tool_calls]
    assert ids == [c.id for m in again for c in m.tool_calls]
    assert len(set(ids)) == len(ids) == 4
    assert not set(ids) & {c.id for m in other for c in m.tool_calls}
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,40}", i) for i in ids)
    assert len({m.id for m in first}) == len(first)  # message ids unique too


def test_inverse_refuses_native_tool_parts() -> None:
    native = [Message.assistant(tool_calls=[ToolCall("c", "bash")]), Message.tool("c", "out")]
    with pytest.raises(FormatError) as info:
        messages_to_text_protocol(native)
    assert info.value.index == 0
    with pytest.raises(FormatError) as info:
        messages_to_text_protocol(native[1:])
    assert info.value.index == 0


def test_stats_sum() -> None:
    a = LoaderStats(messages=2, tool_steps=1, skipped_lines=(3,))
    b = LoaderStats(messages=5, plain_assistant=2, skipped_lines=(9,))
    assert a + b == LoaderStats(messages=7, tool_steps=1, plain_assistant=2, skipped_lines=(3, 9))
    assert LoaderStats.total([a, b, a]).messages == 9
    assert LoaderStats.total([]) == LoaderStats()


# -- the mini-swe-agent files ---------------------------------------------------------------------


def test_swebench_jsonl_fixture() -> None:
    first, second = load_swebench_jsonl(JSONL)
    assert (first.id, second.id) == ("demo__count-1", "demo__hello-2")
    assert first.source_format == SWEBENCH_JSONL
    assert first.meta["exit_status"] == "Submitted" and first.meta["line"] == 1
    assert second.meta["line"] == 2 and first.meta["tool_protocol"] == "text"
    assert "messages" not in first.meta
    assert first.stats == LoaderStats(
        messages=14,
        assistant_messages=6,
        tool_steps=4,
        plain_assistant=2,
        no_block=1,
        multi_block=1,
        plain_user_after=2,
        usage_reports=6,
    )
    assert second.stats.unanswered == 1 and second.stats.tool_steps == 1
    step, plain = ["assistant", "tool"], ["assistant", "user"]
    roles = [m.role for m in first.messages]
    assert roles == ["system", "user", *step, *plain, *plain, *step, *step, *step]
    errors = [r.is_error for m in first.messages for r in m.tool_results]
    assert errors == [False, True, True, False]  # ok, returncode 1, timeout, submission
    submit = first.messages[-2].tool_calls[0]
    assert json.loads(submit.arguments) == {
        "command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"
    }
    assert second.messages[-1].role == "assistant" and not second.messages[-1].tool_calls
    for transcript in (first, second):
        _assert_paired(transcript)
        _assert_stats_add_up(transcript.stats)


def test_inverse_reproduces_the_fixture_byte_for_byte() -> None:
    for raw, transcript in zip(_raw_sessions(JSONL), load_swebench_jsonl(JSONL), strict=True):
        back = messages_to_text_protocol(transcript.messages, with_usage=True)
        assert json.dumps(back, ensure_ascii=False) == json.dumps(
            raw["messages"], ensure_ascii=False
        )
        bare = messages_to_text_protocol(transcript.messages)
        assert bare == [{"role": m["role"], "content": m["content"]} for m in raw["messages"]]


def test_traj_json() -> None:
    transcript = load_traj_json(TRAJ)
    raw = json.loads(TRAJ.read_text(encoding="utf-8"))
    assert transcript.id == "demo__count-1"  # from the file name: no instance id inside
    assert transcript.source_format == MINI_SWE_AGENT_TRAJ
    assert transcript.meta["model"] == "test/model"
    assert transcript.meta["exit_status"] == "Submitted"
    assert transcript.meta["trajectory_format"] == "mini-swe-agent-1"
    assert "not-a-real-key" not in json.dumps(dict(transcript.meta))  # config is never copied
    assistants = [m for m in transcript.messages if m.role == "assistant"]
    assert [m.usage for m in assistants] == [
        Usage(input=130, output=22, reasoning=3),
        Usage(input=62, output=18, cache_read=128, reasoning=3),
    ]
    assert transcript.stats.tool_steps == 2 and transcript.stats.usage_reports == 2
    _assert_paired(transcript)
    # A content given as a list of text blocks (cache control) comes back as its text.
    back = messages_to_text_protocol(transcript.messages)
    assert back[4]["content"] == raw["messages"][4]["content"][0]["text"]
    assert back[5] == raw["messages"][5]


def test_loading_the_whole_fixture_jsonl_is_lazy_per_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = JSONL.read_text(encoding="utf-8").splitlines()
    path.write_text(lines[0] + "\n{broken\n", encoding="utf-8")
    sessions = load_swebench_jsonl(path)
    assert next(sessions).id == "demo__count-1"  # the bad line has not been read yet
    with pytest.raises(FormatError) as info:
        next(sessions)
    assert info.value.line == 2


# -- detection --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (JSONL, SWEBENCH_JSONL),
        (TRAJ, MINI_SWE_AGENT_TRAJ),
        (OPENAI_JSON, OPENAI_CHAT),
        (OPENAI_JSONL, OPENAI_CHAT_JSONL),
        (ANTHROPIC_JSON, ANTHROPIC_MESSAGES),
    ],
    ids=lambda v: v.name if isinstance(v, Path) else v,
)
def test_detect_format(path: Path, expected: str) -> None:
    assert detect_format(path) == expected


def test_detection_of_written_shapes(tmp_path: Path) -> None:
    def detect(name: str, content: Any) -> str:
        path = tmp_path / name
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        return detect_format(path)

    msg = {"role": "user", "content": "hi"}
    assert detect("a.json", [msg]) == OPENAI_CHAT
    assert detect("b.json", {"messages": [msg]}) == OPENAI_CHAT
    assert detect("c.json", {"system": "s", "messages": [msg]}) == ANTHROPIC_MESSAGES
    thinking = {"role": "assistant", "content": [{"type": "thinking", "thinking": "."}]}
    assert detect("d.json", [msg, thinking]) == ANTHROPIC_MESSAGES
    assert detect("e.json", {"info": {}, "messages": [msg]}) == MINI_SWE_AGENT_TRAJ
    one_session = {"instance_id": "x", "messages": [msg]}
    assert detect("f.jsonl", json.dumps(one_session) + "\n") == SWEBENCH_JSONL
    parts = {"role": "user", "parts": [{"type": "text", "text": "hi"}]}
    assert detect("g.json", [parts]) == ABRIDGED_JSON
    assert detect("h.jsonl", json.dumps(parts) + "\n" + json.dumps(parts)) == "abridged-jsonl"
    pretty = json.dumps({"messages": [msg]}, indent=2)  # a document over many lines, not JSONL
    assert detect("i.json", pretty) == OPENAI_CHAT


def test_a_single_line_session_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(JSONL.read_text(encoding="utf-8").splitlines()[1] + "\n", encoding="utf-8")
    (transcript,) = load_transcripts(path)
    assert transcript.id == "demo__hello-2" and transcript.meta["line"] == 1
    assert transcript.stats.tool_steps == 1


def test_load_transcripts_detects_as_the_explicit_format() -> None:
    detected = load_transcripts(JSONL)
    explicit = load_transcripts(JSONL, SWEBENCH_JSONL)
    assert [t.messages for t in detected] == [t.messages for t in explicit]
    assert load_transcripts(TRAJ)[0].messages == load_traj_json(TRAJ).messages


def test_abridged_json_round_trip(tmp_path: Path) -> None:
    original = load_transcripts(JSONL)[0]
    path = tmp_path / "own.json"
    path.write_text(json.dumps(transcript_to_dict(original)), encoding="utf-8")
    assert detect_format(path) == ABRIDGED_JSON
    (loaded,) = load_transcripts(path)
    assert loaded.messages == original.messages
    assert loaded.id == original.id
    assert loaded.meta["source_format"] == SWEBENCH_JSONL
    assert loaded.meta["instance_id"] == "demo__count-1"
    assert loaded.stats.tool_steps == original.stats.tool_steps
    assert messages_to_text_protocol(loaded.messages) == messages_to_text_protocol(
        original.messages
    )


# -- errors -----------------------------------------------------------------------------------


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _session_line(messages: list[Any], instance_id: str = "i") -> str:
    return json.dumps({"instance_id": instance_id, "messages": messages})


GOOD = [{"role": "user", "content": "task"}]


def test_bad_json_line_is_named(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.jsonl", f"{_session_line(GOOD)}\n\n{{not json\n")
    with pytest.raises(FormatError) as info:
        load_transcripts(path)
    err = info.value
    assert (err.line, err.format, err.path) == (3, SWEBENCH_JSONL, str(path))
    assert err.expected == "one JSON object per line"
    assert "line=3" in str(err)


def test_bad_first_line_of_jsonl_is_named(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.jsonl", "{oops}\n" + _session_line(GOOD, "b") + "\n")
    with pytest.raises(FormatError) as info:
        load_transcripts(path)
    assert info.value.line == 1
    (transcript,) = load_transcripts(path, strict=False)  # detected from the next good line
    assert transcript.id == "b" and transcript.stats.skipped_lines == (1,)


def test_bad_json_document_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.json", '{\n  "messages": [\n    {"role": "user",}\n  ]\n}\n')
    with pytest.raises(FormatError) as info:
        load_transcripts(path)
    assert info.value.line == 3
    with pytest.raises(FormatError) as info:
        load_traj_json(path)
    assert (info.value.line, info.value.format) == (3, MINI_SWE_AGENT_TRAJ)


def test_missing_messages_key(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "s.jsonl", _session_line(GOOD) + "\n" + json.dumps({"messages_": []}) + "\n"
    )
    with pytest.raises(FormatError) as info:
        load_transcripts(path, SWEBENCH_JSONL)
    assert info.value.line == 2
    assert info.value.expected == "an object with a 'messages' list"
    traj = _write(tmp_path, "x.traj.json", json.dumps({"info": {}, "trajectory": []}))
    with pytest.raises(FormatError) as info:
        load_traj_json(traj)
    assert info.value.expected == "an object with a 'messages' list"


def test_unknown_role_names_line_and_index(tmp_path: Path) -> None:
    bad = [*GOOD, {"role": "robot", "content": "beep"}]
    path = _write(tmp_path, "s.jsonl", _session_line(GOOD, "a") + "\n" + _session_line(bad) + "\n")
    with pytest.raises(FormatError) as info:
        load_transcripts(path)
    err = info.value
    assert (err.line, err.index, err.context["field"]) == (2, 1, "role")
    assert "robot" in err.message and "assistant" in (err.expected or "")


def test_content_that_is_not_text(tmp_path: Path) -> None:
    bad = [*GOOD, {"role": "assistant", "content": {"x": 1}}]
    path = _write(tmp_path, "s.jsonl", _session_line(bad) + "\n")
    with pytest.raises(FormatError) as info:
        load_transcripts(path, SWEBENCH_JSONL)
    assert (info.value.line, info.value.index) == (1, 1)


def test_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        load_transcripts(JSONL, "yaml-chat")
    assert info.value.format == "yaml-chat"
    assert all(name in (info.value.expected or "") for name in FORMATS)


def test_undetectable_content(tmp_path: Path) -> None:
    for name, text in [("e.json", "  \n"), ("n.json", "42"), ("o.json", '{"turns": []}')]:
        with pytest.raises(FormatError):
            detect_format(_write(tmp_path, name, text))
    rows = _write(tmp_path, "r.jsonl", '{"a": 1}\n{"a": 2}\n')
    with pytest.raises(FormatError) as info:
        load_transcripts(rows)
    assert info.value.line == 1


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes((_session_line(GOOD) + "\n").encode() + b'{"x": "\xff"}\n')
    with pytest.raises(FormatError) as info:
        load_transcripts(path, SWEBENCH_JSONL)
    assert info.value.line == 2


def test_non_strict_skips_and_records_bad_lines(tmp_path: Path) -> None:
    bad_role = _session_line([{"role": "robot", "content": ""}], "r")
    text = "\n".join(["{bad", _session_line(GOOD, "a"), bad_role, _session_line(GOOD, "b"), "[]"])
    path = _write(tmp_path, "s.jsonl", text + "\n")
    transcripts = load_transcripts(path, SWEBENCH_JSONL, strict=False)
    assert [t.id for t in transcripts] == ["a", "b"]
    assert [t.stats.skipped_lines for t in transcripts] == [(1,), (3, 5)]
    assert LoaderStats.total(t.stats for t in transcripts).skipped_lines == (1, 3, 5)


def test_repeated_instance_ids_stay_unique(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.jsonl", _session_line(GOOD, "x") + "\n" + _session_line(GOOD, "x"))
    assert [t.id for t in load_transcripts(path)] == ["x", "x@2"]


# -- the real shared sessions -----------------------------------------------------------------


def test_shared_every_session_loads(swebench_path: Path) -> None:
    raw = _raw_sessions(swebench_path)
    transcripts = load_transcripts(swebench_path)
    assert len(transcripts) == len(raw) > 0
    assert [t.id for t in transcripts] == [r["instance_id"] for r in raw]
    for r, t in zip(raw, transcripts, strict=True):
        assert len(t.messages) == len(r["messages"]) == t.stats.messages
        assert t.meta["model"] == r["model"] and t.meta["exit_status"] == r["exit_status"]
        assert t.meta["tool_protocol"] == "text"


def test_shared_inverse_reproduces_every_message(swebench_path: Path) -> None:
    raw = _raw_sessions(swebench_path)
    for r, t in zip(raw, load_transcripts(swebench_path), strict=True):
        back = messages_to_text_protocol(t.messages, with_usage=True)
        assert json.dumps(back, ensure_ascii=False) == json.dumps(r["messages"], ensure_ascii=False)


def test_shared_pairing_and_stats(swebench_path: Path) -> None:
    transcripts = load_transcripts(swebench_path)
    for t in transcripts:
        _assert_paired(t)
        _assert_stats_add_up(t.stats)
        calls = sum(len(m.tool_calls) for m in t.messages)
        results = sum(len(m.tool_results) for m in t.messages)
        assert calls == results == t.stats.tool_steps
        assert t.stats.plain_user_after == t.stats.no_block + t.stats.multi_block
    total = LoaderStats.total(t.stats for t in transcripts)
    _assert_stats_add_up(total)
    assert total.tool_steps > 0.9 * total.assistant_messages  # the sessions are mostly tool steps


def test_shared_plain_messages_agree_with_mini_swe_agents_notices(swebench_path: Path) -> None:
    """mini-swe-agent said "found N actions" after each rejected reply: our count must agree."""
    for t in load_transcripts(swebench_path):
        for previous, message in zip(t.messages, t.messages[1:], strict=False):
            if message.role != "user" or previous.role != "assistant":
                continue
            found = re.search(r"found (\d+) actions", message.text)
            assert found is not None, (t.id, message.text[:80])
            assert int(found.group(1)) == len(bash_commands(previous.text))


def test_shared_usage_on_every_assistant_message(swebench_path: Path) -> None:
    raw = _raw_sessions(swebench_path)
    for r, t in zip(raw, load_transcripts(swebench_path), strict=True):
        assistants = [m for m in t.messages if m.role == "assistant"]
        reports = [m["usage"] for m in r["messages"] if m["role"] == "assistant"]
        assert [m.usage for m in assistants] == [usage_from_openai(u) for u in reports]
        assert all(m.usage is not None for m in assistants)
        assert t.stats.usage_reports == len(assistants)
        assert [m.usage.context_tokens for m in assistants if m.usage] == [
            u["prompt_tokens"] for u in reports
        ]


# -- native tool calls through the other converters (skipped until they exist) -----------------


def test_openai_chat_json_and_jsonl() -> None:
    pytest.importorskip("abridged.formats.openai_chat")
    (doc,) = load_transcripts(OPENAI_JSON)
    (lines,) = load_transcripts(OPENAI_JSONL)
    assert doc.id == "chat-7" and doc.meta["model"] == "gpt-test"
    assert doc.source_format == OPENAI_CHAT and lines.source_format == OPENAI_CHAT_JSONL
    for t in (doc, lines):
        assert [m.role for m in t.messages] == ["system", "user", "assistant", "tool", "assistant"]
        assert t.messages[2].tool_calls[0].id == "call_a"
        assert t.messages[3].tool_results[0].call_id == "call_a"
        assert t.messages[2].usage == Usage(input=8, output=9, cache_read=32)
        assert t.messages[4].usage == Usage(input=60, output=5)
        assert (t.stats.tool_steps, t.stats.plain_assistant, t.stats.usage_reports) == (1, 1, 2)
        _assert_paired(t)


def test_openai_chat_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    pytest.importorskip("abridged.formats.openai_chat")
    lines = OPENAI_JSONL.read_text(encoding="utf-8").splitlines()
    lines.insert(2, json.dumps({"role": "narrator", "content": "meanwhile"}))
    path = _write(tmp_path, "c.jsonl", "\n".join(lines) + "\n")
    with pytest.raises(FormatError) as info:
        load_transcripts(path)
    assert (info.value.line, info.value.format) == (3, OPENAI_CHAT_JSONL)
    (transcript,) = load_transcripts(path, strict=False)
    assert transcript.stats.skipped_lines == (3,)
    assert len(transcript.messages) == 5


def test_anthropic_messages_json() -> None:
    pytest.importorskip("abridged.formats.anthropic_messages")
    (t,) = load_transcripts(ANTHROPIC_JSON)
    assert t.source_format == ANTHROPIC_MESSAGES and t.meta["model"] == "claude-test"
    assert t.messages[0].role == "system" and t.messages[0].text == "Be brief."
    calls = [c for m in t.messages for c in m.tool_calls]
    results = [r for m in t.messages for r in m.tool_results]
    assert [c.id for c in calls] == [r.call_id for r in results] == ["toolu_1"]
    assistants = [m for m in t.messages if m.role == "assistant"]
    assert assistants[0].usage == Usage(input=12, output=9, cache_read=30)
    assert t.stats.tool_steps == 1 and t.stats.assistant_messages == 2
    _assert_paired(t)


def test_native_tool_call_sessions_use_the_openai_converter(tmp_path: Path) -> None:
    pytest.importorskip("abridged.formats.openai_chat")
    messages = json.loads(OPENAI_JSON.read_text(encoding="utf-8"))["messages"]
    path = _write(tmp_path, "n.jsonl", _session_line(messages, "native-1") + "\n")
    (t,) = load_transcripts(path)
    assert t.meta["tool_protocol"] == "native"
    assert t.messages[2].tool_calls[0].id == "call_a"
    assert t.messages[2].usage == Usage(input=8, output=9, cache_read=32)
