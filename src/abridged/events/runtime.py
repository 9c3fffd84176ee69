"""What a conversation reports while it runs: tool calls, notices, retries, the turn's result.

``Conversation.stream(text)`` yields the model's deltas (``TextDelta``, ``ReasoningDelta``,
``ToolCallDelta`` from ``abridged.core.protocols``) and these runtime events, and ends with the
``TurnResult``. ``on_event`` callbacks get the same events (deltas excepted). Every event has a
``kind`` and a ``text`` for people; ``Notice`` carries an engine event (compaction, prune,
overflow recovery, usage) with the design's human text, such as::

    Compacted (157k -> 9.1k): system 1.8k, summary 3.2k, kept 2.7k, tools 1.4k; 9.1k/150k (6%)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from abridged.core.model import Message, ToolCall, ToolResult, Usage
from abridged.core.protocols import ReasoningDelta, TextDelta, ToolCallDelta
from abridged.events.engine import Event

__all__ = [
    "ConversationEvent",
    "Notice",
    "Retrying",
    "StreamItem",
    "ToolFinished",
    "ToolStarted",
    "TurnResult",
]


@dataclass(frozen=True, slots=True)
class ToolStarted:
    """A tool call starts running."""

    call: ToolCall
    kind: Literal["tool_started"] = "tool_started"

    @property
    def text(self) -> str:
        """``Running read_file``."""
        return f"Running {self.call.name}"


@dataclass(frozen=True, slots=True)
class ToolFinished:
    """A tool call finished (``result.is_error`` when it failed)."""

    result: ToolResult
    kind: Literal["tool_finished"] = "tool_finished"

    @property
    def text(self) -> str:
        """``read_file done`` / ``read_file failed``."""
        return f"{self.result.name} {'failed' if self.result.is_error else 'done'}"


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the engine or the runtime did: ``event`` is the engine's typed event when there
    is one (compaction, prune, overflow recovery, usage), ``message`` the human text otherwise."""

    message: str
    event: Event | None = None
    kind: Literal["notice"] = "notice"

    @property
    def text(self) -> str:
        """The human notification."""
        return self.message


@dataclass(frozen=True, slots=True)
class Retrying:
    """The model call is made again: after an overflow (``overflow``, once, after emergency
    compaction), silent truncation (``truncation``) or a retryable provider error (``error``).
    Deltas streamed before it belong to the abandoned attempt."""

    reason: Literal["overflow", "truncation", "error"]
    detail: str
    kind: Literal["retrying"] = "retrying"

    @property
    def text(self) -> str:
        """``Retrying (overflow): ...``."""
        return f"Retrying ({self.reason}): {self.detail}"


@dataclass(frozen=True, slots=True)
class TurnResult:
    """What one ``send`` produced.

    - ``text``: the reply (the last assistant message's text; a command's output).
    - ``message``: the last assistant message (``None`` for commands and empty replies);
      ``messages``: every message the turn stored after the user's (assistant messages, tool
      results as sent to the model).
    - ``usage``: summed over the turn's model calls; ``calls`` how many were made.
    - ``aborted``: ``abort`` ended the turn (what was received is stored); ``stopped``: why the
      loop ended early (``"max_steps"``), else ``None``.
    - ``command``: the slash command handled (``"status"``...), ``None`` for a model turn.
    - ``inputs``: how many user messages the turn answered (several within the debounce window).
    - ``events``: what was reported during the turn; ``notifications`` their text.
    """

    text: str
    message: Message | None = None
    messages: tuple[Message, ...] = ()
    usage: Usage = field(default_factory=Usage)
    calls: int = 0
    aborted: bool = False
    stopped: str | None = None
    command: str | None = None
    inputs: int = 1
    events: tuple[ConversationEvent, ...] = ()
    kind: Literal["turn_result"] = "turn_result"

    @property
    def notifications(self) -> list[str]:
        """The human text of ``events``."""
        return [e.text for e in self.events]


ConversationEvent: TypeAlias = ToolStarted | ToolFinished | Notice | Retrying
"""Events a conversation reports besides the model's deltas."""

StreamItem: TypeAlias = (
    TextDelta
    | ReasoningDelta
    | ToolCallDelta
    | ToolStarted
    | ToolFinished
    | Notice
    | Retrying
    | TurnResult
)
"""What ``Conversation.stream`` yields (the ``TurnResult`` last)."""
