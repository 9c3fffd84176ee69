"""The call inspector: exactly what each model call of a conversation sent, part by part."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query

from abridged.core.model import message_to_dict
from abridged.runtime.conversation import Conversation
from abridged.runtime.inspection import CallInspection, inspect_call
from abridged.server.auth import require_tenant
from abridged.server.schemas import CallDetail, CallOut, SentMessageOut
from abridged.server.scope import ConversationKey
from abridged.server.service import Service, service_of

router = APIRouter(prefix="/v1/conversations", tags=["calls"])

Tenant = Annotated[str, Depends(require_tenant)]
Svc = Annotated[Service, Depends(service_of)]


async def _conversation(svc: Service, tenant: str, conversation_id: str) -> Conversation:
    info = await svc.store.open_conversation(conversation_id, owner=tenant)
    return await svc.pool.checkout(tenant, info)


def _inspect(convo: Conversation, index: int) -> CallInspection:
    record = convo.call_log[index]
    count = convo.counter
    return inspect_call(
        index,
        epoch=record.epoch,
        messages=record.messages,
        estimate=record.estimate,
        usage=record.usage,
        tokens=lambda m: count.calibration.apply(count.message_tokens(m)),
        retry=record.retry,
        ok=record.ok,
    )


def _call_out(call: CallInspection, tools: int) -> CallOut:
    usage = call.usage
    return CallOut(
        index=call.index,
        epoch=call.epoch,
        estimate=call.estimate,
        tools=tools,
        input_tokens=usage.context_tokens if usage is not None else None,
        cached_tokens=usage.cache_read if usage is not None else None,
        output_tokens=usage.output if usage is not None else None,
        retry=call.retry,
        ok=call.ok,
        messages=len(call.messages),
        by_section=call.by_section,
    )


@router.get("/{conversation_id}/calls", response_model=list[CallOut])
async def list_calls(
    conversation_id: ConversationKey,
    tenant: Tenant,
    svc: Svc,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> Any:
    """The model calls this worker made for the conversation, oldest first (the newest
    ``limit``): tokens by part of the layout and what the provider reported. Kept in the
    worker's memory: a restart starts the list again, and each worker lists its own calls."""
    convo = await _conversation(svc, tenant, conversation_id)
    first = max(len(convo.call_log) - limit, 0)
    tools = convo.budget().tools_tokens
    return [_call_out(_inspect(convo, i), tools) for i in range(first, len(convo.call_log))]


@router.get("/{conversation_id}/calls/{index}", response_model=CallDetail)
async def get_call(conversation_id: ConversationKey, index: int, tenant: Tenant, svc: Svc) -> Any:
    """One call: every message it sent, with its part of the layout, tokens and whether it was
    inside the cached prefix."""
    convo = await _conversation(svc, tenant, conversation_id)
    if not 0 <= index < len(convo.call_log):
        raise HTTPException(404, f"no call {index} (this worker knows {len(convo.call_log)})")
    call = _inspect(convo, index)
    return CallDetail(
        **_call_out(call, convo.budget().tools_tokens).model_dump(),
        sent=[
            SentMessageOut(
                section=m.section,
                role=m.role,
                tokens=m.tokens,
                cached=m.cached,
                text=m.message.text,
                message=message_to_dict(m.message),
            )
            for m in call.messages
        ],
    )
