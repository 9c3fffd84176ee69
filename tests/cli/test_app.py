"""The ``abridged`` command as a whole: its commands, a fast ``--help``, a progress bar only on a
terminal."""

from __future__ import annotations

import subprocess
import sys

import pexpect  # type: ignore[import-untyped]

from tests.bench.support import load_bench
from tests.cli.conftest import EXAMPLE, ROOT, run_cli

#: What ``--help`` must not import: the SDKs, the store, pydantic, typer's rich help formatter
#: (rich's Markdown with markdown_it, and its tracebacks), as ``bench/startup.py`` lists them.
HEAVY = load_bench("startup").HEAVY


def test_help_lists_every_command() -> None:
    out = run_cli("--help")
    assert out.returncode == 0, out.stderr
    for command in ("analyze", "replay", "compact", "chat", "sessions", "db"):
        assert command in out.stdout
    sessions = run_cli("sessions", "--help")
    for command in ("list", "show", "search", "export"):
        assert command in sessions.stdout
    assert "upgrade" in run_cli("db", "--help").stdout


def _imported_by(*args: str) -> list[str]:
    """The modules ``python -X importtime -m abridged ARGS`` imports, in order (its stderr)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "abridged", *args],
        check=True, capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    # "import time: self [us] | cumulative | imported package", then one such row per module
    rows = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")]
    return [row[2].strip() for row in rows[1:] if len(row) == 3]


def test_help_imports_nothing_heavy() -> None:
    loaded = _imported_by("--help")
    assert "typer" in loaded and "abridged.cli.app" in loaded  # the rows were read
    assert [name for name in HEAVY if name in loaded] == []
    # no command's own module, nothing of the layers below the CLI
    assert [name for name in loaded if name.startswith("abridged.")] == [
        "abridged.cli",
        "abridged.cli.app",
    ]


def test_the_progress_bar_shows_on_a_terminal() -> None:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "abridged", "replay", str(EXAMPLE), "--window", "16k"],
        cwd=str(ROOT),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 120),
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    screen = str(child.before)
    assert "replaying" in screen and "/58" in screen  # rich's bar: calls done / total
    assert "overflows" in screen
