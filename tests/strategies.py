"""Hypothesis strategies for realistic conversations, a test token counter and pairing checks."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Literal

from hypothesis import strategies as st

from abridged.core.model import (
    Image,
    Message,
    Part,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
    assign_ids,
)
from abridged.core.turns import is_reasoning_only

Shape = Literal["chat", "agent", "any"]
TOOLS = ("bash", "read_file", "grep", "edit", "search")
_FILLER = "lorem ipsum dolor sit amet, consectetur adipiscing elit; sed do eiusmod tempor. "


# -- a deterministic token counter for tests ---------------------------------------------------


def count_tokens(message: Message) -> int:
    """Characters / 4 + 4 per message; text-protocol messages count their text only."""
    if message.meta.get("text_protocol"):
        return len(message.text) // 4 + 4
    chars = 0
    for part in message.parts:
        chars += _part_chars(part)
    return chars // 4 + 4


def _part_chars(part: Part) -> int:
    if isinstance(part, Text | Reasoning):
        return len(part.text)
    if isinstance(part, ToolCall):
        return len(part.id) + len(part.name) + len(part.arguments)
    if isinstance(part, ToolResult):
        return len(part.call_id) + len(part.name) + sum(_part_chars(c) for c in part.content)
    return 340  # an image or a file: a flat 85 tokens


def total_tokens(messages: Sequence[Message]) -> int:
    """Sum of ``count_tokens`` over ``messages``."""
    return sum(count_tokens(m) for m in messages)


# -- pairing checks (independent of abridged.core.validate) ------------------------------------


def pairing_problems(messages: Sequence[Message]) -> list[str]:
    """Every pairing problem: results without an earlier call, calls answered twice, and calls
    left without a result although a later model or user message followed them."""
    problems: list[str] = []
    called: dict[str, int] = {}
    answered: set[str] = set()
    open_calls: dict[str, int] = {}
    for index, message in enumerate(messages):
        if message.role == "assistant" and open_calls:
            problems.append(f"calls {sorted(open_calls)} unanswered before message {index}")
            open_calls.clear()
        if message.role == "user" and open_calls and not message.tool_results:
            problems.append(f"calls {sorted(open_calls)} unanswered before user message {index}")
            open_calls.clear()
        for part in message.parts:
            if isinstance(part, ToolResult):
                if part.call_id not in called:
                    problems.append(f"result {part.call_id} at {index} has no call")
                elif part.call_id in answered:
                    problems.append(f"result {part.call_id} at {index} answers twice")
                answered.add(part.call_id)
                open_calls.pop(part.call_id, None)
        if message.role == "assistant":
            for call in message.tool_calls:
                called[call.id] = index
                open_calls[call.id] = index
    return problems


def reasoning_problems(original: Sequence[Message], kept: Sequence[Message]) -> list[str]:
    """A reasoning-only message and the assistant message it preceded must be kept together,
    adjacent (messages are told apart by id: give them unique ids with ``assign_ids``)."""
    position = {m.id: k for k, m in enumerate(kept)}
    problems: list[str] = []
    for index in range(len(original) - 1):
        first, second = original[index], original[index + 1]
        if not (is_reasoning_only(first) and second.role == "assistant"):
            continue
        a, b = position.get(first.id), position.get(second.id)
        if (a is None) != (b is None):
            problems.append(f"reasoning at {index} separated from its tool calls")
        elif a is not None and b != a + 1:
            problems.append(f"reasoning at {index} not adjacent to its tool calls")
    return problems


def assert_valid_context(original: Sequence[Message], kept: Sequence[Message]) -> None:
    """The kept context is paired (both checkers) and keeps reasoning with its calls."""
    from abridged.core.validate import is_paired

    assert pairing_problems(kept) == []
    assert is_paired(kept)
    assert reasoning_problems(original, kept) == []


# -- strategies --------------------------------------------------------------------------------


def _filler(label: str, size: int) -> str:
    body = (_FILLER * (size // len(_FILLER) + 1))[:size]
    return f"{label} {body}"


sizes = st.one_of(
    st.integers(0, 80),
    st.integers(80, 1_200),
    st.integers(1_200, 12_000),
)
"""Text sizes in characters: short, medium and bulky (a long tool output)."""


class _Ids:
    def __init__(self) -> None:
        self.calls = 0
        self.texts = 0

    def call(self) -> str:
        self.calls += 1
        return f"call_{self.calls}"

    def label(self, kind: str) -> str:
        self.texts += 1
        return f"{kind}{self.texts}:"


@st.composite
def _step(draw: st.DrawFn, ids: _Ids, *, final: bool, allow_pending: bool) -> list[Message]:
    """One step: an assistant message (maybe preceded by a reasoning-only message) and the
    results of its 0..3 parallel tool calls, in one or several tool messages, in any order."""
    calls_n = 0 if final else draw(st.integers(1, 3))
    if not final and draw(st.integers(0, 9)) == 0:
        return _text_protocol_step(draw, ids)
    reasoning_mode = draw(st.sampled_from(["none", "inline", "separate"]))
    reasoning = Reasoning(
        _filler(ids.label("think"), draw(sizes)), signature=f"sig{ids.texts}", provider="anthropic"
    )
    text = _filler(ids.label("say"), draw(sizes)) if final or draw(st.booleans()) else ""
    calls = [
        ToolCall(ids.call(), draw(st.sampled_from(TOOLS)), f'{{"arg": "{ids.label("a")}"}}')
        for _ in range(calls_n)
    ]
    out: list[Message] = []
    if reasoning_mode == "separate":
        out.append(Message("assistant", (reasoning,)))
    inline = (reasoning,) if reasoning_mode == "inline" else ()
    if not text and not calls and not inline:
        text = ids.label("say")
    out.append(Message.assistant(text, tool_calls=calls, reasoning=inline))
    if not calls or (allow_pending and draw(st.integers(0, 4)) == 0):
        return out
    order = draw(st.permutations(calls))
    results = []
    for call in order:
        content: tuple[Text | Image, ...] = (Text(_filler(ids.label("out"), draw(sizes))),)
        if draw(st.integers(0, 14)) == 0:
            content = (*content, Image(url="https://example.invalid/plot.png", width=64, height=64))
        named = draw(st.integers(0, 5)) != 0  # some formats do not repeat the tool name
        results.append(
            ToolResult(call.id, call.name if named else "", content, is_error=draw(st.booleans()))
        )
    # Split the results into consecutive tool messages (one per result, or grouped).
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(results) - 1)), max_size=2)))
    bounds = [0, *[c for c in cuts if c < len(results)], len(results)]
    for a, b in itertools.pairwise(bounds):
        if a < b:
            out.append(Message("tool", tuple(results[a:b])))
    return out


def _text_protocol_step(draw: st.DrawFn, ids: _Ids) -> list[Message]:
    """A mini-swe-agent step: one bash block in text, its observation as a text-protocol result."""
    call_id = ids.call()
    command = f"ls -la {ids.label('dir')}"
    said = f"THOUGHT: look around.\n\n```bash\n{command}\n```"
    observation = (
        f"<returncode>0</returncode>\n<output>\n{_filler(ids.label('obs'), draw(sizes))}\n</output>"
    )
    meta = {"text_protocol": True}
    return [
        Message(
            "assistant",
            (Text(said), ToolCall(call_id, "bash", f'{{"command": "{command}"}}')),
            meta=meta,
        ),
        Message(
            "tool",
            (Text(observation), ToolResult(call_id, "bash", (Text(observation),))),
            meta=meta,
        ),
    ]


@st.composite
def conversations(
    draw: st.DrawFn,
    shape: Shape = "any",
    *,
    max_turns: int = 25,
    max_agent_steps: int = 60,
) -> list[Message]:
    """A realistic conversation with unique message ids.

    0..2 leading system messages; then either a chat (many turns of 1..3 steps) or an agent
    session (one task, many steps, the odd user nudge), or a mix. Steps carry 0..3 parallel tool
    calls with their results in one or several tool messages, reasoning inline or in a separate
    reasoning-only message, occasionally text-protocol bash steps and images in results. The last
    step may still wait for its results (in progress), and the last user message may have no
    answer yet.
    """
    if shape == "any":
        shape = draw(st.sampled_from(["chat", "agent"]))
    ids = _Ids()
    messages: list[Message] = [
        Message.system(_filler(ids.label("sys"), draw(st.integers(10, 2_000))))
        for _ in range(draw(st.integers(0, 2)))
    ]
    if shape == "chat":
        turns = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, max_turns)))]
    else:
        total = draw(st.integers(1, max_agent_steps))
        nudges = sorted(draw(st.sets(st.integers(1, max(1, total - 1)), max_size=2)))
        bounds = [0, *[b for b in nudges if b < total], total]
        turns = [b - a for a, b in itertools.pairwise(bounds) if b > a]
    for t, steps_n in enumerate(turns):
        last_turn = t == len(turns) - 1
        messages.append(Message.user(_filler(ids.label("ask"), draw(sizes))))
        if last_turn and draw(st.integers(0, 7)) == 0:
            break  # the user's last message waits for an answer
        for s in range(steps_n):
            last_step = s == steps_n - 1
            final = last_step and not (last_turn and draw(st.booleans()))
            messages.extend(draw(_step(ids, final=final, allow_pending=last_turn and last_step)))
    return assign_ids(messages)


@st.composite
def pinned_indexes(draw: st.DrawFn, messages: Sequence[Message]) -> frozenset[int]:
    """A few indexes of ``messages`` to pin (maybe none)."""
    if not messages:
        return frozenset()
    return frozenset(draw(st.sets(st.integers(0, len(messages) - 1), max_size=3)))


def agent_session(steps: int = 100, output_chars: int = 4_000) -> list[Message]:
    """One task and ``steps`` tool steps (each ~``output_chars`` of output), then a final answer."""
    messages = [Message.system("You are a coding agent."), Message.user("Fix the failing test.")]
    for k in range(steps):
        call = ToolCall(f"c{k}", "bash", f'{{"command": "step {k}"}}')
        messages.append(Message.assistant(f"Step {k}.", tool_calls=[call]))
        messages.append(Message.tool(call.id, _filler(f"out{k}:", output_chars), name="bash"))
    messages.append(Message.assistant("Done: the test passes."))
    return assign_ids(messages)


def chat_session(turns: int = 100, chars: int = 2_000) -> list[Message]:
    """``turns`` user questions, each answered in one message of ~``chars`` characters."""
    messages = [Message.system("You are helpful.")]
    for k in range(turns):
        messages.append(Message.user(f"Question {k}?"))
        messages.append(Message.assistant(_filler(f"answer{k}:", chars)))
    return assign_ids(messages)
