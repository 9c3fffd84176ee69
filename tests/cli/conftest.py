"""Shared by the CLI tests: run ``python -m abridged`` as a real process; paths to the inputs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "agent-session.jsonl"
FORMATS_DATA = ROOT / "tests" / "formats" / "data"
CLAUDE_CODE = FORMATS_DATA / "claude_code.jsonl"
CODEX = FORMATS_DATA / "codex_rollout.jsonl"

Run = Callable[..., subprocess.CompletedProcess[str]]


def run_cli(
    *args: str | Path,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``python -m abridged ARGS`` with stdout and stderr captured (not a terminal)."""
    full_env = {**os.environ, "COLUMNS": "100"}
    full_env.pop("ABRIDGED_MODEL", None)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "abridged", *map(str, args)],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=cwd or ROOT,
    )


@pytest.fixture
def cli(tmp_path: Path) -> Run:
    """``run_cli`` with ``ABRIDGED_DB`` pointing into the test's directory (never the user's)."""

    def run(*args: str | Path, env: Mapping[str, str] | None = None) -> Any:
        return run_cli(*args, env={"ABRIDGED_DB": str(tmp_path / "default.db"), **(env or {})})

    return run


def invoke(*args: str | Path, env: Mapping[str, str] | None = None) -> Any:
    """The same command in this process (typer's runner): for the fast error paths."""
    from typer.testing import CliRunner

    from abridged.cli.app import app

    return CliRunner().invoke(app, [str(a) for a in args], env=dict(env or {}))
