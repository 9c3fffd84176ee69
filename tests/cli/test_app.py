"""The ``abridged`` command as a whole: its commands, a fast ``--help``, a progress bar only on a
terminal."""

from __future__ import annotations

import subprocess
import sys

import pexpect  # type: ignore[import-untyped]

from tests.cli.conftest import EXAMPLE, ROOT, run_cli

HEAVY = ("sqlalchemy", "alembic", "openai", "anthropic", "litellm", "pydantic", "httpx")
# typer's rich help formatter brings these (about 140 ms): help is click's plain text instead
RICH_HELP = ("typer.rich_utils", "rich.markdown", "markdown_it", "rich.traceback")


def test_help_lists_every_command() -> None:
    out = run_cli("--help")
    assert out.returncode == 0, out.stderr
    for command in ("analyze", "replay", "compact", "chat", "sessions", "db"):
        assert command in out.stdout
    sessions = run_cli("sessions", "--help")
    for command in ("list", "show", "search", "export"):
        assert command in sessions.stdout
    assert "upgrade" in run_cli("db", "--help").stdout


def test_help_imports_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "from abridged.cli.app import app\n"
        "try:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT
    )
    loaded = set(done.stdout.split())
    assert "typer" in loaded
    assert [name for name in HEAVY if name in loaded] == []
    assert [name for name in RICH_HELP if name in loaded] == []
    assert not any(name.startswith(("abridged.store", "abridged.engine")) for name in loaded)


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
