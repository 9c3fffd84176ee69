"""Many workers: a takeover of a stalled worker's turn, step by step (two runners in one process,
on SQLite and PostgreSQL); then ``abridged serve --workers 4`` as a real process on PostgreSQL,
40 clients on 10 conversations at once, and one worker SIGKILLed while it runs a turn. Every
conversation must finish, no message may be lost or stored twice, the tool pairing must stay
intact and the dead worker's lease must be taken over once it expires. How long that takes is
measured in ``bench/workers.py``, not asserted here."""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from abridged.core.model import Message, ToolResult, message_from_dict
from abridged.core.validate import validate_messages
from abridged.errors import LeaseLostError
from abridged.runtime.tools import ToolRegistry, tool
from abridged.runtime.turn import INTERRUPTED_RESULT
from abridged.server.app import service_model
from abridged.server.config import ServiceConfig
from abridged.server.metrics import ServiceMetrics
from abridged.server.runner import ConversationPool, TurnHandle, TurnRunner
from abridged.store import Store, upgrade
from abridged.store import leases as lease_module
from abridged.store.connect import create_engine, resolve_url
from abridged.testing import ProviderServer
from abridged.testing.tools import read_record
from tests.databases import Postgres, _sql, require_postgres
from tests.server.conftest import (
    MAX_OUTPUT,
    WINDOW,
    free_port,
    service_config,
    tool_replies,
)

WORKERS = 4
CONVERSATIONS = 10
CLIENTS = 40
MESSAGES_PER_CLIENT = 3
LEASE_TTL = 3.0
#: Seconds before each model reply: a turn (four model calls) keeps its worker busy ~1 s.
PROVIDER_LATENCY = 0.25
BROKEN = (httpx.TransportError, httpx.RemoteProtocolError)
#: Seconds a client keeps resending one message: a bound for a stuck service, not a speed (the
#: test must pass on a loaded machine; ``bench/workers.py`` measures how long it takes).
ANSWER_WITHIN = 150
#: Seconds the provider process and the four workers may take to start (a loaded machine: 4
#: workers importing the service at a load of 20 on two cores took more than 40 s).
STARTUP_WITHIN = 180


def _runner(store: Store, config: ServiceConfig, tools: ToolRegistry) -> TurnRunner:
    """A worker's turn runner (its own open conversations, as another process would have)."""
    metrics = ServiceMetrics()
    return TurnRunner(
        store, ConversationPool(store, config, tools, metrics, service_model), config, metrics
    )


async def _events(handle: TurnHandle) -> list[tuple[str, dict[str, Any]]]:
    return [item async for item in handle.stream()]


async def test_a_takeover_closes_the_stalled_turns_step_and_fences_its_late_writes(
    service_db: str, provider: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Worker A stores a tool call, then stalls inside the tool past its lease; worker B takes
    the conversation over and runs a turn; then A's tool returns. Without timing: the stall is a
    gate, the expiry a move of the lease's clock. B's turn must answer A's open call (an error
    result, stored right after it) before anything of its own; A's late result must be refused,
    typed, and A's client still gets its answer (from the history B left), never an abort."""
    gate, entered = asyncio.Event(), asyncio.Event()

    @tool(name="read_record")
    async def stalled(key: str, lines: int = 40) -> str:
        """Read a stored record (A's: stalls until the test lets it go)."""
        entered.set()
        await gate.wait()
        return str(read_record.function(key, lines))

    store = Store(service_db)
    await store.open()
    config = service_config(service_db, provider, lease_ttl=30.0)
    a = _runner(store, config, ToolRegistry([stalled]))
    b = _runner(store, config, ToolRegistry([read_record]))
    try:
        cid = (await store.create_conversation(owner="t", settings={"summarizer": "extractive"})).id
        first = await a.start_turn("t", cid, Message.user("first task", id="m-a"))
        a_events = asyncio.ensure_future(_events(first))
        await asyncio.wait_for(entered.wait(), 60)  # A's call is stored, its tool runs
        zombie = (await store.turn_lease(cid)).holder
        assert zombie is not None
        real = lease_module.now_ms
        monkeypatch.setattr(lease_module, "now_ms", lambda: real() + 60_000)  # A's lease expired
        second = await b.start_turn("t", cid, Message.user("second task", id="m-b"))
        b_events = await asyncio.wait_for(_events(second), 60)
        assert [p["took_over"] for n, p in b_events if n == "started"] == [True]
        assert second.result is not None and not second.result["aborted"], b_events[-3:]
        late = Message("tool", (ToolResult("call-x", "read_record", "late"),), id="late")
        with pytest.raises(LeaseLostError):  # a zombie's write after the takeover
            await store.append(cid, late, owner="t", holder=zombie)
        gate.set()  # A's tool returns: its result comes too late
        names = [n for n, _ in await asyncio.wait_for(a_events, 60)]
        assert "error" not in names, names
        assert "answered" in names or "result" in names, names
        assert first.result is None or not first.result["aborted"], first.result
        rows = await store.stored_messages(cid, owner="t")
    finally:
        await a.close()
        await b.close()
        await store.close()
    messages = [r.message for r in rows]
    issues = [i for i in validate_messages(messages) if i.severity == "error"]
    assert not issues, issues
    roles = [m.role for m in messages]
    first_call = next(i for i, m in enumerate(messages) if m.tool_calls)
    assert roles[first_call - 1 : first_call + 3] == ["user", "assistant", "tool", "user"]
    closed = messages[first_call + 1].tool_results[0]
    assert closed.is_error and closed.text == INTERRUPTED_RESULT
    assert messages[first_call + 2].id == "m-b"
    assert "late" not in {m.id for m in messages}


def _provider_process(conn: Connection, latency: float) -> None:
    """The model, in its own process (its tokenizer and threads stay out of the test's GIL):
    sends its base URL, waits for any message, then sends what it recorded."""
    with ProviderServer(
        context_window=WINDOW, max_output=MAX_OUTPUT, replies=tool_replies(), latency=latency
    ) as provider:
        conn.send(provider.base_url)
        conn.recv()
        requests = provider.requests
        conn.send(
            {
                "count": len(requests),
                "aborted": sum(1 for r in requests if r.aborted),
                "rejected": [
                    (r.index, r.status, r.error_message) for r in requests if r.error is not None
                ],
            }
        )


@contextlib.contextmanager
def provider_process(latency: float) -> Iterator[tuple[str, dict[str, Any]]]:
    """A ``ProviderServer`` in a spawned process; yields its base URL and a dict filled with
    its record (``count``, ``aborted``, ``rejected``) when the block ends."""
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    process = ctx.Process(target=_provider_process, args=(child, latency), daemon=True)
    process.start()
    record: dict[str, Any] = {}
    try:
        if not parent.poll(STARTUP_WITHIN):
            raise RuntimeError("the provider process did not start")
        yield str(parent.recv()), record
        parent.send("stop")
        if parent.poll(30):
            record.update(parent.recv())
    finally:
        process.join(timeout=10)
        if process.is_alive():
            process.kill()


@contextlib.contextmanager
def serve(db_url: str, model: str, tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``abridged serve --workers 4`` on ``db_url``; yields its URL and process."""
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "ANTHROPIC_", "ABRIDGED_", "PROMETHEUS_"))
    }
    env["ABRIDGED_API_KEY"] = "x"
    log = (tmp_path / "serve.log").open("wb")
    command = [
        sys.executable,
        "-m",
        "abridged",
        "serve",
        "--workers",
        str(WORKERS),
        "--port",
        str(port),
        "--db",
        db_url,
        "--model",
        model,
        "--window",
        str(WINDOW),
        "--max-output",
        str(MAX_OUTPUT),
        "--tools",
        "abridged.testing.tools:TOOLS",
        "--lease-ttl",
        str(LEASE_TTL),
        "--no-auth",
        "--log-level",
        "warning",
    ]
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_WITHIN
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"serve exited: {(tmp_path / 'serve.log').read_text()[-3000:]}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(base + "/readyz", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("serve did not become ready")
            time.sleep(0.1)
        yield base, process
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def worker_pids(server_pid: int) -> set[int]:
    """The server's child processes (its uvicorn workers, and any helper it started)."""
    children: set[int] = set()
    task_dir = Path(f"/proc/{server_pid}/task")
    for task in task_dir.iterdir():
        with contextlib.suppress(OSError):
            children.update(int(p) for p in (task / "children").read_text().split())
    return children


async def _lease_holders(db_url: str) -> list[str]:
    engine = create_engine(resolve_url(db_url))
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                text(
                    "SELECT lease_holder FROM conversations "
                    "WHERE lease_holder IS NOT NULL AND lease_expires_ms > :now"
                ),
                {"now": int(time.time() * 1000)},
            )
            return [str(r[0]) for r in rows]
    finally:
        await engine.dispose()


def busy_pids(db_url: str) -> dict[int, int]:
    """Worker pid -> live leases it holds (holders are ``host:pid:worker:turn``)."""
    counts: dict[int, int] = {}
    for holder in asyncio.run(_lease_holders(db_url)):
        parts = holder.split(":")
        if len(parts) >= 2 and parts[1].isdigit():
            counts[int(parts[1])] = counts.get(int(parts[1]), 0) + 1
    return counts


@dataclass
class Tally:
    """What the clients saw."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    sent: dict[str, list[str]] = field(default_factory=dict)  # conversation -> message ids
    resends: int = 0
    answered_events: int = 0
    errors: list[str] = field(default_factory=list)
    aborted: list[str] = field(default_factory=list)


def send_until_answered(
    client: httpx.Client, cid: str, mid: str, content: str, tally: Tally
) -> None:
    """Send one message (SSE) and resend it with the same id until ``result`` or
    ``answered`` arrives."""
    deadline = time.monotonic() + ANSWER_WITHIN
    attempt = 0
    while time.monotonic() < deadline:
        if attempt:
            with tally.lock:
                tally.resends += 1
            time.sleep(0.1)
        attempt += 1
        name = ""
        try:
            with client.stream(
                "POST", f"/v1/conversations/{cid}/messages", json={"content": content, "id": mid}
            ) as response:
                if response.status_code != 200:
                    with tally.lock:
                        tally.errors.append(f"{mid}: HTTP {response.status_code}")
                    continue
                for line in response.iter_lines():
                    if line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: "):
                        data = json.loads(line[6:])
                        if name == "result":
                            if data.get("aborted"):
                                with tally.lock:
                                    tally.aborted.append(mid)
                            return
                        if name == "answered":
                            with tally.lock:
                                tally.answered_events += 1
                            return
                        if name == "error":
                            with tally.lock:
                                tally.errors.append(f"{mid}: {data}")
        except BROKEN:
            continue  # the worker died under this request: send the same id again
    with tally.lock:
        tally.errors.append(f"{mid}: no answer within the deadline")


#: A connection a send: each send goes to whichever worker accepts it (kept-alive connections
#: stayed with the worker that accepted them first, one worker ran every turn at times).
NO_KEEPALIVE = httpx.Limits(max_keepalive_connections=0)


def run_client(base: str, index: int, cids: list[str], tally: Tally) -> None:
    cid = cids[index % len(cids)]
    with httpx.Client(
        base_url=base, timeout=httpx.Timeout(60, connect=10), limits=NO_KEEPALIVE
    ) as client:
        for k in range(MESSAGES_PER_CLIENT):
            mid = f"m-{index}-{k}-{uuid.uuid4().hex[:6]}"
            with tally.lock:
                tally.sent.setdefault(cid, []).append(mid)
            send_until_answered(client, cid, mid, f"client {index} task {k}: read records", tally)


def check_conversation(client: httpx.Client, cid: str, sent: list[str]) -> list[str]:
    """Problems in one conversation's stored messages."""
    problems: list[str] = []
    timeline = client.get(f"/v1/conversations/{cid}/messages", params={"commands": "false"})
    assert timeline.status_code == 200, timeline.text
    rows = timeline.json()["messages"]
    queued = [r["id"] for r in rows if r["status"] != "delivered"]
    if queued:
        problems.append(f"{cid}: messages never delivered {queued}")
    users = [r for r in rows if r["role"] == "user" and r["kind"] is None]
    ids = [r["id"] for r in users]
    duplicated = {i for i in ids if ids.count(i) > 1}
    if duplicated:
        problems.append(f"{cid}: stored twice {sorted(duplicated)}")
    if set(ids) != set(sent):
        problems.append(
            f"{cid}: lost {sorted(set(sent) - set(ids))}, unexpected {sorted(set(ids) - set(sent))}"
        )
    last_answer = max(
        (
            r["seq"]
            for r in rows
            if r["role"] == "assistant" and not r["message"].get("tool_calls") and r["text"]
        ),
        default=-1,
    )
    unanswered = [r["id"] for r in users if r["seq"] is None or r["seq"] > last_answer]
    if unanswered:
        problems.append(f"{cid}: no answer after {unanswered}")
    # each client sends its next message once the last one is answered: its messages are
    # stored in the order it sent them
    seqs = {r["id"]: r["seq"] for r in users}
    for sender in {mid.split("-")[1] for mid in sent}:
        mine = [seqs.get(mid) for mid in sent if mid.split("-")[1] == sender]
        placed = [q for q in mine if q is not None]
        if len(placed) != len(mine) or placed != sorted(placed):
            problems.append(f"{cid}: client {sender}'s messages out of order {mine}")
    messages = [message_from_dict(r["message"]) for r in rows]
    issues = [i for i in validate_messages(messages) if i.severity == "error"]
    if issues:
        problems.append(f"{cid}: pairing {issues[:5]}")
    return problems


def metric(text_: str, name: str) -> float:
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text_.splitlines()
        if line.startswith(name) and not line.startswith("#")
    )


@pytest.fixture
def fresh_db(postgres: Postgres | str) -> Iterator[str]:
    server = require_postgres(postgres)
    name = f"abridged_workers_{uuid.uuid4().hex[:8]}"
    asyncio.run(_sql(server.admin_url, f"CREATE DATABASE {name}"))
    url = server.database_url(name)
    asyncio.run(upgrade(url))
    try:
        yield url
    finally:
        asyncio.run(_sql(server.admin_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))


def test_four_workers_survive_a_killed_worker(fresh_db: str, tmp_path: Path) -> None:
    started = time.monotonic()
    with (
        provider_process(PROVIDER_LATENCY) as (provider_url, record),
        serve(fresh_db, provider_url + "/v1#gpt-test", tmp_path) as (base, server),
        httpx.Client(base_url=base, timeout=30) as admin,
    ):
        cids = []
        for i in range(CONVERSATIONS):
            made = admin.post(
                "/v1/conversations",
                json={"title": f"c{i}", "settings": {"summarizer": "extractive"}},
            )
            assert made.status_code == 201, made.text
            cids.append(made.json()["id"])
        tally = Tally()
        threads = [
            threading.Thread(target=run_client, args=(base, i, cids, tally), daemon=True)
            for i in range(CLIENTS)
        ]
        for t in threads:
            t.start()
        # wait until every worker runs a turn (after 10 s, two are enough; a loaded machine
        # may take longer to spread the turns), then kill one that holds a lease, in the
        # middle of its turn
        workers = worker_pids(server.pid)
        waiting = time.monotonic()
        busy: dict[int, int] = {}
        while time.monotonic() < waiting + STARTUP_WITHIN:
            busy = {p: n for p, n in busy_pids(fresh_db).items() if p in workers}
            if len(busy) >= WORKERS or (len(busy) >= 2 and time.monotonic() > waiting + 10):
                break
            time.sleep(0.05)
        assert busy, "no worker was running a turn"
        # Freeze a busy worker, then read its leases again: a worker may end its turn between
        # the look above and the kill. A frozen one holds what it held; one holding nothing
        # by then runs on, and the next is tried. The leases the victim dies with expire
        # LEASE_TTL later, unrenewed.
        victim, orphaned = 0, 0
        while not orphaned and time.monotonic() < waiting + STARTUP_WITHIN:
            for pid in sorted(busy, key=lambda p: busy[p], reverse=True):
                os.kill(pid, signal.SIGSTOP)
                orphaned = busy_pids(fresh_db).get(pid, 0)
                if orphaned:
                    victim = pid
                    os.kill(victim, signal.SIGKILL)
                    break
                os.kill(pid, signal.SIGCONT)
            else:
                time.sleep(0.05)
                busy = {p: n for p, n in busy_pids(fresh_db).items() if p in workers} or busy
        killed_at = time.monotonic() - started
        for t in threads:
            t.join(timeout=ANSWER_WITHIN + 10)
        assert not any(t.is_alive() for t in threads), "clients still waiting"
        problems = list(tally.errors) + [f"aborted {m}" for m in tally.aborted]
        for cid in cids:
            problems += check_conversation(admin, cid, tally.sent.get(cid, []))
        metrics = admin.get("/metrics").text
    takeovers = metric(metrics, "abridged_lease_takeovers_total")
    took = time.monotonic() - started
    print(
        f"\nworkers busy at the kill: {len(busy)}/{WORKERS} {busy}, killed {victim} at "
        f"{killed_at:.1f} s holding {orphaned} lease(s); resends {tally.resends}, "
        f"answered events {tally.answered_events}, "
        f"takeovers {takeovers:g}, provider requests {record.get('count')} "
        f"(aborted {record.get('aborted')}), {took:.1f} s"
    )
    assert not problems, "\n".join(problems[:20])
    assert record, "the provider process did not report"
    assert record["rejected"] == [], record["rejected"][:5]
    assert sum(len(v) for v in tally.sent.values()) == CLIENTS * MESSAGES_PER_CLIENT
    assert len(busy) >= 2, f"only {len(busy)} worker(s) were busy at the kill"
    # each lease the dead worker held is taken over once it expires; a live worker that
    # stalled past its lease on a loaded machine may be taken over too (its late writes are
    # refused, its sends finish the message after), so more is allowed, fewer is not
    assert orphaned > 0, "the killed worker held no lease"
    assert takeovers >= orphaned, f"{takeovers:g} takeovers for {orphaned} orphaned lease(s)"
