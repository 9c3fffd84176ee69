"""End to end on the local provider, over real HTTP through the official SDKs: a long, tool-heavy
agent session that overflows an 8k window many times over runs to completion, with no
context-length error reaching the user, every request passing the server's pairing check, and
the sent prefix byte-identical between calls with no prune or compaction between them
(invariant 5)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from abridged.runtime import Conversation, ConversationSettings, tool
from abridged.store import Store
from abridged.testing import ProviderServer, RecordedRequest, Reply
from tests.runtime.support import (
    ADAPTERS,
    agent_requests,
    make_model,
    request_text,
    wire_messages,
    wire_prefix,
)

WINDOW = 8_192
MAX_OUTPUT = 1_024
TURNS = 5
STEPS_PER_TURN = 10

SUMMARY = (
    "## User intent and requests\n- Fix the failing tests of the parser module.\n"
    "## Constraints and preferences\n- Keep the public API.\n"
    "## Current state and next step\n- Reading the parser sources; next: run the tests.\n"
    "## Decisions\n- None yet.\n"
    "## Progress\n- Done: read files. In progress: fixing.\n"
    "## Errors and fixes\n- None.\n"
    "## Files read / modified\n- Read: src/parser.py\n"
    "## Exact references\n- tests/test_parser.py\n"
)


def file_text(path: str) -> str:
    """A deterministic ~1,200-token source file for ``path``."""
    seed = hashlib.sha256(path.encode()).hexdigest()
    lines = [
        f"def function_{seed[i % 60 : i % 60 + 4]}_{i}(value: int) -> int:  # {path}\n"
        f"    return value * {i} + {len(path)}  # checks the parser's state {seed[:8]}\n"
        for i in range(60)
    ]
    return "".join(lines)


@tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    return file_text(path)


@tool
def run_tests(target: str = "tests") -> str:
    """Run the test suite."""
    report = "".join(f"{target}/test_{i}.py::test_case PASSED\n" for i in range(40))
    return report + "40 passed"


@tool
def write_file(path: str, content: str) -> str:
    """Write a file."""
    return f"wrote {len(content)} characters to {path}"


def is_summary(request: RecordedRequest) -> bool:
    text = request_text(request)
    return "You are a summarizer" in text or "You are now acting as its summarizer" in text


class Agent:
    """The scripted model: each turn reads files (some in parallel), runs the tests, writes a
    fix, and answers; summarizer requests get a summary."""

    def __init__(self) -> None:
        self.plan: list[Reply] = []
        for turn in range(TURNS):
            for step in range(STEPS_PER_TURN):
                if step % 4 == 3:
                    calls: list[tuple[str, Any]] = [("run_tests", {"target": f"tests/t{turn}"})]
                elif step % 5 == 4:
                    calls = [
                        ("read_file", {"path": f"src/mod_{turn}_{step}_a.py"}),
                        ("read_file", {"path": f"src/mod_{turn}_{step}_b.py"}),
                    ]
                elif step == STEPS_PER_TURN - 1:
                    calls = [("write_file", {"path": "src/parser.py", "content": "fixed " * 40})]
                else:
                    calls = [("read_file", {"path": f"src/mod_{turn}_{step}.py"})]
                self.plan.append(Reply(text=f"Step {step} of turn {turn}.", tool_calls=calls))
            self.plan.append(Reply(text=f"Turn {turn} done: the parser tests pass."))
        self.answered = 0
        self.summaries = 0

    def __call__(self, request: RecordedRequest) -> Reply:
        if is_summary(request):
            self.summaries += 1
            return Reply(text=SUMMARY)
        reply = self.plan[self.answered]
        self.answered += 1
        return reply


@pytest.fixture
def small_server() -> Iterator[ProviderServer]:
    with ProviderServer(context_window=WINDOW, max_output=MAX_OUTPUT) as s:
        yield s


def _is_prefix(shorter: list[Any], longer: list[Any]) -> bool:
    return len(shorter) <= len(longer) and longer[: len(shorter)] == shorter


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_long_tool_session_overflowing_a_small_window_runs_to_completion(
    adapter: str, store: Store, small_server: ProviderServer
) -> None:
    agent = Agent()
    small_server.set_replies(agent)
    model = make_model(adapter, small_server)
    convo = await Conversation.open(
        store,
        model,
        system="You are a coding agent. Fix what the user asks; use the tools.",
        tools=[read_file, run_tests, write_file],
        context_window=WINDOW,
        max_output_tokens=MAX_OUTPUT,
        settings=ConversationSettings(debounce=0),
    )
    answers = []
    for turn in range(TURNS):
        result = await convo.send(f"Turn {turn}: fix the parser tests (part {turn}).")
        answers.append(result.text)
    await convo.wait_idle()

    # Every turn ran to its answer: no context-length error reached the user.
    assert answers == [f"Turn {t} done: the parser tests pass." for t in range(TURNS)]
    assert agent.answered == len(agent.plan)

    # The session was many times the window: tool output alone, as stored.
    stored = await store.stored_messages(convo.id)
    tool_chars = sum(len(r.text) for m in stored for r in m.message.tool_results)
    assert tool_chars / 4 > 6 * WINDOW
    compactions = await store.compactions(convo.id)
    assert len(compactions) >= 5
    assert agent.summaries >= 1  # the default summarizer is the conversation's own model

    # Every request passed the pairing check; none was rejected at all (the proactive check
    # kept every context inside the window).
    requests = agent_requests(small_server)
    rejected = [r for r in requests if r.status != 200]
    assert rejected == [], [r.error_message for r in rejected]

    # Invariant 5: between two calls of one compaction epoch, the sent prefix is identical.
    calls = [r for r in requests if not is_summary(r)]
    log = list(convo.call_log)
    assert len(calls) == len(log) == len(agent.plan)
    same_epoch = 0
    for (prev, prev_call), (nxt, next_call) in zip(
        zip(calls, log, strict=True), zip(calls[1:], log[1:], strict=True), strict=False
    ):
        if prev_call.epoch != next_call.epoch:
            continue
        same_epoch += 1
        assert wire_prefix(prev) == wire_prefix(nxt)
        assert _is_prefix(wire_messages(prev), wire_messages(nxt)), (prev.index, nxt.index)
    assert same_epoch >= len(calls) // 3
    epochs = {c.epoch for c in log}
    assert len(epochs) >= 5

    # The prompt cache read most of the calls that extend the previous one.
    cached = [
        nxt.cached_tokens
        for (prev, prev_call), (nxt, next_call) in zip(
            zip(calls, log, strict=True), zip(calls[1:], log[1:], strict=True), strict=False
        )
        if prev_call.epoch == next_call.epoch and prev.prompt_tokens >= 2_048
    ]
    assert cached and sum(1 for c in cached if c > 0) >= len(cached) * 0.8

    # Nothing stored was changed: every message the turns produced is there, whole.
    assert sum(1 for m in stored if m.message.role == "user") == TURNS
    assert all(m.status == "delivered" for m in stored)
    paths = {
        c.id: json.loads(c.arguments)["path"]
        for m in stored
        for c in m.message.tool_calls
        if c.name == "read_file"
    }
    results = [r for m in stored for r in m.message.tool_results if r.name == "read_file"]
    assert len(results) == len(paths) > 0
    assert all(r.text == file_text(paths[r.call_id]) for r in results)
