"""Tests of ``fit_entries`` (``abridged.engine.summarize.fitting``): the same result as the
one-at-a-time loop it replaces (kept here as the reference), the budget, and its cost."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abridged.core.tokens import estimate_text_tokens
from abridged.engine.summarize.fitting import EntryFitter, fit_entries, water_level
from abridged.engine.summarize.transcript import clip_middle

# -- the reference: the quadratic loop of ExtractiveSummarizer._fit_users, as it was ------------


def _ref_water_level(sizes: Sequence[int], available: int, floor: int) -> int:
    if sum(sizes) <= available:
        return max(sizes, default=floor)
    lo, hi = floor, max(sizes, default=floor)
    if sum(min(s, lo) for s in sizes) > available:
        return floor
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(min(s, mid) for s in sizes) <= available:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _ref_runs_left_out(keep: Sequence[int], n: int) -> int:
    kept = set(keep)
    runs = 0
    for i in range(n):
        if i not in kept and (i == 0 or i - 1 in kept):
            runs += 1
    return runs


def _ref_levels(
    sizes: Sequence[int], keep: Sequence[int], protected: set[int], budget: int, floor: int
) -> dict[int, int]:
    levels = dict.fromkeys(keep, 10**9)
    middle = [i for i in keep if i not in protected]
    fixed = sum(sizes[i] for i in keep if i in protected)
    if middle:
        level = _ref_water_level([sizes[i] for i in middle], budget - fixed, floor)
        for i in middle:
            levels[i] = level
    if sum(min(sizes[i], levels[i]) for i in keep) > budget:
        level = _ref_water_level([min(sizes[i], levels[i]) for i in keep], budget, 1)
        for i in keep:
            levels[i] = min(levels[i], level)
    return levels


def reference(
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
    n = len(texts)
    sizes = [size(t) + 1 for t in texts]
    if sum(sizes) <= budget or not texts:
        return list(texts)
    protected = {0, n - 1} if protected_ends else set()
    keep = list(range(n))
    while True:
        runs = _ref_runs_left_out(keep, n)
        levels = _ref_levels(
            sizes, keep, protected, budget - omission_note_tokens * runs, entry_floor_tokens
        )
        clipped = [levels[i] for i in keep if sizes[i] > levels[i]]
        middle = [i for i in keep if i not in protected]
        if not clipped or min(clipped) >= min_entry_tokens or not middle:
            break
        keep.remove(max(middle, key=lambda i: (sizes[i], -i)))
    out: list[str | None] = [None] * n
    for i in keep:
        if sizes[i] <= levels[i]:
            out[i] = texts[i]
            continue
        out[i] = clip(texts[i], max(levels[i] - 1, 8))
    return out


# -- helpers -------------------------------------------------------------------------------------


def _exact_size(text: str) -> int:
    return len(text)


def _exact_clip(text: str, limit: int) -> str:
    return text[:limit]


def _cost(out: Sequence[str | None], note: int) -> int:
    """Tokens of the result with the exact size: entries, bullets, one note per run left out."""
    runs = sum(1 for k, e in enumerate(out) if e is None and (k == 0 or out[k - 1] is not None))
    return sum(len(e) + 1 for e in out if e is not None) + note * runs


def _texts(lengths: Sequence[int]) -> list[str]:
    return [chr(ord("a") + k % 26) * length for k, length in enumerate(lengths)]


lengths_st = st.lists(st.integers(0, 300), max_size=40)
options_st = st.fixed_dictionaries(
    {
        "entry_floor_tokens": st.integers(1, 80),
        "min_entry_tokens": st.integers(0, 80),
        "omission_note_tokens": st.integers(0, 30),
        "protected_ends": st.booleans(),
    }
)


# -- same result as the reference ------------------------------------------------------------------


@settings(max_examples=600, deadline=None)
@given(lengths=lengths_st, budget=st.integers(-20, 3_000), options=options_st)
def test_same_as_the_one_at_a_time_loop(
    lengths: list[int], budget: int, options: dict[str, int]
) -> None:
    texts = _texts(lengths)
    kwargs: dict[str, Any] = {"size": _exact_size, "clip": _exact_clip, **options}
    assert fit_entries(texts, budget, **kwargs) == reference(texts, budget, **kwargs)


@settings(max_examples=300, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 60), min_size=3, max_size=60),
    budget=st.integers(0, 1_500),
    ties=st.integers(1, 5),
)
def test_same_as_the_reference_with_many_ties(lengths: list[int], budget: int, ties: int) -> None:
    """Equal sizes: the oldest of the longest is left out first, as the reference does."""
    texts = _texts([length - length % ties for length in lengths])
    kwargs: dict[str, Any] = {
        "size": _exact_size,
        "clip": _exact_clip,
        "entry_floor_tokens": 12,
        "min_entry_tokens": 10,
        "omission_note_tokens": 4,
    }
    assert fit_entries(texts, budget, **kwargs) == reference(texts, budget, **kwargs)


def _words(rng: random.Random, count: int) -> str:
    words = ["parser", "config", "value", "tests", "module", "src/app.py", "OPS-481", "42 ms"]
    return " ".join(rng.choice(words) for _ in range(count))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), count=st.integers(1, 60), budget=st.integers(50, 2_500))
def test_same_as_the_reference_with_real_tokens(seed: int, count: int, budget: int) -> None:
    """With the estimator and ``clip_middle``, as the extractive summarizer uses them."""
    rng = random.Random(seed)
    texts = [_words(rng, rng.choice((3, 10, 40, 200))) for _ in range(count)]
    kwargs: dict[str, Any] = {
        "size": estimate_text_tokens,
        "clip": clip_middle,
        "entry_floor_tokens": 48,
        "min_entry_tokens": 32,
        "omission_note_tokens": 12,
    }
    assert fit_entries(texts, budget, **kwargs) == reference(texts, budget, **kwargs)


@settings(max_examples=200, deadline=None)
@given(
    lengths=lengths_st,
    budgets=st.lists(st.integers(-20, 3_000), min_size=1, max_size=8),
    options=options_st,
)
def test_one_fitter_at_many_budgets(
    lengths: list[int], budgets: list[int], options: dict[str, Any]
) -> None:
    """``EntryFitter`` keeps nothing from one budget to the next but what does not depend on it
    (as ``ExtractiveSummarizer._fit`` lowers the budget step by step)."""
    texts = _texts(lengths)
    kwargs: dict[str, Any] = {"size": _exact_size, "clip": _exact_clip, **options}
    fitter = EntryFitter(texts, **kwargs)
    for budget in budgets:
        assert fitter.fit(budget) == reference(texts, budget, **kwargs)


# -- the budget ------------------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 2_000), max_size=80),
    budget=st.integers(0, 5_000),
    note=st.integers(0, 20),
    floor=st.integers(8, 80),
    least=st.integers(9, 60),
)
def test_within_the_budget(
    lengths: list[int], budget: int, note: int, floor: int, least: int
) -> None:
    """With an exact size and clip, the result holds in the budget whenever the two ends fit at
    the smallest clip (9 tokens each) beside one omission note; entries are kept in order,
    whole or as a prefix (the clip), and the first and last are always kept."""
    texts = _texts(lengths)
    out = fit_entries(
        texts,
        budget,
        size=_exact_size,
        clip=_exact_clip,
        entry_floor_tokens=floor,
        min_entry_tokens=least,
        omission_note_tokens=note,
    )
    assert len(out) == len(texts)
    if budget >= 2 * 9 + note:
        assert _cost(out, note) <= budget
    for text, entry in zip(texts, out, strict=True):
        assert entry is None or text.startswith(entry)
    if texts:
        assert out[0] is not None and out[-1] is not None
    clipped = [len(e) + 1 for t, e in zip(texts, out, strict=True) if e is not None and e != t]
    middle_kept = [e for e in out[1:-1] if e is not None]
    if clipped and middle_kept:
        assert min(clipped) >= least


def test_everything_fits_unchanged() -> None:
    texts = ["one", "two", "three"]
    out = fit_entries(
        texts,
        100,
        size=_exact_size,
        clip=_exact_clip,
        entry_floor_tokens=8,
        min_entry_tokens=4,
        omission_note_tokens=2,
    )
    assert out == texts and out is not texts
    assert (
        fit_entries(
            [],
            0,
            size=_exact_size,
            clip=_exact_clip,
            entry_floor_tokens=8,
            min_entry_tokens=4,
            omission_note_tokens=2,
        )
        == []
    )


@given(
    sizes=st.lists(st.integers(0, 500), max_size=30),
    available=st.integers(-50, 5_000),
    floor=st.integers(1, 100),
)
def test_water_level_matches_the_definition(sizes: list[int], available: int, floor: int) -> None:
    assert water_level(sizes, available, floor) == _ref_water_level(sizes, available, floor)


# -- the cost ------------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [100_000])
def test_many_entries_take_n_log_n(count: int) -> None:
    """100,000 short entries in a small budget: the one-at-a-time loop takes hours here. The
    work is counted, not timed (bench/scale.py times 100,000 entries)."""
    rng = random.Random(7)
    texts = [_texts([rng.randrange(5, 200)])[0] for _ in range(count)]
    calls = {"clip": 0, "size": 0}

    def clip(text: str, limit: int) -> str:
        calls["clip"] += 1
        return text[:limit]

    def size(text: str) -> int:
        calls["size"] += 1
        return _exact_size(text)

    out = fit_entries(
        texts,
        1_500,
        size=size,
        clip=clip,
        entry_floor_tokens=48,
        min_entry_tokens=32,
        omission_note_tokens=12,
    )
    assert _cost(out, 12) <= 1_500
    assert sum(e is not None for e in out) < 100
    assert calls["clip"] <= 100
    assert calls["size"] <= count  # each entry measured once
