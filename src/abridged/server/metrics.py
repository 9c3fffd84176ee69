"""The service's Prometheus metrics: turns, compactions, tokens saved, summarizer latency,
overflow recoveries, compare-and-swap conflicts, turn leases.

Each application gets its own registry (no process-wide global). With several uvicorn workers,
``abridged serve`` sets ``PROMETHEUS_MULTIPROC_DIR`` and ``/metrics`` sums every worker's
values (prometheus_client's multiprocess mode); with one worker the registry is read directly.
"""

from __future__ import annotations

import os

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import multiprocess as _multiprocess

from abridged.events.engine import CompactionEnded, Event, OverflowRecovered, Pruned
from abridged.events.runtime import ConversationEvent, Notice

__all__ = ["CONTENT_TYPE", "ServiceMetrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


class ServiceMetrics:
    """The counters of one service process (see the module docstring)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.turns = Counter("abridged_turns", "Turns run, by outcome", ["outcome"], registry=r)
        self.turn_seconds = Histogram(
            "abridged_turn_seconds", "Duration of a turn (lease held)", registry=r
        )
        self.compactions = Counter(
            "abridged_compactions", "Compactions committed, by trigger", ["trigger"], registry=r
        )
        self.summary_tokens_saved = Counter(
            "abridged_summary_tokens_saved",
            "Context tokens removed by compactions (before minus after)",
            registry=r,
        )
        self.prune_tokens_saved = Counter(
            "abridged_prune_tokens_saved", "Context tokens removed by pruning", registry=r
        )
        self.summarizer_seconds = Histogram(
            "abridged_summarizer_seconds",
            "Duration of a compaction (summarization included)",
            registry=r,
        )
        self.overflow_recoveries = Counter(
            "abridged_overflow_recoveries", "Emergency recoveries from an overflow", registry=r
        )
        self.cas_conflicts = Counter(
            "abridged_cas_conflicts",
            "Compare-and-swaps lost to another writer (re-read and retried)",
            registry=r,
        )
        self.lease_takeovers = Counter(
            "abridged_lease_takeovers",
            "Turn leases taken over after their holder's lease expired",
            registry=r,
        )
        self.lease_waits = Counter(
            "abridged_lease_waits", "Messages that waited for another turn (queued)", registry=r
        )
        self.lease_conflicts = Counter(
            "abridged_lease_conflicts", "Sends refused with 409 (?queue=false)", registry=r
        )
        self.active_turns = Gauge(
            "abridged_active_turns",
            "Turns running now",
            registry=r,
            multiprocess_mode="livesum",
        )
        self._cas_seen = 0

    def observe_event(self, event: ConversationEvent) -> None:
        """Count what a conversation reported (its engine events)."""
        if isinstance(event, Notice) and event.event is not None:
            self.observe_engine(event.event)

    def observe_engine(self, event: Event) -> None:
        """Count one engine event."""
        if isinstance(event, CompactionEnded) and event.status == "compacted":
            self.compactions.labels(trigger=event.trigger).inc()
            self.summary_tokens_saved.inc(max(event.tokens_before - event.tokens_after, 0))
            self.summarizer_seconds.observe(max(event.duration, 0.0))
        elif isinstance(event, Pruned):
            self.prune_tokens_saved.inc(max(event.context_before - event.context_after, 0))
        elif isinstance(event, OverflowRecovered):
            self.overflow_recoveries.inc()

    def observe_store(self, conflicts: int) -> None:
        """Add the store's lost compare-and-swaps since the last call."""
        if conflicts > self._cas_seen:
            self.cas_conflicts.inc(conflicts - self._cas_seen)
            self._cas_seen = conflicts

    def render(self) -> bytes:
        """The Prometheus text of every worker (multiprocess) or of this one."""
        directory = _multiprocess_dir()
        if directory is None:
            return generate_latest(self.registry)
        merged = CollectorRegistry()
        _multiprocess.MultiProcessCollector(merged, path=directory)  # type: ignore[no-untyped-call]
        return generate_latest(merged)
