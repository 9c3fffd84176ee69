"""The shape of a replay as users see it (``--json``, the HTTP API, the HTML report).

One pydantic model per thing shown: a model call (``StepReport``), a compaction
(``CompactionReport``), a session's and a run's totals (``Totals``, ``RunTotals``), a session
(``SessionReport``) and the whole run (``ReplayReport``). The field names are the ones the
README documents for ``abridged replay --json``; ``ReplayReport.to_json()`` is that object.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "Action",
    "BudgetReport",
    "CompactionReport",
    "LimitsReport",
    "PricingReport",
    "ReplayReport",
    "RunTotals",
    "SessionReport",
    "StepReport",
    "StoppedReport",
    "StoredReport",
    "Totals",
]

#: What a call did: sent the context as it was, pruned, compacted, recovered from an overflow,
#: or could not be made at all (``overflow``: the replay stopped there).
Action = Literal["send", "prune", "compact", "recover", "overflow"]


class _Shown(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StepReport(_Shown):
    """One model call of a replayed session: the context it got and what was done to it."""

    session: str
    call: int
    index: int | None
    context_tokens: int
    context_messages: int | None
    action: Action
    pruned: bool
    tokens_before: int | None
    tokens_after: int | None
    cached_tokens: int
    output_tokens: int
    cost: float | None
    recorded_context_tokens: int | None
    over_budget: bool
    over_window: bool
    events: list[str]


class CompactionReport(_Shown):
    """A compaction that made a summary, committed at call ``call``."""

    call: int
    trigger: str
    emergency: str | None
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    first_kept: int
    summarizer: str | None
    truncated: bool
    fallback_reason: str | None
    summary_usage: dict[str, Any] | None
    seconds: float
    summary: str


class StoppedReport(_Shown):
    """Where and why a replay could not go on (a context no compaction can fit)."""

    call: int
    reason: str
    tokens: int
    limit: int
    window: int
    stage: str | None = None


class StoredReport(_Shown):
    """What the store holds after a session's replay, checked against the engine's state."""

    conversation_id: str
    messages: int
    sessions: int
    compactions: int
    context_messages: int
    carry_from: int
    consistent: bool


class PricingReport(_Shown):
    """List prices in dollars per million tokens."""

    input: float | None
    output: float | None
    cache_read: float | None


class LimitsReport(_Shown):
    """The model's limits the session was replayed with, and where they came from."""

    context_window: int
    max_output: int
    source: str
    known: bool
    pricing: PricingReport | None


class BudgetReport(_Shown):
    """The budget the session's calls were planned against."""

    input_budget: int
    trigger: int
    target: int
    keep_recent: int
    summary_max: int
    output_reserve: int


class Totals(_Shown):
    """A session's figures (``overflows``: contexts over the window, which must be 0)."""

    calls: int
    turns: int
    messages: int
    prunes: int
    compactions: int
    recoveries: int
    max_context_tokens: int
    overflows: int
    over_budget: int
    input_tokens: int
    cached_tokens: int
    cache_hit: float
    output_tokens: int
    cost: float | None
    recorded_input_tokens: int | None
    seconds: float
    stopped: int
    hidden_prefix: int


class RunTotals(Totals):
    """The whole run's figures: the sessions' summed (largest context and hidden prefix: the
    largest), the models without prices named (``unpriced``), and the speed."""

    sessions: int
    unpriced: list[str]
    calls_per_second: float | None
    turns_per_second: float | None
    stored_consistent: bool


class SessionReport(_Shown):
    """One replayed session (a transcript): its limits, budget, compactions and totals."""

    id: str
    format: str
    model: str | None
    limits: LimitsReport
    budget: BudgetReport | None
    conversation_id: str
    stored: StoredReport
    stopped: StoppedReport | None
    compactions: list[CompactionReport]
    totals: Totals


class ReplayReport(_Shown):
    """A whole replay: every call (``steps``), every session, and the totals."""

    file: str
    format: str | None
    summarizer: str
    db: str | None
    settings: dict[str, Any]
    steps: list[StepReport]
    sessions: list[SessionReport]
    totals: RunTotals

    def to_json(self) -> dict[str, Any]:
        """The plain-data object ``--json`` prints and the HTTP API returns."""
        return self.model_dump(mode="json")
