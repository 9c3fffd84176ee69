"""Validation of message lists: roles, parts, tool-call pairing; issues name index and field."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from abridged.core.model import (
    ROLES,
    File,
    Image,
    Message,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
)
from abridged.errors import MessageValidationError

Severity = Literal["error", "warning"]

# What each role may hold. Anything else is an error, because no provider accepts it.
_ALLOWED_PARTS: dict[str, tuple[type, ...]] = {
    "system": (Text,),
    "user": (Text, Image, File),
    "assistant": (Text, Reasoning, ToolCall, Image, File),
    "tool": (ToolResult, Text),
}


@dataclass(frozen=True, slots=True)
class ValidationIssue:
    """One problem found in a message list.

    ``code`` is stable and machine-readable (``orphan_tool_result``, ``duplicate_call_id``, ...);
    ``severity`` is ``"error"`` when a provider would reject the list, ``"warning"`` when it is
    kept as is but flagged (for example tool arguments that are not valid JSON).
    """

    index: int
    field: str
    code: str
    message: str
    severity: Severity = "error"

    def to_error(self, conversation_id: str | None = None) -> MessageValidationError:
        """This issue as a typed exception."""
        return MessageValidationError(
            f"message {self.index}: {self.message}",
            index=self.index,
            field=self.field,
            conversation_id=conversation_id,
            code=self.code,
        )


def validate_messages(messages: Sequence[Message]) -> list[ValidationIssue]:
    """Every problem in ``messages``, in order; an empty list means the list is valid.

    A tool call still waiting for its result at the end of the list is valid (the step is in
    progress); one whose result never came before the next model message is an error.

    >>> from abridged.core.model import Message
    >>> [i.code for i in validate_messages([Message.tool("c9", "out")])]
    ['orphan_tool_result']
    """
    issues: list[ValidationIssue] = []
    seen_calls: dict[str, int] = {}
    open_calls: dict[str, int] = {}  # call id -> index of the assistant message that made it

    def add(index: int, field: str, code: str, text: str, severity: Severity = "error") -> None:
        issues.append(ValidationIssue(index, field, code, text, severity))

    for index, message in enumerate(messages):
        if message.role not in ROLES:
            add(index, "role", "unknown_role", f"unknown role {message.role!r}")
            continue
        allowed = _ALLOWED_PARTS[message.role]
        for p, part in enumerate(message.parts):
            if not isinstance(part, allowed):
                add(
                    index,
                    f"parts[{p}]",
                    "part_not_allowed",
                    f"a {message.role} message cannot hold a {type(part).__name__} part",
                )

        if message.role == "assistant":
            # A new model message closes the previous step: calls still open were never answered.
            for call_id, at in open_calls.items():
                add(
                    at,
                    "parts",
                    "missing_tool_result",
                    f"tool call {call_id!r} has no result before message {index}",
                )
            open_calls.clear()
            if not _has_content(message):
                add(index, "parts", "empty_assistant", "assistant message has no content")
            for p, part in enumerate(message.parts):
                if not isinstance(part, ToolCall):
                    continue
                if part.id in seen_calls:
                    add(
                        index,
                        f"parts[{p}].id",
                        "duplicate_call_id",
                        f"tool call id {part.id!r} was already used in message "
                        f"{seen_calls[part.id]}",
                    )
                    continue
                seen_calls[part.id] = index
                open_calls[part.id] = index
                if not part.arguments_valid:
                    add(
                        index,
                        f"parts[{p}].arguments",
                        "invalid_arguments",
                        f"arguments of tool call {part.id!r} are not valid JSON (kept verbatim)",
                        "warning",
                    )
        elif message.role == "tool":
            results = message.tool_results
            if not results:
                add(index, "parts", "empty_tool_message", "tool message holds no tool result")
            for p, part in enumerate(message.parts):
                if not isinstance(part, ToolResult):
                    continue
                if part.call_id in open_calls:
                    del open_calls[part.call_id]
                elif part.call_id in seen_calls:
                    add(
                        index,
                        f"parts[{p}].call_id",
                        "misplaced_tool_result",
                        f"tool result for {part.call_id!r} is not in the step of its call "
                        f"(message {seen_calls[part.call_id]}) or answers it twice",
                    )
                else:
                    add(
                        index,
                        f"parts[{p}].call_id",
                        "orphan_tool_result",
                        f"tool result for call id {part.call_id!r} that never appeared",
                    )
        elif message.role == "user" and open_calls and not message.meta.get("text_protocol"):
            for call_id, at in open_calls.items():
                add(
                    at,
                    "parts",
                    "missing_tool_result",
                    f"tool call {call_id!r} has no result before user message {index}",
                )
            open_calls.clear()
    return issues


def check_messages(
    messages: Sequence[Message], *, conversation_id: str | None = None
) -> list[ValidationIssue]:
    """Raise ``MessageValidationError`` for the first error; return the warnings otherwise."""
    issues = validate_messages(messages)
    for issue in issues:
        if issue.severity == "error":
            raise issue.to_error(conversation_id)
    return issues


def is_paired(messages: Sequence[Message]) -> bool:
    """Whether every tool result has its call and every finished call its result.

    This is invariant 1 of the design, checked on every context sent to a model.
    """
    pairing = {"orphan_tool_result", "missing_tool_result", "misplaced_tool_result"}
    return not any(i.code in pairing for i in validate_messages(messages))


def _has_content(message: Message) -> bool:
    for part in message.parts:
        if isinstance(part, Text):
            if part.text.strip():
                return True
        else:
            return True
    return False
