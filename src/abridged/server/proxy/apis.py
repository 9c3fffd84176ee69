"""The APIs the proxy manages, and where each keeps what abridged reads in a request body."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from abridged.runtime.caller_formats import Format

__all__ = ["API_FORMATS", "Api", "history_key", "history_of"]

Api = Literal["openai-chat", "openai-responses", "anthropic"]

#: The ``ContextManager`` format of each API's history.
API_FORMATS: dict[Api, Format] = {
    "openai-chat": "openai",
    "openai-responses": "responses",
    "anthropic": "anthropic",
}


def history_key(api: Api) -> str:
    """The body field holding the history: ``input`` for Responses, else ``messages``."""
    return "input" if api == "openai-responses" else "messages"


def history_of(api: Api, body: Mapping[str, Any]) -> list[Any] | None:
    """The history a request carries, or ``None`` when abridged cannot manage it: no list, or
    (Responses) a history the provider keeps itself (``previous_response_id``, ``conversation``),
    of which the request holds only the new items.

    >>> history_of("openai-responses", {"input": [], "previous_response_id": "resp_1"}) is None
    True
    """
    history = body.get(history_key(api))
    if not isinstance(history, list):
        return None
    if api == "openai-responses" and (body.get("previous_response_id") or body.get("conversation")):
        return None
    return history
