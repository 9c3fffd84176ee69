"""Sessions of a conversation: list, show, new, clear, resume, search."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from abridged.runtime.commands import session_gists
from abridged.runtime.conversation import Conversation
from abridged.server.auth import require_tenant
from abridged.server.schemas import CommandResponse, ResumeRequest, SessionHitOut, SessionOut
from abridged.server.scope import ConversationKey, public
from abridged.server.service import Service, service_of
from abridged.store import SessionInfo

router = APIRouter(prefix="/v1/conversations", tags=["sessions"])

Tenant = Annotated[str, Depends(require_tenant)]
Svc = Annotated[Service, Depends(service_of)]


def session_out(info: SessionInfo, gist: str = "") -> SessionOut:
    """The API form of a session."""
    return SessionOut.of(info, gist)


@router.get("/{conversation_id}/sessions", response_model=list[SessionOut])
async def list_sessions(conversation_id: ConversationKey, tenant: Tenant, svc: Svc) -> Any:
    """Every session of the conversation, oldest first, each with the line that tells it apart
    (``gist``: as the chat's ``/resume`` lists it)."""
    sessions = await svc.store.list_sessions(conversation_id, owner=tenant)
    gists = await session_gists(svc.store, conversation_id, sessions)
    return [session_out(s, gists.get(s.id, "")) for s in sessions]


@router.get("/{conversation_id}/sessions/search", response_model=list[SessionHitOut])
async def search_sessions(
    conversation_id: ConversationKey,
    request: Request,
    tenant: Tenant,
    svc: Svc,
    q: Annotated[str, Query(min_length=1, max_length=500)],
    limit: Annotated[int, Query(ge=1, le=50)] = 5,
) -> Any:
    """Sessions whose summary best matches ``q``, best first: each session with its
    conversation, ``score`` and ``method`` (as ``abridged sessions search --json`` shows it)."""
    hits = await svc.store.search(q, conversation_id=conversation_id, owner=tenant, limit=limit)
    sessions = {s.id: s for s in await svc.store.list_sessions(conversation_id, owner=tenant)}
    found = [
        SessionHitOut.found(h, sessions[h.session_id]).model_dump(mode="json")
        for h in hits
        if h.session_id in sessions
    ]
    return public(request, found)  # the tenant's name for the conversation, never the key


@router.get("/{conversation_id}/sessions/{session_id}", response_model=SessionOut)
async def get_session(
    conversation_id: ConversationKey, session_id: str, tenant: Tenant, svc: Svc
) -> Any:
    """One session."""
    return session_out(await svc.store.get_session(conversation_id, session_id, owner=tenant))


async def _command(svc: Service, tenant: str, conversation_id: str, line: str) -> CommandResponse:
    await svc.store.open_conversation(conversation_id, owner=tenant)

    async def action(convo: Conversation) -> CommandResponse:
        result = await convo.send(line)
        current = convo.session
        return CommandResponse(
            text=result.text, session=session_out(current) if current is not None else None
        )

    return await svc.runner.exclusive(tenant, conversation_id, action)


@router.post("/{conversation_id}/sessions/new", response_model=CommandResponse)
async def new_session(conversation_id: ConversationKey, tenant: Tenant, svc: Svc) -> Any:
    """Start a new session from the current one's summary (made in the background)."""
    return await _command(svc, tenant, conversation_id, "/new")


@router.post("/{conversation_id}/sessions/clear", response_model=CommandResponse)
async def clear_session(conversation_id: ConversationKey, tenant: Tenant, svc: Svc) -> Any:
    """Start an empty session (the old one can be resumed)."""
    return await _command(svc, tenant, conversation_id, "/clear")


@router.post("/{conversation_id}/sessions/resume", response_model=CommandResponse)
async def resume_session(
    conversation_id: ConversationKey, body: ResumeRequest, tenant: Tenant, svc: Svc
) -> Any:
    """Make an earlier session current again (by id, id prefix, #number or search words)."""
    line = "/resume " + " ".join(body.session.split())
    return await _command(svc, tenant, conversation_id, line)
