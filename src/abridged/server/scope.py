"""A tenant's conversation ids: each tenant names its conversations in a space of its own.

The id in a route (``/v1/conversations/{conversation_id}``) is the tenant's name for the
conversation; ``ConversationKey`` resolves it to the store's key (``Store.conversation_key``) once
per request, so a name another tenant uses answers exactly as a name nobody uses (404), and a
tenant may create a conversation under any name that is free *for it*. The key never leaves the
service: answers and error texts carry the tenant's name (``public``). With ``--no-auth`` (one
tenant, ``local``) keys are the names themselves, as the CLI and the library see them.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from abridged.server.auth import require_tenant
from abridged.server.service import Service, service_of

__all__ = ["ConversationKey", "conversation_key", "new_key", "public"]


async def conversation_key(
    conversation_id: str,
    request: Request,
    tenant: Annotated[str, Depends(require_tenant)],
    svc: Annotated[Service, Depends(service_of)],
) -> str:
    """FastAPI dependency: the store's key of the tenant's conversation named in the path;
    ``NotFoundError`` (404) when the tenant has none of that name."""
    key = await svc.store.conversation_key(conversation_id, owner=tenant)
    request.state.conversation_names = (key, conversation_id)
    return key


#: A route's ``conversation_id`` parameter: the store key of the conversation the path names.
ConversationKey = Annotated[str, Depends(conversation_key)]


def new_key(svc: Service, name: str) -> str | None:
    """The key a tenant's new conversation ``name`` is stored under: the name itself for the
    one tenant of an open service; else ``None``, and the store derives it from the tenant and
    the name alone (``abridged.store.conversations.scoped_key``)."""
    return name if svc.config.open_access else None


def public(request: Request, value: Any) -> Any:
    """``value`` (a text, or a JSON-like payload) with the request's conversation key replaced
    by the name the tenant used: an error naming the conversation names it as the tenant did."""
    names = getattr(request.state, "conversation_names", None)
    if names is None or names[0] == names[1]:
        return value
    return _renamed(value, *names)


def _renamed(value: Any, key: str, name: str) -> Any:
    if isinstance(value, str):
        return value.replace(key, name)
    if isinstance(value, dict):
        return {k: _renamed(v, key, name) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, key, name) for v in value]
    return value
