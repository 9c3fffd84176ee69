"""Benchmark: what the proxy adds to a request, and the prompt cache through it.

    .venv/bin/python bench/proxy.py [--requests N] [--streams N] [--data PATH] [--limit N] [--json]
                                    [--no-results] [--results PATH]
    .venv/bin/python bench/proxy.py --traffic agent [--requests N] [--seed N] [--json] ...

1. **Added latency.** The same small requests (nothing to compact: the proxy sends the very
   bytes it got) go to the local provider (``abridged.testing.ProviderServer``) direct and
   through ``abridged proxy`` (a subprocess on SQLite), alternately, with the official OpenAI
   SDK; the added latency of a request is its proxied time minus the direct time of its pair.
   Target: p50 <= 2 ms.
   **Streaming.** Then ``--streams`` streamed answers (chunks 50 ms apart at the provider), direct
   and through the proxy alternately, read with httpx: the time to the first chunk, and the
   proxy's addition to it (proxied minus the direct time of its pair; two warm-up pairs not
   counted). Target: p50 within 10 ms of direct (the proxy passes each chunk on as it comes;
   ``tests/server/test_proxy.py`` checks their order and completeness, not their times).
2. **Cache through the proxy.** The first ``--limit`` sessions of ``--data`` are replayed call
   by call, as ``bench/cache.py`` replays them, once through the library (``ContextManager`` in
   the client, the same code as ``bench/cache.py``'s abridged variant) and once through the
   proxy (the client sends its whole history as OpenAI messages each call; the provider answers
   with the recorded reply). Same 16k window, default settings, extractive summaries, the same
   provider cache rule. Target: the cache-read share through the proxy within 1 point of the
   library's.

3. **Agent traffic** (``--traffic agent``, alone): a tool-heavy history (a system prompt, the
   task, 20 steps) that grows by a tool call and its ~600-token result (numbered lines of words
   drawn with ``--seed``) each request, sent as the same JSON bytes by httpx direct and through
   the proxy alternately (five warm-up pairs not counted), window 400,000 so that nothing is
   pruned or compacted (each request goes upstream byte for byte; the table says how many
   did). Figures: added latency p50 / p99 (proxied minus direct of its pair; target p50 <= 2 ms)
   and the proxy process's CPU per request (user and system, every thread, clock ticks summed
   over the requests: the robust figure on a shared machine). Its table goes to the
   ``## proxy, agent traffic`` section; with ``--json`` the last line is its figures
   (``added_latency_p50_ms``, ``added_latency_p99_ms``, ``proxy_cpu_ms_per_request``, ...).

The table goes to stdout and to the ``## proxy`` section of ``bench/RESULTS.md``; with
``--json`` the last line is one JSON object (``added_latency_p50_ms``, ``added_latency_p99_ms``,
``first_chunk_added_p50_ms``, ``cache_read_share_proxy``, ``cache_read_share_library``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import cache  # noqa: E402
from abridged.formats.openai_chat import messages_to_openai  # noqa: E402
from abridged.formats.transcripts import Transcript, load_transcripts  # noqa: E402
from results import add_output_options, save_section  # noqa: E402

SECTION = "## proxy"
AGENT_SECTION = "## proxy, agent traffic"
AGENT_WINDOW = 400_000
AGENT_START_STEPS = 20
AGENT_RESULT_TOKENS = 600
_WORDS = (
    "def return self export nightly job rows batch config path open read write parse value "
    "error retry count limit schema table column index query cursor commit yield import "
    "logging status result payload timeout window token record field type"
)
AGENT_WORDS = tuple(_WORDS.split())
TARGET_P50_MS = 2.0
TARGET_FIRST_CHUNK_MS = 10.0
STREAM_WORDS = "one two three four five six seven eight"
TARGET_GAP = 0.01


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def proxy_process(upstream: str, window: int, max_output: int) -> Iterator[str]:
    """``abridged proxy`` in a subprocess on a throwaway SQLite file; yields its base URL."""
    with proxy_with_pid(upstream, window, max_output) as (base, _):
        yield base


@contextmanager
def proxy_with_pid(upstream: str, window: int, max_output: int) -> Iterator[tuple[str, int]]:
    """``proxy_process``, yielding its base URL and its process id."""
    import httpx

    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="abridged-bench-proxy-") as folder:
        command = [sys.executable, "-m", "abridged", "proxy", "--upstream", upstream,
                   "--window", str(window), "--max-output", str(max_output),
                   "--db", str(Path(folder) / "proxy.db"), "--port", str(port)]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        # its log (a line per request) to a file: a pipe nobody reads would fill and stop it
        log = Path(folder) / "proxy.log"
        with log.open("wb") as err:
            proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=err)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                if proc.poll() is not None:
                    raise RuntimeError("the proxy stopped: " + log.read_text()[-500:])
                try:
                    if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("the proxy did not start")
                time.sleep(0.05)
            yield base, proc.pid
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _first_and_last_chunk(url: str) -> tuple[float, float]:
    """Milliseconds to the first and the last streamed chunk of a small chat answer."""
    import httpx

    body = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    started = time.perf_counter()
    first = last = 0.0
    with httpx.stream("POST", url, json=body, headers={"authorization": "Bearer k"}) as r:
        for line in r.iter_lines():
            if line.startswith("data:"):
                last = (time.perf_counter() - started) * 1000
                first = first or last
    return first, last


def first_chunk(server: Any, base: str, streams: int) -> dict[str, Any]:
    """Pairs of streamed answers, direct and through the proxy (see the docstring)."""
    from abridged.testing import Reply

    server.set_replies(lambda r: Reply(STREAM_WORDS))
    server.stream_delay = 0.05
    pairs = []
    try:
        for i in range(streams + 2):  # two warm-up pairs, not counted
            direct = _first_and_last_chunk(server.base_url + "/v1/chat/completions")
            proxied = _first_and_last_chunk(base + "/v1/chat/completions")
            if i >= 2:
                pairs.append((direct, proxied))
    finally:
        server.stream_delay = 0.0
    added = [p[0] - d[0] for d, p in pairs]
    return {
        "streams": streams,
        "first_chunk_direct_p50_ms": round(statistics.median(d[0] for d, _ in pairs), 2),
        "first_chunk_proxy_p50_ms": round(statistics.median(p[0] for _, p in pairs), 2),
        "first_chunk_added_p50_ms": round(statistics.median(added), 2),
        "first_chunk_added_max_ms": round(max(added), 2),
        "stream_spread_proxy_p50_ms": round(statistics.median(p[1] - p[0] for _, p in pairs), 1),
    }


def added_latency(requests: int, streams: int) -> dict[str, Any]:
    """Pairs of identical small requests, direct and through the proxy, then pairs of streamed
    answers (see the docstring)."""
    import openai

    from abridged.testing import ProviderServer, Reply

    with ProviderServer(context_window=16_384, max_output=1_024) as server:
        server.set_replies(lambda r: Reply("ok"))
        with proxy_process(server.base_url, 16_384, 1_024) as base:
            direct = openai.OpenAI(base_url=server.base_url + "/v1", api_key="k", max_retries=0)
            proxied = openai.OpenAI(base_url=base + "/v1", api_key="k", max_retries=0)
            messages = [{"role": "system", "content": "Be brief."}]
            times: dict[str, list[float]] = {"direct": [], "proxy": []}
            for i in range(requests + 5):  # five warm-up pairs, not counted
                messages = [*messages, {"role": "user", "content": f"question {i}"}]
                for name, client in (("direct", direct), ("proxy", proxied)):
                    started = time.perf_counter()
                    reply = client.chat.completions.create(model="bench", messages=messages)
                    elapsed = (time.perf_counter() - started) * 1000
                    if i >= 5:
                        times[name].append(elapsed)
                messages = [
                    *messages,
                    {"role": "assistant", "content": reply.choices[0].message.content},
                ]
            streaming = first_chunk(server, base, streams)
    added = [p - d for p, d in zip(times["proxy"], times["direct"], strict=True)]
    return {
        **streaming,
        "requests": requests,
        "direct_p50_ms": statistics.median(times["direct"]),
        "proxy_p50_ms": statistics.median(times["proxy"]),
        "added_latency_p50_ms": round(statistics.median(added), 3),
        "added_latency_p99_ms": round(_percentile(added, 0.99), 3),
    }


def process_cpu(pid: int) -> float:
    """CPU seconds (user and system, every thread) a process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tool_output(rng: random.Random, tokens: int) -> str:
    """About ``tokens`` tokens of a tool's output: numbered lines of code-like words."""
    lines, size, n = [], 0, 0
    while size < tokens * 4:  # ~4 characters a token
        n += 1
        words = " ".join(rng.choice(AGENT_WORDS) for _ in range(rng.randint(4, 12)))
        line = f"{n:4d}  {words}"
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def agent_history(rng: random.Random, steps: int) -> list[dict[str, Any]]:
    """An agent's history after ``steps`` tool calls: a system prompt, the task, then each
    step an assistant tool call and its ~``AGENT_RESULT_TOKENS``-token result."""
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent. Use the tools to do the task."},
        {"role": "user", "content": "Find why the nightly export fails and fix it."},
    ]
    for step in range(steps):
        history += agent_step(rng, step)
    return history


def agent_step(rng: random.Random, step: int) -> list[dict[str, Any]]:
    """One step of an agent: a tool call and its result (OpenAI Chat Completions messages)."""
    call = f"call_{step:05d}"
    path = f"src/{rng.choice(AGENT_WORDS)}/{rng.choice(AGENT_WORDS)}.py"
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call,
                    "type": "function",
                    "function": {"name": "read_file", "arguments": json.dumps({"path": path})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call, "content": tool_output(rng, AGENT_RESULT_TOKENS)},
    ]


def agent_traffic(requests: int, seed: int) -> dict[str, Any]:
    """Agent traffic, direct and through the proxy alternately (see the docstring)."""
    import httpx

    from abridged.testing import ProviderServer, Reply

    rng = random.Random(seed)
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
    with ProviderServer(context_window=AGENT_WINDOW, max_output=1_024) as server:
        server.set_replies(lambda r: Reply(tool_calls=[("read_file", {"path": "src/next.py"})]))
        with proxy_with_pid(server.base_url, AGENT_WINDOW, 1_024) as (base, pid):
            headers = {"authorization": "Bearer k", "content-type": "application/json"}
            times: dict[str, list[float]] = {"direct": [], "proxy": []}
            history = agent_history(rng, AGENT_START_STEPS)
            cpu = 0.0
            unchanged = 0
            with httpx.Client(timeout=120) as client:
                for i in range(requests + 5):  # five warm-up pairs, not counted
                    history += agent_step(rng, AGENT_START_STEPS + i)
                    body = {"model": "bench", "messages": history, "tools": tools}
                    content = json.dumps(body).encode()
                    for name, url in (("direct", server.base_url), ("proxy", base)):
                        before = process_cpu(pid) if name == "proxy" else 0.0
                        started = time.perf_counter()
                        reply = client.post(url + "/v1/chat/completions", content=content,
                                            headers=headers)  # fmt: skip
                        elapsed = (time.perf_counter() - started) * 1000
                        if reply.status_code != 200:
                            raise RuntimeError(f"{name}: HTTP {reply.status_code} {reply.text}")
                        if i >= 5:
                            times[name].append(elapsed)
                            if name == "proxy":
                                cpu += process_cpu(pid) - before
                    sent = server.requests[-2:]
                    unchanged += i >= 5 and sent[0].raw_body == sent[1].raw_body
    added = [p - d for p, d in zip(times["proxy"], times["direct"], strict=True)]
    return {
        "requests": requests,
        "seed": seed,
        "history_messages_first": 2 + 2 * (AGENT_START_STEPS + 6),
        "history_messages_last": len(history),
        "body_kib_last": round(len(content) / 1024, 1),
        "direct_p50_ms": round(statistics.median(times["direct"]), 2),
        "proxy_p50_ms": round(statistics.median(times["proxy"]), 2),
        "added_latency_p50_ms": round(statistics.median(added), 3),
        "added_latency_p99_ms": round(_percentile(added, 0.99), 3),
        "proxy_cpu_ms_per_request": round(cpu / requests * 1000, 2),
        "sent_unchanged": unchanged,
    }


def render_agent(result: dict[str, Any]) -> str:
    a = result["agent"]
    lines = [
        AGENT_SECTION,
        "",
        f"`{result['command']}` ({result['seconds']:.0f} s; {result['load']})",
        "",
        f"Agent traffic: a tool-heavy history growing by a tool call and a "
        f"~{AGENT_RESULT_TOKENS}-token result per request, from {a['history_messages_first']} "
        f"to {a['history_messages_last']} messages ({a['body_kib_last']} KiB the last body), "
        "sent as JSON bytes by httpx, direct and through `abridged proxy` (SQLite, window "
        f"{AGENT_WINDOW:,}: nothing is pruned or compacted, each request goes upstream "
        "unchanged) alternately; the proxy's CPU is its process's (user and system, clock "
        "ticks of 10 ms summed over the requests).",
        "",
        "| figure | value | target |",
        "| --- | ---: | ---: |",
        f"| direct request p50 | {a['direct_p50_ms']:.2f} ms | |",
        f"| through the proxy p50 | {a['proxy_p50_ms']:.2f} ms | |",
        f"| added latency p50 ({a['requests']} pairs) | {a['added_latency_p50_ms']:.2f} ms "
        f"| <= {TARGET_P50_MS} ms |",
        f"| added latency p99 | {a['added_latency_p99_ms']:.2f} ms | |",
        f"| proxy CPU per request | {a['proxy_cpu_ms_per_request']:.2f} ms | |",
        f"| requests sent upstream byte for byte as the client sent them | "
        f"{a['sent_unchanged']} of {a['requests']} | |",
    ]
    return "\n".join(lines) + "\n"


def _proxy_replay(base: str, server: Any, transcript: Transcript) -> cache.Run:
    """One session through the proxy: the whole history as OpenAI messages every call."""
    import openai

    from abridged.testing import Reply

    client = openai.OpenAI(
        base_url=base + "/v1",
        api_key="k",
        max_retries=0,
        default_headers={"X-Abridged-Conversation": transcript.id},
    )
    server.reset()
    run = cache.Run("proxy", transcript.id)
    history: list[Any] = []
    previous: list[Any] | None = None
    try:
        for message in transcript.messages:
            if message.role == "assistant" and (not history or history[-1].role != "assistant"):
                server.set_replies([Reply(message.text)])
                client.chat.completions.create(
                    model=cache.MODEL,
                    messages=messages_to_openai(history),
                    max_tokens=cache.MAX_OUTPUT,
                )
                request = server.requests[-1]
                sent = request.body["messages"]
                changed = previous is not None and json.dumps(sent[: len(previous)]) != json.dumps(
                    previous
                )
                run.calls.append(
                    cache.Call(
                        request.prompt_tokens,
                        request.cached_tokens,
                        request.cache_write_tokens,
                        changed,
                    )
                )
                previous = sent
            history.append(cache._stripped(message))
    except openai.APIError as exc:
        run.failed = f"{type(exc).__name__}: {exc}"
    finally:
        client.close()
    return run


def cache_shares(transcripts: Sequence[Transcript]) -> dict[str, Any]:
    """The same sessions through the library and through the proxy (see the docstring)."""
    cache._fast_server(cache.STREAM_CHUNK)
    cache._TRANSCRIPTS[:] = list(transcripts)
    cache._init_worker(cache.STREAM_CHUNK)
    try:
        loop: asyncio.AbstractEventLoop = cache._WORKER["loop"]
        library = [loop.run_until_complete(cache._replay("abridged", t)) for t in transcripts]
        server = cache._WORKER["servers"]["small"]
        with proxy_process(server.base_url, cache.WINDOW, cache.MAX_OUTPUT) as base:
            proxied = [_proxy_replay(base, server, t) for t in transcripts]
    finally:
        cache._close_worker()

    def share(runs: Sequence[cache.Run]) -> float | None:
        return cache._share([c for r in runs for c in r.calls])

    return {
        "sessions": len(transcripts),
        "calls_library": sum(len(r.calls) for r in library),
        "calls_proxy": sum(len(r.calls) for r in proxied),
        "cache_read_share_library": share(library),
        "cache_read_share_proxy": share(proxied),
        "failed": [f"{r.session}: {r.failed}" for r in [*library, *proxied] if r.failed],
        "prefix_breaks_proxy": sum(cache.prefix_breaks(r.calls) for r in proxied),
    }


def render(result: dict[str, Any]) -> str:
    lat, shares = result["latency"], result["cache"]
    gap = None
    if shares["cache_read_share_proxy"] is not None and shares["cache_read_share_library"]:
        gap = shares["cache_read_share_proxy"] - shares["cache_read_share_library"]
    lines = [
        SECTION,
        "",
        f"`{result['command']}` ({result['seconds']:.0f} s)",
        "",
        "| figure | value | target |",
        "| --- | ---: | ---: |",
        f"| direct request p50 | {lat['direct_p50_ms']:.2f} ms | |",
        f"| through the proxy p50 | {lat['proxy_p50_ms']:.2f} ms | |",
        f"| added latency p50 ({lat['requests']} pairs) | {lat['added_latency_p50_ms']:.2f} ms "
        f"| <= {TARGET_P50_MS} ms |",
        f"| added latency p99 | {lat['added_latency_p99_ms']:.2f} ms | |",
        f"| first streamed chunk, direct p50 | {lat['first_chunk_direct_p50_ms']:.2f} ms | |",
        f"| first streamed chunk, proxy p50 | {lat['first_chunk_proxy_p50_ms']:.2f} ms | |",
        f"| first chunk added p50 ({lat['streams']} pairs) | "
        f"{lat['first_chunk_added_p50_ms']:.2f} ms | <= {TARGET_FIRST_CHUNK_MS:.0f} ms |",
        f"| first chunk added, worst | {lat['first_chunk_added_max_ms']:.2f} ms | |",
        f"| first to last chunk through the proxy p50 | "
        f"{lat['stream_spread_proxy_p50_ms']:.0f} ms | (chunks 50 ms apart) |",
        f"| cache-read share, library ({shares['calls_library']} calls) | "
        f"{cache._f(shares['cache_read_share_library'])} | |",
        f"| cache-read share, proxy ({shares['calls_proxy']} calls) | "
        f"{cache._f(shares['cache_read_share_proxy'])} | within {TARGET_GAP:.2f} |",
        "",
        f"Sessions: {shares['sessions']}; failed: {len(shares['failed'])}; gap (proxy - library): "
        f"{cache._f(gap)}.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200, help="request pairs (default 200)")
    parser.add_argument("--streams", type=int, default=20, help="stream pairs (default 20)")
    parser.add_argument("--data", type=Path, default=cache.DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=10, help="sessions to replay (default 10)")
    parser.add_argument(
        "--traffic",
        choices=("small", "agent"),
        default="small",
        help="small: the added latency, streams and cache parts (default); agent: agent traffic",
    )
    parser.add_argument("--seed", type=int, default=1, help="agent traffic's seed (default 1)")
    add_output_options(parser)
    args = parser.parse_args(argv)
    if args.traffic == "agent":
        return agent_main(args)
    if args.requests < 1 or args.limit < 1 or args.streams < 1:
        parser.error("--requests, --streams and --limit must be >= 1")
    started = time.perf_counter()
    latency = added_latency(args.requests, args.streams)
    transcripts = load_transcripts(args.data)[: args.limit]
    shares = cache_shares(transcripts)
    command = (
        f"python bench/proxy.py --requests {args.requests} --streams {args.streams} "
        f"--limit {args.limit}"
    )
    if args.data != cache.DEFAULT_DATA:
        command += f" --data {args.data}"
    result = {
        "command": command,
        "seconds": time.perf_counter() - started,
        "latency": latency,
        "cache": shares,
    }
    table = render(result)
    print(table)
    save_section(args, table)
    if args.json:
        print(
            json.dumps(
                {
                    "added_latency_p50_ms": latency["added_latency_p50_ms"],
                    "added_latency_p99_ms": latency["added_latency_p99_ms"],
                    "first_chunk_added_p50_ms": latency["first_chunk_added_p50_ms"],
                    "cache_read_share_proxy": shares["cache_read_share_proxy"],
                    "cache_read_share_library": shares["cache_read_share_library"],
                    "sessions": shares["sessions"],
                    "failed": len(shares["failed"]),
                }
            )
        )
    return result


def agent_main(args: argparse.Namespace) -> dict[str, Any]:
    """``--traffic agent``: measure, print, write the section."""
    if args.requests < 1:
        raise SystemExit("--requests must be >= 1")
    started = time.perf_counter()
    load = os.getloadavg()[0]
    agent = agent_traffic(args.requests, args.seed)
    result = {
        "command": f"python bench/proxy.py --traffic agent --requests {args.requests} "
        f"--seed {args.seed}",
        "seconds": time.perf_counter() - started,
        "load": f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, "
        f"{os.cpu_count()} CPUs",
        "agent": agent,
    }
    table = render_agent(result)
    print(table)
    save_section(args, table)
    if args.json:
        print(json.dumps(agent))
    return result


if __name__ == "__main__":
    main()
