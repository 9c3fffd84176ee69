"""Protocols at the seams of the core: what the edges implement and the core calls."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from abridged.core.model import Message, Usage


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens of texts exactly, with some real tokenizer.

    ``source`` names the method for reports, for example ``"o200k_base (toktok)"``.
    """

    @property
    def source(self) -> str:
        """Which tokenizer counts (encoding and library)."""
        ...

    def count(self, texts: Sequence[str]) -> list[int]:
        """The number of tokens of each text, in order."""
        ...


# -- models ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model may call: its name, description and JSON-schema parameters."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})


@dataclass(frozen=True, slots=True)
class Completion:
    """One model call's answer: the assistant message, the usage reported, why it stopped.

    ``finish_reason`` is normalised: ``"stop"``, ``"length"`` (cut off at the output ceiling),
    ``"tool_calls"``, ``"content_filter"`` or ``None`` when unknown.
    """

    message: Message
    usage: Usage | None = None
    finish_reason: str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of streamed answer text."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of streamed reasoning text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a streamed tool call (``index`` says which call of the message)."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


StreamEvent: TypeAlias = TextDelta | ReasoningDelta | ToolCallDelta | Completion


@runtime_checkable
class ChatModel(Protocol):
    """A chat model: the only way the engine and the runtime talk to a provider.

    ``stream`` yields deltas and ends with exactly one ``Completion``; ``complete`` returns that
    ``Completion`` alone. Options a provider does not know are ignored.
    """

    @property
    def name(self) -> str:
        """The model's name as the provider knows it (for reports and limits)."""
        ...

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        """Call the model once and return its answer."""
        ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> AsyncIterator[StreamEvent]:
        """Call the model once, yielding deltas, then the ``Completion``."""
        ...


# -- summaries ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileOps:
    """Files the conversation read and modified, cumulative across compactions.

    A file read and then modified counts as modified only.
    """

    read: frozenset[str] = frozenset()
    modified: frozenset[str] = frozenset()

    def merge(self, other: FileOps) -> FileOps:
        """Both sets of operations together; modified wins over read."""
        modified = self.modified | other.modified
        return FileOps(read=(self.read | other.read) - modified, modified=modified)


SummaryKind: TypeAlias = Literal["initial", "update", "turn_prefix"]


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """What a summarizer is asked to summarize.

    ``messages`` are the ones to fold into the summary; ``previous_summary`` is the summary they
    follow (an ``update`` folds them into it); ``turn_prefix`` asks what an unfinished turn was
    doing. ``prefix`` is the exact context the conversation last sent (system, summary, messages)
    up to the cut, and ``tools`` its tool definitions, for the cache-reusing mode (the provider
    reads it from its cache). ``max_tokens`` is the ceiling
    on the summary; ``focus`` the user's instructions (``/compact focus on the API``).
    """

    messages: tuple[Message, ...]
    kind: SummaryKind = "initial"
    previous_summary: str | None = None
    file_ops: FileOps = FileOps()
    max_tokens: int = 4_000
    focus: str | None = None
    prefix: tuple[Message, ...] = ()
    tools: tuple[ToolSpec, ...] = ()
    later: tuple[Message, ...] = ()


@dataclass(frozen=True, slots=True)
class Summary:
    """A summary made by a summarizer.

    ``truncated`` flags a summary cut off at its ceiling (it is kept). ``fallback_reason`` says
    why a model summary was replaced by the extractive one. ``summarizer`` names who made it.
    """

    text: str
    summarizer: str
    file_ops: FileOps = FileOps()
    truncated: bool = False
    usage: Usage | None = None
    fallback_reason: str | None = None


@runtime_checkable
class Summarizer(Protocol):
    """Turns messages into a structured hand-off summary."""

    @property
    def name(self) -> str:
        """Who summarizes, for reports (``"extractive"``, ``"llm:gpt-4.1-mini"``)."""
        ...

    async def summarize(self, request: SummaryRequest) -> Summary:
        """The summary of ``request.messages`` (folded into ``previous_summary`` if any)."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors for similarity search (over session summaries)."""

    @property
    def name(self) -> str:
        """Which embedder (model and version), stored beside each vector."""
        ...

    @property
    def dimension(self) -> int:
        """The length of every vector it returns."""
        ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...
