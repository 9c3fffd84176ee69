"""The proxy's conversations: one store-backed ``ContextManager`` per conversation, kept open
per worker, and a fork when a client's history stops continuing the stored one.

A client sends its whole history with every request; the manager stores what is new and
returns the context to send (``abridged.runtime.context_manager``), so a restart or another
worker sends the same bytes. The stored conversation is append-only: when a client edits or
truncates its history (a regenerated reply, an edited message), the request does not continue
the stored messages, and the proxy **forks**: a new stored conversation holds the history as the
client now sends it, and the identity points to it from then on. Nothing stored is lost; the
fork starts where its parent was up to the first message that differs: the shared messages,
the parent's newest summary that covers only those, its pruned outputs
(``abridged.runtime.forking``), so its first context is the parent's and its first compaction
updates that summary. The fork's settings name its parent and how many messages they share
(``forked``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from abridged.core.budget import BudgetSettings
from abridged.core.model import Message
from abridged.core.windows import ModelLimits
from abridged.errors import MessageValidationError
from abridged.runtime.context_manager import ContextManager, Prepared
from abridged.runtime.forking import fork_stored
from abridged.server.proxy.apis import API_FORMATS, Api, history_of
from abridged.server.proxy.config import ProxyConfig
from abridged.server.proxy.identity import Identity
from abridged.store import ConversationInfo, Store

__all__ = ["PROXY_MARK", "ProxyConversations"]

#: The settings key of the proxy's own conversations (their identity's source under it): what
#: its pages list, and all they may show of a shared database.
PROXY_MARK = "proxy"


@dataclass(slots=True)
class _Open:
    manager: ContextManager
    model: str
    api: Api
    used: float = field(default_factory=time.monotonic)


def _pointed(info: ConversationInfo, identity: Identity) -> str:
    """The stored conversation an identity's own conversation points to: its fork, or itself."""
    fork = info.settings.get("fork")
    return fork if isinstance(fork, str) and fork else identity.conversation_id


class ProxyConversations:
    """Managers by stored conversation id (see the module docstring)."""

    def __init__(
        self, store: Store, config: ProxyConfig, *, on_fork: Callable[[], object] = lambda: None
    ) -> None:
        self.store = store
        self.config = config
        self._on_fork = on_fork
        self._open: dict[str, _Open] = {}
        self._limits: dict[str, ModelLimits] = {}

    def manager_of(self, conversation_id: str) -> ContextManager | None:
        """The open manager of a stored conversation, if this worker has one."""
        entry = self._open.get(conversation_id)
        return entry.manager if entry is not None else None

    def window_of(self, model: str) -> int | None:
        """The context window of ``model`` as this worker resolved it (``None``: not yet)."""
        limits = self._limits.get(model)
        return limits.context_window if limits is not None else None

    async def _limits_for(self, model: str, api_key: str | None) -> ModelLimits:
        if model not in self._limits:
            from abridged.providers.limits import resolve_model_limits  # noqa: PLC0415

            self._limits[model] = await resolve_model_limits(
                model, base_url=self.config.upstream + "/v1", api_key=api_key
            )
        return self._limits[model]

    async def current(self, identity: Identity, model: str) -> str:
        """The stored conversation an identity points to now (made on first sight)."""
        info = await self.store.ensure_conversation(
            identity.conversation_id,
            owner=identity.owner,
            model=model,
            settings={PROXY_MARK: {"source": identity.source}},
        )
        return _pointed(info, identity)

    async def _fork(
        self, identity: Identity, model: str, parent_id: str, history: Sequence[Message]
    ) -> str:
        """A fork of ``parent_id`` (the stored conversation the identity pointed to) for
        ``history``; the identity points to it from now on."""
        base = await self.store.open_conversation(identity.conversation_id, owner=identity.owner)
        count = int(base.settings.get("forks", 0) or 0) + 1
        fork_id = f"{identity.conversation_id}-f{count}"
        await fork_stored(
            self.store,
            parent_id,
            fork_id,
            history,
            owner=identity.owner,
            model=model,
            settings={PROXY_MARK: {"source": identity.source}},
        )
        await self.store.update_settings(
            identity.conversation_id,
            {**base.settings, "fork": fork_id, "forks": count},
            owner=identity.owner,
        )
        self._on_fork()
        return fork_id

    async def _manager(
        self, conversation_id: str, identity: Identity, api: Api, model: str, api_key: str | None
    ) -> ContextManager:
        entry = self._open.get(conversation_id)
        if entry is not None and entry.model == model and entry.api == api:
            entry.used = time.monotonic()
            return entry.manager
        window = self.config.context_window
        limits = None if window else await self._limits_for(model, api_key)
        manager = ContextManager(
            limits,
            context_window=window,
            max_output_tokens=self.config.max_output_tokens if window else None,
            model=model,
            format=API_FORMATS[api],
            budget=BudgetSettings(
                trigger_ratio=self.config.trigger, target_ratio=self.config.target
            ),
            store=self.store,
            conversation_id=conversation_id,
            owner=identity.owner,
        )
        self._open[conversation_id] = _Open(manager, model, api)
        self._evict()
        return manager

    def _evict(self) -> None:
        excess = len(self._open) - self.config.max_open
        if excess > 0:
            for cid, _ in sorted(self._open.items(), key=lambda kv: kv[1].used)[:excess]:
                del self._open[cid]

    async def prepare(
        self,
        identity: Identity,
        api: Api,
        body: Mapping[str, Any],
        api_key: str | None,
        *,
        base: ConversationInfo | None = None,
    ) -> tuple[str, ContextManager, Prepared] | None:
        """The context to send for a request's body: ``(stored conversation id, its manager,
        the prepared context)``; ``None`` when abridged cannot read the history (the request
        then goes upstream as it came, and the provider answers it). ``base``: the identity's
        conversation as already read (by the lease), so that it is not read again."""
        model = str(body.get("model") or "unknown")
        messages = history_of(api, body)
        if messages is None:
            return None
        # Responses ``instructions`` are not in the history: the provider's reports teach the
        # manager their size (a hidden prefix, ``abridged.runtime.sizing``)
        system = body.get("system") if api == "anthropic" else None
        tools = body.get("tools") if isinstance(body.get("tools"), list) else None
        cid = _pointed(base, identity) if base is not None else await self.current(identity, model)
        manager = await self._manager(cid, identity, api, model, api_key)
        try:
            prepared = await manager.aprepare(
                messages, system=system, tools=tools, stored=base, write_behind=True
            )
            return cid, manager, prepared
        except MessageValidationError as exc:
            if exc.context.get("conversation_id") is None:
                return None  # the history itself is malformed: let the provider say so
        history = manager.history  # the request's history, as the manager read it
        self._open.pop(cid, None)
        cid = await self._fork(identity, model, cid, history)
        manager = await self._manager(cid, identity, api, model, api_key)
        try:
            return cid, manager, await manager.aprepare(messages, system=system, tools=tools)
        except MessageValidationError:
            return None
