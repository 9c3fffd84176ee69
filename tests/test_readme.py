"""The README's examples run as written: every Python block, every ``$ abridged`` line, and
``make run``."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.needs import missing, shared_dir
from tests.serving import wait_until_healthy

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", README, flags=re.DOTALL)
PYTHON = [code for lang, code in BLOCKS if lang == "python"]
COMMANDS = [
    line[2:].strip()
    for lang, code in BLOCKS
    if lang == "console"
    for line in code.splitlines()
    if line.startswith("$ ")
]


def test_the_readme_has_examples() -> None:
    assert len(PYTHON) >= 3
    assert any(c.startswith("abridged ") for c in COMMANDS)


#: A database an example names by a relative path (``"chat.db"``, ``"build/agents-example.db"``).
_EXAMPLE_DB = re.compile(r"([\"'])((?:build/)?[\w.-]+\.db)\1")


@pytest.mark.parametrize("code", PYTHON, ids=[f"python-{i}" for i in range(len(PYTHON))])
def test_python_example_runs(code: str, tmp_path: Path) -> None:
    # Its databases in this test's own directory: one left by an earlier run (of an older
    # schema, or another checkout's) must not decide whether the example works as written.
    code = _EXAMPLE_DB.sub(lambda m: f"{m[1]}{tmp_path / Path(m[2]).name}{m[1]}", code)
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr


def _run_command(command: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """A README command, its ``/tmp/`` and ``build/`` files in this test's own directory (tests
    running at the same time, or another checkout's, must not share a database or a report)."""
    args = [
        f"{tmp_path}/{a}" if a.startswith("build/") else a.replace("/tmp/", f"{tmp_path}/")
        for a in shlex.split(command)
    ]
    if any("../shared" in a for a in args):
        shared = shared_dir()
        if not shared.exists():
            missing("shared data", f"the command reads ../shared, not found at {shared}")
        args = [a.replace("../shared", str(shared)) for a in args]
    assert args[0] == "abridged"
    return subprocess.run(
        [sys.executable, "-m", "abridged", *args[1:]],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_console_example_runs(command: str, tmp_path: Path) -> None:
    # the README's earlier commands on the same /tmp/ file first, as a reader runs them
    files = set(re.findall(r"/tmp/\S+", command))
    for earlier in COMMANDS[: COMMANDS.index(command)]:
        if files & set(re.findall(r"/tmp/\S+", earlier)):
            done = _run_command(earlier, tmp_path)
            assert done.returncode == 0, done.stderr
    out = _run_command(command, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip()


def test_make_run_is_the_first_command_and_works() -> None:
    first = next(code for lang, code in BLOCKS if lang == "console")
    assert first.splitlines()[0].startswith("make run")
    report = ROOT / "build" / "replay-report.html"
    report.unlink(missing_ok=True)
    out = subprocess.run(
        ["make", "run"], cwd=ROOT, check=False, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    assert "overflows" in out.stdout
    assert report.exists() and "<svg" in report.read_text(encoding="utf-8")


def test_the_replay_figures_the_readme_quotes_are_the_ones_printed(tmp_path: Path) -> None:
    """Every call row, the compaction line and the counts the README quotes for the example
    replay are printed as quoted (the timing line and the wrapped footer aside)."""
    block = next(
        code
        for lang, code in BLOCKS
        if lang == "console" and "$ abridged replay examples/agent-session.jsonl" in code
    )
    quoted = [
        line.rstrip()
        for line in block.splitlines()[1:]
        if re.match(r"^\s*\d+\s", line)
        or line.strip().startswith(("compaction at call", "calls ", "overflows "))
    ]
    assert len(quoted) >= 20
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "abridged",
            "replay",
            "examples/agent-session.jsonl",
            "--window",
            "16k",
            "--report",
            str(tmp_path / "report.html"),
        ],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    printed = {line.rstrip() for line in out.stdout.splitlines()}
    assert [line for line in quoted if line not in printed] == []


def _bash_line(prefix: str) -> list[str]:
    line = next(
        ln
        for lang, code in BLOCKS
        if lang == "bash"
        for ln in code.splitlines()
        if ln.startswith(prefix)
    )
    return shlex.split(line, comments=True)  # a '#' inside a quoted model string stays


@pytest.mark.parametrize(
    ("prefix", "page"),
    [("abridged serve --no-auth", "/"), ("abridged proxy --upstream", "/healthz")],
)
def test_the_long_running_examples_start(prefix: str, page: str, tmp_path: Path) -> None:
    """The README's one command for the service and for the proxy, as written (a free port and
    a throwaway database appended): each starts, answers, and stops cleanly on SIGTERM."""
    import signal
    import socket

    import httpx

    args = _bash_line(prefix)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "abridged", *args[1:], "--port", str(port), "--db",
         str(tmp_path / "readme.db")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(proc, base)
        answer = httpx.get(base + page, timeout=5)
        assert answer.status_code == 200
        if page == "/":
            assert "<html" in answer.text.lower()
            listed = httpx.get(base + "/v1/conversations", timeout=5)
            assert listed.status_code == 200 and listed.json() == []
        else:
            assert answer.json()["upstream"] == args[args.index("--upstream") + 1]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    # uvicorn shuts down gracefully, then re-raises the signal it caught
    assert proc.returncode in (0, -signal.SIGTERM), proc.communicate()[1]


def test_the_quick_starts_are_the_commands_the_demo_prints() -> None:
    """The README's serve, proxy and chat lines are the demo's own (``tests/cli/test_demo.py``
    runs those against it), and the block says how a new terminal finds ``abridged``."""
    from abridged.cli.demo import demo_commands

    printed = demo_commands(8300)
    for prefix, command in (
        ("abridged serve ", printed.serve),
        ("abridged proxy ", printed.proxy),
        ("abridged chat ", printed.chat),
    ):
        assert _bash_line(prefix) == shlex.split(command)
    block = next(code for lang, code in BLOCKS if lang == "bash" and "abridged demo" in code)
    assert block.splitlines()[0].startswith(". .venv/bin/activate")
