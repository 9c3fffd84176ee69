"""Typed errors of abridged, each carrying the context needed to act on it (never secrets)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class AbridgedError(Exception):
    """Base of every error abridged raises on purpose.

    ``context`` holds what identifies the problem (conversation id, message index, sizes), so
    callers can act on it without parsing the message text.
    """

    def __init__(self, message: str, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self.context: Mapping[str, Any] = {k: v for k, v in context.items() if v is not None}

    def __str__(self) -> str:
        if not self.context:
            return self.message
        details = ", ".join(f"{k}={v!r}" for k, v in self.context.items())
        return f"{self.message} ({details})"


class MessageValidationError(AbridgedError, ValueError):
    """A message, or a list of messages, is malformed: names the message index and field."""

    def __init__(
        self,
        message: str,
        *,
        index: int | None = None,
        field: str | None = None,
        conversation_id: str | None = None,
        **context: Any,
    ) -> None:
        super().__init__(
            message, conversation_id=conversation_id, index=index, field=field, **context
        )
        self.index = index
        self.field = field
        self.conversation_id = conversation_id


class FormatError(AbridgedError, ValueError):
    """Input in a provider or transcript format could not be read: names where and what."""

    def __init__(
        self,
        message: str,
        *,
        format: str,
        path: str | None = None,
        line: int | None = None,
        index: int | None = None,
        expected: str | None = None,
        **context: Any,
    ) -> None:
        super().__init__(
            message,
            format=format,
            path=path,
            line=line,
            index=index,
            expected=expected,
            **context,
        )
        self.format = format
        self.path = path
        self.line = line
        self.index = index
        self.expected = expected

    def describe(self) -> str:
        """One line for people: ``path, line 3: invalid JSON (expected one JSON object per
        line)``."""
        message = self.message
        if self.line is not None and not message.startswith(f"line {self.line}"):
            message = f"line {self.line}: {message}"
        text = f"{self.path or 'input'}, {message}" if self.line is not None else message
        if self.line is None:
            text = f"{self.path or 'input'}: {message}"
        if self.expected:
            text += f" (expected {self.expected})"
        return text


class SettingError(AbridgedError, ValueError):
    """A setting is outside its valid range: names the setting, its value and the range."""

    def __init__(self, name: str, value: object, valid: str, **context: Any) -> None:
        super().__init__(
            f"setting {name}={value!r} is invalid: expected {valid}",
            setting=name,
            value=value,
            valid=valid,
            **context,
        )
        self.name = name
        self.value = value
        self.valid = valid


class ContextOverflowError(AbridgedError):
    """The context cannot be brought within the window (or the provider said it was too long)."""

    def __init__(
        self,
        message: str,
        *,
        tokens: int | None = None,
        limit: int | None = None,
        conversation_id: str | None = None,
        **context: Any,
    ) -> None:
        super().__init__(
            message, tokens=tokens, limit=limit, conversation_id=conversation_id, **context
        )
        self.tokens = tokens
        self.limit = limit
        self.conversation_id = conversation_id


class SilentTruncationError(ContextOverflowError):
    """The provider read far less than was sent: it cut the prompt without an error.

    ``tokens`` is the estimate of what was sent, ``reported`` what the provider said it read.
    """

    def __init__(self, message: str, *, tokens: int, reported: int, limit: int | None) -> None:
        super().__init__(message, tokens=tokens, limit=limit, reported=reported)
        self.reported = reported


class SummaryFailedError(AbridgedError):
    """A model summary could not be made; ``reason`` says why (internal: the summarizer falls
    back to the extractive summary, so callers do not see it)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ProviderError(AbridgedError):
    """A provider or provider-like endpoint failed (probe, model call); never includes API keys."""


class ProviderConnectionError(ProviderError):
    """The provider could not be reached (connection refused or reset, unknown host, network
    unreachable): ``cause`` is what the system said, not a timeout. Retryable."""

    def __init__(self, message: str, *, cause: str, **context: Any) -> None:
        super().__init__(message, cause=cause, **context)
        self.cause = cause


class StoreError(AbridgedError):
    """The store could not do what was asked: names the conversation, session or message."""


class NotFoundError(StoreError, LookupError):
    """A conversation, session or message does not exist (or not in the conversation named)."""


class OwnershipError(StoreError, PermissionError):
    """The conversation belongs to another owner; nothing was read or changed."""


class ConflictError(StoreError):
    """A compare-and-swap on ``conversations.version`` lost: another writer changed it first."""


class ContentionError(ConflictError):
    """A writer lost the compare-and-swap again after re-reading and retrying once."""


class LeaseLostError(StoreError):
    """A write made under a conversation's turn lease found the lease no longer the writer's
    (it expired and another worker took it over, or it was given back): nothing of the write
    was stored. The turn that made it must stop; the history is the new holder's to go on."""


class SchemaVersionError(StoreError):
    """The database schema is not the one this abridged knows; the message says how to upgrade."""


class CorruptRowError(StoreError):
    """A stored row cannot be decoded: names the conversation and the message (or session)."""


class StoreEnvironmentError(StoreError):
    """The database, or what it runs on, failed (not the request): ``operation`` names what was
    being done, ``cause`` what the driver or the system said (never a password).

    The failed operation's transaction was rolled back: nothing of it is stored, except when
    the connection was lost while committing, where it may have committed whole (re-read before
    repeating an append). What was acknowledged before stays stored.
    """

    def __init__(self, message: str, *, operation: str, cause: str, **context: Any) -> None:
        super().__init__(message, operation=operation, cause=cause, **context)
        self.operation = operation
        self.cause = cause


class StoreUnavailableError(StoreEnvironmentError):
    """The database cannot be reached or opened: server down or restarting, connection refused
    or lost, unknown host, bad port, failed authentication, a file that cannot be opened."""


class StoreReadOnlyError(StoreEnvironmentError):
    """The database cannot be written: a read-only file, directory or filesystem, or a server
    in read-only mode (reads still work)."""


class StoreFullError(StoreEnvironmentError):
    """The database's disk (or its size limit) is full: nothing more can be written."""


class StoreLockedError(StoreEnvironmentError):
    """Another writer held the database's lock longer than this store waits for it."""
