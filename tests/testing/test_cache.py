"""The local provider's prompt cache rules, on measured blocks."""

from __future__ import annotations

from abridged.testing.cache import (
    ANTHROPIC_LOOKBACK,
    AnthropicCache,
    OpenAICache,
    common_prefix_tokens,
    openai_cached,
)
from abridged.testing.counting import Segment, TokenCounter, chat_segments, measure


def blocks(*sizes: int, breakpoints: tuple[int, ...] = (), tag: str = "") -> list[Segment]:
    """Measured blocks of the given sizes, keys by position (``tag`` changes them)."""
    return [
        Segment(f"{tag}{i}:{size}", "h", "", size, i in breakpoints, size)
        for i, size in enumerate(sizes)
    ]


def test_openai_rule_rounds_down_to_128_and_needs_1024() -> None:
    assert openai_cached(0) == 0
    assert openai_cached(1_023) == 0
    assert openai_cached(1_024) == 1_024
    assert openai_cached(1_151) == 1_024
    assert openai_cached(1_152) == 1_152
    assert openai_cached(5_000) == 4_992


def test_common_prefix_stops_at_the_first_different_block() -> None:
    a = blocks(500, 600, 700)
    b = [*blocks(500, 600), *blocks(700, tag="x")]
    assert common_prefix_tokens(a, a) == 1_800
    assert common_prefix_tokens(a, b) == 1_100
    assert common_prefix_tokens(a, a[:1]) == 500


def test_openai_cache_uses_the_best_of_the_last_four_requests() -> None:
    cache = OpenAICache(TokenCounter())
    first = blocks(1_000, 300)
    assert cache.lookup("m", first).read == 0
    assert cache.lookup("m", [*first, *blocks(50, tag="y")]).read == 1_280
    assert cache.lookup("other-model", first).read == 0
    for k in range(4):  # four unrelated requests push the first ones out
        cache.lookup("m", blocks(2_000, tag=f"z{k}"))
    assert cache.lookup("m", first).read == 0
    assert cache.lookup("m", blocks(2_000, tag="z3")).read == 1_920


def test_openai_lookup_without_remember_leaves_the_history() -> None:
    cache = OpenAICache(TokenCounter())
    cache.lookup("m", blocks(2_000), remember=False)
    assert cache.lookup("m", blocks(2_000)).read == 0
    assert cache.lookup("m", blocks(2_000)).read == 1_920


def test_openai_partial_block_match_counts_shared_tokens() -> None:
    counter = TokenCounter()
    base = "Every line of this log is the same until the end. " * 60
    first = measure(chat_segments({"messages": [{"role": "user", "content": base + "A"}]}), counter)
    second = measure(
        chat_segments({"messages": [{"role": "user", "content": base + "B"}]}), counter
    )
    shared = counter.count_one(base)
    common = common_prefix_tokens(first, second, counter)
    assert shared - 1 <= common - 4 <= shared  # the message overhead, then the shared text
    assert common_prefix_tokens(first, second) == 0  # without the tokenizer: whole blocks only


def test_anthropic_breakpoint_writes_then_reads() -> None:
    cache = AnthropicCache()
    request = blocks(800, 400, 300, breakpoints=(1,))
    peek = cache.lookup("m", request, write=False)
    assert (peek.read, peek.write) == (0, 1_200)
    first = cache.lookup("m", request)
    assert (first.read, first.write) == (0, 1_200)
    second = cache.lookup("m", request)
    assert (second.read, second.write) == (1_200, 0)


def test_anthropic_breakpoint_below_the_minimum_is_not_cached() -> None:
    cache = AnthropicCache()
    request = blocks(500, 400, 2_000, breakpoints=(1,))
    assert cache.lookup("m", request) == cache.lookup("m", request)
    assert cache.lookup("m", request).write == 0 and cache.lookup("m", request).read == 0


def test_anthropic_moving_breakpoint_reads_the_earlier_prefix_by_lookback() -> None:
    cache = AnthropicCache()
    cache.lookup("m", blocks(1_100, 50, breakpoints=(1,)))
    extended = blocks(1_100, 50, 60, 70, breakpoints=(3,))
    result = cache.lookup("m", extended)
    assert (result.read, result.write) == (1_150, 130)


def test_anthropic_lookback_is_limited_to_20_blocks() -> None:
    cache = AnthropicCache()
    cache.lookup("m", blocks(1_100, breakpoints=(0,)))
    far = blocks(1_100, *([10] * (ANTHROPIC_LOOKBACK + 1)), breakpoints=(ANTHROPIC_LOOKBACK + 1,))
    assert cache.lookup("m", far).read == 0
    near = blocks(1_100, *([10] * ANTHROPIC_LOOKBACK), breakpoints=(ANTHROPIC_LOOKBACK,))
    assert cache.lookup("m", near).read == 1_100


def test_anthropic_several_breakpoints_read_first_write_rest() -> None:
    cache = AnthropicCache()
    cache.lookup("m", blocks(1_100, 100, breakpoints=(0,)))
    result = cache.lookup("m", blocks(1_100, 100, 200, 300, breakpoints=(0, 2)))
    assert (result.read, result.write) == (1_100, 300)
    assert cache.lookup("other", blocks(1_100, breakpoints=(0,))).read == 0
    cache.reset()
    assert cache.lookup("m", blocks(1_100, breakpoints=(0,))).read == 0
