"""Benchmark: the database round trips of a turn and of a proxied request (statements,
transactions, commits, pings of pooled connections), on SQLite and PostgreSQL.

    .venv/bin/python bench/store_round_trips.py [--history 100] [--turns 3]
                                                [--backends sqlite,postgresql] [--statements]
                                                [--json] [--no-results] [--results PATH]

Counts, not time: the same script gives the same counts on any machine, so a test pins them
(``tests/bench/test_store_round_trips.py``); two columns of time beside them (a counted turn's
median wall time, and the part inside statements: ``after_cursor_execute`` minus
``before_cursor_execute``) say what the counts cost on this machine. Listeners on every engine
of the store (``Store.sync_engines``) count what the store sends: ``before_cursor_execute``
(statements; SQLite's ``BEGIN`` and ``PRAGMA`` are counted as transaction control, not as
statements),
``begin``, ``commit`` and ``rollback``, and the pool's ``checkout`` that pinged (on PostgreSQL
a connection that rested in the pool is pinged when taken out: ``abridged.store.connect.
ping_when_idle``). A PostgreSQL round trip is a statement, a ``BEGIN``, a ``COMMIT`` /
``ROLLBACK`` or a ping: their sum is the ``round trips`` column.

Three paths, each in this process on one event loop, the model ``abridged.testing.
ProviderServer`` answering at once (``bench/service.py``'s script: two ``read_record`` tool calls
after each user message, then a short text, so a turn is three model calls):

- **service turn**: ``abridged.server`` under uvicorn (the settings of ``bench/service.py``:
  ``--no-auth``, the demo tools, window 131,072), one conversation: ``--history`` turns, then
  ``--turns`` turns counted, each a ``POST /v1/conversations/{id}/messages`` read to the end of
  its event stream, then every background task of the worker and the store waited for;
- **library turn**: ``abridged.runtime.Conversation`` on the store (as ``bench/service.py``'s
  direct path), ``async for _ in convo.stream(text)``, the same history and counted turns;
- **proxied request**: ``abridged proxy``'s application under uvicorn, ``bench/proxy.py``'s agent
  traffic (a tool-heavy history growing by a tool call and its ~600-token result a request,
  window 400,000: nothing pruned or compacted) from 20 steps to ``--history`` steps, then
  ``--turns`` requests counted, each followed by the proxy's clean-ups (its usage recorded, the
  new messages written, the lease given back, the ``last_requests`` row kept).

The lease is renewed every ``lease_ttl / 3`` (10 s): a turn here never lasts that long, so a
renewal (one write transaction) is not in the counts; at an agent's pace (3 s a call) a turn
holds about one. ``--statements`` prints each counted statement of the last turn of each path.
The table goes to stdout and to the ``## store round trips`` section of ``bench/RESULTS.md``;
``--json`` prints one JSON object last.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from results import add_output_options, save_section  # noqa: E402

SECTION = "## store round trips"
BACKENDS = ("sqlite", "postgresql")
PATHS = ("service turn", "library turn", "proxied request")
#: Transaction control sent as a statement on SQLite (by the store's own ``begin`` hook).
_CONTROL = ("BEGIN", "PRAGMA", "COMMIT", "ROLLBACK")
_MARKS = ("BEGIN", "COMMIT", "ROLLBACK", "(checkout: ping)")


@dataclass
class Counts:
    """What the store sent to its database over a span."""

    statements: int = 0
    transactions: int = 0
    commits: int = 0
    rollbacks: int = 0
    pings: int = 0
    sql: list[str] = field(default_factory=list)
    # time, not counts (this machine's): the span's wall time, and the part of it spent inside
    # statements (from sending one to its result read: the round trip and the server's work)
    seconds: float = 0.0
    in_statements: float = 0.0

    @property
    def round_trips(self) -> int:
        """Statements, BEGINs, COMMITs / ROLLBACKs and pre-pings (PostgreSQL's view)."""
        return self.statements + self.transactions + self.commits + self.rollbacks + self.pings

    def figures(self) -> dict[str, int]:
        """The counts without the statements' text."""
        return {
            "statements": self.statements,
            "transactions": self.transactions,
            "commits": self.commits,
            "rollbacks": self.rollbacks,
            "pings": self.pings,
            "round_trips": self.round_trips,
        }


def _autocommit(conn: Any) -> bool:
    """Whether ``conn`` runs in autocommit (``abridged.store.base.StoreBase._run_alone``)."""
    return bool(conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT")


class StatementCounter:
    """Listeners on a store's engines that count into ``counts`` (replaced by ``span``)."""

    def __init__(self, store: Any, *, pinged: bool) -> None:
        from sqlalchemy import event

        self.counts = Counts()
        self._pinged = pinged
        self._engines = list(store.sync_engines)
        self._sent: dict[int, float] = {}  # connection -> when its statement was sent
        self._hooks: list[tuple[Any, str, Any]] = [
            ("before_cursor_execute", self._statement),
            ("after_cursor_execute", self._answered),
            ("begin", self._begin),
            ("commit", self._commit),
            ("rollback", self._rollback),
        ]  # type: ignore[list-item]
        for engine in self._engines:
            for name, hook in self._hooks:  # type: ignore[misc]
                event.listen(engine, name, hook)
            event.listen(engine.pool, "checkout", self._checkout)

    def close(self) -> None:
        """Remove the listeners."""
        from sqlalchemy import event

        for engine in self._engines:
            for name, hook in self._hooks:  # type: ignore[misc]
                event.remove(engine, name, hook)
            event.remove(engine.pool, "checkout", self._checkout)

    def _statement(self, conn: Any, cursor: Any, sql: str, *args: Any) -> None:
        self._sent[id(conn)] = time.perf_counter()
        head = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
        if head in _CONTROL:
            return
        self.counts.statements += 1
        self.counts.sql.append(" ".join(sql.split())[:160])

    def _answered(self, conn: Any, cursor: Any, sql: str, *args: Any) -> None:
        sent = self._sent.pop(id(conn), None)
        if sent is not None:
            self.counts.in_statements += time.perf_counter() - sent

    # SQLAlchemy signals ``begin`` and ``commit`` / ``rollback`` on a connection in autocommit
    # too, where nothing is sent (its asyncpg adapter starts no transaction): not counted.
    def _begin(self, conn: Any) -> None:
        if not _autocommit(conn):
            self.counts.transactions += 1
            self.counts.sql.append("BEGIN")

    def _commit(self, conn: Any) -> None:
        if not _autocommit(conn):
            self.counts.commits += 1
            self.counts.sql.append("COMMIT")

    def _rollback(self, conn: Any) -> None:
        if not _autocommit(conn):
            self.counts.rollbacks += 1
            self.counts.sql.append("ROLLBACK")

    def _checkout(self, _dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        from abridged.store.connect import PINGED

        if self._pinged and record.info.get(PINGED):
            self.counts.pings += 1
            self.counts.sql.append("(checkout: ping)")

    @contextlib.contextmanager
    def span(self) -> Iterator[Counts]:
        """Count into a fresh ``Counts`` for the block (and time it)."""
        self.counts = Counts()
        started = time.perf_counter()
        yield self.counts
        self.counts.seconds = time.perf_counter() - started
        self.counts = Counts()


@dataclass
class PathResult:
    """The counts of the counted turns (or requests) of one path on one backend."""

    backend: str
    path: str
    history: int
    turns: list[Counts]

    def per_turn(self) -> dict[str, float]:
        """Each count's mean over the counted turns."""
        keys = self.turns[0].figures().keys()
        return {k: sum(t.figures()[k] for t in self.turns) / len(self.turns) for k in keys}

    def median_ms(self) -> tuple[float, float]:
        """The median wall time of a counted turn and of its time inside statements (ms)."""
        return (
            statistics.median(t.seconds for t in self.turns) * 1e3,
            statistics.median(t.in_statements for t in self.turns) * 1e3,
        )

    def worst(self) -> dict[str, int]:
        """Each count's largest value over the counted turns."""
        keys = self.turns[0].figures().keys()
        return {k: max(t.figures()[k] for t in self.turns) for k in keys}


# -- the model and the servers ---------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def uvicorn_app(app: Any) -> AsyncIterator[str]:
    """``app`` under uvicorn on this event loop (its lifespan run); yields its base URL."""
    import uvicorn

    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        if task.done():
            task.result()
            raise RuntimeError("the server did not start")
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


async def _quiet(*drains: Any) -> None:
    """Wait for the background work of a turn (each drain until nothing is left)."""
    for _ in range(3):  # a drained task may start another one (a clean-up's store write)
        for drain in drains:
            await drain()
        await asyncio.sleep(0)


# -- the three paths -------------------------------------------------------------------------


async def service_path(
    store: Any, counter: StatementCounter, provider_url: str, history: int, turns: int
) -> list[Counts]:
    """Turns through the service (see the module docstring)."""
    import httpx

    import service as bench_service
    from abridged.server.app import create_app
    from abridged.server.config import ServiceConfig

    model = provider_url + "/v1#gpt-test"
    config = ServiceConfig(
        models=(model,),
        context_window=bench_service.WINDOW,
        max_output_tokens=bench_service.MAX_OUTPUT,
        tools=bench_service.TOOLS,
        open_access=True,
        log_level="warning",
    )
    app = create_app(config, store=store)
    counted: list[Counts] = []
    async with (
        uvicorn_app(app) as url,
        httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(300, connect=30)) as client,
    ):
        runner = app.state.service.runner
        pool = app.state.service.pool

        async def runner_tasks() -> None:
            # the turns, and the announcements of their changes to other workers (PostgreSQL's
            # NOTIFY, in the background: counted with the turn that made it)
            while runner._tasks or pool._announcing:
                tasks = [*runner._tasks, *pool._announcing]
                await asyncio.gather(*tasks, return_exceptions=True)

        cid = await bench_service.new_conversation(client, model)
        for index in range(history + turns):
            if index < history:
                await bench_service.http_turn(client, cid, index)
                await _quiet(runner_tasks, store.drain)
                continue
            with counter.span() as counts:
                await bench_service.http_turn(client, cid, index)
                await _quiet(runner_tasks, store.drain)
            counted.append(counts)
    return counted


async def library_path(
    store: Any, counter: StatementCounter, provider_url: str, history: int, turns: int
) -> list[Counts]:
    """Turns through ``Conversation`` (see the module docstring)."""
    import service as bench_service
    from abridged.providers.select import chat_model_from_string
    from abridged.runtime import Conversation
    from abridged.server.config import load_tools
    from abridged.server.runner import api_settings, runtime_settings

    model = chat_model_from_string(provider_url + "/v1#gpt-test", http_client="aiohttp")
    convo = await Conversation.open(
        store,
        model,
        tools=load_tools(bench_service.TOOLS),
        owner="local",
        settings=runtime_settings(api_settings({"summarizer": "extractive"})),
        summarizer="extractive",
        context_window=bench_service.WINDOW,
        max_output_tokens=bench_service.MAX_OUTPUT,
    )
    counted: list[Counts] = []

    async def one(index: int) -> None:
        result = None
        async for item in convo.stream(bench_service._text(index)):
            result = item
        if getattr(result, "text", None) != bench_service.ANSWER:
            raise RuntimeError(f"library turn {index} ended with {result!r}")
        await _quiet(store.drain)

    try:
        for index in range(history + turns):
            if index < history:
                await one(index)
                continue
            with counter.span() as counts:
                await one(index)
            counted.append(counts)
    finally:
        await convo.close()
        await model.aclose()
    return counted


async def proxy_path(
    store: Any, counter: StatementCounter, provider: Any, history: int, turns: int
) -> list[Counts]:
    """Agent traffic through the proxy (see the module docstring)."""
    import random

    import httpx

    import proxy as bench_proxy
    from abridged.server.proxy.app import create_proxy_app
    from abridged.server.proxy.config import ProxyConfig
    from abridged.testing import Reply

    provider.set_replies(lambda r: Reply(tool_calls=[("read_file", {"path": "src/next.py"})]))
    config = ProxyConfig(
        upstream=provider.base_url,
        context_window=bench_proxy.AGENT_WINDOW,
        max_output_tokens=1_024,
        log_level="warning",
    )
    app = create_proxy_app(config, store=store)
    rng = random.Random(1)
    steps = bench_proxy.AGENT_START_STEPS
    messages = bench_proxy.agent_history(rng, steps)
    tools = [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file of the repository.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        }
    ]
    headers = {"authorization": "Bearer k", "content-type": "application/json"}
    counted: list[Counts] = []
    async with uvicorn_app(app) as url, httpx.AsyncClient(base_url=url, timeout=120) as client:

        async def one() -> None:
            content = json.dumps({"model": "bench", "messages": messages, "tools": tools})
            reply = await client.post("/v1/chat/completions", content=content, headers=headers)
            if reply.status_code != 200:
                raise RuntimeError(f"proxy: HTTP {reply.status_code} {reply.text[:300]}")
            await _quiet(app.drain, store.drain)

        while steps < history + turns:
            messages += bench_proxy.agent_step(rng, steps)
            steps += 1
            if steps <= history:
                await one()
                continue
            with counter.span() as counts:
                await one()
            counted.append(counts)
    return counted


# -- a backend -------------------------------------------------------------------------------


@contextlib.contextmanager
def database(backend: str, work: Path) -> Iterator[Any]:
    """A function making an empty database URL of ``backend`` (a file, or a database of a
    throwaway PostgreSQL cluster)."""
    if backend == "sqlite":
        made = iter(range(1_000))
        yield lambda: str(work / f"store-{next(made)}.db")
        return
    from abridged.store.testing import PostgresCluster, find_bin_dir

    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise SystemExit("no PostgreSQL binaries: run scripts/install-system-deps.sh")
    cluster = PostgresCluster(bin_dir)
    admin = cluster.start()
    made = iter(range(1_000))

    def fresh() -> str:
        name = f"round_trips_{next(made)}"
        asyncio.run(_create_database(admin, name))
        return cluster.database_url(name)

    try:
        yield fresh
    finally:
        cluster.stop()


async def _create_database(admin: str, name: str) -> None:
    from sqlalchemy import text

    from abridged.store.connect import create_engine, resolve_url

    engine = create_engine(resolve_url(admin), isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.execute(text(f"CREATE DATABASE {name}"))
    finally:
        await engine.dispose()


async def run_path(path: str, url: str, history: int, turns: int) -> PathResult:
    """One path on a fresh database at ``url``."""
    import service as bench_service
    from abridged.store import Store
    from abridged.testing import ProviderServer

    store = Store(url)
    await store.open()
    counter = StatementCounter(store, pinged=store.dialect == "postgresql")
    try:
        with ProviderServer(
            context_window=bench_service.WINDOW,
            max_output=bench_service.MAX_OUTPUT,
            replies=bench_service.scripted_reply,
        ) as provider:
            if path == "service turn":
                counted = await service_path(store, counter, provider.base_url, history, turns)
            elif path == "library turn":
                counted = await library_path(store, counter, provider.base_url, history, turns)
            else:
                counted = await proxy_path(store, counter, provider, history, turns)
    finally:
        counter.close()
        await store.close()
    return PathResult(store.dialect, path, history, counted)


def measure(
    backends: list[str], history: int, turns: int, paths: tuple[str, ...] = PATHS
) -> list[PathResult]:
    """Every path on every backend, each on a database of its own."""
    results: list[PathResult] = []
    work = Path(tempfile.mkdtemp(prefix="abridged-round-trips-"))
    try:
        for backend in backends:
            with database(backend, work) as fresh:
                for path in paths:
                    results.append(asyncio.run(run_path(path, fresh(), history, turns)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


# -- output ----------------------------------------------------------------------------------


def _n(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.1f}"


def render(results: list[PathResult], command: str, seconds: float) -> str:
    lines = [
        SECTION,
        "",
        f"`{command}` ({seconds:.0f} s; the counts are the same on any machine, the times not)",
        "",
        "What the store sends its database per turn (per request for the proxy) at a history of "
        f"{results[0].history} turns (proxy: steps), the mean of the counted ones; statements "
        "without transaction control; round trips = statements + BEGINs + COMMITs / ROLLBACKs "
        "+ pings (PostgreSQL's ping of a connection that rested 0.5 s or more in the pool; the "
        "SQLite runner keeps its connection). A lease "
        "renewal (every 10 s of a turn) is one write transaction more. The two time columns are "
        "this machine's, not counts: the median wall time of a counted turn (client, server and "
        "provider stand-in on one event loop, the model answering at once) and the part of it "
        "inside statements (sent to answered: the round trip and the server's work; not shown "
        "on SQLite, whose prebuilt statements run on its own cursor, `store/fast.py`, which tells "
        "listeners only that one is sent).",
        "",
        "| backend | path | statements | transactions | commits | pings | round trips | "
        "wall a turn | in statements |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        m = r.per_turn()
        wall, inside = r.median_ms()
        lines.append(
            f"| {r.backend} | {r.path} | {_n(m['statements'])} | {_n(m['transactions'])} | "
            f"{_n(m['commits'])} | {_n(m['pings'])} | {_n(m['round_trips'])} | "
            f"{wall:.1f} ms | {f'{inside:.1f} ms' if r.backend != 'sqlite' else '-'} |"
        )
    return "\n".join(lines) + "\n"


def statements_of(results: list[PathResult]) -> str:
    """The statements of the last counted turn of every path, in order, with its
    transactions' BEGINs and COMMITs."""
    out = []
    for r in results:
        out.append(f"-- {r.backend}, {r.path} (the last counted turn)")
        out += [sql if sql in _MARKS else "    " + sql for sql in r.turns[-1].sql]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> list[PathResult]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--history", type=int, default=100, help="turns before counting (100)")
    parser.add_argument("--turns", type=int, default=3, help="turns counted (default 3)")
    parser.add_argument("--backends", default=",".join(BACKENDS), help="sqlite,postgresql")
    parser.add_argument("--statements", action="store_true", help="print the statements")
    add_output_options(parser)
    args = parser.parse_args(argv)
    backends = [b for b in args.backends.split(",") if b]
    if args.history <= bench_start() or args.turns < 1 or set(backends) - set(BACKENDS):
        parser.error(f"--history > {bench_start()}, --turns >= 1, backends of {BACKENDS}")
    started = time.perf_counter()
    results = measure(backends, args.history, args.turns)
    command = (
        f"python bench/store_round_trips.py --history {args.history} --turns {args.turns} "
        f"--backends {','.join(backends)}"
    )
    table = render(results, command, time.perf_counter() - started)
    print(table)
    if args.statements:
        print(statements_of(results))
    save_section(args, table)
    if args.json:
        figures = [
            {
                "backend": r.backend,
                "path": r.path,
                "history": r.history,
                "per_turn": r.per_turn(),
                "median_turn_ms": round(r.median_ms()[0], 2),
                "median_in_statements_ms": round(r.median_ms()[1], 2),
                "worst": r.worst(),
                "turns": [t.figures() for t in r.turns],
            }
            for r in results
        ]
        print(json.dumps(figures))
    return results


def bench_start() -> int:
    """The agent traffic's first history (steps): ``--history`` starts there at least."""
    import proxy as bench_proxy

    return int(bench_proxy.AGENT_START_STEPS)


if __name__ == "__main__":
    main()
