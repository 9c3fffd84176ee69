"""abridged in the OpenAI Agents SDK: a ``Session`` kept in abridged's store, and a model-input
filter that compacts what every model call of a run sends.

    from agents import Agent, RunConfig, Runner
    from abridged.integrations.openai_agents import AbridgedInputFilter, AbridgedSession

    session = AbridgedSession("user-42", store)
    config = RunConfig(call_model_input_filter=AbridgedInputFilter(context_window=128_000))
    await Runner.run(agent, "Go on", session=session, run_config=config)

``AbridgedSession`` keeps every item exactly as the SDK gave it, one stored message per item
(with the item's JSON), so ``abridged sessions`` shows the conversation. Nothing is deleted:
``pop_item`` stores a new version of the last item marked popped (the old one is kept), and
``clear_session`` starts a new, empty session of the stored conversation (the old one can be
resumed). Items are only ever appended: a failed ``add_items`` leaves what was stored before.

``AbridgedInputFilter`` is the SDK's ``call_model_input_filter``: before each model call inside
a run it hands the input items (the session's history and the run's new items) to a
``ContextManager`` in the Responses format, which prunes old tool output and summarizes old
turns at a turn boundary when they no longer fit; the model gets that context and the
unchanged instructions. Items it did not change are the run's own objects; provider items it
does not interpret (built-in tools, compaction items) are kept as they are. Use one filter per
conversation (its manager follows one history). The SDK gives the filter no usage report and
has no hook for a provider's "too long" error: sizes are the calibrated estimate, so keep the
window's default margins. Requires ``pip install 'abridged[openai-agents]'``.
"""

from __future__ import annotations

from typing import Any

from agents.memory import SessionABC
from agents.run import CallModelData, ModelInputData

from abridged.core.budget import BudgetSettings
from abridged.core.model import Message
from abridged.core.windows import ModelLimits
from abridged.engine.compaction import CompactionHooks
from abridged.engine.compaction_settings import CompactionSettings
from abridged.formats.openai_responses import messages_from_responses
from abridged.integrations.managers import ManagerOptions, stored_conversation_id
from abridged.runtime.caller_formats import plain
from abridged.runtime.context_manager import ContextManager
from abridged.store import Store, StoredMessage

__all__ = ["AbridgedInputFilter", "AbridgedSession"]

#: ``Message.meta`` keys: the item as the SDK gave it, and the mark of a popped item.
ITEM_KEY = "agents_item"
POPPED_KEY = "agents_popped"


def _stored(item: Any) -> Message:
    """One item as a stored message: its meaning for abridged, and its exact JSON."""
    data = plain(item)
    (message,) = messages_from_responses([data])  # one item is one message, or a FormatError
    return message.replace(meta={**message.meta, ITEM_KEY: data})


class AbridgedSession(SessionABC):
    """The SDK's session protocol on abridged's store (see the module docstring).

    ``session_id`` names the session (the stored conversation is ``agents-<session_id>``);
    ``owner`` scopes it to a tenant.
    """

    def __init__(self, session_id: str, store: Store, *, owner: str | None = None) -> None:
        self.session_id = session_id
        self.store = store
        self.owner = owner
        self.conversation_id = stored_conversation_id("agents", session_id)
        self._ready = False

    async def _ensure(self) -> None:
        if self._ready:
            return
        await self.store.ensure_conversation(
            self.conversation_id,
            owner=self.owner,
            settings={"openai_agents": {"session_id": self.session_id}},
        )
        self._ready = True

    async def _live(self) -> list[StoredMessage]:
        """The current session's stored items that were not popped, in order."""
        await self._ensure()
        context = await self.store.load_context(self.conversation_id, owner=self.owner)
        return [m for m in context.messages if not m.message.meta.get(POPPED_KEY)]

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The history, oldest first (the latest ``limit`` items when given)."""
        items = [m.message.meta[ITEM_KEY] for m in await self._live()]
        return items[-limit:] if limit is not None and limit > 0 else items

    async def add_items(self, items: list[Any]) -> None:
        """Append ``items`` (all or none: one transaction)."""
        if not items:
            return
        await self._ensure()
        await self.store.append_many(
            self.conversation_id, [_stored(i) for i in items], owner=self.owner
        )

    async def pop_item(self) -> Any | None:
        """The latest item, marked popped by a new version of its message (kept in the store)."""
        live = await self._live()
        if not live:
            return None
        last = live[-1]
        assert last.seq is not None
        popped = last.message.replace(meta={**last.message.meta, POPPED_KEY: True})
        await self.store.edit_message(self.conversation_id, last.seq, popped, owner=self.owner)
        return last.message.meta[ITEM_KEY]

    async def clear_session(self) -> None:
        """Start an empty session of the stored conversation (the old one is kept)."""
        await self._ensure()
        await self.store.new_session(self.conversation_id, reason="clear", owner=self.owner)


class AbridgedInputFilter:
    """The SDK's ``call_model_input_filter`` (see the module docstring). Limits: ``limits`` or
    ``context_window`` (and ``max_output_tokens``); ``model`` names the model; ``budget``,
    ``settings``, ``summarizer``, ``hooks``: as for ``ContextManager``."""

    def __init__(
        self,
        *,
        limits: ModelLimits | None = None,
        context_window: int | None = None,
        max_output_tokens: int | None = None,
        model: str | None = None,
        budget: BudgetSettings | None = None,
        settings: CompactionSettings | None = None,
        summarizer: Any = None,
        hooks: CompactionHooks | None = None,
    ) -> None:
        options = ManagerOptions(
            limits, context_window, max_output_tokens, model, budget, settings, summarizer, hooks
        )
        self._manager = options.manager("responses")

    def manager(self) -> ContextManager:
        """The filter's manager (it follows one history); the same call as the other
        integrations' ``manager()``, which hold one manager per thread or conversation."""
        return self._manager

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        """The model's input for this call: the compacted items, the same instructions."""
        items = [i if isinstance(i, dict) else plain(i) for i in data.model_data.input]
        prepared = await self._manager.aprepare(items)
        return ModelInputData(input=prepared.messages, instructions=data.model_data.instructions)
