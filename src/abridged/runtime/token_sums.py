"""Running token sums over a growing history: exact estimates where needed, bounds elsewhere.

A ``ContextManager`` must decide, at every call, whether the context reached the trigger, in
O(new messages). ``TokenSums`` keeps prefix sums of the (uncalibrated) estimate of every history
message, so any range costs O(1). Estimating a message means tokenizing its text, which is the
dominant cost of a call; while the context is far below the trigger an upper bound is enough to
know that nothing needs doing, so new messages are only *bounded* (``token_upper_bound``: a few
``len`` calls) and estimated later, all at once, when a decision needs the exact figure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from abridged.core.model import Message


class TokenSums:
    """Prefix sums of estimates for ``history[:estimated]`` and of upper bounds after it.

    ``estimate`` counts one message (the conversation's ``TokenCounter.message_tokens``);
    ``bound`` is an upper bound of it. The sums follow a history list that only grows, or is
    truncated (``truncate``) when the caller edits earlier messages.
    """

    def __init__(self, estimate: Callable[[Message], int], bound: Callable[[Message], int]) -> None:
        self._estimate = estimate
        self._bound = bound
        self._sums: list[int] = [0]
        self._bounds: list[int] = [0]
        self.length = 0

    @property
    def estimated(self) -> int:
        """How many leading messages have an exact estimate."""
        return len(self._sums) - 1

    def extend(self, messages: Sequence[Message]) -> None:
        """Account for messages appended to the history (bounded, not yet estimated)."""
        total = self._bounds[-1]
        bounds = self._bounds
        bound = self._bound
        for message in messages:
            total += bound(message)
            bounds.append(total)
        self.length += len(messages)

    def materialize(self, history: Sequence[Message]) -> None:
        """Estimate every message not estimated yet (``history`` is the list followed)."""
        start = self.estimated
        if start >= self.length:
            return
        sums = self._sums
        total = sums[-1]
        estimate = self._estimate
        for index in range(start, self.length):
            total += estimate(history[index])
            sums.append(total)
        self._bounds = [0]

    def truncate(self, length: int) -> None:
        """Forget the messages from ``length`` on (the history was truncated to it)."""
        if length >= self.length:
            return
        estimated = self.estimated
        if length <= estimated:
            del self._sums[length + 1 :]
            self._bounds = [0]
        else:
            keep = length - estimated
            del self._bounds[keep + 1 :]
        self.length = length

    def exact(self, start: int, end: int) -> int:
        """The estimate of ``history[start:end]``; requires ``end <= estimated``."""
        return self._sums[end] - self._sums[start]

    def upper(self, start: int, end: int | None = None) -> int:
        """An upper bound of ``history[start:end]`` (exact where estimated), in O(1)."""
        end = self.length if end is None else end
        if start >= end:
            return 0
        estimated = self.estimated
        total = 0
        if start < estimated:
            total += self._sums[min(end, estimated)] - self._sums[start]
        if end > estimated:
            first = max(start, estimated) - estimated
            total += self._bounds[end - estimated] - self._bounds[first]
        return total
