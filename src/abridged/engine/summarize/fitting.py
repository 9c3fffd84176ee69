"""Fitting a list of entries (the user's messages of a summary) into a token budget, in
O(n log n).

``fit_entries`` water-fills: every middle entry is clipped to a common level, as high as the
budget allows but not below ``entry_floor_tokens``, before the first and last entries (the
conversation's task and its newest request) are touched; when that is not enough, every entry is
clipped alike. When clipping would leave entries shorter than ``min_entry_tokens`` (too short to
say anything), the longest middle entries are left out (``None``) instead, one at a time, and
each run of left-out entries costs ``omission_note_tokens`` (the note that says so).

Leaving out one entry at a time and recomputing every level is quadratic. Here the middle entries
are sorted once (the longest first, the oldest first among equals: the order they are left out
in); the kept ones are then always a prefix of the ascending order, so one table of prefix sums
answers "how many tokens would the kept entries take at level L" with one bisection. A lower
bound skips every count of left-out entries that cannot be enough, and a sweep from there keeps
the runs of left-out entries (and so the notes' cost) up to date in O(1) per entry left out.
The result is the same as that of the one-at-a-time loop, entry for entry.

Pure: no I/O; ``size`` (tokens of a text) and ``clip`` (a text clipped to about a number of
tokens) are the caller's, so that it can cache them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate, pairwise

__all__ = ["EntryFitter", "fit_entries", "water_level"]

#: The level of an entry that is not clipped.
_UNCLIPPED = 10**9
#: A clipped entry is clipped to one token less than its level (the bullet), never below this.
_MIN_CLIP = 8


def water_level(sizes: Sequence[int], available: int, floor: int) -> int:
    """The largest level ``L >= floor`` with ``sum(min(s, L) for s in sizes) <= available``;
    ``floor`` when there is none, the largest size when everything fits (``floor`` when
    ``sizes`` is empty). O(n log n).

    >>> water_level([10, 20, 30], 45, 5), water_level([10, 20, 30], 100, 5)
    (17, 30)
    """
    ascending = sorted(sizes)
    return _Levels(ascending).level(len(ascending), available, floor)


class _Levels:
    """Water levels over the ``p`` smallest of some sizes (``ascending``), for any ``p``."""

    __slots__ = ("ascending", "prefix")

    def __init__(self, ascending: list[int]) -> None:
        self.ascending = ascending
        self.prefix = [0, *accumulate(ascending)]

    def total(self, p: int, level: int) -> int:
        """``sum(min(s, level))`` over the ``p`` smallest sizes (O(log p))."""
        below = bisect_right(self.ascending, level, 0, p)
        return self.prefix[below] + (p - below) * level

    def level(self, p: int, available: int, floor: int) -> int:
        """``water_level`` of the ``p`` smallest sizes (O(log p))."""
        if p == 0:
            return floor
        ascending, prefix = self.ascending, self.prefix
        if prefix[p] <= available:
            return ascending[p - 1]
        if self.total(p, floor) > available:
            return floor
        # The largest j whose size, as the level, still fits: the level lies between
        # ascending[j] and ascending[j + 1], where the j + 1 smallest count whole.
        lo, hi = -1, p - 1  # total(ascending[p - 1]) = prefix[p] > available
        while lo + 1 < hi:
            mid = (lo + hi) // 2
            if prefix[mid + 1] + (p - mid - 1) * ascending[mid] <= available:
                lo = mid
            else:
                hi = mid
        whole = lo + 1
        return max(floor, (available - prefix[whole]) // (p - whole))


def fit_entries(
    texts: Sequence[str],
    budget: int,
    *,
    size: Callable[[str], int],
    clip: Callable[[str, int], str],
    entry_floor_tokens: int,
    min_entry_tokens: int,
    omission_note_tokens: int,
    protected_ends: bool = True,
) -> list[str | None]:
    """``texts`` within about ``budget`` tokens: each kept (clipped or whole), or ``None`` when
    left out (see the module docstring; ``EntryFitter`` fits the same texts to many budgets).

    Each entry costs ``size(text) + 1`` (its bullet). Middle entries are water-filled down to
    ``entry_floor_tokens``, then every entry alike (the first and last too); while that leaves a
    clipped entry below ``min_entry_tokens``, the longest middle entry (the oldest among equals)
    is left out, each run of left-out entries costing ``omission_note_tokens``. A clipped entry
    is ``clip(text, max(level - 1, 8))``. With ``protected_ends=False`` the first and last
    entries are middle entries like the others. O(n log n) besides ``size`` and ``clip``.

    >>> texts = ["a" * 40, "b" * 400, "c" * 40, "d" * 200, "e" * 40]  # 10, 100, 10, 50, 10
    >>> def fit(budget):
    ...     out = fit_entries(texts, budget, size=lambda t: len(t) // 4,
    ...         clip=lambda t, n: t[: 4 * n], entry_floor_tokens=8, min_entry_tokens=8,
    ...         omission_note_tokens=2)
    ...     return [len(e) // 4 if e is not None else None for e in out]
    >>> fit(100), fit(60), fit(40), fit(30)
    ([10, 32, 10, 32, 10], [10, 12, 10, 12, 10], [8, 8, 8, 8, 8], [8, None, 8, None, 8])
    """
    fitter = EntryFitter(
        texts,
        size=size,
        clip=clip,
        entry_floor_tokens=entry_floor_tokens,
        min_entry_tokens=min_entry_tokens,
        omission_note_tokens=omission_note_tokens,
        protected_ends=protected_ends,
    )
    return fitter.fit(budget)


class EntryFitter:
    """``fit_entries`` for one list of texts, at as many budgets as needed: the sizes, the order
    entries are left out in and the prefix sums are computed once (O(n log n)); each ``fit``
    then costs O(n) at C speed plus O((k + s) log n) for k kept entries and s entries left out
    beyond the lower bound, besides ``clip``.

    >>> fitter = EntryFitter(["a" * 40, "b" * 400, "c" * 40], size=lambda t: len(t) // 4,
    ...     clip=lambda t, n: t[: 4 * n], entry_floor_tokens=8, min_entry_tokens=10,
    ...     omission_note_tokens=2)
    >>> [[len(e) // 4 if e else None for e in fitter.fit(b)] for b in (200, 40, 30)]
    [[10, 100, 10], [10, 17, 10], [10, None, 10]]
    """

    def __init__(
        self,
        texts: Sequence[str],
        *,
        size: Callable[[str], int],
        clip: Callable[[str, int], str],
        entry_floor_tokens: int,
        min_entry_tokens: int,
        omission_note_tokens: int,
        protected_ends: bool = True,
    ) -> None:
        self.texts = list(texts)
        self.clip = clip
        self.floor = entry_floor_tokens
        self.least = min_entry_tokens
        self.note = omission_note_tokens
        n = self.n = len(self.texts)
        sizes = self.sizes = [size(t) + 1 for t in self.texts]  # + the bullet
        self.whole = sum(sizes)
        ends = {0, n - 1} if protected_ends and n else set()
        self.protected = sorted(ends)
        middle = [i for i in range(n) if i not in ends]
        # Left out longest first, the oldest first among equals: the kept ones are a prefix.
        middle.sort(key=lambda i: (sizes[i], -i))
        self.middle = middle
        self.levels = _Levels([sizes[i] for i in middle])
        self.fixed_sizes = [sizes[i] for i in self.protected]
        self.fixed = sum(self.fixed_sizes)
        self.largest_fixed = max(self.fixed_sizes, default=0)
        self.smallest = min(sizes, default=0)

    def _fixed_total(self, level: int) -> int:
        return sum(min(s, level) for s in self.fixed_sizes)

    def _levels_at(self, p: int, limit: int) -> tuple[int, int]:
        """The clip levels of the middle entries and of the first and last, with the ``p``
        smallest middle entries kept and ``limit`` tokens: the middle ones water-filled down to
        the floor, then every entry alike."""
        levels, fixed = self.levels, self.fixed
        middle_level = levels.level(p, limit - fixed, self.floor) if p else _UNCLIPPED
        if fixed + (levels.total(p, middle_level) if p else 0) <= limit:
            return middle_level, _UNCLIPPED

        def total(level: int) -> int:  # every entry alike at `level`, the middle ones capped
            return self._fixed_total(level) + (
                levels.total(p, min(middle_level, level)) if p else 0
            )

        top = max(self.largest_fixed, min(levels.ascending[p - 1], middle_level) if p else 0)
        # water_level(capped sizes, limit, 1): the total of everything is above `limit` here.
        common = 1
        if total(1) <= limit:
            lo, hi = 1, top
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if total(mid) <= limit:
                    lo = mid
                else:
                    hi = mid - 1
            common = lo
        return min(middle_level, common), common

    def _stops(self, p: int, limit: int) -> bool:
        """Whether no kept entry would be clipped below ``least`` (or no middle one is left)."""
        if p == 0:
            return True
        middle_level, fixed_level = self._levels_at(p, limit)
        clipped = []
        if self.levels.ascending[p - 1] > middle_level:
            clipped.append(middle_level)
        if self.largest_fixed > fixed_level:
            clipped.append(fixed_level)
        return not clipped or min(clipped) >= self.least

    def _lower_bound(self, budget: int) -> int:
        """The most middle entries that may be kept: every way to stop needs the kept entries to
        fit at level c = min(floor, least) within the budget (the notes cost more still)."""
        m = len(self.middle)
        c = min(self.floor, self.least)
        if c < 2 or self.smallest < 2:
            return m  # entries of one token: no bound (never with real texts)
        fixed = self._fixed_total(c)
        lo, hi = 0, m
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fixed + self.levels.total(mid, c) <= budget:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def fit(self, budget: int) -> list[str | None]:
        """The texts within about ``budget`` tokens (see ``fit_entries``)."""
        n, texts, middle, sizes = self.n, self.texts, self.middle, self.sizes
        if not texts or self.whole <= budget:
            return list(texts)
        p = self._lower_bound(budget)
        kept = {*self.protected, *middle[:p]}
        runs = _runs_between(sorted(kept), n)
        note = self.note
        while not self._stops(p, budget - note * runs):
            p -= 1
            i = middle[p]
            kept.discard(i)
            before = i > 0 and i - 1 not in kept
            after = i + 1 < n and i + 1 not in kept
            runs += 1 - before - after  # a new run, an extended one, or two joined
        middle_level, fixed_level = self._levels_at(p, budget - note * runs)

        out: list[str | None] = [None] * n
        clip = self.clip
        for group, level in ((self.protected, fixed_level), (middle[:p], middle_level)):
            for i in group:
                text = texts[i]
                out[i] = text if sizes[i] <= level else clip(text, max(level - 1, _MIN_CLIP))
        return out


def _runs_between(kept: Sequence[int], n: int) -> int:
    """How many runs of left-out indexes ``range(n)`` has around ``kept`` (ascending)."""
    if not kept:
        return 1 if n else 0
    runs = (kept[0] > 0) + (kept[-1] < n - 1)
    return runs + sum(1 for a, b in pairwise(kept) if b - a > 1)
