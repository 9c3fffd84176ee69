"""Conversation: a durable chat with a tool-calling agent loop that stays inside the window.

::

    async with Store("chat.db") as store:
        convo = await Conversation.open(store, model, system="You are a coding agent.",
                                        tools=[read_file, run_tests])
        reply = await convo.send("Fix the failing test")      # the whole turn, tools included
        async for event in convo.stream("and explain"):     # deltas, tool events, notices
            ...

**A turn.** ``send(text)`` handles slash commands first (``abridged.runtime.commands``: no model
call, stored, never sent to the model). Otherwise it stores the user message, then loops: check
the context against the budget, call the model (streaming, with overflow recovery:
``abridged.runtime.recovery``), store the reply with its usage and timings, run the tools it asked
for (``abridged.runtime.tools``; concurrently; a raising tool becomes an error result), store
their results, until the model answers without calling a tool.

**Compaction.** The check runs at every step boundary. When the context reaches the trigger, the
engine's plan (prune, cut, summarize) is carried out **in the background** (an asyncio task) and
the next model call goes ahead with the current context; a call waits for it only when the
context does not fit the input budget, and compacts in the foreground (the emergency path if
need be) when it still does not. A long tool loop compacts like anything else: the kept part then
starts inside the turn. Every compaction is committed through the store's single writer
(``commit_compaction``, compare-and-swap on the version the plan was made from; a loser re-reads
the store). Stored messages are never changed: a compaction starts a child session over them.
When the estimate is close to the limit and the model can count exactly (``count_tokens``), the
runtime counts before sending.

**Queue, debounce, abort.** Messages sent while a reply is in progress are stored with status
``queued`` and handled in order when it ends; user messages arriving within ``debounce`` seconds
of each other are answered in one turn. ``abort()`` (or ``/abort``) cancels the model call or the
tools in flight: what was received is stored (the partial reply; error results for unfinished
tool calls, so pairing holds). A compaction asked for during a turn (``/compact``,
``request_compaction`` from a hook or a tool) runs when the turn ends. Settings changed on a live
conversation (``convo.settings = ...``) take effect at the next check. A summarization in
progress can be cancelled (``cancel_compaction``); it runs outside the turn, so it never trips a
timeout around ``send``, and a summarizer slower than ``summary_timeout`` falls back to the
extractive summary.

**Tool results** larger than ``tool_result_max_tokens`` (default a quarter of the input budget)
are stored whole and sent clipped (head and tail, with a note of what was left out).

The class is built in layers: ``abridged.runtime.state`` (history, sizes, events),
``abridged.runtime.compacting`` (background, foreground and emergency compaction, commits),
``abridged.runtime.turn`` (the loop), and this module (opening, sending, the queue, commands).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from abridged.core.model import Message, Part
from abridged.core.protocols import ChatModel, Summarizer
from abridged.core.tokens import TokenCounter
from abridged.core.windows import DEFAULT_MAX_OUTPUT, ModelLimits
from abridged.engine.compaction import CompactionHooks
from abridged.errors import NotFoundError, SettingError, StoreError
from abridged.events.runtime import ConversationEvent, StreamItem, TurnResult
from abridged.runtime import commands as _commands
from abridged.runtime.queue import END, Inbound
from abridged.runtime.settings import ConversationSettings
from abridged.runtime.state import CallRecord, new_id, summary_tokens
from abridged.runtime.tools import Tool, ToolRegistry
from abridged.runtime.turn import TurnLoop
from abridged.store import Store

__all__ = ["CallRecord", "Conversation", "ConversationSettings", "summary_tokens"]


def _limits_for(
    model: ChatModel,
    limits: ModelLimits | None,
    context_window: int | None,
    max_output_tokens: int | None,
) -> ModelLimits:
    if limits is not None and context_window is None and max_output_tokens is None:
        return limits
    if context_window is None and limits is not None:
        # Only the output is overridden: the window keeps where it came from (and whether it is
        # known at all), so an unknown window is never reported as an override.
        output = min(max_output_tokens or limits.max_output, limits.context_window)
        return dataclasses.replace(limits, max_output=output, output_source="override")
    if context_window is None:
        raise SettingError(
            "context_window",
            None,
            "an integer >= 1024 (or limits=)",
        )
    requested = max_output_tokens or (limits.max_output if limits is not None else None)
    return ModelLimits(
        context_window=context_window,
        max_output=min(requested or DEFAULT_MAX_OUTPUT, context_window),
        source="override",
        known=True,
        output_source="override",
        pricing=limits.pricing if limits is not None else None,
        model=model.name,
    )


class Conversation(TurnLoop):
    """A durable conversation with an agent loop (see the module docstring).

    Make one with ``await Conversation.open(store, model, ...)``; use it from one event loop.
    Cancelling ``send`` does not stop the turn (other messages may be answered by it): use
    ``abort``.
    """

    @classmethod
    async def open(
        cls,
        store: Store,
        model: ChatModel,
        *,
        system: str | None = None,
        tools: Iterable[Tool | Callable[..., Any]] | ToolRegistry = (),
        conversation_id: str | None = None,
        owner: str | None = None,
        settings: ConversationSettings | None = None,
        summarizer: Summarizer | ChatModel | str | None = None,
        limits: ModelLimits | None = None,
        context_window: int | None = None,
        max_output_tokens: int | None = None,
        hooks: CompactionHooks | None = None,
        on_event: Callable[[ConversationEvent], Any] | None = None,
        counter: TokenCounter | None = None,
    ) -> Conversation:
        """Open the conversation ``conversation_id`` (creating it when it does not exist) or a
        new one, and load its current context from the store.

        - ``system``: the system prompt (kept in the conversation's stored settings, so a
          reopened conversation without ``system=`` gets it back).
        - ``tools``: ``Tool``s or functions (wrapped with ``tool``), or a ``ToolRegistry``.
        - ``summarizer``: ``None`` (the conversation's own model, reusing its prompt cache, with
          the extractive fallback), ``"extractive"``, a ``Summarizer``, or another
          ``ChatModel`` to summarize with.
        - Limits: ``limits`` (a ``ModelLimits``), ``context_window`` / ``max_output_tokens``
          (override it); with neither, they are resolved (a probe of the model's OpenAI-
          compatible endpoint, then the vendored registry, then the conservative default:
          ``abridged.providers.limits.resolve_model_limits``).
        - ``hooks``: ``before_compact`` / ``after_compact`` / ``on_event`` of the engine;
          ``on_event``: every runtime event (tool calls, notices, retries).
        """
        settings = settings if settings is not None else ConversationSettings()
        if not isinstance(settings, ConversationSettings):
            raise SettingError("settings", settings, "a ConversationSettings")
        if limits is None and context_window is None:
            from abridged.providers.limits import resolve_model_limits  # noqa: PLC0415

            limits = await resolve_model_limits(
                model.name, base_url=getattr(model, "base_url", None)
            )
        resolved = _limits_for(model, limits, context_window, max_output_tokens)
        registry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)
        if settings.tool_timeout is not None and registry.timeout is None:
            registry.timeout = settings.tool_timeout
        info = None
        if conversation_id is not None:
            try:
                info = await store.open_conversation(conversation_id, owner=owner)
            except NotFoundError:
                info = None
        if info is None:
            info = await store.create_conversation(
                conversation_id,
                owner=owner,
                model=model.name,
                settings={"system": system} if system else {},
            )
        if system is None:
            stored = info.settings.get("system")
            system = stored if isinstance(stored, str) and stored else None
        convo = cls(
            store=store,
            model=model,
            conversation_id=info.id,
            owner=owner,
            system=system,
            tools=registry,
            settings=settings,
            summarizer=summarizer,
            limits=resolved,
            hooks=hooks,
            on_event=on_event,
            counter=counter,
        )
        convo.budget()  # the limits and settings make a valid budget (SettingError otherwise)
        await convo._reload()
        return convo

    async def __aenter__(self) -> Conversation:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Finish what was sent, stop the background compaction, and let go (the store stays
        open: it is the caller's)."""
        if self._worker is not None:
            await asyncio.gather(self._worker, return_exceptions=True)
        if self._compaction is not None:
            await asyncio.gather(self._compaction, return_exceptions=True)
        self._closed = True

    async def send(self, content: str | Message | Sequence[Part]) -> TurnResult:
        """Handle one user message (or slash command) and return the turn's result.

        While another turn is in progress the message is queued (stored with status
        ``queued``) and answered when its turn comes; ``send`` returns then.
        """
        item = self._submit(content, stream=False)
        return await asyncio.shield(item.future)

    async def stream(self, content: str | Message | Sequence[Part]) -> AsyncIterator[StreamItem]:
        """Like ``send``, yielding the model's deltas, tool events, notices and retries as they
        happen, and the ``TurnResult`` last."""
        item = self._submit(content, stream=True)
        assert item.events is not None
        while True:
            event = await item.events.get()
            if event is END:
                break
            yield event
        yield await asyncio.shield(item.future)

    async def send_pending(self) -> TurnResult:
        """Answer, in one turn, the user messages already stored with status ``queued`` (by
        another process: the HTTP service stores a message before its turn may start). With
        none queued it finishes an interrupted turn: the model is called on the history as
        stored (tool calls left without a result get an error result first)."""
        item = self._submit(None, stream=False)
        return await asyncio.shield(item.future)

    async def stream_pending(self) -> AsyncIterator[StreamItem]:
        """``send_pending``, yielding the turn's events as ``stream`` does."""
        item = self._submit(None, stream=True)
        assert item.events is not None
        while True:
            event = await item.events.get()
            if event is END:
                break
            yield event
        yield await asyncio.shield(item.future)

    def request_compaction(self, instructions: str | None = None) -> None:
        """Ask for a compaction (from a hook or a tool): it runs when the current turn ends, or
        at once (in the background) when no turn is in progress."""
        self._manual_request = (instructions,)
        if not self._turn_active and (self._worker is None or self._worker.done()):
            self._worker = asyncio.ensure_future(self._work())

    async def compact(self, instructions: str | None = None) -> TurnResult:
        """Compact now (``/compact``), after the turn in progress if any, with optional focus
        ``instructions`` for the summary (the words of ``ContextManager.compact``)."""
        return await self.send("/compact" + (f" {instructions}" if instructions else ""))

    async def wait_idle(self) -> None:
        """Wait until nothing is queued, no turn runs and no compaction runs."""
        while True:
            if self._worker is not None and not self._worker.done():
                await asyncio.gather(self._worker, return_exceptions=True)
                continue
            if self._compaction is not None and not self._compaction.done():
                await asyncio.gather(self._compaction, return_exceptions=True)
                continue
            if self._background:
                await asyncio.gather(*self._background, return_exceptions=True)
                continue
            return

    @property
    def queued(self) -> int:
        """How many messages and commands wait for their turn."""
        return len(self._inbox)

    async def status(self) -> _commands.Status:
        """What ``/status`` reports, as a value (nothing is stored)."""
        return await _commands.status(self)

    def _user_message(self, content: str | Message | Sequence[Part]) -> Message:
        if isinstance(content, Message):
            if content.role != "user":
                raise SettingError("content", content.role, "a user message")
            derived = content.id == "m" + content.fingerprint[:20]
            return content.replace(id=new_id()) if derived else content
        if isinstance(content, str):
            return Message.user(content, id=new_id())
        return Message("user", tuple(content), id=new_id())

    def _submit(self, content: str | Message | Sequence[Part] | None, *, stream: bool) -> Inbound:
        """Queue ``content`` for the worker (``None``: what the store holds queued)."""
        if self._closed:
            raise StoreError("the conversation is closed", conversation_id=self.id)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        events: asyncio.Queue[Any] | None = asyncio.Queue() if stream else None
        if content is None:
            pending = Inbound("user", future, events=events)
            self._inbox.push(pending)
            if self._worker is None or self._worker.done():
                self._worker = asyncio.ensure_future(self._work())
            return pending
        text = content.strip() if isinstance(content, str) else None
        if text is not None and _commands.is_command(text):
            item = Inbound("command", future, command=text, events=events)
            if _commands.is_immediate(text):
                task = asyncio.ensure_future(self._run_command(item))
                self._background.add(task)
                task.add_done_callback(self._background.discard)
                return item
            self._inbox.push(item)
        else:
            message = self._user_message(content)
            item = Inbound("user", future, message=message, events=events)
            if not self._inbox.has_command():
                item.stored = asyncio.ensure_future(
                    self.store.append(self.id, message, owner=self.owner, status="queued")
                )
            self._inbox.push(item)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.ensure_future(self._work())
        return item

    async def _work(self) -> None:
        while True:
            if self._manual_request is not None and not self._turn_active:
                focus = self._manual_request[0]
                self._manual_request = None
                try:
                    await self.compact_now(focus)
                except Exception as exc:
                    self._notice(f"Compaction failed: {type(exc).__name__}: {exc}")
            head = self._inbox.head()
            if head is None:
                return
            if head.kind == "command":
                self._inbox.pop()
                await self._run_command(head)
                continue
            await self._inbox.settle(self._settings.debounce)
            batch = self._inbox.take_batch()
            if batch:
                await self._run_turn(batch)

    async def _run_command(self, item: Inbound) -> None:
        collected: list[ConversationEvent] = []
        self._collectors.append(collected)
        try:
            result = await _commands.run_command(self, item.command)
        except Exception as exc:
            result = TurnResult(
                text=f"/{_commands.command_name(item.command)} failed: {exc}",
                command=_commands.command_name(item.command),
            )
        finally:
            self._collectors.remove(collected)
        if collected:
            result = replace(result, events=(*result.events, *collected))
            for event in collected:
                item.put(event)
        try:
            await self._store_command(item.command, result.text)
        except Exception as exc:
            self._notice(f"The command could not be stored: {exc}")
        item.close()
        if not item.future.done():
            item.future.set_result(result)

    async def _store_command(self, line: str, output: str) -> None:
        """Store a command and its output: never part of the model's context."""
        records = [
            Message.user(line, id=new_id(), meta={"kind": "command"}),
            Message.assistant(
                output or "(no output)", id=new_id(), meta={"kind": "command_output"}
            ),
        ]
        if self._turn_active:
            self._deferred.extend(records)  # stored after the turn's messages
            return
        await self.store.append_many(self.id, records, owner=self.owner, holder=self.lease_holder)

    def as_tool(self, name: str = "delegate", description: str | None = None) -> Tool:
        """This conversation as a tool of another one (a sub-agent with its own budget and the
        same recovery): each call sends its ``task`` here and returns the reply."""

        async def run(task: str) -> str:
            result = await self.send(task)
            return result.text or "(the sub-agent gave no answer)"

        return Tool(
            name,
            description
            or "Delegate a self-contained task to a sub-agent and get its final answer.",
            {
                "type": "object",
                "properties": {"task": {"type": "string", "description": "The task, in full."}},
                "required": ["task"],
            },
            run,
        )
