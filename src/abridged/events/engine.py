"""What compaction did, as typed events with a human notification each (``event.text``).

Sizes are written with ``format_token_size`` (k = 1,024)::

    Compacted (157k -> 9.1k): system 1.8k, summary 3.2k, kept 2.7k, tools 1.4k; 9.1k/150k (6%)
    Tool outputs pruned (12.4k -> 2.1k, -83%)

Every event has a ``kind`` (stable, for code) and a ``text`` (for people); ``to_dict`` gives
plain data for logs and the HTTP service.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal, TypeAlias

from abridged.core.budget import format_token_size
from abridged.core.model import Usage

EndStatus: TypeAlias = Literal["compacted", "pruned", "cancelled", "failed", "nothing"]


def _share(tokens: int, budget: int) -> str:
    """``9.1k/150k (6%)``."""
    percent = round(100 * tokens / budget) if budget > 0 else 0
    return f"{format_token_size(tokens)}/{format_token_size(budget)} ({percent}%)"


def _arrow(before: int, after: int) -> str:
    return f"{format_token_size(before)} -> {format_token_size(after)}"


class _Event:
    """Shared behaviour: ``to_dict`` (plain data, with ``kind`` and ``text``)."""

    __slots__ = ()

    kind: str

    @property
    def text(self) -> str:  # pragma: no cover - every event overrides it
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """The event as plain data: its fields, ``kind`` and ``text``."""
        data = asdict(self)  # type: ignore[call-overload]
        return {"kind": self.kind, **data, "text": self.text}


@dataclass(frozen=True, slots=True)
class CompactionStarted(_Event):
    """A compaction starts: what triggered it and how big the context was."""

    trigger: str
    reason: str
    tokens_before: int
    messages_before: int
    forced: bool = False
    emergency: str | None = None
    kind: Literal["compaction_started"] = "compaction_started"

    @property
    def text(self) -> str:
        """``Compacting: context 9.1k >= trigger 8.8k``."""
        stage = f" (emergency: {self.emergency})" if self.emergency else ""
        return f"Compacting{stage}: {self.reason}"


@dataclass(frozen=True, slots=True)
class CompactionEnded(_Event):
    """A compaction ended: before/after tokens and messages, and where the tokens went.

    ``status``: ``compacted`` (a summary replaced older messages), ``pruned`` (only tool outputs
    were pruned), ``cancelled`` (by ``before_compact``), ``failed`` (no summary could be made:
    the history is kept as it was), ``nothing`` (nothing could be cut or pruned).
    """

    status: EndStatus
    trigger: str
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    system_tokens: int
    summary_tokens: int
    kept_tokens: int
    tools_tokens: int
    input_budget: int
    target: int
    reached_target: bool
    summarizer: str | None = None
    truncated: bool = False
    duration: float = 0.0
    detail: str | None = None
    kind: Literal["compaction_ended"] = "compaction_ended"

    @property
    def text(self) -> str:
        """``Compacted (157k -> 9.1k): system 1.8k, summary 3.2k, kept 2.7k, tools 1.4k; ...``."""
        share = _share(self.tokens_after, self.input_budget)
        if self.status == "compacted":
            parts = (
                f"system {format_token_size(self.system_tokens)}, "
                f"summary {format_token_size(self.summary_tokens)}, "
                f"kept {format_token_size(self.kept_tokens)}, "
                f"tools {format_token_size(self.tools_tokens)}"
            )
            flag = " (summary truncated)" if self.truncated else ""
            sizes = _arrow(self.tokens_before, self.tokens_after)
            return f"Compacted ({sizes}): {parts}; {share}{flag}"
        if self.status == "pruned":
            return f"Pruned ({_arrow(self.tokens_before, self.tokens_after)}); {share}"
        if self.status == "cancelled":
            return f"Compaction cancelled by before_compact; {share}"
        if self.status == "failed":
            why = f": {self.detail}" if self.detail else ""
            return f"Compaction failed{why}; history kept as it was; {share}"
        why = f": {self.detail}" if self.detail else ""
        return f"Nothing to compact{why}; {share}"


@dataclass(frozen=True, slots=True)
class Pruned(_Event):
    """Old tool outputs became placeholders: ``outputs`` of them, in ``messages`` messages.

    ``tokens_before``/``tokens_after`` are the tokens of those messages; ``context_before`` /
    ``context_after`` of the whole context.
    """

    outputs: int
    messages: int
    tokens_before: int
    tokens_after: int
    context_before: int
    context_after: int
    kind: Literal["pruned"] = "pruned"

    @property
    def text(self) -> str:
        """``Tool outputs pruned (12.4k -> 2.1k, -83%)``."""
        saved = self.tokens_before - self.tokens_after
        percent = round(100 * saved / self.tokens_before) if self.tokens_before else 0
        return f"Tool outputs pruned ({_arrow(self.tokens_before, self.tokens_after)}, -{percent}%)"


@dataclass(frozen=True, slots=True)
class CompactionCancelled(_Event):
    """``before_compact`` cancelled an automatic compaction."""

    trigger: str
    tokens: int
    kind: Literal["compaction_cancelled"] = "compaction_cancelled"

    @property
    def text(self) -> str:
        """``Compaction cancelled by before_compact (context 9.1k)``."""
        return f"Compaction cancelled by before_compact (context {format_token_size(self.tokens)})"


@dataclass(frozen=True, slots=True)
class CompactionBackoff(_Event):
    """A compaction missed the target: automatic compaction pauses for ``calls`` model calls."""

    tokens_after: int
    target: int
    calls: int
    failures: int
    kind: Literal["compaction_backoff"] = "compaction_backoff"

    @property
    def text(self) -> str:
        """``Compaction left 7.9k, above the target 5.5k: ... paused for 2 calls``."""
        plural = "s" if self.calls != 1 else ""
        return (
            f"Compaction left {format_token_size(self.tokens_after)}, above the target "
            f"{format_token_size(self.target)}: automatic compaction paused for {self.calls} "
            f"call{plural}"
        )


@dataclass(frozen=True, slots=True)
class SummarizerFallback(_Event):
    """The summarizer failed; ``fallback`` made the summary (``None``: no summary was made)."""

    summarizer: str
    fallback: str | None
    reason: str
    kind: Literal["summarizer_fallback"] = "summarizer_fallback"

    @property
    def text(self) -> str:
        """``Summarizer llm:x failed (timeout); the extractive summary was used``."""
        used = f"the {self.fallback} summary was used" if self.fallback else "no summary was made"
        return f"Summarizer {self.summarizer} failed ({self.reason}); {used}"


@dataclass(frozen=True, slots=True)
class OverflowRecovered(_Event):
    """The context did not fit (or the provider said so) and the emergency path shrank it."""

    tokens_before: int
    tokens_after: int
    input_budget: int
    stage: str
    reported: bool = False
    kind: Literal["overflow_recovered"] = "overflow_recovered"

    @property
    def text(self) -> str:
        """``Context overflow recovered (160k -> 40k, stage force); 40k/150k (27%)``."""
        source = ", reported by the provider" if self.reported else ""
        return (
            f"Context overflow recovered ({_arrow(self.tokens_before, self.tokens_after)}, "
            f"stage {self.stage}{source}); {_share(self.tokens_after, self.input_budget)}"
        )


@dataclass(frozen=True, slots=True)
class UsageUpdated(_Event):
    """The provider reported usage for a call; ``stale`` when it is ignored: the context it
    describes was compacted since, or it is more than the window holds (the window assumed is
    not the provider's)."""

    usage: Usage
    context_tokens: int
    input_budget: int
    stale: bool = False
    calibration: float = 1.0
    kind: Literal["usage_updated"] = "usage_updated"

    @property
    def text(self) -> str:
        """``Context 12.3k/150k (8%)``."""
        note = (
            " (stale: from before the last compaction or beyond the window, ignored)"
            if self.stale
            else ""
        )
        return f"Context {_share(self.context_tokens, self.input_budget)}{note}"


@dataclass(frozen=True, slots=True)
class HiddenPrefix(_Event):
    """The provider counts tokens the messages do not hold (a system prompt or tool definitions
    left out, as in agent logs): ``tokens`` of them, counted in every size and in the budget,
    never compacted; ``0`` when a later report no longer shows them (``previous``: the size
    known before)."""

    tokens: int
    previous: int = 0
    kind: Literal["hidden_prefix"] = "hidden_prefix"

    @property
    def text(self) -> str:
        """``The provider counts 26k tokens the messages do not hold ...``."""
        if self.tokens <= 0:
            return "The prefix the provider counted beyond the messages is gone"
        return (
            f"The provider counts {format_token_size(self.tokens)} tokens the messages do not "
            "hold (a system prompt or tool definitions left out? pass them, e.g. tools=): "
            "counted in the budget, never compacted"
        )


Event: TypeAlias = (
    CompactionStarted
    | CompactionEnded
    | Pruned
    | CompactionCancelled
    | CompactionBackoff
    | SummarizerFallback
    | OverflowRecovered
    | UsageUpdated
    | HiddenPrefix
)
"""Everything the compactor and the ``ContextManager`` report."""


def notifications(events: list[Event] | tuple[Event, ...]) -> list[str]:
    """The human text of each event, in order."""
    return [event.text for event in events]
