"""Tests of the compaction events: their human text in the design's style, and plain data."""

from __future__ import annotations

from abridged.core.model import Usage
from abridged.events.engine import (
    CompactionBackoff,
    CompactionCancelled,
    CompactionEnded,
    CompactionStarted,
    OverflowRecovered,
    Pruned,
    SummarizerFallback,
    UsageUpdated,
    notifications,
)

K = 1_024


def ended(**changes: object) -> CompactionEnded:
    values: dict[str, object] = {
        "status": "compacted",
        "trigger": "tokens",
        "tokens_before": 157 * K,
        "tokens_after": 9_318,
        "messages_before": 412,
        "messages_after": 9,
        "system_tokens": 1_843,
        "summary_tokens": 3_277,
        "kept_tokens": 2_764,
        "tools_tokens": 1_434,
        "input_budget": 150 * K,
        "target": 75 * K,
        "reached_target": True,
    }
    values.update(changes)
    return CompactionEnded(**values)  # type: ignore[arg-type]


def test_the_compacted_notification_is_the_designs() -> None:
    assert ended().text == (
        "Compacted (157k -> 9.1k): system 1.8k, summary 3.2k, kept 2.7k, tools 1.4k; 9.1k/150k (6%)"
    )


def test_a_truncated_summary_is_flagged() -> None:
    assert ended(truncated=True).text.endswith("(summary truncated)")


def test_the_pruned_notification_is_the_designs() -> None:
    event = Pruned(
        outputs=7,
        messages=7,
        tokens_before=12_698,
        tokens_after=2_150,
        context_before=60_000,
        context_after=49_452,
    )
    assert event.text == "Tool outputs pruned (12.4k -> 2.1k, -83%)"


def test_every_status_reads_as_a_sentence() -> None:
    assert ended(status="pruned").text.startswith("Pruned (157k -> 9.1k); 9.1k/150k")
    assert ended(status="cancelled").text.startswith("Compaction cancelled")
    failed = ended(status="failed", detail="TimeoutError: slow")
    assert failed.text.startswith("Compaction failed: TimeoutError: slow; history kept")
    assert ended(status="nothing", detail="no cut").text.startswith("Nothing to compact: no cut")


def test_other_events_read_as_sentences() -> None:
    started = CompactionStarted("tokens", "context 9.1k >= trigger 8.8k", 9_318, 40)
    assert started.text == "Compacting: context 9.1k >= trigger 8.8k"
    assert "emergency: minimal" in CompactionStarted("overflow", "x", 1, 1, True, "minimal").text
    backoff = CompactionBackoff(tokens_after=8_090, target=5_632, calls=2, failures=2)
    assert backoff.text == (
        "Compaction left 7.9k, above the target 5.5k: automatic compaction paused for 2 calls"
    )
    assert CompactionBackoff(8_090, 5_632, 1, 1).text.endswith("for 1 call")
    assert CompactionCancelled("tokens", 9_318).text.endswith("(context 9.1k)")
    fallback = SummarizerFallback("llm:gpt-x", "extractive", "TimeoutError: slow")
    assert fallback.text == (
        "Summarizer llm:gpt-x failed (TimeoutError: slow); the extractive summary was used"
    )
    assert "no summary was made" in SummarizerFallback("llm:gpt-x", None, "down").text
    recovered = OverflowRecovered(160 * K, 40 * K, 150 * K, "force", reported=True)
    assert recovered.text == (
        "Context overflow recovered (160k -> 40k, stage force, reported by the provider); "
        "40k/150k (27%)"
    )
    usage = UsageUpdated(Usage(input=12_595), 12_595, 150 * K, calibration=1.1)
    assert usage.text == "Context 12.3k/150k (8%)"
    assert "stale" in UsageUpdated(Usage(input=5), 5, 150 * K, stale=True).text


def test_events_as_plain_data() -> None:
    data = ended().to_dict()
    assert data["kind"] == "compaction_ended" and data["text"] == ended().text
    assert data["tokens_after"] == 9_318
    usage = UsageUpdated(Usage(input=10, cache_read=5), 15, 1_000).to_dict()
    assert usage["usage"] == {
        "input": 10,
        "output": 0,
        "cache_read": 5,
        "cache_write": 0,
        "reasoning": 0,
    }
    assert notifications([ended()]) == [ended().text]
