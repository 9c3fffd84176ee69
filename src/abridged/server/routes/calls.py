"""The call inspector: exactly what each model call of a conversation sent, part by part (kept
in the store at the end of each turn: ``abridged.server.calllog``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query

from abridged.core.model import message_to_dict
from abridged.errors import NotFoundError
from abridged.runtime.inspection import section_totals
from abridged.server.auth import require_tenant
from abridged.server.schemas import CallDetail, CallOut, SentMessageOut
from abridged.server.scope import ConversationKey
from abridged.server.service import Service, service_of
from abridged.store import StoredCall

router = APIRouter(prefix="/v1/conversations", tags=["calls"])

Tenant = Annotated[str, Depends(require_tenant)]
Svc = Annotated[Service, Depends(service_of)]


def _call_out(call: StoredCall) -> CallOut:
    usage = call.usage
    return CallOut(
        index=call.number,
        epoch=call.epoch,
        estimate=call.estimate,
        tools=call.tools,
        input_tokens=usage.context_tokens if usage is not None else None,
        cached_tokens=usage.cache_read if usage is not None else None,
        output_tokens=usage.output if usage is not None else None,
        retry=call.retry,
        ok=call.ok,
        messages=len(call.sent),
        by_section=section_totals((r.section, r.tokens) for r in call.sent),
    )


@router.get("/{conversation_id}/calls", response_model=list[CallOut])
async def list_calls(
    conversation_id: ConversationKey,
    tenant: Tenant,
    svc: Svc,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> Any:
    """The model calls made for the conversation, oldest first (the newest ``limit``): tokens
    by part of the layout and what the provider reported. Kept in the store at the end of each
    turn: a restart keeps them, and every worker lists them all."""
    return [
        _call_out(c) for c in await svc.store.list_calls(conversation_id, owner=tenant, limit=limit)
    ]


@router.get("/{conversation_id}/calls/{index}", response_model=CallDetail)
async def get_call(conversation_id: ConversationKey, index: int, tenant: Tenant, svc: Svc) -> Any:
    """One call: every message it sent, with its part of the layout, tokens and whether it was
    inside the cached prefix."""
    try:
        call = await svc.store.get_call(conversation_id, index, owner=tenant)
    except NotFoundError as exc:
        if exc.context.get("call") is None:
            raise
        count = await svc.store.call_count(conversation_id, owner=tenant)
        raise HTTPException(404, f"no call {index} (the conversation has {count})") from exc
    sent = await svc.store.sent_messages(conversation_id, call, owner=tenant)
    return CallDetail(
        **_call_out(call).model_dump(),
        sent=[
            SentMessageOut(
                section=ref.section,
                role=message.role,
                tokens=ref.tokens,
                cached=ref.cached,
                text=message.text,
                message=message_to_dict(message),
            )
            for ref, message in zip(call.sent, sent, strict=True)
        ],
    )
