"""A worker that stalled past its turn lease, while another send of the same worker waits on
the same conversation: the stalled turn's lease is taken over by another worker, then the
waiting send takes the lease in the stalled worker. Two runners in one process (two workers),
on SQLite and PostgreSQL, with the real store and the local provider. No timing: the stalls
are gates, the expiry a move of the lease's clock, each renewal fired by the test when the
interleaving under test needs it (``ManualRenewal``: the store's renewal itself is real).

What must hold: no sender sees its message reported aborted because of a lease, every message
is answered once, and the turn of the waiting send runs on the history the store holds."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar

import pytest

from abridged.core.model import Message
from abridged.core.validate import validate_messages
from abridged.runtime.tools import ToolRegistry, tool
from abridged.server import runner as runner_module
from abridged.server.app import service_model
from abridged.server.lease import LeaseRenewal
from abridged.server.metrics import ServiceMetrics
from abridged.server.runner import ConversationPool, TurnHandle, TurnRunner
from abridged.store import Store
from abridged.store import leases as lease_module
from abridged.testing import ProviderServer
from abridged.testing.tools import read_record
from tests.server.conftest import service_config

#: A bound on waiting for a step of the script (a stuck test fails instead of hanging).
STEP = 60


class ManualRenewal(LeaseRenewal):
    """A lease renewal whose periods the test fires (``fire``), never a timer: what a loaded
    machine does to a timer (fire it late, after other work) made explicit."""

    made: ClassVar[list[ManualRenewal]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._timer.cancel()
        self.stopped = False
        ManualRenewal.made.append(self)

    def stop(self) -> None:
        self.stopped = True
        super().stop()

    async def fire(self) -> bool:
        """One renewal now, as its timer would (nothing once stopped)."""
        assert not self.stopped, "the renewal was stopped: its timer would not fire"
        return await self.renew()

    @classmethod
    def of(cls, holder: str) -> ManualRenewal:
        return next(r for r in cls.made if r._holder == holder)


@pytest.fixture
def manual_renewals(monkeypatch: pytest.MonkeyPatch) -> type[ManualRenewal]:
    ManualRenewal.made = []
    monkeypatch.setattr(runner_module, "LeaseRenewal", ManualRenewal)
    return ManualRenewal


def _runner(
    store: Store,
    db: str,
    provider: ProviderServer,
    tools: ToolRegistry,
    *,
    make_model: Callable[[str], Any] = service_model,
) -> TurnRunner:
    """A worker's turn runner (its own open conversations, as another process would have)."""
    config = service_config(db, provider, lease_ttl=30.0)
    metrics = ServiceMetrics()
    pool = ConversationPool(store, config, tools, metrics, make_model)
    return TurnRunner(store, pool, config, metrics)


class Watched:
    """A handle's events as they come, and an event when one of a name arrived."""

    def __init__(self, handle: TurnHandle) -> None:
        self.handle = handle
        self.events: list[tuple[str, dict[str, Any]]] = []
        self._seen: dict[str, asyncio.Event] = {}
        self.task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for name, payload in self.handle.stream():
            self.events.append((name, payload))
            self._seen.setdefault(name, asyncio.Event()).set()

    async def saw(self, name: str) -> None:
        await asyncio.wait_for(self._seen.setdefault(name, asyncio.Event()).wait(), STEP)

    async def done(self) -> list[tuple[str, dict[str, Any]]]:
        await asyncio.wait_for(self.task, STEP)
        return self.events


def _gated_tool(gates: dict[int, asyncio.Event], entered: dict[int, asyncio.Event]) -> Any:
    calls = 0

    @tool(name="read_record")
    async def gated(key: str, lines: int = 40) -> str:
        """Read a stored record (the n-th call waits at gate n, when there is one)."""
        nonlocal calls
        n, calls = calls, calls + 1
        if n in gates:
            entered[n].set()
            await gates[n].wait()
        return str(read_record.function(key, lines))

    return gated


def _expire_leases(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every lease taken so far has expired (the lease clock moves a minute on)."""
    real = lease_module.now_ms
    monkeypatch.setattr(lease_module, "now_ms", lambda: real() + 60_000)


def _check_finished(sends: dict[str, list[tuple[str, dict[str, Any]]]]) -> None:
    """Each send ended with its answer: a real result or ``answered``, no error, no abort."""
    for mid, events in sends.items():
        names = [n for n, _ in events]
        assert "error" not in names, (mid, events[-3:])
        assert "answered" in names or "result" in names, (mid, names)
        results = [p for n, p in events if n == "result"]
        assert not any(p["aborted"] for p in results), (mid, "reported aborted", results)


async def _check_stored(store: Store, cid: str, sent: list[str]) -> None:
    """Every message stored once, delivered, answered; the history paired."""
    rows = await store.stored_messages(cid, owner="t")
    messages = [r.message for r in rows]
    issues = [i for i in validate_messages(messages) if i.severity == "error"]
    assert not issues, issues
    users = [r for r in rows if r.message.role == "user" and not r.message.tool_results]
    assert sorted(r.message.id for r in users) == sorted(sent)
    assert all(r.seq is not None for r in users), "a message was never delivered"
    answers = [
        r.seq
        for r in rows
        if r.message.role == "assistant" and not r.message.tool_calls and r.message.text
    ]
    assert answers and max(answers) > max(r.seq or 0 for r in users), "no answer after the last"


async def test_a_late_renewal_of_a_lost_lease_does_not_abort_the_next_send(
    service_db: str,
    provider: ProviderServer,
    monkeypatch: pytest.MonkeyPatch,
    manual_renewals: type[ManualRenewal],
) -> None:
    """Worker A's send 1 stalls in a tool past its lease; worker B takes the conversation over
    and answers send 2; A's send 3 takes the lease and its turn runs. Send 1's renewal, late
    (its timer due while send 1 was still winding down), finds the lease lost: it must stop
    nothing of send 3's turn, which holds a live lease of its own."""
    gates = {0: asyncio.Event(), 1: asyncio.Event()}  # send 1's tool call, send 3's first one
    entered = {0: asyncio.Event(), 1: asyncio.Event()}
    winding_down = asyncio.Event()
    store = Store(service_db)
    await store.open()
    a = _runner(store, service_db, provider, ToolRegistry([_gated_tool(gates, entered)]))
    b = _runner(store, service_db, provider, ToolRegistry([read_record]))
    held = asyncio.Event()
    real_stream = a._stream_turn

    async def stream_turn(handle: Any, convo: Any, lost: asyncio.Event) -> str:
        try:
            return await real_stream(handle, convo, lost)
        finally:
            # send 1's attempt (a's first), after its turn ended and before it stops its
            # renewal: held here until the test has fired that renewal (a loaded machine's
            # late timer)
            if not held.is_set():
                held.set()
                await winding_down.wait()

    monkeypatch.setattr(a, "_stream_turn", stream_turn)
    try:
        cid = (await store.create_conversation(owner="t", settings={"summarizer": "extractive"})).id
        one = Watched(await a.start_turn("t", cid, Message.user("first task", id="m-1")))
        await asyncio.wait_for(entered[0].wait(), STEP)
        zombie = (await store.turn_lease(cid)).holder
        assert zombie is not None
        _expire_leases(monkeypatch)
        two = Watched(await b.start_turn("t", cid, Message.user("second task", id="m-2")))
        await two.done()
        three = Watched(await a.start_turn("t", cid, Message.user("third task", id="m-3")))
        await three.saw("started")
        gates[0].set()  # send 1's tool returns (too late: its result is refused)
        await asyncio.wait_for(entered[1].wait(), STEP)  # send 3's turn runs, in its tool
        await asyncio.wait_for(held.wait(), STEP)
        await manual_renewals.of(zombie).fire()  # send 1's late renewal: its lease is lost
        winding_down.set()
        gates[1].set()
        sends = {"m-1": await one.done(), "m-2": two.events, "m-3": await three.done()}
        _check_finished(sends)
        await _check_stored(store, cid, ["m-1", "m-2", "m-3"])
    finally:
        for gate in (*gates.values(), winding_down):
            gate.set()
        await a.close()
        await b.close()
        await store.close()


class GatedModel:
    """The real model of the provider, whose ``stall``-th streamed call waits at ``gate``
    before it starts (the model call of send 1 that stalls past its lease)."""

    def __init__(self, model: Any, stall: int, gate: asyncio.Event, entered: asyncio.Event):
        self._model = model
        self._stall = stall
        self._calls = 0
        self.gate = gate
        self.entered = entered

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        n, self._calls = self._calls, self._calls + 1
        if n == self._stall:
            self.entered.set()
            await self.gate.wait()
        async for event in self._model.stream(*args, **kwargs):
            yield event


async def test_a_send_queued_behind_a_stalled_turn_runs_on_the_stored_history(
    service_db: str,
    provider: ProviderServer,
    monkeypatch: pytest.MonkeyPatch,
    manual_renewals: type[ManualRenewal],
) -> None:
    """Worker A's send 1 stalls in a model call past its lease; worker B takes over and answers
    send 2; A's send 3 takes the lease while send 1's turn still runs in A's copy; then send 1's
    renewal finds the lease lost and stops send 1's turn (a cancelled call: nothing to store,
    so no write of it is refused). Send 3's turn must run on the history B left (its model
    request holds send 2 and B's answer), and neither send 1 nor send 3 may see an abort."""
    gate, entered = asyncio.Event(), asyncio.Event()
    store = Store(service_db)
    await store.open()
    a = _runner(
        store,
        service_db,
        provider,
        ToolRegistry([read_record]),
        make_model=lambda spec: GatedModel(service_model(spec), 1, gate, entered),
    )
    b = _runner(store, service_db, provider, ToolRegistry([read_record]))
    try:
        cid = (await store.create_conversation(owner="t", settings={"summarizer": "extractive"})).id
        one = Watched(await a.start_turn("t", cid, Message.user("first task", id="m-1")))
        await asyncio.wait_for(entered.wait(), STEP)  # send 1's second model call
        zombie = (await store.turn_lease(cid)).holder
        assert zombie is not None
        _expire_leases(monkeypatch)
        two = Watched(await b.start_turn("t", cid, Message.user("second task", id="m-2")))
        await two.done()
        three = Watched(await a.start_turn("t", cid, Message.user("third task", id="m-3")))
        await three.saw("started")
        renewal = manual_renewals.of(zombie)
        if not renewal.stopped:  # send 1's renewal, due: its lease is lost
            await renewal.fire()
        sends = {"m-1": await one.done(), "m-3": await three.done(), "m-2": two.events}
        _check_finished(sends)
        await _check_stored(store, cid, ["m-1", "m-2", "m-3"])
        third = [
            r
            for r in provider.requests
            if any(m.role == "user" and m.text == "third task" for m in r.messages)
        ]
        assert third, "send 3's turn called no model"
        texts = [m.text for m in third[0].messages]
        assert "second task" in texts, f"send 3's turn ran on a history behind the store: {texts}"
    finally:
        gate.set()
        await a.close()
        await b.close()
        await store.close()
