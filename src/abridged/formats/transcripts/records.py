"""Loaded transcripts, the names of the transcript formats, and the counts of what a loader saw."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any

from abridged.core.model import Message

# Format names (the ``format`` argument of ``load_transcripts`` and ``Transcript.source_format``).
SWEBENCH_JSONL = "swebench-jsonl"
"""Flattened mini-swe-agent sessions, one JSON object per line: ``{"instance_id", "messages"}``."""
MINI_SWE_AGENT_TRAJ = "mini-swe-agent-traj"
"""One mini-swe-agent ``.traj.json``: ``{"info", "messages", "trajectory_format"}``."""
OPENAI_CHAT = "openai-chat"
"""OpenAI Chat Completions messages: a JSON list, or an object with a ``messages`` list."""
OPENAI_CHAT_JSONL = "openai-chat-jsonl"
"""OpenAI Chat Completions messages, one JSON object per line."""
ANTHROPIC_MESSAGES = "anthropic-messages"
"""Anthropic Messages: ``{"system": ..., "messages": [...]}``."""
ABRIDGED_JSON = "abridged"
"""abridged's own form: ``{"format": "abridged", "id", "meta", "messages": [message_to_dict]}``."""
ABRIDGED_JSONL = "abridged-jsonl"
"""abridged's own messages (``message_to_dict`` form), one per line."""
CLAUDE_CODE = "claude-code"
"""A Claude Code project session: one entry per line (``~/.claude/projects/<project>/*.jsonl``)."""
CODEX = "codex"
"""A Codex CLI rollout: ``{"type", "payload"}`` per line (``~/.codex/sessions/.../rollout-*``)."""

JSONL_FORMATS: tuple[str, ...] = (
    SWEBENCH_JSONL,
    OPENAI_CHAT_JSONL,
    ABRIDGED_JSONL,
    CLAUDE_CODE,
    CODEX,
)
JSON_FORMATS: tuple[str, ...] = (
    MINI_SWE_AGENT_TRAJ,
    OPENAI_CHAT,
    ANTHROPIC_MESSAGES,
    ABRIDGED_JSON,
)
FORMATS: tuple[str, ...] = JSONL_FORMATS + JSON_FORMATS


@dataclass(frozen=True, slots=True)
class LoaderStats:
    """What a loader saw in one transcript (sum them with ``+`` or ``LoaderStats.total``).

    ``tool_steps + plain_assistant == assistant_messages`` always holds. For the mini-swe-agent
    text protocol, ``tool_steps`` counts bash-block + observation pairs turned into a tool call and
    its result, and ``plain_assistant`` splits into ``no_block`` (no bash block), ``multi_block``
    (several blocks) and ``unanswered`` (one block but no observation after it, e.g. a session cut
    off after its last command). ``plain_user_after`` counts the user messages kept plain after a
    ``no_block``/``multi_block`` message (mini-swe-agent's format-error notices). For formats with
    native tool calls, ``tool_steps`` counts the assistant messages that carry tool calls.
    ``skipped_lines`` are the 1-based line numbers dropped by a non-strict JSONL load.
    """

    messages: int = 0
    assistant_messages: int = 0
    tool_steps: int = 0
    plain_assistant: int = 0
    no_block: int = 0
    multi_block: int = 0
    unanswered: int = 0
    plain_user_after: int = 0
    usage_reports: int = 0
    skipped_lines: tuple[int, ...] = ()

    def __add__(self, other: LoaderStats) -> LoaderStats:
        if not isinstance(other, LoaderStats):
            return NotImplemented
        values: dict[str, Any] = {
            f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)
        }
        return LoaderStats(**values)

    @classmethod
    def total(cls, stats: Iterable[LoaderStats]) -> LoaderStats:
        """The sum of many stats (for example over every transcript of a file)."""
        out = cls()
        for s in stats:
            out = out + s
        return out

    def with_skipped(self, lines: Iterable[int]) -> LoaderStats:
        """A copy that also records ``lines`` as skipped."""
        return replace(self, skipped_lines=self.skipped_lines + tuple(lines))

    def as_dict(self) -> dict[str, Any]:
        """The counts as a plain dict (``skipped_lines`` as a list)."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        out["skipped_lines"] = list(self.skipped_lines)
        return out


def _frozen(meta: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if isinstance(meta, MappingProxyType):
        return meta
    return MappingProxyType(dict(meta or {}))


@dataclass(frozen=True, slots=True)
class Transcript:
    """One loaded session: its messages in order, where they came from, and what the loader saw.

    ``meta`` holds what the file said about the session (``instance_id``, ``model``,
    ``exit_status``, ``path``, ``line``...), never credentials from a run's configuration.
    """

    id: str
    messages: tuple[Message, ...]
    source_format: str
    meta: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    stats: LoaderStats = field(default_factory=LoaderStats)

    def __post_init__(self) -> None:
        messages: Any = self.messages
        if not isinstance(messages, tuple):
            object.__setattr__(self, "messages", tuple(messages))
        object.__setattr__(self, "meta", _frozen(self.meta))


def stats_from_messages(messages: Iterable[Message]) -> LoaderStats:
    """Stats of messages whose structure is already explicit (native tool calls, abridged JSON)."""
    total = assistants = steps = reports = 0
    for m in messages:
        total += 1
        if m.role == "assistant":
            assistants += 1
            steps += bool(m.tool_calls)
            reports += m.usage is not None
    return LoaderStats(
        messages=total,
        assistant_messages=assistants,
        tool_steps=steps,
        plain_assistant=assistants - steps,
        usage_reports=reports,
    )
