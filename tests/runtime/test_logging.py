"""The library's log (``logging.getLogger("abridged")``): silent unless the application listens;
then one line per compaction decision (trigger and why, prune, fallback), no secret in any."""

from __future__ import annotations

import logging

import pytest

from abridged.core.protocols import Summary, SummaryRequest
from abridged.runtime import ContextManager
from tests.runtime.test_manager_settings import OUTPUT, WINDOW, session

KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8J9k0L1m2"


class FailingSummarizer:
    """A summarizer whose provider error quotes a key (as a misconfigured proxy's may)."""

    name = "llm:failing"

    async def summarize(self, request: SummaryRequest) -> Summary:
        raise RuntimeError(f"upstream rejected key {KEY}")


def test_silent_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("abridged").handlers)
    cm = ContextManager(context_window=WINDOW, max_output_tokens=OUTPUT)
    assert cm.prepare(session(30)).events
    assert capsys.readouterr().err == ""


def test_a_compaction_says_what_triggered_it_and_what_it_did(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="abridged")
    cm = ContextManager(context_window=WINDOW, max_output_tokens=OUTPUT)
    cm.prepare(session(30))
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("abridged")]
    assert any(line.startswith("compaction_started: Compacting: context ") for line in lines)
    assert any(line.startswith("pruned: ") for line in lines), lines
    assert any(line.startswith("compaction_ended: ") for line in lines), lines


def test_a_summarizer_fallback_is_a_warning_without_the_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="abridged")
    cm = ContextManager(
        context_window=WINDOW, max_output_tokens=OUTPUT, summarizer=FailingSummarizer()
    )
    cm.prepare(session(30))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings, [r.getMessage() for r in caplog.records]
    assert "summarizer_fallback: Summarizer llm:failing failed (RuntimeError" in (
        warnings[0].getMessage()
    )
    assert all(KEY not in r.getMessage() for r in caplog.records)
