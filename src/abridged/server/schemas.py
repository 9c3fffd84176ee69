"""The JSON of the service's API: request bodies (validated: a wrong field gets a 422 naming
it) and responses (published in ``/openapi.json``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, WithJsonSchema

# a session and a compaction are shown by the CLI too: one model each, the runtime's
from abridged.runtime.views import CompactionView as CompactionOut
from abridged.runtime.views import SessionHitView as SessionHitOut
from abridged.runtime.views import SessionView as SessionOut

__all__ = [
    "CompactRequest",
    "CompactResponse",
    "CompactionOut",
    "ContextResponse",
    "ConversationCreate",
    "ConversationOut",
    "MessageOut",
    "ModelsOut",
    "SendMessage",
    "SessionHitOut",
    "SessionOut",
    "SettingsPatch",
]

ID_PATTERN = r"^[A-Za-z0-9._:-]{1,64}$"
MAX_TEXT = 200_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SettingsPatch(_Strict):
    """Per-conversation settings; a field left out keeps its value.

    - ``auto_compact`` (default true): automatic pruning and compaction.
    - ``prune`` (default true): prune stale tool output before summarizing.
    - ``trigger`` (default 0.85, in (0, 1]): compact when the context reaches this share of the
      input budget; ``target`` (default 0.45, in (0, trigger)): compact down to this share.
    - ``summarizer`` (default ``model``): the conversation's model, or ``extractive`` (no model
      call).
    - ``context_window`` (default null: the model's): override the window, >= 1024.
    """

    auto_compact: bool | None = None
    prune: bool | None = None
    trigger: float | None = Field(default=None, gt=0, le=1)
    target: float | None = Field(default=None, gt=0, lt=1)
    summarizer: Literal["model", "extractive"] | None = None
    context_window: int | None = Field(default=None, ge=1024, le=100_000_000)


class ConversationCreate(_Strict):
    """A new conversation: its model (one the service allows; default the service's first),
    system prompt, title and settings. ``id``: your own id (default: a random one)."""

    id: str | None = Field(default=None, pattern=ID_PATTERN)
    model: str | None = Field(default=None, min_length=1, max_length=255)
    system: str | None = Field(default=None, max_length=MAX_TEXT)
    title: str | None = Field(default=None, max_length=200)
    settings: SettingsPatch | None = None


class ConversationUpdate(_Strict):
    """Rename a conversation, change its system prompt (empty: none) or its model (one of
    ``GET /v1/models``)."""

    title: str | None = Field(default=None, max_length=200)
    system: str | None = Field(default=None, max_length=MAX_TEXT)
    model: str | None = Field(default=None, min_length=1, max_length=255)


class ModelsOut(BaseModel):
    """The models a conversation may use: ``models`` (the first is the default); ``any``:
    the service lists none, so any model string it can call is allowed."""

    models: list[str]
    default: str | None
    any: bool


class ConversationOut(BaseModel):
    """A conversation."""

    id: str
    title: str | None
    model: str | None
    system: str | None
    settings: dict[str, Any]
    created_at: datetime
    updated_at: datetime


def _message_text(value: object) -> str:
    """Text of 1 to ``MAX_TEXT`` characters, lone surrogates included: a valid JSON escape
    that a client or a tool may send (pydantic's own ``str`` refuses them; abridged keeps them
    and replaces them only where they must be encoded)."""
    if not isinstance(value, str):
        raise ValueError("Input should be a valid string")
    if not value:
        raise ValueError("String should have at least 1 character")
    if len(value) > MAX_TEXT:
        raise ValueError(f"String should have at most {MAX_TEXT} characters")
    return value


MessageText = Annotated[
    Any,
    PlainValidator(_message_text),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_TEXT}),
]


class SendMessage(_Strict):
    """A user message. ``id``: an idempotency key (a send retried with the same id is stored
    once, and finishes the turn that answers it if that turn was interrupted)."""

    content: MessageText
    id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9._:-]{1,128}$")


class Breakdown(BaseModel):
    """Tokens by part of the context."""

    system: int
    tools: int
    summary: int
    messages: int
    total: int


class ContextResponse(BaseModel):
    """The context the next call would send (like Letta's context overview): ``reported`` of
    ``tokens.total`` is the provider's own count, ``estimated`` abridged's estimate since."""

    window: int
    window_known: bool
    input_budget: int
    trigger: int
    target: int
    tokens: Breakdown
    reported: int
    estimated: int
    messages: int
    compactions: int
    auto_compact: bool
    state: Literal["green", "amber", "red", "grey"]


class CompactRequest(_Strict):
    """``dry_run``: plan only, change nothing. ``confirm``: required when more than half of
    the context would be summarized away. ``focus``: what the summary should keep above all."""

    dry_run: bool = False
    confirm: bool = False
    focus: str | None = Field(default=None, max_length=2_000)


class CompactResponse(BaseModel):
    """What a compaction did (or, in a dry run, would do). A dry run's ``after`` holds the
    summary the extractive summarizer makes now; ``after_estimated`` is true when the
    conversation's model writes the summary instead (held to the same ceiling, its size can
    differ)."""

    dry_run: bool
    action: str
    detail: str | None = None
    before: Breakdown
    after: Breakdown
    after_estimated: bool = False
    share_removed: float
    needs_confirm: bool
    summary: str | None = None
    notice: str | None = None


class MessageOut(BaseModel):
    """A stored message with its statistics (``cost`` in dollars when prices are known)."""

    seq: int | None
    id: str
    role: str
    kind: str | None
    text: str
    message: dict[str, Any]
    status: str
    session_id: str
    model: str | None
    input_tokens: int | None
    cached_tokens: int | None
    output_tokens: int | None
    ttft_ms: float | None
    total_ms: float | None
    cost: float | None
    created_at: datetime


class TimelineOut(BaseModel):
    """A conversation's messages and compactions (``cut_seq`` places a compaction before the
    message of that sequence number)."""

    messages: list[MessageOut]
    compactions: list[CompactionOut]


class ResumeRequest(_Strict):
    """The session to make current again: its id, an id prefix, ``#number`` or search words."""

    session: str = Field(min_length=1, max_length=200)


class CommandResponse(BaseModel):
    """What a session command did, in words."""

    text: str
    session: SessionOut | None = None


class CallOut(BaseModel):
    """One model call (the call inspector): the provider's figures (``input_tokens`` is the
    whole context it read, ``cached_tokens`` the part from its cache; ``None`` when it reported
    nothing) and abridged's estimate by part of the layout (``by_section``: system, pinned,
    summary, pruned, kept) and ``tools``, the conversation's tool definitions sent with it."""

    index: int
    epoch: int
    estimate: int
    tools: int
    input_tokens: int | None
    cached_tokens: int | None
    output_tokens: int | None
    retry: bool
    ok: bool
    messages: int
    by_section: dict[str, int]


class SentMessageOut(BaseModel):
    """One message of a call as it was sent."""

    section: str
    role: str
    tokens: int
    cached: bool
    text: str
    message: dict[str, Any]


class CallDetail(CallOut):
    """One call with every message it sent."""

    sent: list[SentMessageOut]
