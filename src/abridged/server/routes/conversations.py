"""Conversations: create, list (with search), get, update, delete on purpose, settings,
export, the context overview, compact (with a dry run) and prune."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Response
from fastapi.responses import JSONResponse

from abridged.core.model import Message, message_to_dict
from abridged.engine.plan import CompactionPlan
from abridged.errors import ProviderError, SettingError
from abridged.formats.wire import encodable
from abridged.runtime.conversation import Conversation
from abridged.runtime.history import is_command
from abridged.runtime.overview import ContextOverview, context_overview, meter_state
from abridged.server.auth import require_tenant
from abridged.server.runner import SETTING_DEFAULTS, api_settings
from abridged.server.schemas import (
    Breakdown,
    CompactRequest,
    CompactResponse,
    ContextResponse,
    ConversationCreate,
    ConversationOut,
    ConversationUpdate,
    SettingsPatch,
)
from abridged.server.scope import ConversationKey, new_key
from abridged.server.service import Service, service_of
from abridged.store import ConversationInfo

router = APIRouter(prefix="/v1/conversations", tags=["conversations"])

Tenant = Annotated[str, Depends(require_tenant)]
Svc = Annotated[Service, Depends(service_of)]

#: Above this share of the context summarized away, a compaction needs ``confirm``.
CONFIRM_SHARE = 0.5


def conversation_out(info: ConversationInfo) -> ConversationOut:
    """The API form of a conversation (its id is the name its tenant gave it, never the
    store's key)."""
    settings = dict(info.settings)
    system = settings.get("system")
    title = settings.get("title")
    return ConversationOut(
        id=info.name,
        title=title if isinstance(title, str) else None,
        model=info.model,
        system=system if isinstance(system, str) else None,
        settings=api_settings({k: v for k, v in settings.items() if k in SETTING_DEFAULTS}),
        created_at=info.created_at,
        updated_at=info.updated_at,
    )


def _patch(values: SettingsPatch | None) -> dict[str, Any]:
    return {} if values is None else values.model_dump(exclude_none=True)


def allowed_model(svc: Service, model: str | None) -> str:
    """``model`` (else the service's default) when a conversation may use it: one of the
    service's models when it lists them, and a model string the service can make a client of
    (a known provider, its key present); ``SettingError`` (422) naming the model otherwise,
    before anything is stored."""
    model = model or svc.config.default_model
    if model is None:
        raise SettingError("model", None, "a model (the service has no default model)")
    if svc.config.models and model not in svc.config.models:
        raise SettingError("model", model, "one of: " + ", ".join(svc.config.models))
    try:
        svc.pool.model(model)
    except ProviderError as exc:  # no key for its provider: the request's model, not an outage
        raise SettingError("model", model, f"a model this service can call ({exc})") from exc
    return model


@router.post("", status_code=201, response_model=ConversationOut)
async def create_conversation(body: ConversationCreate, tenant: Tenant, svc: Svc) -> Any:
    """Create a conversation (its model must be one the service allows)."""
    model = allowed_model(svc, body.model)
    settings: dict[str, Any] = api_settings(_patch(body.settings))
    settings = {k: v for k, v in settings.items() if v != SETTING_DEFAULTS[k]}
    if body.system:
        settings["system"] = body.system
    if body.title:
        settings["title"] = body.title
    # the id is the tenant's own (``abridged.server.scope``): 409 only for one of its own ids
    # (without one, a fresh random id is both the key and the name)
    name = body.id
    info = await svc.store.create_conversation(
        new_key(svc, name) if name else None,
        name=name,
        owner=tenant,
        model=model,
        settings=settings,
    )
    return conversation_out(info)


@router.get("", response_model=list[ConversationOut])
async def list_conversations(
    tenant: Tenant,
    svc: Svc,
    q: Annotated[str | None, Query(max_length=200, description="words in the title or id")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> Any:
    """The tenant's conversations, most recently updated first (``q`` filters by title/id)."""
    found = await svc.store.list_conversations(owner=tenant)
    out = [conversation_out(i) for i in found]
    if q:
        words = q.lower().split()
        out = [
            c for c in out if all(w in f"{c.title or ''} {c.id} {c.model}".lower() for w in words)
        ]
    return out[:limit]


@router.get("/{conversation_id}", response_model=ConversationOut)
async def get_conversation(conversation_id: ConversationKey, tenant: Tenant, svc: Svc) -> Any:
    """One conversation."""
    return conversation_out(await svc.store.open_conversation(conversation_id, owner=tenant))


@router.patch("/{conversation_id}", response_model=ConversationOut)
async def update_conversation(
    conversation_id: ConversationKey, body: ConversationUpdate, tenant: Tenant, svc: Svc
) -> Any:
    """Rename a conversation, change its system prompt or its model (one the service allows,
    else 422 and nothing changes); each from the next turn on: a change made while a turn runs
    waits for its end. The history stays as it is; the new model's window applies at once
    (a context now over its budget is compacted before the next call)."""
    info = await svc.store.open_conversation(conversation_id, owner=tenant)
    changes = body.model_dump(exclude_unset=True)
    model = changes.pop("model", None)
    if model is not None:
        model = allowed_model(svc, model)
    settings = dict(info.settings)
    for key, value in changes.items():
        if value:
            settings[key] = value
        else:
            settings.pop(key, None)

    async def change(convo: Conversation) -> ConversationInfo:
        await convo.wait_idle()
        return await svc.store.update_settings(conversation_id, settings, owner=tenant, model=model)

    if model is not None and model != info.model:
        # the running turn ends with the model it started with
        info = await svc.runner.exclusive(tenant, conversation_id, change)
    else:
        info = await svc.store.update_settings(conversation_id, settings, owner=tenant)
    svc.pool.forget(conversation_id)
    return conversation_out(info)


@router.delete("/{conversation_id}", status_code=204)
async def delete_conversation(
    conversation_id: ConversationKey,
    tenant: Tenant,
    svc: Svc,
    confirm: Annotated[bool, Query(description="must be true: the delete is real")] = False,
) -> Response:
    """Delete a conversation for real (messages, sessions, summaries): ``?confirm=true``."""
    await svc.store.open_conversation(conversation_id, owner=tenant)
    if not confirm:
        raise HTTPException(
            400, "deleting a conversation removes every message for good: add ?confirm=true"
        )
    await svc.runner.exclusive(tenant, conversation_id, _noop)
    svc.pool.forget(conversation_id)
    await svc.store.delete_conversation(conversation_id, owner=tenant)
    return Response(status_code=204)


async def _noop(convo: Conversation) -> None:
    await convo.wait_idle()


@router.get("/{conversation_id}/settings", response_model=SettingsPatch)
async def get_settings(conversation_id: ConversationKey, tenant: Tenant, svc: Svc) -> Any:
    """The conversation's settings (defaults filled in)."""
    info = await svc.store.open_conversation(conversation_id, owner=tenant)
    return conversation_out(info).settings


@router.patch("/{conversation_id}/settings", response_model=SettingsPatch)
async def update_settings(
    conversation_id: ConversationKey, body: SettingsPatch, tenant: Tenant, svc: Svc
) -> Any:
    """Change settings (validated together: a target above the trigger gets a 422)."""
    info = await svc.store.open_conversation(conversation_id, owner=tenant)
    stored = dict(info.settings)
    merged = api_settings({**stored, **_patch(body)})
    for key, value in merged.items():
        if value == SETTING_DEFAULTS[key]:
            stored.pop(key, None)
        else:
            stored[key] = value
    await svc.store.update_settings(conversation_id, stored, owner=tenant)
    svc.pool.forget(conversation_id)
    return merged


def _export_messages(
    history: list[Message], system: str | None, fmt: str
) -> dict[str, Any] | list[dict[str, Any]]:
    messages = [m for m in history if not is_command(m)]
    if system:
        messages.insert(0, Message.system(system))
    if fmt == "openai":
        from abridged.formats.openai_chat import messages_to_openai  # noqa: PLC0415

        return {"messages": messages_to_openai(messages)}
    if fmt == "anthropic":
        from abridged.formats.anthropic_messages import messages_to_anthropic  # noqa: PLC0415

        head, items = messages_to_anthropic(messages)
        return {"system": head, "messages": items} if head is not None else {"messages": items}
    return {"messages": [message_to_dict(m) for m in messages]}


@router.get("/{conversation_id}/export")
async def export_conversation(
    conversation_id: ConversationKey,
    tenant: Tenant,
    svc: Svc,
    format: Annotated[Literal["abridged", "openai", "anthropic"], Query()] = "abridged",
) -> Any:
    """Everything said in the current session's lineage (summarized messages included), in
    abridged's JSON or the OpenAI or Anthropic message format."""
    info = await svc.store.open_conversation(conversation_id, owner=tenant)
    stored = await svc.store.history(conversation_id, owner=tenant)
    system = info.settings.get("system")
    body = _export_messages(
        [s.message for s in stored], system if isinstance(system, str) else None, format
    )
    # JSON leaves as UTF-8: a lone surrogate kept in the store is sent as U+FFFD
    return encodable({"conversation_id": info.name, "format": format, **_as_dict(body)})


def _as_dict(body: dict[str, Any] | list[dict[str, Any]]) -> dict[str, Any]:
    return body if isinstance(body, dict) else {"messages": body}


def _breakdown(overview: ContextOverview) -> Breakdown:
    return Breakdown(
        system=overview.system,
        tools=overview.tools,
        summary=overview.summary,
        messages=overview.messages,
        total=overview.total,
    )


def context_response(overview: ContextOverview) -> ContextResponse:
    """The API form of a context overview."""
    return ContextResponse(
        window=overview.window,
        window_known=overview.window_known,
        input_budget=overview.input_budget,
        trigger=overview.trigger,
        target=overview.target,
        tokens=_breakdown(overview),
        reported=overview.reported,
        estimated=overview.estimated,
        messages=overview.message_count,
        compactions=overview.compactions,
        auto_compact=overview.auto_compact,
        state=meter_state(overview.total, overview.trigger, known_window=overview.window_known),
    )


@router.get("/{conversation_id}/context", response_model=ContextResponse)
async def get_context(conversation_id: ConversationKey, tenant: Tenant, svc: Svc) -> Any:
    """The context the next call would send: window, budget, trigger, tokens by part."""
    info = await svc.store.open_conversation(conversation_id, owner=tenant)
    convo = await svc.pool.checkout(tenant, info)
    return context_response(context_overview(convo))


def _after(plan: CompactionPlan, before: ContextOverview, total: int) -> Breakdown:
    """The context after a planned compaction of ``total`` tokens (its summary made by the
    extractive summarizer: ``Conversation.preview_tokens_after``)."""
    summary = max(total - plan.base_tokens_after, 0) if plan.action == "summarize" else 0
    if plan.action != "summarize":
        summary = min(before.summary, total)
    system = min(before.system, total)
    tools = min(before.tools, max(total - system, 0))
    summary = min(summary, max(total - system - tools, 0))
    return Breakdown(
        system=system,
        tools=tools,
        summary=summary,
        messages=max(total - system - tools - summary, 0),
        total=total,
    )


def _preview(
    plan: CompactionPlan | None, before: ContextOverview, total_after: int | None = None
) -> CompactResponse:
    was = _breakdown(before)
    if plan is None or plan.action == "nothing":
        detail = plan.detail if plan is not None else "nothing to compact"
        return CompactResponse(
            dry_run=True,
            action="nothing",
            detail=detail,
            before=was,
            after=was,
            share_removed=0.0,
            needs_confirm=False,
        )
    kept = plan.base_tokens_after
    share = 1 - kept / plan.tokens_before if plan.tokens_before > 0 else 0.0
    share = min(max(share, 0.0), 1.0)
    return CompactResponse(
        dry_run=True,
        action=plan.action,
        detail=plan.reason,
        before=was,
        after=_after(
            plan, before, total_after if total_after is not None else plan.base_tokens_after
        ),
        share_removed=round(share, 4),
        needs_confirm=plan.action == "summarize" and share > CONFIRM_SHARE,
    )


@router.post("/{conversation_id}/compact", response_model=CompactResponse)
async def compact_conversation(
    conversation_id: ConversationKey, body: CompactRequest, tenant: Tenant, svc: Svc
) -> Any:
    """Compact now, after the running turn. A dry run plans only and returns the before/after
    breakdown; when more than half of the context would be summarized away the compaction
    needs ``confirm: true`` (else 409 with the preview). The preview's ``after`` holds the
    summary the extractive summarizer makes now; for a conversation its model summarizes, that
    estimates the model's (``after_estimated``)."""
    info = await svc.store.open_conversation(conversation_id, owner=tenant)
    by_model = api_settings(dict(info.settings))["summarizer"] == "model"

    async def action(convo: Conversation) -> CompactResponse:
        await convo.wait_idle()
        before = context_overview(convo)
        plan = await convo.preview_compaction(body.focus)
        promised = await convo.preview_tokens_after(plan) if plan is not None else None
        preview = _preview(plan, before, promised)
        if by_model and preview.action == "summarize":
            preview = preview.model_copy(update={"after_estimated": True})
        if body.dry_run or preview.action == "nothing":
            return preview
        if preview.needs_confirm and not body.confirm:
            return preview
        result = await convo.compact_now(body.focus)
        after = context_overview(convo)
        ended = next(
            (
                e
                for e in (result.events if result is not None else ())
                if e.kind == "compaction_ended"
            ),
            None,
        )
        return preview.model_copy(
            update={
                "dry_run": False,
                "action": result.status if result is not None else "nothing",
                "after": _breakdown(after),
                "after_estimated": False,
                "summary": result.summary_text if result is not None else None,
                "notice": ended.text if ended is not None else None,
            }
        )

    done = await svc.runner.exclusive(tenant, conversation_id, action)
    if done.dry_run and done.needs_confirm and not body.dry_run:
        return JSONResponse(
            {
                "detail": f"this compaction would summarize away "
                f"{round(100 * done.share_removed)}% of the context: send confirm: true to "
                "go ahead",
                "preview": done.model_dump(mode="json"),
            },
            409,
        )
    return done


@router.post("/{conversation_id}/prune", response_model=CompactResponse)
async def prune_conversation(conversation_id: ConversationKey, tenant: Tenant, svc: Svc) -> Any:
    """Prune stale tool output now (no summary)."""
    await svc.store.open_conversation(conversation_id, owner=tenant)

    async def action(convo: Conversation) -> CompactResponse:
        await convo.wait_idle()
        before = context_overview(convo)
        pruned = await convo.prune_now()
        after = context_overview(convo)
        share = 1 - after.total / before.total if before.total else 0.0
        return CompactResponse(
            dry_run=False,
            action="pruned" if pruned is not None else "nothing",
            detail=None if pruned is not None else "no tool output old enough to prune",
            before=_breakdown(before),
            after=_breakdown(after),
            share_removed=round(max(share, 0.0), 4),
            needs_confirm=False,
            notice=pruned.text if pruned is not None else None,
        )

    return await svc.runner.exclusive(tenant, conversation_id, action)
