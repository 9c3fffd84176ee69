"""Which stored conversation a proxied request belongs to.

In order: the ``X-Abridged-Conversation`` header (the caller says), the headers common clients
already send (Open WebUI's ``X-OpenWebUI-Chat-Id``, Codex's ``session-id`` / ``session_id``),
else a fingerprint of the request's stable prefix: the API, the model family is left out (a
conversation may switch models), the system prompt, the first user message and the tool names.

Limits of the fingerprint: two conversations that open with the same system prompt, the same
first message and the same tools are one conversation to the proxy until they differ; it then
sees an edited history and forks (``abridged.server.proxy.conversations``), so nothing is lost,
but the fork starts without the first one's summary. Send ``X-Abridged-Conversation`` to be
exact. Every key is scoped by a hash of the client's API key, so clients with different keys
never share a conversation.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from abridged.server.proxy.apis import Api, history_key

__all__ = ["IDENTITY_HEADERS", "Identity", "conversation_identity", "key_scope"]

IDENTITY_HEADERS = ("x-abridged-conversation", "x-openwebui-chat-id", "session-id", "session_id")


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def key_scope(headers: Mapping[str, str]) -> str:
    """A stable, non-reversible name of the client's credentials (``anonymous`` without)."""
    secret = headers.get("authorization") or headers.get("x-api-key") or headers.get("api-key")
    return "key-" + _digest(secret)[:16] if secret else "anonymous"


class Identity:
    """A conversation's identity: ``conversation_id`` in the store, ``owner`` (the key scope)
    and ``source`` (``header:<name>`` or ``fingerprint``)."""

    __slots__ = ("conversation_id", "owner", "source")

    def __init__(self, conversation_id: str, owner: str, source: str) -> None:
        self.conversation_id = conversation_id
        self.owner = owner
        self.source = source

    def __repr__(self) -> str:
        return f"Identity({self.conversation_id!r}, source={self.source!r})"


def _first_user(messages: Any) -> Any:
    if not isinstance(messages, list):
        return None
    for item in messages:
        if isinstance(item, dict) and item.get("role") == "user":
            return item.get("content")
    return None


def _system(api: Api, body: Mapping[str, Any]) -> Any:
    if api == "anthropic":
        return body.get("system")
    if api == "openai-responses" and body.get("instructions"):
        return body.get("instructions")
    messages = body.get(history_key(api))
    if not isinstance(messages, list):
        return None
    for m in messages:  # the first one only: not a scan of the whole history every request
        if isinstance(m, dict) and m.get("role") in ("system", "developer"):
            return [m.get("content")]
    return []


def _tool_names(body: Mapping[str, Any]) -> list[str]:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return []
    names = []
    for tool in tools:
        if isinstance(tool, dict):
            fn = tool.get("function")
            name = fn.get("name") if isinstance(fn, dict) else tool.get("name")
            if isinstance(name, str):
                names.append(name)
    return sorted(names)


def conversation_identity(
    api: Api, headers: Mapping[str, str], body: Mapping[str, Any]
) -> Identity:
    """The identity of a request (see the module docstring). ``headers`` are lower-case.

    >>> hi = {"role": "user", "content": "hi"}
    >>> a = conversation_identity("openai-chat", {}, {"messages": [hi]})
    >>> reply = {"role": "assistant", "content": "hello"}
    >>> b = conversation_identity("openai-chat", {}, {"messages": [hi, reply]})
    >>> a.conversation_id == b.conversation_id, a.source
    (True, 'fingerprint')
    """
    owner = key_scope(headers)
    for name in IDENTITY_HEADERS:
        value = headers.get(name)
        if value and value.strip():
            return Identity(
                "px-" + _digest(owner, name, value.strip())[:32], owner, "header:" + name
            )
    stable = json.dumps(
        [api, _system(api, body), _first_user(body.get(history_key(api))), _tool_names(body)],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return Identity("px-" + _digest(owner, "fingerprint", stable)[:32], owner, "fingerprint")
