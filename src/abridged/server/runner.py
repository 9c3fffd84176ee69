"""Turns over HTTP: the turn lease across workers, and the conversations each worker keeps open.

A message sent to the service is stored at once with status ``queued`` (durable while it
waits), then its turn waits for the conversation's **turn lease** (``Store.acquire_turn``: one
turn at a time across every worker; taken and renewed with ``server.lease``, as the proxy
does). The holder reads what changed in the store since it last
ran this conversation, answers every queued message in one turn (``Conversation.
stream_pending``), renews the lease while the turn runs and gives it back at the end. A worker
that dies mid-turn stops renewing: its lease expires and the next sender takes it over; the
interrupted turn's tool calls get error results (stored before anything of the new turn), and a
send retried with the same message id finishes that turn instead of storing the message twice.
A worker that only stalled past its lease (a zombie) cannot write into the new holder's turn:
every message a turn stores is fenced by its lease (``LeaseLostError``, nothing stored), and
its send takes the lease again to finish the message as a resend would.

The turn runs in its own task, apart from the HTTP response: a client that goes away does not
stop it (``abort`` does), and the lease is held until it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from abridged.core.budget import BudgetSettings
from abridged.core.model import Message
from abridged.core.protocols import ChatModel
from abridged.core.windows import ModelLimits
from abridged.engine.compaction_settings import CompactionSettings
from abridged.errors import (
    AbridgedError,
    LeaseLostError,
    NotFoundError,
    OwnershipError,
    ProviderError,
    SettingError,
)
from abridged.events.runtime import Notice, ToolFinished, TurnResult
from abridged.runtime.conversation import Conversation, ConversationSettings
from abridged.runtime.overview import context_overview
from abridged.runtime.state import new_id
from abridged.runtime.tools import ToolRegistry
from abridged.server.calllog import (
    CallMark,
    LastSentKept,
    calls_not_kept,
    mark_calls,
    turn_calls,
)
from abridged.server.config import ServiceConfig
from abridged.server.lease import LeaseRenewal, TurnBusyError, new_holder, take_turn
from abridged.server.metrics import ServiceMetrics
from abridged.server.sse import meter_payload, stream_event
from abridged.server.watch import ContextWatch
from abridged.store import CallEntry, ConversationInfo, Store, StoredMessage
from abridged.store.changes import ChangeFeed
from abridged.store.leases import TurnLease

__all__ = ["ConversationPool", "TurnBusyError", "TurnHandle", "TurnRunner", "api_settings"]

T = TypeVar("T")
#: How many times a send whose turn lost its lease (its worker stalled past it and another one
#: took the conversation over) takes the lease again to finish its message before it reports
#: ``LeaseLostError``: more would mean this worker cannot keep a lease at all.
RETAKES = 3
log = logging.getLogger("abridged.server.turns")

#: The API's conversation settings and their defaults (``api_settings`` validates them).
SETTING_DEFAULTS: dict[str, Any] = {
    "auto_compact": True,
    "prune": True,
    "trigger": BudgetSettings().trigger_ratio,
    "target": BudgetSettings().target_ratio,
    "summarizer": "model",
    "context_window": None,
}


def api_settings(values: dict[str, Any]) -> dict[str, Any]:
    """The API settings of a conversation (stored ones over the defaults), checked by building
    the runtime settings they make (``SettingError`` names the bad one)."""
    merged = {**SETTING_DEFAULTS, **{k: v for k, v in values.items() if k in SETTING_DEFAULTS}}
    runtime_settings(merged)
    if merged["summarizer"] not in ("model", "extractive"):
        raise SettingError("summarizer", merged["summarizer"], '"model" or "extractive"')
    window = merged["context_window"]
    if window is not None and (isinstance(window, bool) or not isinstance(window, int)):
        raise SettingError("context_window", window, "null or an integer >= 1024")
    if window is not None and window < 1024:
        raise SettingError("context_window", window, "null or an integer >= 1024")
    return merged


def runtime_settings(api: dict[str, Any]) -> ConversationSettings:
    """The ``ConversationSettings`` of a conversation's API settings (debounce 0: messages that
    arrive during a turn are batched by the queue in the store, not by waiting)."""
    return ConversationSettings(
        budget=BudgetSettings(
            enabled=api["auto_compact"],
            trigger_ratio=api["trigger"],
            target_ratio=api["target"],
        ),
        compaction=CompactionSettings(prune_enabled=api["prune"]),
        debounce=0.0,
    )


@dataclass(eq=False, slots=True)
class _Open:
    """A conversation this worker keeps open, and the store state it last saw."""

    convo: Conversation
    tenant: str
    model: str | None
    settings: dict[str, Any]
    synced: tuple[int, int, str | None] | None = None
    used: float = field(default_factory=time.monotonic)


def _mark(info: ConversationInfo) -> tuple[int, int, str | None]:
    return (info.version, info.next_seq, info.current_session_id)


class ConversationPool:
    """Open conversations of this worker, by id; reopened when their model or settings changed,
    read again from the store when another worker changed them."""

    def __init__(
        self,
        store: Store,
        config: ServiceConfig,
        tools: ToolRegistry,
        metrics: ServiceMetrics,
        make_model: Callable[[str], ChatModel],
    ) -> None:
        self.store = store
        self.config = config
        self.tools = tools
        self.metrics = metrics
        self._make_model = make_model
        self._open: dict[str, _Open] = {}
        self._models: dict[str, ChatModel] = {}
        self._limits: dict[str, ModelLimits] = {}
        # the meters of ``GET /v1/conversations/{id}/events``, across workers: a change made
        # here is announced through the store (PostgreSQL NOTIFY; SQLite's followers poll)
        self.origin = uuid.uuid4().hex[:16]
        self._feed: ChangeFeed | None = None
        self._announcing: set[asyncio.Task[None]] = set()
        self.watch = ContextWatch(
            announce=self._announce if store.dialect == "postgresql" else None,
            refresh=self.refresh,
            follow=self._follow,
        )

    def model(self, spec: str) -> ChatModel:
        """The (shared) chat model of a model string."""
        if spec not in self._models:
            self._models[spec] = self._make_model(spec)
        return self._models[spec]

    async def _limits_of(self, spec: str, model: ChatModel) -> ModelLimits:
        if spec not in self._limits:
            from abridged.providers.limits import resolve_model_limits  # noqa: PLC0415

            self._limits[spec] = await resolve_model_limits(
                model.name, base_url=getattr(model, "base_url", None)
            )
        return self._limits[spec]

    def get(self, conversation_id: str) -> Conversation | None:
        """The open conversation, if this worker has it."""
        entry = self._open.get(conversation_id)
        return entry.convo if entry is not None else None

    async def checkout(self, tenant: str, info: ConversationInfo) -> Conversation:
        """The conversation ready for a turn: opened, or read again if the store moved on."""
        settings = dict(info.settings)
        entry = self._open.get(info.id)
        if entry is not None and (
            entry.tenant != tenant or entry.model != info.model or entry.settings != settings
        ):
            await self._close(info.id)
            entry = None
        if entry is None:
            entry = _Open(await self._open_conversation(tenant, info), tenant, info.model, settings)
            entry.synced = _mark(info)
            self._open[info.id] = entry
            await self._evict()
        elif entry.synced != _mark(info) and not entry.convo.busy:
            await entry.convo.reload()
            entry.synced = _mark(info)  # read at least as new as ``info``
        entry.used = time.monotonic()
        return entry.convo

    def _follow(self) -> None:
        """Start hearing other workers' changes of the conversations watched here."""
        if self._feed is None:
            self._feed = self.store.follow_changes(
                self.watch.watched, self._heard, ignore=self.origin
            )

    def _heard(self, conversation_id: str, note: str | None) -> None:
        """Another worker's change: with its meter (PostgreSQL), or none (SQLite's poll)."""
        meter = None
        if note is not None:
            with contextlib.suppress(ValueError):
                meter = json.loads(note)
        self.watch.heard(conversation_id, meter if isinstance(meter, dict) else None)

    def _announce(self, conversation_id: str, meter: dict[str, Any]) -> None:
        """Tell the other workers, with the meter (in the background: never on a reply's
        path)."""
        task = asyncio.ensure_future(self._announce_now(conversation_id, json.dumps(meter)))
        self._announcing.add(task)
        task.add_done_callback(self._announcing.discard)

    async def _announce_now(self, conversation_id: str, meter: str) -> None:
        try:
            await self.store.announce_change(conversation_id, origin=self.origin, note=meter)
        except Exception as exc:  # the other workers' meters wait for their next change
            log.warning(
                "a change was not announced to the other workers: %s",
                type(exc).__name__,
                extra={"event": "change_not_announced", "conversation_id": conversation_id},
            )

    async def refresh(self, conversation_id: str) -> Conversation | None:
        """This worker's copy of a conversation another worker changed, read again from the
        store; ``None`` when it has no copy or its copy is current already."""
        entry = self._open.get(conversation_id)
        if entry is None:
            return None
        info = await self.store.open_conversation(conversation_id)
        if entry.synced == _mark(info):
            return None
        return await self.checkout(entry.tenant, info)

    def mark_synced(self, info: ConversationInfo) -> None:
        """Remember the store state this worker's copy now matches: ``info`` as read when its
        own turn gave the lease back (``Store.finish_turn``)."""
        entry = self._open.get(info.id)
        if entry is not None:
            entry.synced = _mark(info)

    def forget(self, conversation_id: str) -> None:
        """Close the conversation's copy: reopened at its next use (its settings or model
        changed), or never again (it was deleted)."""
        entry = self._open.pop(conversation_id, None)
        if entry is not None:
            task = asyncio.ensure_future(entry.convo.close())
            task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    async def _open_conversation(self, tenant: str, info: ConversationInfo) -> Conversation:
        spec = info.model or self.config.default_model
        if not spec:
            raise SettingError("model", None, "a model for the conversation")
        model = self.model(spec)
        api = api_settings(dict(info.settings))
        window = api["context_window"] or self.config.context_window
        limits = None if window else await self._limits_of(spec, model)
        system = info.settings.get("system")
        return await Conversation.open(
            self.store,
            model,
            system=system if isinstance(system, str) and system else None,
            tools=self.tools,
            conversation_id=info.id,
            owner=tenant,
            settings=runtime_settings(api),
            summarizer="extractive" if api["summarizer"] == "extractive" else None,
            limits=limits,
            context_window=window,
            max_output_tokens=self.config.max_output_tokens if window else None,
            on_event=self.watch.listener(
                info.id, lambda: self.get(info.id), self.metrics.observe_event
            ),
        )

    async def _close(self, conversation_id: str) -> None:
        entry = self._open.pop(conversation_id, None)
        if entry is not None:
            with contextlib.suppress(Exception):
                await entry.convo.close()

    async def _evict(self) -> None:
        excess = len(self._open) - self.config.max_open
        if excess <= 0:
            return
        idle = sorted(
            (e for e in self._open.values() if not e.convo.busy and not e.convo.compacting),
            key=lambda e: e.used,
        )
        for entry in idle[:excess]:
            await self._close(entry.convo.id)

    async def close(self) -> None:
        """Close every open conversation and the models' clients."""
        if self._feed is not None:
            await self._feed.close()
            self._feed = None
        if self._announcing:
            await asyncio.gather(*list(self._announcing), return_exceptions=True)
        for cid in list(self._open):
            await self._close(cid)
        for model in self._models.values():
            close = getattr(model, "aclose", None)
            if callable(close):
                with contextlib.suppress(Exception):
                    await close()
        self._models.clear()


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class TurnHandle:
    """A turn started for one HTTP request: its events, in order, then ``None``."""

    def __init__(
        self, conversation_id: str, message_id: str | None, *, linger: float = 0.0
    ) -> None:
        self.conversation_id = conversation_id
        self.message_id = message_id
        self.linger = linger
        self.events: asyncio.Queue[tuple[str, dict[str, Any]] | None] = asyncio.Queue()
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.task: asyncio.Task[None] | None = None
        self.finished = False  # the last batch has been given out
        self._ended = False
        self._lingering: asyncio.Future[None] | None = None

    def put(self, name: str, payload: dict[str, Any]) -> None:
        """Give the reader one event."""
        if name == "result":
            self.result = payload
        elif name == "error":
            self.error = payload
        self.events.put_nowait((name, payload))

    async def stream(self) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """Every event until the turn's end."""
        async for batch in self.batches():
            for item in batch:
                yield item

    def end(self) -> None:
        """The turn is over: no event follows (a batch waiting for more goes at once)."""
        self._ended = True
        self.events.put_nowait(None)
        if self._lingering is not None:
            _resolve(self._lingering)

    async def _linger(self) -> None:
        """Wait ``linger`` seconds for more events, or until the turn ends."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        self._lingering = waiter
        timer = loop.call_later(self.linger, _resolve, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._lingering = None

    async def batches(self) -> AsyncIterator[list[tuple[str, dict[str, Any]]]]:
        """The events in batches: each when ``linger`` seconds have passed since its first
        event was ready (at once when 0), or at once when the turn ends, with every event
        ready by then: one write to the client a batch (a step's end puts several events
        within a millisecond or two, the tool's run between them; a reply streams a delta
        every few milliseconds).

        Not taken, because each added latency to a turn's end (``bench/service.py``; the
        figures are in ``bench/RESULTS.md``, "moved from docstrings"): writing ``queued`` and
        ``started`` at once (one more wake-up of the client a turn), and a window only after a
        quiet spell (each step's first event at once). The client knows its message was taken
        from the response's status line, which goes at once either way."""
        while True:
            item = await self.events.get()
            if item is not None and self.linger > 0 and not self._ended:
                await self._linger()
            batch = []
            while item is not None:
                batch.append(item)
                if self.events.empty():
                    break
                item = self.events.get_nowait()
            if item is None:
                self.finished = True
            if batch:
                yield batch
            if item is None:
                return

    async def wait(self) -> None:
        """Wait for the turn to end."""
        if self.task is not None:
            await asyncio.shield(self.task)


class TurnRunner:
    """Starts turns (and other operations that need the conversation to themselves) under the
    turn lease; see the module docstring."""

    def __init__(
        self, store: Store, pool: ConversationPool, config: ServiceConfig, metrics: ServiceMetrics
    ) -> None:
        self.store = store
        self.pool = pool
        self.config = config
        self.metrics = metrics
        self.worker = f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._tasks: set[asyncio.Task[Any]] = set()
        self._running: dict[str, str] = {}  # conversation id -> lease holder of this worker
        self._last_sent = LastSentKept()  # each conversation's last call, for the call log

    def running_here(self, conversation_id: str) -> bool:
        """Whether a turn of this conversation runs in this worker."""
        return conversation_id in self._running

    # -- the lease ---------------------------------------------------------------------------

    async def _take_lease(
        self,
        tenant: str,
        conversation_id: str,
        holder: str,
        *,
        queue: bool,
        on_wait: Callable[[], None] = lambda: None,
        message_id: str | None = None,
    ) -> TurnLease:
        """The lease, waiting up to ``queue_timeout`` for a running turn when ``queue``, else
        ``TurnBusyError`` at once (counted as a conflict)."""

        def waiting() -> None:
            self.metrics.lease_waits.inc()
            on_wait()

        try:
            return await take_turn(
                self.store,
                conversation_id,
                holder,
                owner=tenant,
                ttl=self.config.lease_ttl,
                wait=self.config.queue_timeout if queue else 0,
                message_id=message_id,
                on_wait=waiting,
                busy_hint="" if queue else " (send without ?queue=false to queue)",
            )
        except TurnBusyError:
            if not queue:
                self.metrics.lease_conflicts.inc()
            raise

    def _renew(self, conversation_id: str, holder: str) -> LeaseRenewal:
        """Renew the lease while the turn runs; when it was lost, stop the turn run under it.

        Only that turn: a renewal can find its lease lost late (its timer fired after other
        work on a loaded machine), when this worker's copy already runs the next send's turn
        under a live lease of its own; aborting whatever turn the copy runs reported that
        send's message aborted."""

        def lost() -> None:
            log.warning(
                "turn lease lost: another worker took it over; the turn stops",
                extra={"event": "lease_lost", "conversation_id": conversation_id},
            )
            convo = self.pool.get(conversation_id)
            if convo is not None:
                convo.lease_lost(holder)

        return LeaseRenewal(
            self.store, conversation_id, holder, ttl=self.config.lease_ttl, on_lost=lost
        )

    async def exclusive(
        self,
        tenant: str,
        conversation_id: str,
        action: Callable[[Conversation], Awaitable[T]],
        *,
        queue: bool = True,
    ) -> T:
        """Run ``action`` on the conversation under its turn lease (waiting for a running turn,
        or ``TurnBusyError`` when ``queue`` is false)."""
        holder = new_holder(self.worker)
        done = False
        lease = await self._take_lease(tenant, conversation_id, holder, queue=queue)
        self._note_takeover(lease)
        renew = self._renew(conversation_id, holder)
        self._running[conversation_id] = holder
        try:
            info = lease.conversation or await self.store.open_conversation(
                conversation_id, owner=tenant
            )
            convo = await self.pool.checkout(tenant, info)
            _stop_stalled_turn(convo, holder)
            convo.lease_holder = holder
            try:
                result = await action(convo)
            finally:
                convo.lease_holder = None
            done = True
            return result
        finally:
            self._running.pop(conversation_id, None)
            renew.stop()
            await self._give_back(conversation_id, holder, synced=done)
            self.metrics.observe_store(self.store.cas_conflicts)

    async def _give_back(
        self,
        conversation_id: str,
        holder: str,
        *,
        synced: bool,
        calls: list[CallEntry] | None = None,
        tenant: str | None = None,
    ) -> None:
        """Release the lease, keeping the turn's ``calls`` in the same transaction; with
        ``synced`` (this worker's copy ran the turn to its end), remember the store state it
        matches, read in the release itself. A lease lost to a takeover leaves the copy
        unmarked: the next turn here reads the store again. Calls that cannot be kept cost
        the inspector those calls, never the release."""
        try:
            try:
                info = await self.store.finish_turn(
                    conversation_id, holder, calls=calls or (), owner=tenant
                )
            except Exception as exc:
                if not calls:
                    raise
                calls_not_kept(conversation_id, exc)
                info = await self.store.finish_turn(conversation_id, holder)
        except Exception:  # the lease expires on its own
            return
        if synced and info is not None:
            self.pool.mark_synced(info)

    def _note_takeover(self, lease: TurnLease) -> None:
        if lease.took_over_from is not None:
            self.metrics.lease_takeovers.inc()
            log.warning(
                "turn lease taken over from a worker that stopped renewing it",
                extra={
                    "event": "lease_takeover",
                    "conversation_id": lease.conversation_id,
                    "took_over_from": lease.took_over_from.rsplit(":", 1)[0],
                },
            )

    # -- turns ---------------------------------------------------------------------------------

    async def start_turn(
        self,
        tenant: str,
        conversation_id: str,
        message: Message,
        *,
        queue: bool = True,
    ) -> TurnHandle:
        """Store ``message`` (queued) and start its turn; the handle streams its events.

        A message id already stored in the conversation is not stored again (the store's
        append is idempotent, also for sends racing on several workers): the turn that answers
        it is finished if it was interrupted, else its reply is returned.
        ``TurnBusyError`` (nothing stored) when ``queue`` is false and a turn is running.
        """
        holder = new_holder(self.worker)
        fresh = queue
        if queue:
            # stored and the lease taken in one transaction when it is free (else it is
            # waited for after); idempotent: a message id stored already (a client's retry,
            # racing or not) gives back the stored row, never a second copy
            stored, lease = await self.store.queue_turn(
                conversation_id, message, holder, ttl=self.config.lease_ttl, owner=tenant
            )
        else:
            lease = await self._take_lease(tenant, conversation_id, holder, queue=False)
            try:
                stored = await self.store.append(
                    conversation_id, message, owner=tenant, status="queued"
                )
            except BaseException:
                await self.store.release_turn(conversation_id, holder)
                raise
        handle = TurnHandle(conversation_id, message.id, linger=self.config.event_batch_ms / 1000)
        handle.task = asyncio.ensure_future(
            self._drive(
                handle,
                tenant=tenant,
                conversation_id=conversation_id,
                holder=holder,
                lease=lease,
                stored=stored,
                fresh=fresh,
            )
        )
        self._tasks.add(handle.task)
        handle.task.add_done_callback(self._tasks.discard)
        return handle

    async def _drive(
        self,
        handle: TurnHandle,
        *,
        tenant: str,
        conversation_id: str,
        holder: str,
        lease: TurnLease | None,
        stored: StoredMessage,
        fresh: bool = False,
    ) -> None:
        started = time.monotonic()
        outcome = "error"
        try:
            outcome = await self._attempt(
                handle,
                tenant=tenant,
                conversation_id=conversation_id,
                holder=holder,
                lease=lease,
                stored=stored,
                first=True,
                fresh=fresh,
            )
            for _ in range(RETAKES):
                if outcome != "lost":
                    break
                # this worker stalled past its lease and another one took the conversation
                # over: what this turn wrote after that was refused (the store's fence). Take
                # the lease again and finish the message from the history the other worker
                # left, as a resend of it would: its answer, or the rest of its turn.
                log.warning(
                    "turn lease lost to another worker; finishing the message after it",
                    extra={"event": "lease_retake", "conversation_id": conversation_id},
                )
                outcome = await self._attempt(
                    handle,
                    tenant=tenant,
                    conversation_id=conversation_id,
                    holder=new_holder(self.worker),
                    lease=None,
                    stored=stored,
                )
            if outcome == "lost":
                raise LeaseLostError(
                    f"the turn lease was taken over {RETAKES + 1} times; send again",
                    conversation_id=conversation_id,
                )
        except TurnBusyError as exc:
            outcome = "timeout"
            handle.put("error", _error_payload(exc, 409))
        except LeaseLostError as exc:
            handle.put("error", _error_payload(exc, 503))
        except AbridgedError as exc:
            handle.put("error", _error_payload(exc, 500))
        except Exception as exc:  # reported to the client, never a silent stop
            handle.put(
                "error", {"status": 500, "type": type(exc).__name__, "detail": str(exc)[:500]}
            )
        finally:
            elapsed = time.monotonic() - started
            self.metrics.turns.labels(outcome=outcome).inc()
            self.metrics.turn_seconds.observe(elapsed)
            log.info(
                "turn %s",
                outcome,
                extra={
                    "event": "turn",
                    "conversation_id": conversation_id,
                    "tenant": tenant,
                    "outcome": outcome,
                    "duration_ms": round(elapsed * 1000, 1),
                    "worker": self.worker,
                },
            )
            self.metrics.observe_store(self.store.cas_conflicts)
            handle.put("done", {})
            handle.end()

    async def _attempt(
        self,
        handle: TurnHandle,
        *,
        tenant: str,
        conversation_id: str,
        holder: str,
        lease: TurnLease | None,
        stored: StoredMessage,
        first: bool = False,
        fresh: bool = False,
    ) -> str:
        """One hold of the lease for the turn of ``stored`` (the lease taken here unless given):
        the turn's outcome, ``"answered"`` when its message already has its reply, ``"lost"``
        when the lease was taken over before the turn's writes were done (they were refused:
        nothing of this attempt is stored after the takeover). ``first``: the events said once
        a send (``queued``, ``started``) go out. ``fresh``: a ``lease`` given was taken with
        the message stored (``Store.queue_turn``), so it read both as the turn starts."""
        renew: LeaseRenewal | None = None
        convo: Conversation | None = None
        calls: CallMark | Literal[False] = False  # False: no turn ran, no call to keep
        synced = False
        # the lease taken with or after the message stored: the conversation and the message
        # were read with it (one transaction less each)
        fresh = fresh or lease is None
        try:
            if lease is None:
                lease = await self._take_lease(
                    tenant,
                    conversation_id,
                    holder,
                    queue=True,
                    on_wait=(
                        (lambda: handle.put("queued", {"message_id": stored.message.id}))
                        if first
                        else (lambda: None)
                    ),
                    message_id=stored.message.id,
                )
            self._note_takeover(lease)
            renew = self._renew(conversation_id, holder)
            self._running[conversation_id] = holder
            self.metrics.active_turns.inc()
            # read with the lease just taken (one transaction less); else read now
            info = (lease.conversation if fresh else None) or await self.store.open_conversation(
                conversation_id, owner=tenant
            )
            convo = await self.pool.checkout(tenant, info)
            _stop_stalled_turn(convo, holder)
            convo.lease_holder = holder  # the turn's writes are fenced by this lease
            if first:
                handle.put(
                    "started",
                    {
                        "message_id": stored.message.id,
                        "took_over": lease.took_over_from is not None,
                    },
                )
            current = (
                lease.message
                if fresh
                else await self.store.find_message(conversation_id, stored.message.id, owner=tenant)
            )
            if current is not None and current.seq is not None:
                answered, reply = convo.reply_to(current.seq)
                if answered:
                    handle.put(
                        "answered",
                        {
                            "message_id": stored.message.id,
                            "text": reply.text if reply is not None else "",
                            "reply_id": reply.id if reply is not None else None,
                        },
                    )
                    handle.put("meter", meter_payload(context_overview(convo)))
                    return "answered"
            calls = mark_calls(convo)
            outcome = await self._stream_turn(handle, convo, renew.lost)
            synced = outcome != "lost"
            self.pool.watch.changed(conversation_id, lambda: self.pool.get(conversation_id))
            return outcome
        except LeaseLostError:
            return "lost"
        finally:
            # kept with the lease's release, in its transaction: under the lease still, one
            # worker at a time numbers the conversation's calls
            kept = (
                turn_calls(convo, calls, self._last_sent)
                if convo is not None and calls is not False
                else []
            )
            if convo is not None and convo.lease_holder == holder:
                convo.lease_holder = None
            if renew is not None:
                renew.stop()
                self.metrics.active_turns.dec()
            if self._running.get(conversation_id) == holder:
                del self._running[conversation_id]
            if lease is not None:
                await self._give_back(
                    conversation_id, holder, synced=synced, calls=kept, tenant=tenant
                )

    async def _stream_turn(
        self, handle: TurnHandle, convo: Conversation, lost: asyncio.Event
    ) -> str:
        """Run the queued messages' turn, its events to ``handle``; its outcome (``"lost"``:
        aborted because the lease was lost, ``lost`` set by the renewal: not a result)."""
        outcome = "ok"
        async for item in convo.stream_pending():
            if isinstance(item, TurnResult) and item.aborted and lost.is_set():
                outcome = "lost"  # the turn goes on elsewhere; this send finishes it after
                continue
            event = stream_event(item)
            if event is not None:
                handle.put(*event)
            if isinstance(item, TurnResult):
                outcome = "aborted" if item.aborted else (item.stopped or "ok")
            if isinstance(item, ToolFinished | TurnResult) or (
                isinstance(item, Notice)
                and item.event is not None
                and item.event.kind in ("usage_updated", "compaction_ended", "pruned")
            ):
                handle.put("meter", meter_payload(context_overview(convo)))
        return outcome

    def abort(self, conversation_id: str) -> bool:
        """Abort the turn of this conversation running in this worker; ``False`` if none."""
        if conversation_id not in self._running:
            return False
        convo = self.pool.get(conversation_id)
        return convo.abort() if convo is not None else False

    async def close(self) -> None:
        """Let every running turn finish (its lease is given back), then close the pool."""
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        await self.pool.close()


def _stop_stalled_turn(convo: Conversation, holder: str) -> None:
    """``holder`` has the lease: a turn this copy still runs under another lease is one of
    this worker that stalled past its lease (taken over since). Stop it now, and have the copy
    read the store before the next turn: the worker that took over went on in between, and the
    stalled turn may end without a refused write (a cancelled model call stores nothing), which
    alone would leave the copy behind the store."""
    stalled = convo.turn_holder
    if stalled is not None and stalled != holder:
        log.warning(
            "a turn of this worker still ran under a lease taken over since; it stops",
            extra={"event": "lease_stalled_turn", "conversation_id": convo.id},
        )
        convo.lease_lost(stalled)


def _error_payload(exc: AbridgedError, status: int) -> dict[str, Any]:
    if isinstance(exc, NotFoundError | OwnershipError):
        status = 404
    elif isinstance(exc, ProviderError):  # the model's provider failed: a gateway's error
        status = 502
    return {"status": status, "type": type(exc).__name__, "detail": str(exc)}


def user_message(content: str, message_id: str | None) -> Message:
    """The user message of a send (a fresh id unless the client gave one)."""
    return Message.user(content, id=message_id or new_id())
