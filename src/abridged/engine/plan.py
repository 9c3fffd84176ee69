"""Compaction planning, pure: whether to compact, what to prune, where to cut, what to summarize.

``plan_compaction(history, budget=..., state=...)`` returns ``None`` when nothing needs doing,
else a ``CompactionPlan`` that ``abridged.engine.compaction.run_compaction`` carries out.
Cheapest step first:

1. **Prune** old tool outputs (``abridged.engine.prune``) from the prune boundary on, never in
   pinned steps. When that alone brings a ``tokens``-triggered context down to the target, the
   plan stops there: no summary, no model call.
2. **Cut** at a step boundary keeping ``keep_recent`` tokens verbatim, preferring a turn boundary
   (``abridged.core.turns.find_cut_point``); a ``messages`` trigger also keeps at most half of
   ``max_messages``. A cut inside a turn summarizes the turn's earlier part separately.
3. **Summarize** what the cut drops (pinned steps excepted: they are carried verbatim), folding
   the previous summary in (an ``update``), with the cumulative file operations.

On ``overflow`` (the context does not fit the input budget), a plan whose result would still not
fit escalates to the **emergency path** (``plan_emergency``): a forced cut with a small keep,
then cuts that drop ever more of the oldest steps, then the minimal context (system, summary,
pinned steps and the latest user message). ``ContextOverflowError`` when even that cannot fit.

The plan is deterministic: the same history, settings and state give the same plan.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal, TypeAlias

from abridged.core.budget import Budget, format_token_size
from abridged.core.model import Message
from abridged.core.protocols import FileOps, SummaryKind, SummaryRequest, ToolSpec
from abridged.core.summary import summary_message
from abridged.core.tokens import (
    REPLY_PRIMING,
    estimate_message_tokens,
    find_last_report,
    hybrid_context_tokens,
)
from abridged.core.turns import (
    CutPoint,
    MinimalCut,
    TokenCount,
    emergency_minimal,
    find_cut_point,
    head_length,
    is_pinned,
    step_spans,
)
from abridged.engine.compaction_settings import CompactionSettings, prune_settings
from abridged.engine.context import (
    SUMMARY_SOURCE,
    CompactionState,
    ContextView,
    build_view,
    leading_carried,
    pinned_indexes,
)
from abridged.engine.prune import PrunePlan, apply_prune, plan_prune
from abridged.engine.summarize.fileops import extract_file_ops
from abridged.engine.triggers import (
    MIN_EMERGENCY_SUMMARY_TOKENS,
    Trigger,
    choose_trigger,
    recent_step_tokens,
    trigger_reason,
)
from abridged.errors import ContextOverflowError

PlanAction: TypeAlias = Literal["prune", "summarize", "nothing"]
EmergencyStage: TypeAlias = Literal["force", "drop", "minimal"]

_NO_PRUNED: Mapping[int, Message] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """What a compaction will do; ``run_compaction`` carries it out. Indexes are history indexes
    except in ``prune`` and ``cut``, which are positions in the context (``state``'s layout).

    - ``action``: ``prune`` (tool outputs only), ``summarize`` (cut and summarize, after
      pruning), ``nothing`` (the trigger fired but nothing can be cut or pruned: ``detail``
      says why; carrying it out records the failure for the backoff).
    - ``trigger`` / ``reason``: what fired and why; ``forced``: ``before_compact`` cannot cancel
      it (overflow, emergency); ``emergency``: the emergency stage, if any.
    - ``state``: the state planned from.
    - ``tokens_before`` / ``messages_before``: the context before.
    - ``prune``: the prune plan (``None`` when nothing is pruned); ``pruned`` the messages it
      puts in place, by history index; ``prune_boundary`` the boundary after it.
    - ``cut``: the cut (a ``CutPoint``, or a ``MinimalCut`` on the emergency path's last stage).
    - ``first_kept``: the new cut (first verbatim tail message; the history length when nothing
      remains of the tail); ``first_kept_id``/``through_id``: ids of that message and of the one
      before it. ``carried``: history indexes sent verbatim before the tail after the cut, the first
      ``leading`` of them before the summary.
    - ``summarize``: history indexes folded into the summary before the split turn;
      ``turn_prefix``: those of the split turn's earlier part, folded into the same summary
      (its request is of kind ``turn_prefix``: the turn goes on). ``previous_summary``: folded
      in.
    - ``requests``: the summarizer requests (main first, then the turn prefix's).
    - ``file_ops``: the cumulative file operations after this compaction.
    - ``reported``: the size came from the provider's rejection (``plan_emergency``).
    - ``history_length`` / ``last_id``: the history planned on (its length, its last message's
      id), so that a result can be applied to that history grown (``rebase``).
    - ``base_tokens_after`` / ``messages_after``: the context after, without the new summary;
      ``summary_max_tokens``: the summary's ceiling; ``system_tokens`` the system messages'.
    """

    action: PlanAction
    trigger: Trigger
    reason: str
    state: CompactionState
    history_length: int
    tokens_before: int
    messages_before: int
    budget: Budget
    backoff_max_calls: int
    prune: PrunePlan | None = None
    pruned: Mapping[int, Message] = field(default_factory=lambda: _NO_PRUNED)
    prune_boundary: int = 0
    prune_tokens: tuple[int, int] = (0, 0)
    cut: CutPoint | MinimalCut | None = None
    first_kept: int = 0
    first_kept_id: str | None = None
    through_id: str | None = None
    carried: tuple[int, ...] = ()
    leading: int = 0
    summarize: tuple[int, ...] = ()
    turn_prefix: tuple[int, ...] = ()
    previous_summary: str | None = None
    file_ops: FileOps = field(default_factory=FileOps)
    requests: tuple[SummaryRequest, ...] = ()
    base_tokens_after: int = 0
    messages_after: int = 0
    summary_max_tokens: int = 0
    system_tokens: int = 0
    focus: str | None = None
    forced: bool = False
    emergency: EmergencyStage | None = None
    detail: str | None = None
    reported: bool = False
    last_id: str | None = None

    @property
    def manual(self) -> bool:
        """Whether the user asked for this compaction."""
        return self.trigger == "manual"

    @property
    def tokens_after_prune(self) -> int:
        """The context's tokens once the prune is applied (before any summary)."""
        return self.tokens_before - (self.prune_tokens[0] - self.prune_tokens[1])

    @property
    def main_request(self) -> SummaryRequest | None:
        """The request for the summary (of kind ``turn_prefix`` when the cut splits a turn)."""
        return self.requests[0] if self.requests else None


def context_tokens(messages: Sequence[Message], budget: Budget, count_tokens: TokenCount) -> int:
    """Estimated tokens of a context: its messages, the tool definitions and the reply priming."""
    return sum(count_tokens(m) for m in messages) + budget.tools_tokens + REPLY_PRIMING


def context_length(messages: Sequence[Message], state: CompactionState) -> int:
    """How many messages the context of ``messages`` under ``state`` holds (O(head))."""
    if not state.compacted:
        return len(messages)
    head = min(head_length(messages), state.cut)
    carried = sum(1 for i in state.carried if i >= head)
    return head + (state.summary is not None) + carried + len(messages) - state.cut


def plan_compaction(
    messages: Sequence[Message],
    *,
    budget: Budget,
    settings: CompactionSettings | None = None,
    state: CompactionState | None = None,
    count_tokens: TokenCount = estimate_message_tokens,
    tools: Sequence[ToolSpec] = (),
    focus: str | None = None,
    manual: bool = False,
    pinned: Collection[int] = (),
    context_tokens: int | None = None,
    prune_only: bool = False,
) -> CompactionPlan | None:
    """Plan the compaction of ``messages`` (the whole history) under ``state``, or ``None``.

    ``context_tokens`` is the context's size as the caller measured it (the provider's last
    report plus the estimate of what followed); without it, the size is measured from the usage
    carried by the history's messages since the last change of the context (``measure``), else
    estimated with ``count_tokens``. ``manual`` asks for a compaction now (with ``focus``
    instructions for the summary); ``pinned`` adds history indexes to pin. ``tools`` go into the
    summary requests (for the cache-reusing mode). See the module docstring for the steps; the
    triggers are in ``abridged.engine.triggers``.

    ``prune_only`` plans a prune now (``/prune``): old tool outputs from the prune boundary on,
    however little it frees, never a summary; ``None`` when there is nothing to prune.

    >>> from abridged.core.budget import compute_budget
    >>> history = [Message.system("s"), Message.user("hi"), Message.assistant("hello")]
    >>> plan_compaction(history, budget=compute_budget(16_384, 4_096)) is None
    True
    """
    settings = settings if settings is not None else CompactionSettings()
    state = state if state is not None else CompactionState()
    state.check(messages)
    view: ContextView | None = None
    if context_tokens is None:
        view = build_view(messages, state)
        size = measure(messages, view.messages, state, budget, count_tokens)
    else:
        size = context_tokens
    count = len(view.messages) if view is not None else context_length(messages, state)
    next_step = recent_step_tokens(messages, count_tokens, settings.headroom_steps)
    trigger: Trigger | None = "manual"
    if not prune_only:
        trigger = _trigger(
            size, count, next_step, budget=budget, settings=settings, state=state, manual=manual
        )
    if trigger is None:
        return None
    planner = _Planner(
        messages,
        view if view is not None else build_view(messages, state),
        budget=budget,
        settings=settings,
        state=state,
        count_tokens=count_tokens,
        tools=tools,
        focus=None if prune_only else focus,
        pinned=pinned,
        size=size,
        next_step=next_step,
    )
    return planner.prune_now() if prune_only else planner.plan(trigger)


def call_trigger(
    messages: Sequence[Message],
    *,
    budget: Budget,
    settings: CompactionSettings,
    state: CompactionState,
    count_tokens: TokenCount,
    context_tokens: int,
) -> Trigger | None:
    """The trigger ``plan_compaction`` would plan for with ``context_tokens`` (not manual, not
    prune only), without the plan: ``None`` when it would return ``None``. O(head + the last
    steps), so a caller can check on its event loop before it plans in a worker thread."""
    next_step = recent_step_tokens(messages, count_tokens, settings.headroom_steps)
    count = context_length(messages, state)
    return _trigger(context_tokens, count, next_step, budget=budget, settings=settings, state=state)


def _trigger(
    size: int,
    count: int,
    next_step: int,
    *,
    budget: Budget,
    settings: CompactionSettings,
    state: CompactionState,
    manual: bool = False,
) -> Trigger | None:
    """``choose_trigger`` with the state's backoff and calls: the one check of both
    ``plan_compaction`` and ``call_trigger``."""
    return choose_trigger(
        size,
        count,
        budget,
        settings,
        backoff=state.backoff,
        calls=state.calls,
        manual=manual,
        next_step_tokens=next_step,
    )


def plan_emergency(
    messages: Sequence[Message],
    *,
    budget: Budget,
    settings: CompactionSettings | None = None,
    state: CompactionState | None = None,
    count_tokens: TokenCount = estimate_message_tokens,
    tools: Sequence[ToolSpec] = (),
    pinned: Collection[int] = (),
    context_tokens: int | None = None,
    measured: int | None = None,
) -> CompactionPlan:
    """The emergency plan, for when the context does not fit (or the provider rejected it as
    too long).

    Goes straight to the emergency stages (see the module docstring). ``context_tokens`` is what
    the provider said the context held, when it said; ``measured`` the caller's own measure of
    it (the last usage report plus the estimate since), the one that found it too big. The
    estimates are scaled up to the larger, so that the result fits by that measure, and the
    plan's figures (``tokens_before``, its reason) are that measure. The plan is ``forced``:
    ``before_compact`` cannot cancel it. Raises ``ContextOverflowError`` when even the minimal
    context cannot fit.
    """
    settings = settings if settings is not None else CompactionSettings()
    state = state if state is not None else CompactionState()
    view = build_view(messages, state)
    estimated = _sum_context(view.messages, budget, count_tokens)
    size = max(estimated, context_tokens or 0, measured or 0)
    planner = _Planner(
        messages,
        view,
        budget=budget,
        settings=settings,
        state=state,
        count_tokens=count_tokens,
        tools=tools,
        focus=None,
        pinned=pinned,
        size=size,
    )
    return planner.emergency("overflow", reported=context_tokens is not None)


def _sum_context(messages: Sequence[Message], budget: Budget, count_tokens: TokenCount) -> int:
    return context_tokens(messages, budget, count_tokens)


def measure(
    history: Sequence[Message],
    context: Sequence[Message],
    state: CompactionState,
    budget: Budget,
    count_tokens: TokenCount,
) -> int:
    """The context's size: the newest usage report carried by a history message written since
    the last change of the context (``state.usage_boundary``), plus the estimate of the messages
    after it; without such a report, the estimate of the whole ``context``.

    A report from before the last prune or compaction describes a context that no longer
    exists: it never counts (so it can never trigger the next compaction).
    """
    report = find_last_report(history, boundary=state.usage_boundary)
    if report is None:
        return _sum_context(context, budget, count_tokens)
    index, tokens = report
    return hybrid_context_tokens(
        history, index, tokens, boundary=state.usage_boundary, estimate=count_tokens
    )


def _count_ratio(messages: Sequence[Message], count_tokens: TokenCount) -> float:
    """How much ``count_tokens`` counts over the plain estimate on ``messages`` (at least 1)."""
    plain = sum(estimate_message_tokens(m) for m in messages)
    counted = sum(count_tokens(m) for m in messages)
    return max(1.0, counted / plain) if plain else 1.0


def _pinned_units(messages: Sequence[Message], positions: Collection[int]) -> frozenset[int]:
    """``positions`` extended to their whole steps (a pinned tool result keeps its call)."""
    if not positions:
        return frozenset()
    steps = step_spans(messages)
    starts = [start for start, _end in steps]
    out: set[int] = set()
    for p in positions:
        out.add(p)
        k = bisect.bisect_right(starts, p) - 1
        if k >= 0 and steps[k][0] <= p < steps[k][1]:
            out.update(range(*steps[k]))
    return frozenset(out)


class _Planner:
    """One planning pass over a context view (private: ``plan_compaction``,
    ``plan_emergency``)."""

    def __init__(
        self,
        messages: Sequence[Message],
        view: ContextView,
        *,
        budget: Budget,
        settings: CompactionSettings,
        state: CompactionState,
        count_tokens: TokenCount,
        tools: Sequence[ToolSpec],
        focus: str | None,
        pinned: Collection[int],
        size: int,
        next_step: int = 0,
    ) -> None:
        self.messages = messages
        self.next_step = next_step
        self.view = view
        self.budget = budget
        self.settings = settings
        self.state = state
        self.count = count_tokens
        self.tools = tuple(tools)
        self.focus = focus
        self.size = size
        self.n = len(messages)
        sent = view.messages
        self.tokens = [count_tokens(m) for m in sent]
        self.counted = sum(self.tokens) + budget.tools_tokens + REPLY_PRIMING
        # How much the caller's measure exceeds the estimate (a provider's report): decisions
        # about fitting the input budget scale the estimates by it, never down.
        self.scale = max(1.0, size / self.counted) if self.counted else 1.0
        self.system_tokens = sum(self.tokens[: view.head])
        self.summary_overhead = count_tokens(summary_message(""))
        pins = pinned_indexes(
            messages, settings=settings, budget=budget, count_tokens=count_tokens, pinned=pinned
        )
        positions = {p for i in pins if (p := view.position(i)) is not None}
        positions.update(
            p for p in range(view.head, len(sent)) if is_pinned(sent[p]) and p not in positions
        )
        self.pin_positions = frozenset(positions)
        self.protected = _pinned_units(sent, positions)

    # -- the plans -------------------------------------------------------------------------------

    def _base(self, trigger: Trigger, action: PlanAction, **fields: object) -> CompactionPlan:
        view = self.view
        values: dict[str, object] = {
            "action": action,
            "trigger": trigger,
            "reason": trigger_reason(
                trigger,
                self.size,
                len(view.messages),
                self.budget,
                self.settings,
                next_step_tokens=self.next_step,
            ),
            "state": self.state,
            "history_length": self.n,
            "last_id": self.messages[-1].id if self.messages else None,
            "tokens_before": self.size,
            "messages_before": len(view.messages),
            "budget": self.budget,
            "backoff_max_calls": self.settings.backoff_max_calls,
            "prune_boundary": self.state.prune_boundary,
            "first_kept": self.state.cut,
            "system_tokens": self.system_tokens,
            "focus": self.focus,
            "forced": trigger == "overflow",
            "base_tokens_after": self.size,
            "messages_after": len(view.messages),
        }
        values.update(fields)
        return CompactionPlan(**values)  # type: ignore[arg-type]

    def plan(self, trigger: Trigger) -> CompactionPlan:
        prune = self._prune() if self.settings.prune_enabled else None
        working = apply_prune(self.view.messages, prune) if prune is not None else None
        sent: Sequence[Message] = working if working is not None else self.view.messages
        tokens = self._tokens_after_prune(prune, sent)
        if prune is not None and trigger in ("tokens", "headroom"):
            after = self.size - (sum(self.tokens) - sum(tokens))
            if after <= self.budget.target:
                return self._prune_only(trigger, prune, sent, tokens)
        cut = find_cut_point(
            sent,
            self.budget.keep_recent,
            self.count,
            min_split_turn_messages=self.settings.min_split_turn_messages,
            force=trigger in ("manual", "overflow"),
            pinned=self.pin_positions,
        )
        if trigger == "messages" and self.settings.max_messages is not None:
            cut = self._count_cut(sent, tokens, cut, self.settings.max_messages // 2)
        cut = self._reach_target(sent, tokens, cut, force=trigger in ("manual", "overflow"))
        if cut.none:
            if trigger == "overflow":
                return self.emergency(trigger, prune=prune, sent=sent, tokens=tokens)
            if prune is not None:
                return self._prune_only(trigger, prune, sent, tokens)
            return self._base(trigger, "nothing", detail=f"no cut: {cut.reason}")
        plan = self._summarize(trigger, prune, sent, tokens, cut)
        if trigger == "overflow" and not self._fits_plan(plan):
            return self.emergency(trigger, prune=prune, sent=sent, tokens=tokens)
        return plan

    def prune_now(self) -> CompactionPlan | None:
        """A prune asked for (``/prune``): no minimum saving, no summary."""
        prune = self._prune(force=True)
        if prune is None or not prune.pruned:
            return None
        sent = apply_prune(self.view.messages, prune)
        return self._prune_only("manual", prune, sent, self._tokens_after_prune(prune, sent))

    def emergency(
        self,
        trigger: Trigger,
        *,
        reported: bool = False,
        prune: PrunePlan | None = None,
        sent: Sequence[Message] | None = None,
        tokens: Sequence[int] | None = None,
    ) -> CompactionPlan:
        """Force with a small keep, then drop ever more of the oldest steps, then the minimal
        context; the first stage whose result fits wins."""
        if sent is None or tokens is None:
            prune = self._prune(force=True) if self.settings.prune_enabled else None
            sent = (
                apply_prune(self.view.messages, prune) if prune is not None else self.view.messages
            )
            tokens = self._tokens_after_prune(prune, sent)
        keep = max(1, int(self.budget.keep_recent * self.settings.emergency_keep_share))
        stage: EmergencyStage = "force"
        previous = -1
        while True:
            cut = find_cut_point(
                sent,
                keep,
                self.count,
                min_split_turn_messages=self.settings.min_split_turn_messages,
                force=True,
                pinned=self.pin_positions,
            )
            if not cut.none and cut.index != previous:
                previous = cut.index
                base = self._kept_tokens(cut.kept_indexes(len(sent)), tokens)
                if self._fits(base, MIN_EMERGENCY_SUMMARY_TOKENS):
                    plan = self._summarize(
                        trigger, prune, sent, tokens, cut, stage=stage, reported=reported
                    )
                    if self._fits_plan(plan):
                        return plan
            if keep == 0:
                break
            keep //= 2
            stage = "drop"
        # The last stage takes whatever room the minimal context leaves for its summary, down
        # to a line: a short summary within the budget beats a refusal.
        minimal = emergency_minimal(sent, pinned=self.pin_positions)
        base = self._kept_tokens(minimal.kept, tokens)
        if minimal.none:
            raise ContextOverflowError(
                "the context is already the minimal context (system, pinned messages and the "
                "latest user message: nothing in it can be dropped) and does not fit the input "
                "budget",
                tokens=self.size,
                limit=self.budget.input_budget,
                stage="minimal",
            )
        needed = self._needed(base, 1)
        if self._fits(base, 1):
            plan = self._summarize(
                trigger, prune, sent, tokens, minimal, stage="minimal", reported=reported
            )
            if self._fits_plan(plan):
                return plan
            # Nothing new to summarize (all before the cut is pinned): the context keeps the
            # summary it has, and that is what did not fit.
            needed = max(needed, self._needed(plan.base_tokens_after, plan.summary_max_tokens))
        # The figures are the check's own: the minimal context with a one-token summary, or the
        # plan that was made for it and did not fit.
        raise ContextOverflowError(
            "even the minimal context (system, summary, pinned messages and the latest user "
            "message) does not fit the input budget",
            tokens=needed,
            limit=self.budget.input_budget,
            stage="minimal",
        )

    # -- steps -----------------------------------------------------------------------------------

    def _prune(self, *, force: bool = False) -> PrunePlan | None:
        view = self.view
        settings = prune_settings(self.settings, self.budget)
        if force:
            settings = replace(settings, min_savings_tokens=0)
        if self.state.prune_boundary < view.cut:
            boundary = view.tail_start
        else:
            position = view.position(self.state.prune_boundary)
            boundary = position if position is not None else len(view.messages)
        boundary = max(boundary, view.head)
        plan = plan_prune(view.messages, settings, self.count, boundary=boundary)
        if plan.skipped is not None:
            return None
        if any(item.index in self.protected for item in plan.pruned):
            items = tuple(i for i in plan.pruned if i.index not in self.protected)
            if not items:
                return None
            plan = replace(plan, pruned=items)
            replaced = apply_prune(view.messages, plan)
            saved = sum(self.tokens[i] - self.count(replaced[i]) for i in plan.indexes)
            if saved < (settings.min_savings_tokens or 0) and not plan.forced:
                return None
            plan = replace(plan, tokens_after=plan.tokens_before - saved)
        return plan

    def _tokens_after_prune(self, prune: PrunePlan | None, sent: Sequence[Message]) -> list[int]:
        tokens = list(self.tokens)
        if prune is not None:
            for i in prune.indexes:
                tokens[i] = self.count(sent[i])
        return tokens

    def _prune_fields(self, prune: PrunePlan | None, sent: Sequence[Message]) -> dict[str, object]:
        if prune is None:
            return {}
        view = self.view
        pruned = {view.sources[i]: sent[i] for i in prune.indexes}
        before = sum(self.tokens[i] for i in prune.indexes)
        after = sum(self.count(sent[i]) for i in prune.indexes)
        position = prune.new_boundary
        boundary = view.sources[position] if position < len(view.sources) else self.n
        return {
            "prune": prune,
            "pruned": MappingProxyType(pruned),
            "prune_boundary": max(self.state.prune_boundary, boundary),
            "prune_tokens": (before, after),
        }

    def _prune_only(
        self, trigger: Trigger, prune: PrunePlan, sent: Sequence[Message], tokens: Sequence[int]
    ) -> CompactionPlan:
        fields = self._prune_fields(prune, sent)
        saved = sum(self.tokens) - sum(tokens)
        return self._base(trigger, "prune", base_tokens_after=self.size - saved, **fields)

    def _count_cut(
        self, sent: Sequence[Message], tokens: Sequence[int], cut: CutPoint, keep_messages: int
    ) -> CutPoint:
        """The later of ``cut`` and the cut keeping at most ``keep_messages`` messages."""
        by_count = find_cut_point(
            sent,
            max(1, keep_messages),
            lambda _m: 1,
            min_split_turn_messages=self.settings.min_split_turn_messages,
            force=True,
            pinned=self.pin_positions,
        )
        if by_count.none or (not cut.none and by_count.index <= cut.index):
            return cut
        kept = sum(tokens[by_count.index :])
        dropped = sum(tokens[by_count.head : by_count.index])
        return replace(by_count, kept_tokens=kept, dropped_tokens=dropped)

    def _reach_target(
        self, sent: Sequence[Message], tokens: Sequence[int], cut: CutPoint, *, force: bool
    ) -> CutPoint:
        """``cut``, or a later one when its kept tail, with a summary at its ceiling, would end
        above the target: the kept tail is cut first, before anything else gives (a compaction
        that misses its target only brings the next one, and then the emergency path, sooner).
        """
        budget, keep = self.budget, self.budget.keep_recent
        for _attempt in range(8):
            if cut.none:
                return cut
            base = self._kept_tokens(cut.kept_indexes(len(sent)), tokens)
            total = self.scale * (base + budget.summary_max + self.summary_overhead)
            if total <= budget.target or keep == 0:
                return cut
            excess = int((total - budget.target) / self.scale) + 1
            keep = max(0, min(keep, cut.kept_tokens) - excess)
            later = find_cut_point(
                sent,
                keep,
                self.count,
                min_split_turn_messages=self.settings.min_split_turn_messages,
                force=force,
                pinned=self.pin_positions,
            )
            if later.none or later.index <= cut.index:
                return cut
            cut = later
        return cut

    def _kept_positions(self, kept: Sequence[int]) -> list[int]:
        sources = self.view.sources
        return [p for p in kept if sources[p] != SUMMARY_SOURCE]

    def _kept_tokens(self, kept: Sequence[int], tokens: Sequence[int]) -> int:
        body = sum(tokens[p] for p in self._kept_positions(kept))
        return body + self.budget.tools_tokens + REPLY_PRIMING

    def _fits_plan(self, plan: CompactionPlan) -> bool:
        """Whether a plan makes a context that fits, its summary at its ceiling included."""
        if plan.action != "summarize":
            return False
        return self._fits(plan.base_tokens_after, plan.summary_max_tokens)

    def _needed(self, base_tokens: int, summary_tokens: int) -> int:
        """The size of a context of ``base_tokens`` and a summary of ``summary_tokens``, in the
        caller's measure (the estimates scaled by ``scale``): what every fit is checked by."""
        return math.ceil(self.scale * (base_tokens + summary_tokens + self.summary_overhead))

    def _fits(self, base_tokens: int, summary_tokens: int) -> bool:
        return self._needed(base_tokens, summary_tokens) <= self.budget.input_budget

    def _summarize(
        self,
        trigger: Trigger,
        prune: PrunePlan | None,
        sent: Sequence[Message],
        tokens: Sequence[int],
        cut: CutPoint | MinimalCut,
        *,
        stage: EmergencyStage | None = None,
        reported: bool = False,
    ) -> CompactionPlan:
        view, messages, state = self.view, self.messages, self.state
        sources = view.sources
        kept_all = cut.kept if isinstance(cut, MinimalCut) else cut.kept_indexes(len(sent))
        kept = self._kept_positions(kept_all)
        kept_set = set(kept)
        dropped = [
            p
            for p in range(view.head, len(sent))
            if p not in kept_set and sources[p] != SUMMARY_SOURCE
        ]
        prefix: list[int] = []
        if isinstance(cut, CutPoint) and cut.summarize_turn_prefix and cut.turn_prefix:
            prefix = [p for p in cut.turn_prefix if p not in kept_set]
        prefix_set = set(prefix)
        main = [p for p in dropped if p not in prefix_set]
        # The new tail starts at the cut, or at the old tail when the cut falls among the carried
        # messages; kept messages before it are carried (pinned steps, and carried messages the
        # cut did not pass).
        tail = len(sent) if isinstance(cut, MinimalCut) else max(cut.index, view.tail_start)
        first_kept = sources[tail] if tail < len(sent) else self.n
        carried = tuple(sources[p] for p in kept if view.head <= p < tail)
        base_after = self._kept_tokens(kept_all, tokens)
        fields = self._prune_fields(prune, sent)
        if not main and not prefix:
            return self._base(trigger, "nothing", detail="everything before the cut is pinned")
        main_messages = tuple(messages[sources[p]] for p in main)
        prefix_messages = tuple(messages[sources[p]] for p in prefix)
        file_ops = extract_file_ops((*main_messages, *prefix_messages), previous=state.file_ops)
        ceiling = self.budget.summary_max
        # Summarizers hold their ceiling by the plain estimate; this conversation's counter
        # (calibrated against the provider) may count more: ask for that much less.
        ratio = _count_ratio((*main_messages, *prefix_messages), self.count)
        if stage is not None or trigger == "overflow":
            # The room left, with a fifth to spare: summarizers measure their ceiling with
            # their own estimate, which may undercount against the caller's counter.
            room = int(self.budget.input_budget / self.scale) - base_after - self.summary_overhead
            floor = MIN_EMERGENCY_SUMMARY_TOKENS
            if stage == "minimal":  # the last stage: what room there is, down to a line
                floor = min(floor, max(1, room * 4 // 5))
            ceiling = max(floor, min(ceiling, room * 4 // 5))
        else:
            # When even the shortest tail leaves no room for a full summary under the target,
            # the summary gives next, down to three quarters of its ceiling, if that reaches the
            # target; when it would not (the tail alone, or a large pinned task, is too big),
            # shrinking it would only lose what it carries (measured: a half-size summary
            # dropped user facts that bench/retention.py plants).
            room = int(self.budget.target / self.scale) - base_after - self.summary_overhead
            if self.budget.summary_max * 3 // 4 <= room < ceiling:
                ceiling = room
        # One summary, always: the earlier history and, when the cut splits a turn, that turn's
        # earlier steps (``turn_prefix``: the summary says the turn goes on). A second block
        # for the split turn would be appended at every compaction of a long single-task run
        # and compete with the main summary for the ceiling.
        summarized = (*main_messages, *prefix_messages)
        kind: SummaryKind = "update" if state.summary is not None else "initial"
        request = SummaryRequest(
            messages=summarized,
            kind="turn_prefix" if prefix else kind,
            previous_summary=state.summary,
            file_ops=state.file_ops,
            max_tokens=max(1, int(ceiling / ratio)),
            focus=self.focus,
            # The context as last sent, up to the cut: a cache-reusing request reads it all from
            # the provider's cache and ends where the summary ends; the steps kept after the cut
            # (the newest, not cached yet) are sent with the next call, not twice.
            prefix=tuple(view.messages[:tail]),
            tools=self.tools,
            later=tuple(messages[sources[p]] for p in kept if p >= tail),
        )
        detail = None
        if stage is not None:
            detail = (
                f"emergency stage {stage}: keeps {format_token_size(base_after)} "
                f"of a {format_token_size(self.budget.input_budget)} input budget"
                + (" (the provider's count)" if reported else "")
            )
        plan = self._base(
            trigger,
            "summarize",
            cut=cut,
            first_kept=first_kept,
            first_kept_id=messages[first_kept].id if first_kept < self.n else None,
            through_id=messages[first_kept - 1].id if first_kept > 0 else None,
            carried=carried,
            leading=leading_carried(carried, view.head),
            summarize=tuple(sources[p] for p in main),
            turn_prefix=tuple(sources[p] for p in prefix),
            previous_summary=state.summary,
            file_ops=file_ops,
            requests=(request,),
            base_tokens_after=base_after,
            summary_max_tokens=ceiling,
            messages_after=len(kept),
            emergency=stage,
            detail=detail,
            reported=reported,
            **fields,
        )
        if stage is not None:
            plan = replace(plan, forced=True)
        return plan
