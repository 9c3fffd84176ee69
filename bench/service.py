"""Benchmark: what the HTTP service adds to a turn, and how many streaming conversations one
worker holds.

    .venv/bin/python bench/service.py [--turns 30] [--latency-ms 20] [--levels 10,25,50,100,200,400]
                                      [--stream-latency-ms 1000] [--stream-turns 3] [--json]
                                      [--no-results] [--results PATH]
    .venv/bin/python bench/service.py --workers 2 --pace 3s [--levels 100,200,400,600]
                                      [--stream-turns 3] [--json] ...

The model is ``abridged.testing.ProviderServer`` in a process of its own (Chat Completions,
streamed), answering a scripted conversation: every user message gets two tool calls
(``read_record`` of the demo tools, 8 lines each) and then a short text, so a turn is three model
calls; the window (128k) is never reached: nothing is compacted. Two paths run the same script
in the same run:

- **direct**: ``abridged.runtime.Conversation`` in this process on a SQLite file, each turn
  ``async for _ in convo.stream(text)``, with the settings the service gives a conversation
  and its model the way the service makes it (``http_client="aiohttp"``);
- **HTTP**: ``abridged serve`` (one worker, a subprocess, its own SQLite file, ``--no-auth``,
  default log level), each turn a ``POST /v1/conversations/{id}/messages`` read as server-sent
  events until the stream ends (the lease given back), by ``httpx`` from this process (the
  streams part by ``aiohttp``: see ``StreamsClient``).

**Added latency**: the two paths take turns (direct turn *i*, then HTTP turn *i*) on one
conversation each, ``--turns`` turns, the model answering after ``--latency-ms``; the added
latency of turn *i* is its HTTP time minus its direct time: p50 and p99 (the first HTTP turn
includes the worker opening the conversation). Target: p50 <= 5 ms.

**Concurrent streams**: at each level N of ``--levels``, N conversations (made beforehand)
each run a warm-up turn (the worker opens the conversation; not counted) and ``--stream-turns``
turns back to back through the one worker, starts spread over one turn's time so that about N
streams are open at every moment. The model answers after ``--stream-latency-ms`` (default
1 s a call, a turn about 3 s: a real model's pace) from a second provider process: with 20 ms
a call, every stream would ask for turns back to back and a worker's CPU (the ``CPU per turn``
line of the table, ``worker_cpu_ms_per_turn``) would cap the level, not what HTTP adds. A
turn's added latency is its time minus the direct time of the same turn index on that model
(measured alone, just before the level); a level is held when no turn failed and the p99
added latency is under 50 ms. Levels stop at the first one missed. Target: >= 200 streams.

**Capacity** (``--workers N --pace 3s``, alone): the concurrent-streams part on ``abridged
serve --workers N`` on PostgreSQL (a throwaway cluster with durable commits), the model
``--pace`` a call (default 3 s: an agent's pace, a turn about 9 s), levels ``--levels``
(default 100,200,400,600). Per level: the streams held (no failure, p99 added < 50 ms), turns
a second, the workers' CPU per turn (every worker process, user and system: the robust figure
on a shared machine), turns a second per core (1000 / that) and how many cores the workers
kept busy. Its table goes to the ``## service capacity`` section; with ``--json`` the last
line is its figures (``concurrent_streams``, ``levels``). Target: >= 400 streams at 3 s a call
with ``--workers 2``. The exit code is 1 when it is missed.

The table goes to stdout and to the ``## service`` section of ``bench/RESULTS.md``; with
``--json`` the last line is one JSON object: ``added_latency_p50_ms``,
``added_latency_p99_ms``, ``concurrent_streams`` (the largest level held, 0 if none), the
CPU time of a turn in each path (``direct_cpu_ms_per_turn``, ``worker_cpu_ms_per_turn``) and
the per-level figures (among them the worker's CPU a turn and the share of one core it was
busy over the level). The exit code is 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from results import add_output_options, save_section  # noqa: E402

SECTION = "## service"
CAPACITY_SECTION = "## service capacity"
TARGET_CAPACITY_STREAMS = 400
DEFAULT_CAPACITY_LEVELS = (100, 200, 400, 600)
WINDOW = 131_072
MAX_OUTPUT = 1_024
TOOLS = "abridged.testing.tools:TOOLS"
TOOL_STEPS = 2
RECORD_LINES = 8
ANSWER = (
    "Done: both records read. The first lists the open items, the second the owners; "
    "nothing in them conflicts, so the plan stands as written."
)
P99_LIMIT_MS = 50.0
TARGET_P50_MS = 5.0
TARGET_STREAMS = 200
DEFAULT_LEVELS = (10, 25, 50, 100, 200, 400)
ENV_KEY = "ABRIDGED_API_KEY"


# -- the model -------------------------------------------------------------------------------


def scripted_reply(record: Any) -> Any:
    """Two tool calls after each user message, then a short text."""
    from abridged.testing import Reply

    messages = record.messages
    since_user = 0
    for m in reversed(messages):
        if m.role == "user" and not m.tool_results:
            break
        if m.role == "tool" or m.tool_results:
            since_user += 1
    if since_user < TOOL_STEPS:
        key = f"r{len(messages)}"
        return Reply("", tool_calls=[("read_record", {"key": key, "lines": RECORD_LINES})])
    return Reply(ANSWER)


def provider_main(latency_ms: float) -> int:
    """``--provider``: serve the script; print the base URL, and at stdin's end what was
    recorded (one JSON line)."""
    from abridged.testing import ProviderServer

    with ProviderServer(
        context_window=WINDOW,
        max_output=MAX_OUTPUT,
        replies=scripted_reply,
        latency=latency_ms / 1000,
    ) as provider:
        sys.stdout.write(provider.base_url + "\n")
        sys.stdout.flush()
        sys.stdin.read()
        requests = provider.requests
        rejected = [r.error_message for r in requests if r.error is not None]
        sys.stdout.write(json.dumps({"requests": len(requests), "rejected": rejected}) + "\n")
        sys.stdout.flush()
    return 0


@dataclass
class Process:
    """A child process of this benchmark."""

    popen: subprocess.Popen[str]
    url: str
    log: IO[str] | None = None

    def stop(self) -> str:
        """Stop it; what it printed last."""
        out = ""
        if self.popen.stdin is not None:
            self.popen.stdin.close()
            if self.popen.stdout is not None:
                out = self.popen.stdout.read()
        else:
            self.popen.send_signal(2)  # SIGINT: uvicorn shuts down
        try:
            self.popen.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
        if self.log is not None:
            self.log.close()
        return out


def start_provider(latency_ms: float) -> Process:
    """The provider in its own process."""
    popen = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--provider", str(latency_ms)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert popen.stdout is not None
    url = popen.stdout.readline().strip()
    if not url.startswith("http"):
        popen.kill()
        raise RuntimeError("the provider process did not start")
    return Process(popen, url)


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_service(
    db: Path | str, models: list[str], log_path: Path, *, workers: int = 1
) -> Process:
    """``abridged serve`` with ``workers`` workers on ``db`` (a SQLite file or a database
    URL); waits until it is ready."""
    import httpx

    port = free_port()
    command = [sys.executable, "-m", "abridged", "serve", "--port", str(port), "--db", str(db)]
    if workers > 1:
        command += ["--workers", str(workers)]
    for model in models:
        command += ["--model", model]
    command += ["--window", str(WINDOW), "--max-output", str(MAX_OUTPUT), "--tools", TOOLS]
    command += ["--no-auth"]
    log = log_path.open("w", encoding="utf-8")
    popen = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        if popen.poll() is not None:
            log.close()
            raise RuntimeError(f"abridged serve exited: {log_path.read_text()[-2000:]}")
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return Process(popen, url, log)
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            popen.kill()
            raise RuntimeError("abridged serve did not become ready")
        time.sleep(0.1)


# -- the two paths ---------------------------------------------------------------------------


def _text(turn: int) -> str:
    return f"Task {turn}: read the two records for this step and report."


class Direct:
    """One conversation through ``abridged.runtime.Conversation`` on SQLite."""

    def __init__(self, db: Path, model: str) -> None:
        self.db = db
        self.spec = model
        self.store: Any = None
        self.model: Any = None
        self.convo: Any = None
        self.cpu = 0.0

    async def open(self) -> None:
        from abridged.providers.select import chat_model_from_string
        from abridged.runtime import Conversation
        from abridged.server.config import load_tools
        from abridged.server.runner import api_settings, runtime_settings
        from abridged.store import Store

        self.store = Store(str(self.db))
        await self.store.open()
        api = api_settings({"summarizer": "extractive"})
        # the model over the same HTTP client as the service's (``service_model``)
        self.model = chat_model_from_string(self.spec, http_client="aiohttp")
        self.convo = await Conversation.open(
            self.store,
            self.model,
            tools=load_tools(TOOLS),
            owner="local",
            settings=runtime_settings(api),
            summarizer="extractive",
            context_window=WINDOW,
            max_output_tokens=MAX_OUTPUT,
        )

    async def turn(self, index: int) -> float:
        """One turn; its seconds (and its CPU time in ``cpu``)."""
        cpu = time.process_time()
        started = time.perf_counter()
        result = None
        async for item in self.convo.stream(_text(index)):
            result = item
        took = time.perf_counter() - started
        self.cpu += time.process_time() - cpu
        if getattr(result, "text", None) != ANSWER:
            raise RuntimeError(f"direct turn {index} ended with {result!r}")
        return took

    async def close(self) -> None:
        await self.convo.close()
        await self.model.aclose()
        await self.store.close()


class TurnFailedError(RuntimeError):
    """A turn over HTTP did not end with its result."""


async def http_turn(client: Any, cid: str, index: int) -> float:
    """One turn over HTTP, read to the end of its stream; its seconds."""
    body = bytearray()
    started = time.perf_counter()
    async with client.stream(
        "POST", f"/v1/conversations/{cid}/messages", json={"content": _text(index)}
    ) as response:
        async for chunk in response.aiter_raw():
            body += chunk
    took = time.perf_counter() - started
    check_turn(response.status_code, body, cid, index)
    return took


def check_turn(status: int, body: bytes | bytearray, cid: str, index: int) -> None:
    """``TurnFailedError`` unless a turn's response is a 200 event stream that ended with its
    result and no error."""
    if status != 200:
        raise TurnFailedError(f"HTTP {status}: {bytes(body[:300])!r}")
    if b"event: result\n" not in body or b"event: error\n" in body:
        raise TurnFailedError(f"turn {index} of {cid}: {bytes(body[-300:])!r}")


def conversation_body(model: str) -> dict[str, Any]:
    """The body of ``POST /v1/conversations`` for a conversation of the benchmark."""
    return {"model": model, "settings": {"summarizer": "extractive"}}


async def new_conversation(client: Any, model: str) -> str:
    made = await client.post("/v1/conversations", json=conversation_body(model))
    if made.status_code != 201:
        raise RuntimeError(f"could not make a conversation: {made.status_code} {made.text}")
    return str(made.json()["id"])


class StreamsClient:
    """The load generator of the streams part: aiohttp, one connection a stream.

    Not httpx: its connection pool looks at every connection for each request, and at 200
    streams the client process took 16 ms of CPU a turn (half a core of the two the worker
    shares) and became the limit it was meant to measure (3.8 ms a turn at 100 streams)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.session: Any = None

    async def __aenter__(self) -> StreamsClient:
        import aiohttp

        self.session = aiohttp.ClientSession(
            # idle connections closed before the server's keep-alive (uvicorn: 5 s) ends them:
            # at 3 s a call a stream waits up to a turn (9 s) before its first one, and a
            # connection the server closed meanwhile fails the send ("connection reset")
            connector=aiohttp.TCPConnector(limit=0, keepalive_timeout=3),
            timeout=aiohttp.ClientTimeout(total=300, connect=30),
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.session.close()

    async def new_conversation(self, model: str) -> str:
        body = conversation_body(model)
        async with self.session.post(self.url + "/v1/conversations", json=body) as made:
            text = await made.text()
            if made.status != 201:
                raise RuntimeError(f"could not make a conversation: {made.status} {text}")
        return str(json.loads(text)["id"])

    async def turn(self, cid: str, index: int) -> float:
        """One turn, read to the end of its stream; its seconds (as ``http_turn``)."""
        body = bytearray()
        started = time.perf_counter()
        async with self.session.post(
            f"{self.url}/v1/conversations/{cid}/messages", json={"content": _text(index)}
        ) as response:
            async for chunk in response.content.iter_any():
                body += chunk
            status = response.status
        took = time.perf_counter() - started
        check_turn(status, body, cid, index)
        return took


def _client(url: str) -> Any:
    """The added-latency part's client: httpx, one request at a time."""
    import httpx

    return httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(300, connect=30))


def _pct(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


def process_cpu(pid: int) -> float:
    """CPU seconds (user and system, every thread) a process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> set[int]:
    """The child processes of ``pid`` (``abridged serve``'s workers)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found.update(int(p) for p in (task / "children").read_text().split())
        except OSError:
            continue
    return found


def workers_cpu(pid: int) -> float:
    """CPU seconds the worker processes of ``abridged serve`` (``pid``) have used: its
    children with more than one worker, else the process itself."""
    pids = children(pid) or {pid}
    total = 0.0
    for p in pids:
        try:
            total += process_cpu(p)
        except OSError:  # a helper process that ended
            continue
    return total


@dataclass
class Paired:
    """The added-latency part: seconds of each turn on both paths, and CPU seconds."""

    direct_s: list[float]
    http_s: list[float]
    direct_cpu_s: float
    worker_cpu_s: float


async def added_latency(url: str, worker: int, direct_db: Path, model: str, turns: int) -> Paired:
    """Direct and HTTP seconds of each turn, interleaved (after one warm-up turn each)."""
    warm = Direct(direct_db.with_suffix(".warm.db"), model)
    await warm.open()
    direct = Direct(direct_db, model)
    await direct.open()
    direct_s: list[float] = []
    http_s: list[float] = []
    worker_cpu = 0.0
    async with _client(url) as client:
        await warm.turn(0)
        await http_turn(client, await new_conversation(client, model), 0)
        cid = await new_conversation(client, model)
        for i in range(turns):
            direct_s.append(await direct.turn(i))
            before = process_cpu(worker)
            http_s.append(await http_turn(client, cid, i))
            worker_cpu += process_cpu(worker) - before
    await warm.close()
    await direct.close()
    return Paired(direct_s, http_s, direct.cpu, worker_cpu)


@dataclass
class Level:
    """What one concurrency level measured."""

    streams: int
    added_ms: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    peak_open: int = 0
    seconds: float = 0.0
    baseline_ms: list[float] = field(default_factory=list)
    completed: int = 0  # every turn that ended with its result, the warm-ups too
    worker_cpu_s: float = 0.0  # the worker's CPU over the level (making the conversations too)

    @property
    def turns(self) -> int:
        return len(self.added_ms)

    def p(self, q: float) -> float | None:
        return round(_pct(self.added_ms, q), 1) if self.added_ms else None

    @property
    def held(self) -> bool:
        p99 = self.p(0.99)
        return not self.failures and p99 is not None and p99 < P99_LIMIT_MS


async def run_level(url: str, model: str, streams: int, baseline: list[float]) -> Level:
    """``streams`` conversations, each a warm-up turn then ``len(baseline)`` turns, back to
    back."""
    level = Level(streams)
    open_now = 0
    async with StreamsClient(url) as client:
        made = await asyncio.gather(*(client.new_conversation(model) for _ in range(streams)))
        spread = baseline[0]
        rng = random.Random(streams)

        async def one(cid: str) -> None:
            nonlocal open_now
            await asyncio.sleep(rng.uniform(0, spread))
            try:  # the worker opens the conversation: a warm-up turn, not counted
                await client.turn(cid, -1)
                level.completed += 1
            except Exception as exc:
                level.failures.append(f"{type(exc).__name__}: {str(exc)[:200]}")
                return
            for i, alone in enumerate(baseline):
                open_now += 1
                level.peak_open = max(level.peak_open, open_now)
                try:
                    took = await client.turn(cid, i)
                except Exception as exc:
                    level.failures.append(f"{type(exc).__name__}: {str(exc)[:200]}")
                    return
                finally:
                    open_now -= 1
                level.completed += 1
                level.added_ms.append((took - alone) * 1000)

        started = time.perf_counter()
        await asyncio.gather(*(one(cid) for cid in made))
        level.seconds = time.perf_counter() - started
    return level


async def direct_baseline(db: Path, model: str, turns: int) -> list[float]:
    """The direct seconds of each turn on the slower model, alone."""
    direct = Direct(db, model)
    await direct.open()
    try:
        await direct.turn(-1)  # warm-up: the same turn shape, not counted
        return [await direct.turn(i) for i in range(turns)]
    finally:
        await direct.close()


# -- capacity: many workers on PostgreSQL, at an agent's pace ------------------------------


def _pace(text: str) -> float:
    """A model call's seconds: ``3s``, ``1500ms`` or a number of seconds."""
    value = text.strip().lower()
    try:
        if value.endswith("ms"):
            seconds = float(value[:-2]) / 1000
        else:
            seconds = float(value.removesuffix("s"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"pace: like 3s or 1500ms, got {text!r}") from exc
    if seconds <= 0:
        raise argparse.ArgumentTypeError("pace: more than 0")
    return seconds


def measure_capacity(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """``--workers N --pace S``: concurrent streams on N workers on PostgreSQL at S seconds a
    model call (see the module docstring)."""
    from abridged.store import upgrade
    from abridged.store.testing import PostgresCluster, find_bin_dir

    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise SystemExit("PostgreSQL binaries not found (/usr/lib/postgresql/*/bin)")
    os.environ.setdefault(ENV_KEY, "bench")
    cluster = PostgresCluster(bin_dir, fast=False)  # durable commits, as in production
    cluster.start()
    provider: Process | None = None
    service: Process | None = None
    levels: list[Level] = []
    load_start = os.getloadavg()
    try:
        cluster.sql("CREATE DATABASE bench_service")
        url = cluster.database_url("bench_service")
        asyncio.run(upgrade(url))
        provider = start_provider(args.pace * 1000)
        model = provider.url + "/v1#gpt-test"
        service = start_service(url, [model], work / "serve.log", workers=args.workers)
        levels += run_levels(
            service, model, args.levels, args.stream_turns, work / "direct", cpu=workers_cpu
        )
    finally:
        if service is not None:
            service.stop()
        recorded = (
            json.loads((provider.stop().strip().splitlines() or ["{}"])[-1]) if provider else {}
        )
        cluster.stop()
    held = [lv.streams for lv in levels if lv.held]
    return {
        "workers": args.workers,
        "pace_s": args.pace,
        "stream_turns": args.stream_turns,
        "concurrent_streams": max(held) if held else 0,
        "levels": [level_figures(lv) for lv in levels],
        "levels_asked": list(args.levels),
        "provider_requests": recorded.get("requests", 0),
        "provider_rejected": len(recorded.get("rejected", [])),
        "load": f"load average {load_start[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at "
        f"the end (1 min), {os.cpu_count()} CPUs",
    }


def level_figures(lv: Level) -> dict[str, Any]:
    """One level's figures (the JSON of the table's row)."""
    cpu_ms = lv.worker_cpu_s / lv.completed * 1000 if lv.completed else None
    return {
        "streams": lv.streams,
        "turns": lv.turns,
        "added_p50_ms": lv.p(0.5),
        "added_p99_ms": lv.p(0.99),
        "peak_open": lv.peak_open,
        "baseline_ms": lv.baseline_ms,
        "turns_per_s": round(lv.completed / lv.seconds, 1) if lv.seconds else None,
        "worker_cpu_ms_per_turn": round(cpu_ms, 1) if cpu_ms is not None else None,
        # a core's worth of the workers' CPU runs this many turns a second
        "turns_per_s_per_core": round(1000 / cpu_ms, 1) if cpu_ms else None,
        "worker_busy": round(lv.worker_cpu_s / lv.seconds, 2) if lv.seconds else None,
        "failures": len(lv.failures),
        "first_failure": lv.failures[0] if lv.failures else None,
        "held": lv.held,
    }


def report_capacity(figures: dict[str, Any], command: str) -> str:
    """The section for ``RESULTS.md`` of ``--workers N --pace S``."""
    streams = figures["concurrent_streams"]
    lines = [
        CAPACITY_SECTION,
        "",
        f"`{command}` (Python {platform.python_version()}, {platform.machine()}; "
        f"{figures['load']}: the provider process, PostgreSQL, the workers and the load "
        "client share them, with whatever else ran)",
        "",
        f"Concurrent streaming conversations on {figures['workers']} worker(s) on PostgreSQL "
        f"(durable commits), the model {figures['pace_s']:g} s a call (three calls a turn); "
        f"a warm-up turn and {figures['stream_turns']} measured turns each, starts spread over "
        "a turn; the direct turns (`Conversation` on SQLite in the load client's process) "
        "measured alone just before each level. Worker CPU: every worker process's user and "
        "system time over the level (clock ticks), per turn (the warm-ups and making the "
        "conversations included); turns/s per core: 1000 / that.",
        "",
        "| streams | peak open | turns | turns/s (all) | worker CPU a turn | turns/s per core "
        "| workers busy (cores) | direct turns alone | added p50 | added p99 | failed | held |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    lines += _level_rows(figures, per_core=True)
    lines += [
        "",
        f"Provider requests: {figures['provider_requests']}, rejected: "
        f"{figures['provider_rejected']}.",
        "",
        f"Target: >= {TARGET_CAPACITY_STREAMS} streams with p99 added < {P99_LIMIT_MS:g} ms: "
        f"{'met' if streams >= TARGET_CAPACITY_STREAMS else 'missed'} ({streams}).",
    ]
    return "\n".join(lines) + "\n"


def capacity_main(args: argparse.Namespace) -> int:
    """``--workers N``: measure, print, write the section."""
    work = Path(tempfile.mkdtemp(prefix="abridged-bench-capacity-"))
    try:
        figures = measure_capacity(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    shown = (
        f"python bench/service.py --workers {args.workers} --pace {args.pace:g}s "
        f"--levels {','.join(map(str, args.levels))} --stream-turns {args.stream_turns}"
    )
    text = report_capacity(figures, shown)
    sys.stdout.write(text)
    save_section(args, text)
    met = figures["concurrent_streams"] >= TARGET_CAPACITY_STREAMS
    figures["targets_met"] = met
    if args.json:
        sys.stdout.write(json.dumps(figures) + "\n")
    return 0 if met else 1


# -- the run ---------------------------------------------------------------------------------


def _levels(text: str) -> list[int]:
    try:
        levels = sorted({int(x) for x in text.replace(" ", ",").split(",") if x})
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"levels: integers, got {text!r}") from exc
    if not levels or levels[0] < 1:
        raise argparse.ArgumentTypeError("levels: at least one, each >= 1")
    return levels


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Run both parts; the figures."""
    os.environ.setdefault(ENV_KEY, "bench")
    fast = start_provider(args.latency_ms)
    slow = start_provider(args.stream_latency_ms)
    service: Process | None = None
    paired: Paired | None = None
    try:
        fast_model = fast.url + "/v1#gpt-test"
        slow_model = slow.url + "/v1#gpt-test"
        service = start_service(work / "service.db", [fast_model, slow_model], work / "serve.log")
        paired = asyncio.run(
            added_latency(
                service.url, service.popen.pid, work / "direct.db", fast_model, args.turns
            )
        )
        direct_s, http_s = paired.direct_s, paired.http_s
        levels = run_levels(
            service, slow_model, args.levels, args.stream_turns, work / "direct-slow",
            cpu=process_cpu,
        )  # fmt: skip
    finally:
        if service is not None:
            service.stop()
        recorded = [json.loads(p.stop().strip().splitlines()[-1] or "{}") for p in (fast, slow)]
    assert paired is not None
    added = [(h - d) * 1000 for d, h in zip(direct_s, http_s, strict=True)]
    held = [lv.streams for lv in levels if lv.held]
    rejected = [r for rec in recorded for r in rec.get("rejected", [])]
    return {
        "turns": args.turns,
        "latency_ms": args.latency_ms,
        "direct_p50_ms": round(statistics.median(direct_s) * 1000, 1),
        "http_p50_ms": round(statistics.median(http_s) * 1000, 1),
        "added_latency_p50_ms": round(_pct(added, 0.5), 2),
        "added_latency_p99_ms": round(_pct(added, 0.99), 2),
        "added_latency_max_ms": round(max(added), 2),
        "direct_cpu_ms_per_turn": round(paired.direct_cpu_s / args.turns * 1000, 1),
        "worker_cpu_ms_per_turn": round(paired.worker_cpu_s / args.turns * 1000, 1),
        "stream_latency_ms": args.stream_latency_ms,
        "stream_turns": args.stream_turns,
        "concurrent_streams": max(held) if held else 0,
        "levels": [
            {
                "streams": lv.streams,
                "turns": lv.turns,
                "added_p50_ms": lv.p(0.5),
                "added_p99_ms": lv.p(0.99),
                "peak_open": lv.peak_open,
                "baseline_ms": lv.baseline_ms,
                "turns_per_s": round(lv.completed / lv.seconds, 1) if lv.seconds else None,
                "worker_cpu_ms_per_turn": (
                    round(lv.worker_cpu_s / lv.completed * 1000, 1) if lv.completed else None
                ),
                "worker_busy": round(lv.worker_cpu_s / lv.seconds, 2) if lv.seconds else None,
                "failures": len(lv.failures),
                "first_failure": lv.failures[0] if lv.failures else None,
                "held": lv.held,
            }
            for lv in levels
        ],
        "levels_asked": list(args.levels),
        "provider_requests": sum(rec.get("requests", 0) for rec in recorded),
        "provider_rejected": len(rejected),
    }


def report(figures: dict[str, Any], command: str) -> str:
    """The section for ``RESULTS.md``."""
    p50, p99 = figures["added_latency_p50_ms"], figures["added_latency_p99_ms"]
    streams = figures["concurrent_streams"]
    lines = [
        SECTION,
        "",
        f"`{command}` (Python {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs; the provider processes, the worker and the clients share them)",
        "",
        f"Added latency per turn (HTTP minus direct, {figures['turns']} turns, model latency "
        f"{figures['latency_ms']:g} ms a call, three calls a turn):",
        "",
        "| path | p50 turn | added p50 | added p99 | added max |",
        "| --- | ---: | ---: | ---: | ---: |",
        f"| direct `Conversation` (SQLite) | {figures['direct_p50_ms']:.1f} ms | | | |",
        f"| `abridged serve`, 1 worker (SQLite) | {figures['http_p50_ms']:.1f} ms | "
        f"{p50:.2f} ms | {p99:.2f} ms | {figures['added_latency_max_ms']:.2f} ms |",
        "",
        f"CPU per turn: {figures['direct_cpu_ms_per_turn']:.1f} ms in the direct process, "
        f"{figures['worker_cpu_ms_per_turn']:.1f} ms in the worker (clock ticks of 10 ms, "
        "summed over the turns): one worker runs at most about "
        f"{1000 / max(figures['worker_cpu_ms_per_turn'], 0.1):.0f} turns a second.",
        "",
        f"Concurrent streaming conversations on one worker (model latency "
        f"{figures['stream_latency_ms']:g} ms a call; a warm-up turn and "
        f"{figures['stream_turns']} measured turns each; the direct turns alone measured "
        "just before each level):",
        "",
        "| streams | peak open | turns | turns/s (all) | worker CPU a turn | worker busy "
        "| direct turns alone | added p50 | added p99 | failed | held |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    lines += _level_rows(figures, per_core=False)
    lines += [
        "",
        f"Provider requests: {figures['provider_requests']}, rejected: "
        f"{figures['provider_rejected']}.",
        "",
        f"Targets: added p50 <= {TARGET_P50_MS:g} ms: "
        f"{'met' if p50 <= TARGET_P50_MS else 'missed'} ({p50:.2f} ms); >= {TARGET_STREAMS} "
        f"streams with p99 added < {P99_LIMIT_MS:g} ms: "
        f"{'met' if streams >= TARGET_STREAMS else 'missed'} ({streams}).",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    """Measure, print, write the section; the exit code is 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=30, help="turns of the added-latency part")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="model latency a call")
    parser.add_argument("--levels", type=_levels, default=None)
    parser.add_argument("--stream-latency-ms", type=float, default=1000.0)
    parser.add_argument("--stream-turns", type=int, default=3)
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="capacity: streams on this many workers on PostgreSQL (with --pace)",
    )
    parser.add_argument(
        "--pace", type=_pace, default=3.0, help="capacity: a model call's time (default 3s)"
    )
    add_output_options(parser)
    parser.add_argument("--provider", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.provider is not None:
        return provider_main(args.provider)
    if args.workers is not None:
        if args.workers < 1 or args.stream_turns < 1:
            parser.error("--workers and --stream-turns: at least 1")
        args.levels = args.levels or list(DEFAULT_CAPACITY_LEVELS)
        return capacity_main(args)
    args.levels = args.levels or list(DEFAULT_LEVELS)
    if args.turns < 1 or args.stream_turns < 1:
        parser.error("--turns and --stream-turns: at least 1")
    work = Path(tempfile.mkdtemp(prefix="abridged-bench-service-"))
    try:
        figures = measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    shown = " ".join(
        [
            "python bench/service.py",
            f"--turns {args.turns}",
            f"--latency-ms {args.latency_ms:g}",
            f"--levels {','.join(map(str, args.levels))}",
            f"--stream-latency-ms {args.stream_latency_ms:g}",
            f"--stream-turns {args.stream_turns}",
        ]
    )
    text = report(figures, shown)
    sys.stdout.write(text)
    save_section(args, text)
    met = (
        figures["added_latency_p50_ms"] <= TARGET_P50_MS
        and figures["concurrent_streams"] >= TARGET_STREAMS
        and figures["provider_rejected"] == 0
    )
    figures["targets_met"] = met
    if args.json:
        sys.stdout.write(json.dumps(figures) + "\n")
    return 0 if met else 1


def run_levels(
    service: Any,
    model: str,
    streams: list[int],
    turns: int,
    direct: Path,
    *,
    cpu: Callable[[int], float],
) -> list[Level]:
    """Each level of concurrent streams in turn, until one is not held; the direct baseline is
    measured again just before each level (the machine drifts), ``cpu`` of the service's pid
    (its process or all its workers) counted over the level."""
    levels: list[Level] = []
    for n in streams:
        baseline = asyncio.run(direct_baseline(Path(f"{direct}-{n}.db"), model, turns))
        before = cpu(service.popen.pid)
        level = asyncio.run(run_level(service.url, model, n, baseline))
        level.worker_cpu_s = cpu(service.popen.pid) - before
        level.baseline_ms = [round(b * 1000, 1) for b in baseline]
        levels.append(level)
        print(json.dumps(level_figures(level)), file=sys.stderr)
        if not level.held:
            break
    return levels


def _level_rows(figures: dict[str, Any], *, per_core: bool) -> list[str]:
    """The table rows of the stream levels (with turns/s per core on the capacity run), and a
    row naming the levels not run."""
    rows = []
    for lv in figures["levels"]:
        p50_l = "" if lv["added_p50_ms"] is None else f"{lv['added_p50_ms']:.1f} ms"
        p99_l = "" if lv["added_p99_ms"] is None else f"{lv['added_p99_ms']:.1f} ms"
        core = f"{lv['turns_per_s_per_core']} | " if per_core else ""
        rows.append(
            f"| {lv['streams']} | {lv['peak_open']} | {lv['turns']} | {lv['turns_per_s']} | "
            f"{lv['worker_cpu_ms_per_turn']} ms | {core}{lv['worker_busy']} | "
            f"{', '.join(f'{b:.0f}' for b in lv['baseline_ms'])} ms | "
            f"{p50_l} | {p99_l} | {lv['failures']} | {'yes' if lv['held'] else 'no'} |"
        )
    skipped = [
        n for n in figures["levels_asked"] if n not in {lv["streams"] for lv in figures["levels"]}
    ]
    if skipped:
        rows.append(f"| {', '.join(map(str, skipped))} | not run (a smaller level was missed) |")
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
