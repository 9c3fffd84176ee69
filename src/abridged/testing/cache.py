"""The local provider's prompt cache: OpenAI's automatic prefix rule and Anthropic's breakpoints.

Both work on the measured blocks of a request (``abridged.testing.counting``), so a prefix in
blocks is a prefix in tokens.

**OpenAI** (``OpenAICache``): the cached tokens of a request are the longest common prefix, in
tokens, with one of the last four requests served for the same model, rounded down to a multiple
of 128, and zero below 1,024. The common prefix is the sum of the leading blocks that are equal,
plus, in the first block that differs, the tokens both texts share when the two blocks have the
same role and position (found with the tokenizer's ``truncate``). The request is then remembered
(the oldest of four is forgotten). The common prefix never includes the reply priming.

**Anthropic** (``AnthropicCache``): a block carrying ``cache_control`` is a breakpoint (at most
four per request, as the API enforces). A breakpoint is cacheable when the prefix up to and
including its block holds at least 1,024 tokens. A read: for each breakpoint the cache is looked
up at its block and at each of the 20 blocks before it (Anthropic's automatic look-back); the
longest prefix found is read (``cache_read_input_tokens``). A write: the tokens from there up to
the last cacheable breakpoint (``cache_creation_input_tokens``), and every cacheable breakpoint
after the read is remembered. The rest is ``input_tokens``. Entries do not expire (the TTL, 5
minutes or 1 hour, is longer than any test); ``reset`` clears them.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from abridged.testing.counting import Segment, TokenCounter

OPENAI_MIN_CACHED = 1_024
OPENAI_CACHE_UNIT = 128
OPENAI_HISTORY = 4
ANTHROPIC_MIN_CACHEABLE = 1_024
ANTHROPIC_LOOKBACK = 20
ANTHROPIC_MAX_BREAKPOINTS = 4


@dataclass(frozen=True, slots=True)
class CacheResult:
    """Tokens of a request read from the cache and written to it."""

    read: int = 0
    write: int = 0


def common_prefix_tokens(
    a: Sequence[Segment], b: Sequence[Segment], counter: TokenCounter | None = None
) -> int:
    """Tokens of the longest common prefix of two measured block sequences."""
    total = 0
    for x, y in zip(a, b, strict=False):
        if x.key == y.key:
            total += x.tokens
            continue
        if counter is not None and x.head == y.head and x.extra == y.extra:
            shared = counter.common_prefix(x.text, y.text, min(x.tokens, y.tokens) - x.extra)
            if shared > 0:
                total += x.extra + shared
        break
    return total


def openai_cached(common: int) -> int:
    """Cached tokens for a common prefix of ``common`` tokens under OpenAI's rule."""
    if common < OPENAI_MIN_CACHED:
        return 0
    return common // OPENAI_CACHE_UNIT * OPENAI_CACHE_UNIT


class OpenAICache:
    """OpenAI's automatic prompt cache (not thread-safe: the server holds its lock)."""

    def __init__(self, counter: TokenCounter) -> None:
        self._counter = counter
        self._history: deque[tuple[str, list[Segment]]] = deque(maxlen=OPENAI_HISTORY)

    def lookup(self, model: str, segments: list[Segment], *, remember: bool = True) -> CacheResult:
        """Cached tokens of this request; the request is remembered when ``remember``."""
        common = max(
            (
                common_prefix_tokens(segments, previous, self._counter)
                for m, previous in self._history
                if m == model
            ),
            default=0,
        )
        if remember:
            self._history.append((model, segments))
        return CacheResult(read=openai_cached(common))

    def reset(self) -> None:
        """Forget every request."""
        self._history.clear()


def _prefix_hashes(model: str, segments: Sequence[Segment]) -> list[str]:
    out: list[str] = []
    h = hashlib.blake2b(model.encode("utf-8"), digest_size=16).hexdigest()
    for s in segments:
        h = hashlib.blake2b((h + s.key).encode("ascii"), digest_size=16).hexdigest()
        out.append(h)
    return out


class AnthropicCache:
    """Anthropic's prompt cache with explicit breakpoints (not thread-safe)."""

    def __init__(self) -> None:
        self._entries: set[str] = set()

    def lookup(self, model: str, segments: list[Segment], *, write: bool = True) -> CacheResult:
        """Tokens read and written for this request; new entries are remembered when ``write``."""
        hashes = _prefix_hashes(model, segments)
        cumulative: list[int] = []
        running = 0
        for s in segments:
            running += s.tokens
            cumulative.append(running)
        breakpoints = [
            i
            for i, s in enumerate(segments)
            if s.breakpoint and cumulative[i] >= ANTHROPIC_MIN_CACHEABLE
        ]
        if not breakpoints:
            return CacheResult()
        hit = -1
        for b in breakpoints:
            for i in range(b, max(b - ANTHROPIC_LOOKBACK, 0) - 1, -1):
                if i <= hit:
                    break
                if hashes[i] in self._entries:
                    hit = i
                    break
        read = cumulative[hit] if hit >= 0 else 0
        last = breakpoints[-1]
        written = cumulative[last] - read if last > hit else 0
        if write:
            for b in breakpoints:
                if b > hit:
                    self._entries.add(hashes[b])
        return CacheResult(read=read, write=written)

    def reset(self) -> None:
        """Forget every entry."""
        self._entries.clear()
