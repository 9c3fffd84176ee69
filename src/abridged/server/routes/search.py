"""Search over the text of the tenant's stored messages (``GET /v1/search/messages``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel

from abridged.server.auth import require_tenant
from abridged.server.service import Service, service_of

router = APIRouter(prefix="/v1/search", tags=["search"])

Tenant = Annotated[str, Depends(require_tenant)]
Svc = Annotated[Service, Depends(service_of)]


class MessageHitOut(BaseModel):
    """A stored message holding every word searched: its conversation, its place, its role
    and the text around the first word found."""

    conversation_id: str
    seq: int
    role: str
    snippet: str
    created_at: datetime


@router.get("/messages", response_model=list[MessageHitOut])
async def search_messages(
    tenant: Tenant,
    svc: Svc,
    q: Annotated[str, Query(min_length=1, max_length=200, description="the words to find")],
    conversation_id: Annotated[
        str | None, Query(max_length=255, description="only in this conversation")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> Any:
    """Messages of the tenant's conversations whose text (what the user and the model wrote,
    not tool output) holds every word of ``q`` (any case), the newest first."""
    hits = await svc.store.search_messages(
        q, owner=tenant, conversation_id=conversation_id, limit=limit
    )
    return [
        MessageHitOut(
            conversation_id=h.conversation_id,
            seq=h.seq,
            role=h.role,
            snippet=h.snippet,
            created_at=h.created_at,
        )
        for h in hits
    ]
