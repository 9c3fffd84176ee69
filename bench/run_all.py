"""Run every benchmark under ``bench/`` in turn (``make bench``); each writes its own section.

    .venv/bin/python bench/run_all.py [--only tokens,store] [--data PATH]

Each benchmark runs as its own process with ``--json``; this prints one line per benchmark with
its headline figures and exits non-zero if any benchmark failed to run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
# In the order they are meant to be read; a missing script is reported, not skipped silently.
BENCHMARKS = [
    "tokens",
    "store",
    "overhead",
    "scale",
    "retention",
    "cache",
    "policies",
    "replay",
    "startup",
    "service",
    "proxy",
    "frameworks",
]
TAKES_DATA = {"tokens", "retention", "cache", "policies", "replay", "proxy", "frameworks"}


def main() -> int:
    """Run the benchmarks; the exit code is the number that failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated benchmark names")
    parser.add_argument("--data", default=None, help="passed to benchmarks that read sessions")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or BENCHMARKS
    failed = 0
    for name in names:
        script = BENCH / f"{name}.py"
        if not script.exists():
            print(f"{name}: not written yet ({script.name} missing)")
            continue
        command = [sys.executable, str(script), "--json"]
        if args.data and name in TAKES_DATA:
            command += ["--data", args.data]
        started = time.perf_counter()
        done = subprocess.run(command, check=False, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        sys.stdout.write(done.stdout.rsplit("\n", 2)[0] + "\n" if done.stdout else "")
        if done.returncode != 0:
            failed += 1
            print(f"{name}: FAILED after {seconds:.0f} s\n{done.stderr[-2000:]}")
            continue
        last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "{}"
        try:
            figures = json.loads(last)
        except json.JSONDecodeError:
            figures = {}
        headline = {k: v for k, v in figures.items() if isinstance(v, int | float)}
        print(f"{name}: ok in {seconds:.0f} s {json.dumps(headline)}")
    print(f"results: {BENCH / 'RESULTS.md'}")
    return failed


if __name__ == "__main__":
    raise SystemExit(main())
