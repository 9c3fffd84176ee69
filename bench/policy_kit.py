"""The interface every policy of ``bench/policies.py`` implements, and what the harness gives it.

A *policy* decides what context a session sends at each call. The harness replays a recorded
session call by call: before call ``n`` it hands the policy the messages the session added since
call ``n - 1`` (the recorded reply to the previous call and the tool results after it; at the
first call, the system prompt and the task) and sends what ``prepare`` returns to a simulated
provider. The provider counts the context with the shared ruler (o200k, as
``abridged.testing.counting`` counts an OpenAI Chat request), rejects it when it is over
``Window.limit`` (``Rejected``; the policy gets one ``recover`` and one retry), applies OpenAI's
prefix-cache rule, and reports ``Usage`` to ``observe``.

Every policy summarizes through ``Kit.summarize``: the *same* summarizer for all (abridged's
extractive summarizer, capped at the ``max_tokens`` the policy asks for), so that policies differ
only in *when* they summarize, *what* they keep and *how they ask*: ``request`` is the exact list
of messages the policy would send its model for that summary (a peer's own prompt, the history it
sends along), and it is billed through the same cache rule as a call.

Messages are ``abridged.core.model.Message`` (system / user / assistant / tool; tool calls and
results as parts), as recorded: an assistant message may carry the recorded provider's usage,
which counted another context; the usage of what the policy sent comes to ``observe``. A policy
may return the same objects it was given or new ones; it must not change the ones it was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from abridged.core.model import Message, Usage


@dataclass(frozen=True, slots=True)
class Window:
    """The model's limits for one run: ``tokens`` of context, ``max_output`` kept for the reply."""

    name: str
    tokens: int
    max_output: int

    @property
    def limit(self) -> int:
        """The most input tokens the provider accepts (``tokens - max_output``)."""
        return self.tokens - self.max_output


class Rejected(Exception):  # noqa: N818 (the provider's word for it)
    """The provider's "prompt is too long" error: ``tokens`` sent, ``limit`` accepted."""

    def __init__(self, tokens: int, limit: int) -> None:
        super().__init__(f"prompt is too long: {tokens} tokens > {limit} maximum")
        self.tokens = tokens
        self.limit = limit


class Kit(Protocol):
    """What the harness gives a policy."""

    window: Window

    def count(self, messages: Sequence[Message]) -> int:
        """Tokens of ``messages`` sent as one request, as the provider counts them."""
        ...

    def summarize(
        self,
        messages: Sequence[Message],
        *,
        previous: str | None,
        request: Sequence[Message],
        max_tokens: int,
    ) -> str:
        """The shared summarizer's summary of ``messages`` (folding in ``previous``, the summary
        they follow), at most ``max_tokens``; ``request`` (what the policy sends its model for
        this summary) is billed like a call."""
        ...


class Policy(Protocol):
    """One way to keep a session inside its window."""

    name: str

    def prepare(self, new: Sequence[Message]) -> list[Message]:
        """The context to send for the next call, given the messages added since the last one."""
        ...

    def observe(self, usage: Usage) -> None:
        """The provider's usage for the context last sent (``input`` excludes ``cache_read``)."""
        ...

    def recover(self, error: Rejected) -> list[Message] | None:
        """A context to retry with after ``error`` (one retry per call), or ``None`` to give up."""
        ...

    def stats(self) -> dict[str, int]:
        """What the policy did: at least ``compactions`` and ``prunes``."""
        ...
