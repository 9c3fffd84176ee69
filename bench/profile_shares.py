"""Where a process's CPU goes, from a py-spy profile: the share of samples per phase of a turn
(``--kind service``) or of a proxied request (``--kind proxy``), and the functions with the
largest inclusive share; with ``--under TEXT``, what the first frame naming TEXT spends its
samples in (its callees ``--depth`` frames deep).

    py-spy record --pid PID --rate 1000 --gil --format raw -o profile.txt   # while it runs
    .venv/bin/python bench/profile_shares.py profile.txt --kind service [--top 25]
    .venv/bin/python bench/profile_shares.py profile.txt --under keep_calls [--depth 2]

py-spy is not a dependency (``pip install py-spy`` into a virtualenv of its own); ``--gil``
keeps the samples of a thread holding the GIL, i.e. the interpreter's own CPU. A sample goes
to the first phase (in the order below) that has a frame in its stack. Prints Markdown tables
(for ``RESULTS.md``); measures nothing itself.
"""

from __future__ import annotations

import argparse
import collections
import re
from collections.abc import Iterator
from pathlib import Path

PHASES = {
    "service": [
        ("call log for the inspector (keep_calls)", "calllog.py:keep_calls"),
        ("request body: messages to wire dicts", "messages_to_openai"),
        ("request body: messages to wire dicts", "providers/encoded.py"),
        ("SDK request (build, send, auth)", "AsyncAPIClient.request"),
        ("SDK stream read + chunk assembly", "_stream_chat"),
        ("store writes (append, turn lease)", "abridged/store/"),
        ("token counts, budget, sizing", "core/tokens.py"),
        ("token counts, budget, sizing", "compute_budget"),
        ("token counts, budget, sizing", "runtime/sizing.py"),
        ("token counts, budget, sizing", "runtime/token_sums.py"),
        ("context view / compaction plan", "engine/"),
        ("meter (context_overview)", "context_overview"),
        ("events to the client (SSE)", "server/sse.py"),
        ("events to the client (SSE)", "routes/messages.py:_sse"),
        ("HTTP request handling (FastAPI)", "fastapi/"),
        ("tools run", "runtime/tools.py"),
        ("runtime turn loop (other)", "abridged/runtime/"),
        ("service runner (other)", "abridged/server/"),
        ("uvicorn protocol", "uvicorn/protocols"),
        ("aiohttp transport", "aiohttp/"),
    ],
    "proxy": [
        ("read the body's JSON", "proxy/body.py"),
        ("conversation identity", "proxy/identity.py"),
        ("lease take / give back", "server/lease.py"),
        ("store writes (new messages, write-behind)", "_flush"),
        ("store (other)", "abridged/store/"),
        ("manager: read the history's new items, size, plan", "context_manager.py"),
        ("usage read back (tap)", "upstream.py:UsageTap"),
        ("upstream request (aiohttp)", "upstream.py"),
        ("answer relayed to the client", "ProxyApp._relay"),
        ("answer relayed to the client", "_send_whole"),
        ("proxy request path (other)", "abridged/server/proxy/"),
        ("uvicorn protocol", "uvicorn/protocols"),
        ("aiohttp transport", "aiohttp/"),
    ],
}
_SKIPPED = ("typer", "runpy", "abridged/cli/", "__main__", "uvicorn/main", "uvicorn/server",
            "_compat", "asyncio/runners", "threading.py", "starlette/", "fastapi/",
            "uvicorn/middleware", "contextlib.py", "abridged/server/headers.py",
            "abridged/server/app.py")  # fmt: skip


def short(frame: str) -> str:
    """``function (path:line)`` as ``package/module.py:function``."""
    found = re.match(r"(.*) \((.*):(\d+)\)", frame)
    if not found:
        return frame
    function, path = found.group(1), found.group(2)
    for prefix in ("site-packages/", "/src/", "lib/python3.11/"):
        if prefix in path:
            path = path.split(prefix, 1)[1]
    return f"{path}:{function}"


def samples(profile: Path) -> Iterator[tuple[list[str], int]]:
    """Each stack of a ``py-spy record --format raw`` file: its frames (``short``), outermost
    first, and how many samples it had."""
    for line in profile.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack:
            yield [short(f) for f in stack.split(";")], int(count)


def under(profile: Path, target: str, depth: int, top: int) -> None:
    """The share of the samples whose stack has a frame naming ``target``, by the ``depth``
    frames called below the first such frame (``(self)``: none)."""
    total = inside = 0
    callees: collections.Counter[str] = collections.Counter()
    for frames, n in samples(profile):
        total += n
        first = next((i for i, f in enumerate(frames) if target in f), None)
        if first is None:
            continue
        inside += n
        callees[" > ".join(frames[first + 1 : first + 1 + depth]) or "(self)"] += n
    print(f"{total} samples; `{target}`: {inside / max(total, 1):.1%}\n")
    print("| below it | share of all |\n| --- | ---: |")
    for name, n in callees.most_common(top):
        print(f"| `{name}` | {n / total:.1%} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile", type=Path, help="py-spy record --format raw output")
    parser.add_argument("--kind", choices=sorted(PHASES), default="service")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--under", default=None, help="break down one frame's samples")
    parser.add_argument("--depth", type=int, default=1, help="callee frames shown (--under)")
    args = parser.parse_args()
    if args.under is not None:
        under(args.profile, args.under, args.depth, args.top)
        return
    phases: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for frames, n in samples(args.profile):
        total += n
        joined = "\n".join(frames)
        name = next((p for p, marker in PHASES[args.kind] if marker in joined), "event loop, other")
        phases[name] += n
        for frame in set(frames):
            inclusive[frame] += n
    print(f"{total} samples\n\n| where | share |\n| --- | ---: |")
    for name, n in phases.most_common():
        print(f"| {name} | {n / total:.1%} |")
    print("\n| function | inclusive share |\n| --- | ---: |")
    shown = [(f, n) for f, n in inclusive.most_common() if not any(s in f for s in _SKIPPED)]
    for frame, n in shown[: args.top]:
        print(f"| `{frame}` | {n / total:.1%} |")


if __name__ == "__main__":
    main()
