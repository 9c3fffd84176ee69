"""Benchmark: how long many workers take to finish their conversations when one of them is
SIGKILLed mid-turn (the wall-clock side of ``tests/server/test_workers.py``'s kill test, which
checks order, completeness and pairing but no time).

    .venv/bin/python bench/workers.py [--runs 3] [--no-kill] [--json] [--no-results]
                                      [--results PATH]

Each run is the test's scenario, from its own helpers: ``abridged serve --workers 4`` on a
fresh PostgreSQL database (a throwaway cluster), the model (``ProviderServer``, 0.25 s a call,
three tool steps and an answer a message) in a process of its own, 40 client threads on 10
conversations, three messages each, each resent with the same id until answered; once every
worker runs a turn, the one holding the most leases is SIGKILLed (not with ``--no-kill``: the
baseline). Figures per run: the seconds until every message was answered, each message's time
from its first send to its answer (p50, p99, max: the messages of the killed worker's
conversations wait for its lease to expire, ``--lease-ttl`` 3 s, then are finished by a resend),
resends, lease takeovers, and whether the test's checks held. The machine's other load is part
of every figure: compare runs made side by side, not with figures from another session.

The table goes to stdout and to the ``## workers`` section of ``bench/RESULTS.md``; with
``--json`` the last line is one JSON object: ``runs`` (the per-run figures), ``seconds_p50``,
``answer_p99_s`` (the largest p99 of the runs) and ``problems`` (their total). The exit code is 1
when a run had a problem (a message lost, unanswered, out of order, or a broken pairing).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))  # the kill test's helpers: one scenario, measured and tested
sys.path.insert(0, str(ROOT / "bench"))
# the service's processes run this tree's code too (``-m abridged`` would find the installed one)
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
)

import httpx  # noqa: E402
from tests.server import test_workers as scenario  # noqa: E402

from abridged.store import upgrade  # noqa: E402
from abridged.store.testing import PostgresCluster, find_bin_dir  # noqa: E402
from results import add_output_options, save_section  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def timed_client(
    base: str, index: int, cids: list[str], tally: scenario.Tally, times: list[float]
) -> None:
    """The test's client (``run_client``), each message's time to its answer recorded."""
    cid = cids[index % len(cids)]
    with httpx.Client(
        base_url=base, timeout=httpx.Timeout(60, connect=10), limits=scenario.NO_KEEPALIVE
    ) as client:
        for k in range(scenario.MESSAGES_PER_CLIENT):
            mid = f"m-{index}-{k}-{uuid.uuid4().hex[:6]}"
            with tally.lock:
                tally.sent.setdefault(cid, []).append(mid)
            sent = time.perf_counter()
            scenario.send_until_answered(client, cid, mid, f"client {index} task {k}", tally)
            with tally.lock:
                times.append(time.perf_counter() - sent)


def one_run(db_url: str, work: Path, *, kill: bool) -> dict[str, Any]:
    """One run of the scenario on the empty database ``db_url``: its figures."""
    with (
        scenario.provider_process(scenario.PROVIDER_LATENCY) as (provider_url, record),
        scenario.serve(db_url, provider_url + "/v1#gpt-test", work) as (base, server),
        httpx.Client(base_url=base, timeout=30) as admin,
    ):
        cids = []
        for i in range(scenario.CONVERSATIONS):
            made = admin.post(
                "/v1/conversations",
                json={"title": f"c{i}", "settings": {"summarizer": "extractive"}},
            )
            made.raise_for_status()
            cids.append(made.json()["id"])
        tally, times = scenario.Tally(), []
        threads = [
            threading.Thread(target=timed_client, args=(base, i, cids, tally, times), daemon=True)
            for i in range(scenario.CLIENTS)
        ]
        started = time.perf_counter()
        for t in threads:
            t.start()
        killed = 0
        if kill:
            workers = scenario.worker_pids(server.pid)
            waiting = time.monotonic()
            busy: dict[int, int] = {}
            while time.monotonic() < waiting + scenario.STARTUP_WITHIN:
                busy = {p: n for p, n in scenario.busy_pids(db_url).items() if p in workers}
                if len(busy) >= scenario.WORKERS or (
                    len(busy) >= 2 and time.monotonic() > waiting + 10
                ):
                    break
                time.sleep(0.05)
            if busy:
                victim = max(busy, key=lambda p: busy[p])
                os.kill(victim, signal.SIGKILL)
                killed = busy[victim]
        for t in threads:
            t.join(timeout=scenario.ANSWER_WITHIN + 10)
        seconds = time.perf_counter() - started
        problems = list(tally.errors) + [f"aborted {m}" for m in tally.aborted]
        for cid in cids:
            problems += scenario.check_conversation(admin, cid, tally.sent.get(cid, []))
        takeovers = scenario.metric(admin.get("/metrics").text, "abridged_lease_takeovers_total")
    return {
        "killed": kill,
        "orphaned_leases": killed,
        "seconds": round(seconds, 1),
        "answer_p50_s": round(percentile(times, 0.5), 2) if times else None,
        "answer_p99_s": round(percentile(times, 0.99), 2) if times else None,
        "answer_max_s": round(max(times), 2) if times else None,
        "answered": len(times),
        "resends": tally.resends,
        "takeovers": int(takeovers),
        "problems": len(problems),
        "first_problems": problems[:20],
        "provider_requests": record.get("count"),
    }


def measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise SystemExit("PostgreSQL binaries not found (/usr/lib/postgresql/*/bin)")
    cluster = PostgresCluster(bin_dir, fast=False)
    cluster.start()
    runs = []
    try:
        for n in range(args.runs):
            name = f"bench_workers_{n}_{uuid.uuid4().hex[:6]}"
            cluster.sql(f"CREATE DATABASE {name}")
            url = cluster.database_url(name)
            asyncio.run(upgrade(url))
            with tempfile.TemporaryDirectory(prefix="abridged-bench-workers-") as work:
                runs.append(one_run(url, Path(work), kill=not args.no_kill))
                if runs[-1]["problems"] and args.keep_log:  # the service's log, to look into
                    shutil.copy(Path(work) / "serve.log", args.keep_log)
            print(json.dumps(runs[-1]), file=sys.stderr)
    finally:
        cluster.stop()
    return runs


def report(runs: list[dict[str, Any]], shown: str) -> str:
    lines = [
        "## workers",
        "",
        f"`{shown}` ({platform.machine()}, {os.cpu_count()} CPUs shared by the provider "
        f"process, {scenario.WORKERS} workers, PostgreSQL and {scenario.CLIENTS} client threads; "
        f"{scenario.CLIENTS * scenario.MESSAGES_PER_CLIENT} messages on "
        f"{scenario.CONVERSATIONS} conversations, model 0.25 s a call, lease TTL "
        f"{scenario.LEASE_TTL:g} s).",
        "",
        "| run | worker killed (leases) | all answered in | answer p50 | p99 | max | resends "
        "| takeovers | problems |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n, r in enumerate(runs, 1):
        lines.append(
            f"| {n} | {'yes (' + str(r['orphaned_leases']) + ')' if r['killed'] else 'no'} | "
            f"{r['seconds']} s | {r['answer_p50_s']} s | {r['answer_p99_s']} s | "
            f"{r['answer_max_s']} s | {r['resends']} | {r['takeovers']} | {r['problems']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-kill", action="store_true", help="the baseline: no worker killed")
    parser.add_argument("--keep-log", type=Path, help="copy the service's log here on a problem")
    add_output_options(parser)
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs: at least 1")
    runs = measure(args)
    shown = f"python bench/workers.py --runs {args.runs}" + (" --no-kill" if args.no_kill else "")
    text = report(runs, shown)
    sys.stdout.write(text)
    save_section(args, text)
    problems = sum(r["problems"] for r in runs)
    if args.json:
        summary = {
            "runs": runs,
            "seconds_p50": statistics.median(r["seconds"] for r in runs),
            "answer_p99_s": max((r["answer_p99_s"] or 0.0) for r in runs),
            "problems": problems,
        }
        sys.stdout.write(json.dumps(summary) + "\n")
    return 0 if problems == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
