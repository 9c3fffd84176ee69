"""A conversation's context at a glance: tokens by part, how much the provider reported, the
meter's thresholds (what the service's ``/context`` and its context ring show)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from abridged.core.summary import summary_message

if TYPE_CHECKING:
    from abridged.runtime.state import ConversationCore

__all__ = ["AMBER_SHARE", "ContextOverview", "context_overview", "meter_state"]

AMBER_SHARE = 0.75
"""The meter turns amber at this share of the compaction trigger."""

MeterState = Literal["green", "amber", "red", "grey"]


def meter_state(tokens: int, trigger: int, *, known_window: bool = True) -> MeterState:
    """The ring's colour: grey when the window is unknown, red at the trigger, amber from
    ``AMBER_SHARE`` of it, green below.

    >>> meter_state(700, 1000), meter_state(800, 1000), meter_state(1000, 1000)
    ('green', 'amber', 'red')
    """
    if not known_window or trigger <= 0:
        return "grey"
    if tokens >= trigger:
        return "red"
    if tokens >= AMBER_SHARE * trigger:
        return "amber"
    return "green"


@dataclass(frozen=True, slots=True)
class ContextOverview:
    """The context the next call would send, by part (``system + tools + summary + messages ==
    total``); ``reported`` of the total is the provider's own count of the last call's context,
    the rest (``estimated``) abridged's calibrated estimate of what followed.

    ``window`` / ``input_budget`` / ``trigger`` / ``target`` are the budget's; ``window_known``
    is false when the window is abridged's conservative default (no registry entry, no probe).
    """

    window: int
    window_known: bool
    input_budget: int
    trigger: int
    target: int
    total: int
    system: int
    tools: int
    summary: int
    messages: int
    reported: int
    estimated: int
    message_count: int
    compactions: int
    auto_compact: bool

    @property
    def state(self) -> MeterState:
        """The meter's colour (``meter_state``)."""
        return meter_state(self.total, self.trigger, known_window=self.window_known)

    @property
    def share_of_trigger(self) -> float:
        """The context as a share of the trigger (1.0: compaction is due)."""
        return self.total / self.trigger if self.trigger > 0 else 0.0


def context_overview(convo: ConversationCore) -> ContextOverview:
    """The overview of ``convo``'s context now (no I/O)."""
    budget = convo.budget()
    total = convo.context_tokens()
    state = convo.state
    context = convo.context()
    count = convo.counter
    calibration = count.calibration
    system = calibration.apply(
        sum(count.message_tokens(m) for m in context if m.role == "system" and not m.is_summary)
    )
    summary = (
        calibration.apply(count.message_tokens(summary_message(state.summary)))
        if state.summary
        else 0
    )
    tools = min(budget.tools_tokens, max(total - system - summary, 0))
    messages = max(total - system - summary - tools, 0)
    report = convo.reported_context()
    reported = min(report, total) if report is not None else 0
    return ContextOverview(
        window=budget.context_window,
        window_known=convo.limits.known,
        input_budget=budget.input_budget,
        trigger=budget.trigger,
        target=budget.target,
        total=total,
        system=system,
        tools=tools,
        summary=summary,
        messages=messages,
        reported=reported,
        estimated=total - reported,
        message_count=sum(1 for m in context if m.role != "system"),
        compactions=state.compactions,
        auto_compact=budget.enabled,
    )
