"""The library's log (``logging.getLogger("abridged")``): silent unless the application listens;
then, from the runtime, one line at each compaction decision (compaction, prune, overflow
recovery, summarizer fallback) with the engine's figures, and no content or secret in any."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from abridged.core.protocols import Summary, SummaryRequest
from abridged.engine.compaction import CompactionHooks
from abridged.events.engine import (
    CompactionEnded,
    CompactionStarted,
    Event,
    OverflowRecovered,
    Pruned,
    SummarizerFallback,
)
from abridged.runtime import ContextManager, Conversation, ConversationSettings
from abridged.store import Store
from abridged.testing import ProviderServer
from tests.runtime.support import HANG_GUARD, make_model
from tests.runtime.test_conversation import NOTE, open_convo
from tests.runtime.test_manager_settings import OUTPUT, WINDOW, session

KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8J9k0L1m2"
ROOT = Path(__file__).resolve().parents[2]


class FailingSummarizer:
    """A summarizer whose provider error quotes a key (as a misconfigured proxy's may)."""

    name = "llm:failing"

    async def summarize(self, request: SummaryRequest) -> Summary:
        raise RuntimeError(f"upstream rejected key {KEY}")


def lines(caplog: pytest.LogCaptureFixture, kind: str) -> list[logging.LogRecord]:
    """The records of ``kind`` (their ``event`` field), all from the runtime's logger."""
    found = [r for r in caplog.records if getattr(r, "event", None) == kind]
    assert all(r.name == "abridged.runtime" for r in found), [r.name for r in found]
    return found


def only(events: tuple[Event, ...] | list[Event], kind: type[Event]) -> list[Event]:
    return [e for e in events if isinstance(e, kind)]


@pytest.fixture
def info(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.set_level(logging.INFO, logger="abridged")
    yield caplog


SILENT = f"""
import logging, sys
sys.path.insert(0, {str(ROOT)!r})
from abridged.engine.compaction import CompactionHooks
from abridged.runtime import ContextManager, Conversation, ConversationSettings
from tests.runtime.test_manager_settings import session
from tests.runtime.test_tracing import FailingSummarizer
cm = ContextManager(context_window=16_384, max_output_tokens=4_096, summarizer=FailingSummarizer())
kinds = {{e.kind for e in cm.prepare(session(30)).events}}
assert "summarizer_fallback" in kinds, kinds  # a WARNING was logged
assert logging.getLogger().handlers == [], logging.getLogger().handlers
assert logging.getLogger().level == logging.WARNING  # the root logger as Python left it
print("ran")
"""


def test_nothing_is_printed_without_configuration() -> None:
    # a fresh interpreter: pytest's own log handlers would hide Python's last-resort handler,
    # which prints a WARNING to stderr when no handler is found (the NullHandler is one)
    done = subprocess.run(
        [sys.executable, "-c", SILENT], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ran\n"
    assert done.stderr == ""


def test_a_compaction_logs_its_trigger_sizes_and_summarizer(
    info: pytest.LogCaptureFixture,
) -> None:
    cm = ContextManager(context_window=WINDOW, max_output_tokens=OUTPUT)
    events = cm.prepare(session(30)).events
    (started,) = only(events, CompactionStarted)
    (ended,) = only(events, CompactionEnded)
    assert isinstance(started, CompactionStarted) and isinstance(ended, CompactionEnded)
    assert ended.status == "compacted" and ended.summarizer
    (start_line,) = lines(info, "compaction_started")
    assert start_line.levelno == logging.INFO
    forced = ", forced" if started.forced else ""
    assert start_line.getMessage() == (
        f"compaction_started: trigger {started.trigger}{forced}: {started.tokens_before:,} "
        f"tokens in {started.messages_before} messages ({started.reason})"
    )
    (end_line,) = lines(info, "compaction_ended")
    assert end_line.levelno == logging.INFO
    assert end_line.getMessage().startswith(
        f"compaction_ended: compacted, trigger {ended.trigger}: "
        f"{ended.tokens_before:,} -> {ended.tokens_after:,} tokens, "
        f"{ended.messages_before} -> {ended.messages_after} messages, "
        f"summarizer {ended.summarizer}"
    )


def test_a_prune_logs_how_many_outputs_and_the_tokens_freed(
    info: pytest.LogCaptureFixture,
) -> None:
    cm = ContextManager(context_window=WINDOW, max_output_tokens=OUTPUT)
    (pruned,) = only(cm.prepare(session(30)).events, Pruned)
    assert isinstance(pruned, Pruned) and pruned.outputs > 0
    (line,) = lines(info, "pruned")
    freed = pruned.tokens_before - pruned.tokens_after
    assert line.levelno == logging.INFO
    assert line.getMessage() == (
        f"pruned: {pruned.outputs} tool outputs in {pruned.messages} messages, "
        f"{freed:,} tokens freed (context {pruned.context_before:,} -> {pruned.context_after:,})"
    )


def test_an_overflow_recovery_logs_its_stage_and_sizes(info: pytest.LogCaptureFixture) -> None:
    cm = ContextManager(context_window=WINDOW, max_output_tokens=OUTPUT)
    ctx = cm.prepare(session(6))
    assert not lines(info, "overflow_recovered")  # nothing recovered yet: no line
    recovered = only(cm.recover_overflow(reported_tokens=2 * ctx.tokens).events, OverflowRecovered)
    (event,) = recovered
    assert isinstance(event, OverflowRecovered) and event.reported
    (line,) = lines(info, "overflow_recovered")
    assert line.levelno == logging.INFO
    assert line.getMessage() == (
        f"overflow_recovered: stage {event.stage}, reported by the provider: "
        f"{event.tokens_before:,} -> {event.tokens_after:,} tokens "
        f"(input budget {event.input_budget:,})"
    )


def test_a_summarizer_fallback_is_a_warning_with_its_reason_and_no_key(
    info: pytest.LogCaptureFixture,
) -> None:
    cm = ContextManager(
        context_window=WINDOW, max_output_tokens=OUTPUT, summarizer=FailingSummarizer()
    )
    (fallback,) = only(cm.prepare(session(30)).events, SummarizerFallback)
    assert isinstance(fallback, SummarizerFallback)
    (line,) = lines(info, "summarizer_fallback")
    assert line.levelno == logging.WARNING
    assert line.getMessage().startswith(
        "summarizer_fallback: llm:failing failed (RuntimeError: upstream rejected key "
    )
    assert line.getMessage().endswith(f"; fell back to {fallback.fallback}")
    assert all(KEY not in r.getMessage() for r in info.records)


def test_no_line_holds_a_message_or_the_summary(info: pytest.LogCaptureFixture) -> None:
    cm = ContextManager(context_window=WINDOW, max_output_tokens=OUTPUT)
    ctx = cm.prepare(session(30))
    said = [r.getMessage() for r in info.records if r.name.startswith("abridged")]
    assert len(said) >= 3, said
    summary = next(m["content"] for m in ctx.messages if "Summary" in str(m.get("content")))
    for text in said:
        assert "Why does the queue back up?" not in text
        assert "processed batch" not in text  # the tool outputs
        assert summary not in text


def test_nothing_is_logged_below_the_level_listened_at(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="abridged")
    ContextManager(context_window=WINDOW, max_output_tokens=OUTPUT).prepare(session(30))
    assert [r for r in caplog.records if r.name.startswith("abridged")] == []


async def test_a_conversations_compaction_logs_with_its_conversation_id(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="abridged")
    with ProviderServer(context_window=8_192, max_output=1_024) as server:
        convo = await open_convo(store, make_model("openai", server), window=8_192)
        while convo.state.compactions == 0:
            await asyncio.wait_for(convo.send(f"More: {NOTE}"), HANG_GUARD)
            await asyncio.wait_for(convo.wait_idle(), HANG_GUARD)
            assert len(server.requests) < 20
    (stored,) = await store.compactions(convo.id)
    ended = [r for r in lines(caplog, "compaction_ended") if "compacted" in r.getMessage()]
    assert len(ended) == 1
    assert getattr(ended[0], "conversation_id", None) == convo.id
    assert f"{stored.record.tokens_before:,} -> " in ended[0].getMessage()


async def test_a_session_summary_that_falls_back_is_a_warning_with_its_reason(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="abridged")
    with ProviderServer() as server:
        convo = await open_convo(
            store, make_model("openai", server), summarizer=FailingSummarizer()
        )
        await convo.send(f"The release codename is BLUEFIN. {NOTE}")
        assert not lines(caplog, "summarizer_fallback")
        await convo.send("/new")  # the session left is summarized in the store's background
        await store.drain()
    (line,) = lines(caplog, "summarizer_fallback")
    assert line.levelno == logging.WARNING
    assert getattr(line, "conversation_id", None) == convo.id
    assert line.getMessage().startswith(
        "summarizer_fallback: llm:failing failed (RuntimeError: upstream rejected key "
    )
    assert line.getMessage().endswith("; fell back to extractive")
    said = [r.getMessage() for r in caplog.records]
    assert all(KEY not in text and "BLUEFIN" not in text for text in said), said


async def test_a_background_compaction_that_fails_is_a_warning(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="abridged")

    def broken(plan: object) -> None:
        raise RuntimeError(f"hook crashed with {KEY}")

    with ProviderServer(context_window=8_192, max_output=1_024) as server:
        convo = await Conversation.open(
            store,
            make_model("openai", server),
            system="s",
            context_window=8_192,
            max_output_tokens=1_024,
            summarizer="extractive",
            hooks=CompactionHooks(before_compact=broken),
            settings=ConversationSettings(debounce=0),
        )
        for _ in range(10):
            await asyncio.wait_for(convo.send(f"More: {NOTE}"), HANG_GUARD)
            await asyncio.wait_for(convo.wait_idle(), HANG_GUARD)
            if lines(caplog, "compaction_failed"):
                break
    assert convo.state.compactions == 0
    failed = lines(caplog, "compaction_failed")
    assert failed and all(r.levelno == logging.WARNING for r in failed)
    assert failed[0].getMessage().startswith("compaction_failed: RuntimeError: hook crashed with ")
    assert getattr(failed[0], "conversation_id", None) == convo.id
    assert all(KEY not in r.getMessage() for r in caplog.records)
