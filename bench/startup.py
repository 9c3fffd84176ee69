"""Benchmark: how fast the ``abridged`` command starts.

    .venv/bin/python bench/startup.py [--runs 20] [--json] [--no-results]

Runs ``abridged --help`` (the console script of this environment, as a user types it) ``--runs``
times, ``--help`` of an empty two-command typer app (typer's defaults) and ``python -c pass`` as
many times in the same run, interleaved, each as a fresh process; reports the median, p90 and
minimum wall time of each, what the command costs over starting Python, and the ratio of the
medians of ``abridged --help`` and the empty app's. One warm-up run of each is not counted.
Targets: ``abridged --help`` under 400 ms median and at most 1.2x the empty typer app. Heavy
imports (the SDKs, SQLAlchemy, pydantic, the store and the engine, rich's Markdown and traceback
renderers) happen only in the commands that need them; the result also lists the modules
``--help`` imports that should stay lazy, which must be none.

The table goes to stdout and to the ``## startup`` section of ``bench/RESULTS.md``; with
``--json`` the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from results import add_output_options, save_section  # noqa: E402

SECTION = "## startup"
TARGET_MS = 400.0
TARGET_RATIO = 1.2
#: Modules ``abridged --help`` must not import (each costs tens to hundreds of milliseconds).
HEAVY = (
    "sqlalchemy", "alembic", "openai", "anthropic", "litellm", "pydantic", "httpx", "toktok",
    "typer.rich_utils", "markdown_it", "rich.markdown", "rich.traceback",
)  # fmt: skip
#: The yardstick: an empty typer app of two commands, with typer's defaults.
EMPTY_TYPER_APP = """
import typer

app = typer.Typer()


@app.command()
def one() -> None:
    \"\"\"The first command.\"\"\"


@app.command()
def two() -> None:
    \"\"\"The second command.\"\"\"


app()
"""


def _script() -> list[str]:
    """The ``abridged`` console script next to this Python, else ``python -m abridged``."""
    script = Path(sys.executable).with_name("abridged")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "abridged"]


def _time(command: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, check=False, capture_output=True, env=_env())
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.decode()[-500:]}")
    return elapsed * 1000


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    return env


def _heavy_imports() -> list[str]:
    """The heavy modules imported while ``abridged --help`` runs (should be none)."""
    code = (
        "import sys\n"
        "from abridged.cli.app import app\n"
        "try:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=_env()
    )
    loaded = set(done.stdout.split())
    return [name for name in HEAVY if name in loaded]


def _stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median_ms": round(statistics.median(ordered), 1),
        "p90_ms": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 1),
        "min_ms": round(ordered[0], 1),
    }


def main() -> int:
    """Measure, print, write the section; the exit code is 1 when the target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    add_output_options(parser)
    args = parser.parse_args()
    command = [*_script(), "--help"]
    empty = [sys.executable, "-c", EMPTY_TYPER_APP, "--help"]
    baseline = [sys.executable, "-c", "pass"]
    commands = (command, empty, baseline)
    load_start = os.getloadavg()[0]  # a busy machine moves every figure but the ratio
    for each in commands:
        _time(each)
    times: list[list[float]] = [[], [], []]
    for _ in range(args.runs):
        for each, into in zip(commands, times, strict=True):
            into.append(_time(each))
    ours, typer_app, python = (_stats(t) for t in times)
    heavy = _heavy_imports()
    overhead = round(ours["median_ms"] - python["median_ms"], 1)
    ratio = round(ours["median_ms"] / typer_app["median_ms"], 2)
    met = ours["median_ms"] < TARGET_MS and ratio <= TARGET_RATIO and not heavy
    shown = " ".join(Path(c).name if i == 0 else c for i, c in enumerate(command))
    lines = [
        SECTION,
        "",
        f"`python bench/startup.py --runs {args.runs}` ({args.runs} runs each, interleaved, "
        f"fresh processes; Python {platform.python_version()}, {platform.machine()}; load "
        f"average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end)",
        "",
        "| command | median | p90 | min |",
        "| --- | ---: | ---: | ---: |",
        f"| `{shown}` | {ours['median_ms']:.0f} ms | {ours['p90_ms']:.0f} ms | "
        f"{ours['min_ms']:.0f} ms |",
        f"| empty two-command typer app `--help` | {typer_app['median_ms']:.0f} ms | "
        f"{typer_app['p90_ms']:.0f} ms | {typer_app['min_ms']:.0f} ms |",
        f"| `python -c pass` | {python['median_ms']:.0f} ms | {python['p90_ms']:.0f} ms | "
        f"{python['min_ms']:.0f} ms |",
        "",
        f"The command itself costs {overhead:.0f} ms over starting Python; its median is "
        f"{ratio:.2f}x the empty typer app's. Heavy modules imported by `--help`: "
        f"{', '.join(heavy) if heavy else 'none'}.",
        "",
        f"Targets: median under {TARGET_MS:.0f} ms: "
        f"{'met' if ours['median_ms'] < TARGET_MS else 'missed'}; at most {TARGET_RATIO}x the "
        f"empty typer app: {'met' if ratio <= TARGET_RATIO else 'missed'}.",
    ]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    save_section(args, text)
    if args.json:
        payload: dict[str, Any] = {
            "help_median_ms": ours["median_ms"],
            "help_p90_ms": ours["p90_ms"],
            "typer_app_median_ms": typer_app["median_ms"],
            "ratio_to_typer_app": ratio,
            "python_median_ms": python["median_ms"],
            "overhead_ms": overhead,
            "runs": args.runs,
            "heavy_imports": heavy,
            "target_met": met,
        }
        sys.stdout.write(json.dumps(payload) + "\n")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
