"""Context sizes between usage reports: the provider's last report plus the calibrated estimate.

The provider's usage is the ground truth: a report says how big the context of the call was.
``Sizer`` keeps the last report of the current epoch (a report from before a prune or compaction
describes a context that no longer exists, and is ignored) and queues calibration samples from
consecutive reports, learned from when sizes are next estimated. Without a report the context is
estimated: what is sent before the tail (system, summary, carried messages, the change made by
pruned outputs), plus the tail from the token sums, plus the tool definitions and the reply priming,
all scaled by the conversation's calibration.

**A hidden prefix.** Agent logs (Claude Code, Codex) and callers that leave out ``tools=`` send
the model a system prompt or tool definitions the messages do not hold; the provider counts
them. A ratio cannot explain an 11-token conversation reported at 26k tokens, so a report of a
whole context far above what any calibration could make of its estimate (``HIDDEN_RATIO`` times,
plus ``HIDDEN_MIN_TOKENS``) is read as a fixed offset, ``hidden``: counted in every size and in
the budget, never compacted (it is not in the messages), learned again from each first report
of an epoch, and forgotten when a later report no longer shows it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from abridged.core.calibration import MAX_FACTOR, Calibration
from abridged.core.model import Message, Reasoning, Usage
from abridged.core.summary import summary_message
from abridged.core.tokens import MESSAGE_OVERHEAD, OUTPUT_TRUST_RATIO, REPLY_PRIMING, TokenCounter
from abridged.core.turns import head_length
from abridged.engine.context import CompactionState
from abridged.runtime.token_sums import TokenSums

#: A whole context's report at least this many times its calibrated estimate (the calibration's
#: own bound: no tokenizer counts more than twice o200k) ...
HIDDEN_RATIO = MAX_FACTOR
#: ... and above it by this many tokens, holds a prefix the messages do not.
HIDDEN_MIN_TOKENS = 256


def known_output_tokens(message: Message, usage: Usage | None, estimated: int) -> int | None:
    """The provider's own count of a reply it produced, when it can be trusted: its visible
    output plus the message overhead (see ``abridged.core.tokens.known_message_tokens``);
    ``usage`` is the call's, used when the message carries none."""
    usage = message.usage or usage
    if usage is None or message.role != "assistant" or usage.output <= 0:
        return None
    if any(isinstance(p, Reasoning) for p in message.parts):
        return None
    visible = usage.output - usage.reasoning
    content = max(estimated - MESSAGE_OVERHEAD, 1)
    if visible <= 0 or not content / OUTPUT_TRUST_RATIO <= visible <= content * OUTPUT_TRUST_RATIO:
        return None
    return visible + MESSAGE_OVERHEAD


def tail_start(state: CompactionState) -> int:
    """The history index from which the context is the history itself (pruning aside)."""
    return state.cut if state.compacted else 0


@dataclass(frozen=True, slots=True)
class Report:
    """The provider's count (``tokens``) of the context of ``history[:length]`` in ``epoch``;
    ``usage``: the call's usage (``None`` for a count made without a call, such as Anthropic's
    token-counting endpoint)."""

    length: int
    epoch: int
    tokens: int
    usage: Usage | None = None


@dataclass(frozen=True, slots=True)
class _Sample:
    """Real tokens of ``history[start:end]`` (``start < 0``: of the whole context)."""

    start: int
    end: int
    real: int
    epoch: int
    usage: Usage | None


class Sizer:
    """Sizes of one conversation's contexts (see the module docstring)."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.report: Report | None = None
        self._samples: list[_Sample] = []
        self.base_raw = 0
        self.tools_raw = 0
        self.hidden = 0

    def record(
        self, usage: Usage, length: int, epoch: int, current: int, *, window: int | None = None
    ) -> bool:
        """Take a report for the context of ``history[:length]`` sent in ``epoch``; ``False``
        when it is stale (``epoch`` is not the ``current`` one) or more than ``window`` (the
        call fitted, so the provider's window is not the one assumed: its count says nothing
        of this one, and read as a hidden prefix it would fill the budget) and was ignored."""
        if epoch != current or (window is not None and usage.context_tokens > window):
            return False
        previous = self.report
        if previous is not None and previous.epoch == epoch and previous.length < length:
            real = usage.context_tokens - previous.tokens
            self._samples.append(_Sample(previous.length, length, real, epoch, previous.usage))
        elif previous is None or previous.epoch != epoch:
            self._samples.append(_Sample(-1, length, usage.context_tokens, epoch, None))
        self.report = Report(length, epoch, usage.context_tokens, usage)
        return True

    @property
    def whole_pending(self) -> bool:
        """Whether a first report of an epoch (a whole context's size) waits to be learned."""
        return any(s.start < 0 for s in self._samples)

    def forget(self, length: int | None = None) -> None:
        """Drop the report and samples (only those beyond ``length`` when given)."""
        if length is None:
            self.report = None
            self._samples.clear()
            return
        if self.report is not None and self.report.length > length:
            self.report = None
        self._samples = [s for s in self._samples if s.end <= length]

    def _report_for(self, state: CompactionState, length: int) -> Report | None:
        report = self.report
        if report is None or report.epoch != state.epoch or report.length > length:
            return None
        return report

    def upper(self, state: CompactionState, sums: TokenSums) -> int:
        """An upper bound of the current context's size, estimating nothing new (O(1))."""
        n = sums.length
        report = self._report_for(state, n)
        if report is not None:
            return report.tokens + math.ceil(MAX_FACTOR * sums.upper(report.length, n))
        raw = self.base_raw + sums.upper(tail_start(state), n) + self.tools_raw + REPLY_PRIMING
        return math.ceil(MAX_FACTOR * raw) + self.hidden

    def exact(
        self, state: CompactionState, length: int, history: Sequence[Message], sums: TokenSums
    ) -> int:
        """The size of the context of ``history[:length]``: the report plus the calibrated
        estimate since, else the calibrated estimate (estimating what was only bounded)."""
        self.learn(state, history, sums)
        cal = self.counter.calibration
        length = min(length, sums.length)
        report = self._report_for(state, length)
        if report is not None:
            rest, known = report.length, 0
            if rest < length and history[rest].role == "assistant":
                estimate = sums.exact(rest, rest + 1)
                exact = known_output_tokens(history[rest], report.usage, estimate)
                if exact is not None:
                    known, rest = exact, rest + 1
            return report.tokens + known + cal.apply(sums.exact(rest, length))
        start = min(tail_start(state), length)
        raw = self.base_raw + sums.exact(start, length)
        return cal.apply(raw + self.tools_raw + REPLY_PRIMING) + self.hidden

    def learn(self, state: CompactionState, history: Sequence[Message], sums: TokenSums) -> None:
        """Estimate what was only bounded, then learn from the queued reports."""
        sums.materialize(history)
        if not self._samples:
            return
        cal = self.counter.calibration
        for sample in self._samples:
            if sample.epoch != state.epoch or sample.end > sums.length:
                continue
            if sample.start < 0:  # the first report of an epoch: the whole context
                start = min(tail_start(state), sample.end)
                whole = self.base_raw + sums.exact(start, sample.end)
                cal = self._learn_whole(cal, sample.real, whole + self.tools_raw + REPLY_PRIMING)
                continue
            start, real = sample.start, sample.real
            if start < sample.end and history[start].role == "assistant":
                estimate = sums.exact(start, start + 1)
                exact = known_output_tokens(history[start], sample.usage, estimate)
                if exact is not None:
                    real -= exact
                    start += 1
                    cal = cal.update(exact - MESSAGE_OVERHEAD, estimate - MESSAGE_OVERHEAD)
            cal = cal.update(real, sums.exact(start, sample.end))
        self.counter.calibration = cal
        self._samples.clear()

    def _learn_whole(self, cal: Calibration, real: int, estimated: int) -> Calibration:
        """Learn from a whole context's report: the hidden prefix when the report is beyond
        any ratio, else the ratio of what the messages cost (the known prefix apart)."""
        expected = cal.apply(estimated)
        if real >= HIDDEN_RATIO * expected + HIDDEN_MIN_TOKENS:
            self.hidden = real - expected
            return cal
        rest = real - self.hidden
        if self.hidden and rest * HIDDEN_RATIO < expected:  # the prefix is no longer there
            self.hidden, rest = 0, real
        return cal.update(rest, estimated)

    def rebase(self, state: CompactionState, history: Sequence[Message], sums: TokenSums) -> None:
        """Recompute what is sent before the tail, after the state or the head changed."""
        sums.materialize(history)
        tokens = self.counter.message_tokens
        base = 0
        if state.compacted:
            head = min(head_length(history), state.cut)
            base += sums.exact(0, head)
            if state.summary is not None:
                base += tokens(summary_message(state.summary))
            base += sum(sums.exact(i, i + 1) for i in state.carried if i >= head)
        n = sums.length
        for index, message in state.pruned.items():
            if index < n:
                base += tokens(message) - sums.exact(index, index + 1)
        self.base_raw = base
