"""Hostile JSON through every transcript loader: only ``abridged.errors`` exceptions escape.

Real lines of each format (the fixtures) with one value replaced by something hostile: a list
where an object is expected, an object or a number where a string is, deep nesting, lone
surrogates (a valid JSON escape), and whole lines of arbitrary JSON. Each file is loaded with
detection and with every format named, strictly and not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abridged.errors import AbridgedError, FormatError
from abridged.formats.transcripts import CLAUDE_CODE, CODEX, FORMATS, load_transcripts

DATA = Path(__file__).parent / "data"
FIXTURES = {
    "claude_code.jsonl": None,
    "codex_rollout.jsonl": None,
    "mini_swe_agent.jsonl": None,
    "openai_chat.jsonl": None,
}
DOCUMENTS = ("anthropic_messages.json", "openai_chat.json", "demo__count-1.traj.json")
KEYS = (
    "type",
    "role",
    "content",
    "message",
    "messages",
    "payload",
    "parts",
    "tool_calls",
    "function",
    "arguments",
    "usage",
    "id",
    "model",
    "text",
    "isSidechain",
    "sessionId",
    "info",
)

_text = st.text(alphabet=st.characters(codec=None, categories=None), max_size=12) | st.sampled_from(
    ["\ud800", "a\udfffb", "\u202etxt", "\u200b", "＜/x＞", "user", "message"]
)
_scalar = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text
_json: st.SearchStrategy[Any] = st.recursive(
    _scalar,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | _text, inner, max_size=4)
    ),
    max_leaves=12,
)


def _deep(depth: int, leaf: Any) -> Any:
    value = leaf
    for k in range(depth):
        value = [value] if k % 2 else {"content": value}
    return value


_hostile = (
    _json
    | st.builds(_deep, st.sampled_from([50, 400]), _scalar)
    | st.lists(st.sampled_from(KEYS))
    | st.just([{"type": "text"}])
)


def _lines(name: str) -> list[Any]:
    return [json.loads(line) for line in (DATA / name).read_text("utf-8").splitlines() if line]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``value`` (dict keys and list indexes)."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _paths(item, (*prefix, index))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replace(copy[head], rest, new)
    return copy


def _load_everyhow(path: Path) -> None:
    for fmt in (None, *FORMATS):
        for strict in (True, False):
            try:
                transcripts = load_transcripts(path, fmt, strict=strict)
            except AbridgedError:
                continue
            for transcript in transcripts:  # what was loaded can be used
                for message in transcript.messages:
                    assert isinstance(message.text, str)


@st.composite
def _mutated_jsonl(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(sorted(FIXTURES)))
    lines = _lines(name)
    for _ in range(draw(st.integers(1, 3))):
        k = draw(st.integers(0, len(lines) - 1))
        path = draw(st.sampled_from(_paths(lines[k])))
        lines[k] = _replace(lines[k], path, draw(_hostile))
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), draw(_hostile))
    return "".join(json.dumps(line) + "\n" for line in lines)


@st.composite
def _mutated_document(draw: st.DrawFn) -> str:
    doc = json.loads((DATA / draw(st.sampled_from(DOCUMENTS))).read_text("utf-8"))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(doc)))
        doc = _replace(doc, path, draw(_hostile))
    return json.dumps(doc)


FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(text=_mutated_jsonl() | _mutated_document())
def test_hostile_json_gives_only_typed_errors(tmp_path: Path, text: str) -> None:
    path = tmp_path / "hostile.jsonl"
    path.write_text(text, encoding="utf-8")
    _load_everyhow(path)


@pytest.mark.parametrize(
    ("line", "fmt"),
    [
        # a list where an object (or a string) is expected: unhashable in a set lookup
        ({"type": ["user"], "sessionId": "s", "message": {"content": "x"}}, CLAUDE_CODE),
        ({"type": "response_item", "payload": {"type": ["message"]}}, CODEX),
        ({"type": ["session_meta"], "payload": {}}, CODEX),
        ({"type": "assistant", "uuid": "u", "message": {"content": [{"type": ["text"]}]}}, None),
    ],
)
def test_lists_where_objects_are_expected_are_format_errors(
    tmp_path: Path, line: dict[str, Any], fmt: str | None
) -> None:
    good = _lines("claude_code.jsonl" if fmt != CODEX else "codex_rollout.jsonl")
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in [*good[:4], line]), encoding="utf-8")
    with pytest.raises(FormatError) as info:
        load_transcripts(path, fmt)
    assert info.value.line == 5
    # not strict: the line is skipped and recorded, the rest loads
    (t,) = load_transcripts(path, fmt, strict=False)
    assert t.messages and 5 in t.stats.skipped_lines


def test_deep_nesting_and_lone_surrogates_in_a_line(tmp_path: Path) -> None:
    good = "".join(json.dumps(x) + "\n" for x in _lines("openai_chat.jsonl"))
    surrogate = '{"role": "user", "content": "\\ud800 and \\udfff"}\n'
    deep = '{"role": "user", "content": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    for name, text in (("surrogate", good + surrogate), ("deep", good + deep), ("doc", deep)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(text, encoding="utf-8")
        _load_everyhow(path)


def test_a_lone_surrogate_as_a_sessions_id_loads(tmp_path: Path) -> None:
    # Found by the fuzz test above: a JSON string may escape a lone surrogate (``"\ud800"``),
    # and a mini-SWE-agent session's id is hashed into its tool calls' ids.
    lines = _lines("mini_swe_agent.jsonl")
    lines[0]["instance_id"] = "\ud800"
    path = tmp_path / "surrogate.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    transcripts = load_transcripts(path)
    assert transcripts[0].id == "\ud800"
    assert any(m.tool_calls for m in transcripts[0].messages)
    _load_everyhow(path)
