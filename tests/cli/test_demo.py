"""``abridged demo``: the provider starts on its port, and the three commands it prints (serve,
proxy, chat) work against it as printed, offline (real processes, real HTTP)."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cli.conftest import ROOT, invoke
from tests.server.conftest import free_port

#: How long a process may take to come up on a loaded machine (a bound on waiting, not a test of
#: speed: the test asserts what happens, never how fast).
START_WAIT = 60.0


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env.update({"ABRIDGED_DB": str(tmp_path / "demo.db"), "COLUMNS": "400"})
    env.pop("ABRIDGED_MODEL", None)
    return env


def _argv(command: str) -> list[str]:
    """A printed command as this interpreter runs it."""
    args = shlex.split(command)
    if args[0] == "abridged":
        return [sys.executable, "-m", "abridged", *args[1:]]
    assert args[0] == "python"
    return [sys.executable, *args[1:]]


@contextlib.contextmanager
def _running(argv: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[str]]:
    with log.open("w") as out:
        process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
        try:
            yield process
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_until(ready: object, process: subprocess.Popen[str], log: Path) -> None:
    deadline = time.monotonic() + START_WAIT
    while True:
        if process.poll() is not None:
            pytest.fail(f"{process.args} exited:\n{log.read_text()[-3000:]}")
        with contextlib.suppress(httpx.TransportError):
            if callable(ready) and ready():
                return
        if time.monotonic() > deadline:
            pytest.fail(f"{process.args} did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.1)


def _printed_commands(log: Path) -> dict[str, str]:
    """The commands of the demo's banner, by what they start."""
    commands: dict[str, str] = {}
    for line in log.read_text().splitlines():
        text = line.strip()
        for name in ("serve", "proxy", "chat"):
            if text.startswith(f"abridged {name} "):
                commands[name] = text
        if text.startswith("python -c"):
            commands["client"] = text
    return commands


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """``abridged demo`` on a free port; its port and the commands it printed."""
    port = free_port()
    log = tmp_path / "demo.log"
    argv = [sys.executable, "-m", "abridged", "demo", "--port", str(port), "--latency", "0"]
    with _running(argv, _env(tmp_path), log) as process:

        def ready() -> bool:
            return "Ctrl-C stops" in log.read_text() and (
                httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200
            )

        _wait_until(ready, process, log)
        yield port, _printed_commands(log)


def test_the_demo_prints_the_three_commands_for_its_port(demo: tuple[int, dict[str, str]]) -> None:
    port, commands = demo
    assert set(commands) == {"serve", "proxy", "client", "chat"}
    for name in ("serve", "proxy", "chat"):
        assert f"127.0.0.1:{port}" in commands[name]


def test_chat_as_printed_runs_the_agent_with_its_tools(
    demo: tuple[int, dict[str, str]], tmp_path: Path
) -> None:
    _, commands = demo
    out = subprocess.run(
        _argv(commands["chat"]),
        input="find the budget records\n",
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "search_records" in out.stdout
    assert 'For "find the budget records" I searched 1 time and read rec-' in out.stdout


def test_serve_as_printed_answers_a_turn_with_tool_calls(
    demo: tuple[int, dict[str, str]], tmp_path: Path
) -> None:
    _, commands = demo
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    argv = [*_argv(commands["serve"]), "--port", str(port), "--log-level", "warning"]
    log = tmp_path / "serve.log"
    with _running(argv, _env(tmp_path), log) as process:
        _wait_until(lambda: httpx.get(base + "/readyz", timeout=2).status_code == 200, process, log)
        with httpx.Client(base_url=base, timeout=120) as client:
            created = client.post("/v1/conversations", json={})
            assert created.status_code == 201, created.text
            conversation = created.json()["id"]
            turn = client.post(
                f"/v1/conversations/{conversation}/messages?stream=false",
                json={"content": "find the budget records"},
            )
            assert turn.status_code == 200, turn.text
            assert "read rec-" in json.dumps(turn.json())
            timeline = client.get(f"/v1/conversations/{conversation}/messages").json()
            assert "read_record" in json.dumps(timeline)


def test_the_proxy_as_printed_relays_the_printed_client(
    demo: tuple[int, dict[str, str]], tmp_path: Path
) -> None:
    _, commands = demo
    port = free_port()
    argv = [*_argv(commands["proxy"]), "--port", str(port)]
    log = tmp_path / "proxy.log"
    with _running(argv, _env(tmp_path), log) as process:
        _wait_until(
            lambda: httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200,
            process,
            log,
        )
        client = commands["client"].replace("127.0.0.1:8100", f"127.0.0.1:{port}")
        out = subprocess.run(
            _argv(client),
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=ROOT,
        )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith('Here is a long answer to "write something long".')


def test_a_taken_port_and_a_bad_window_are_clear_errors(tmp_path: Path) -> None:
    bad = invoke("demo", "--window", "lots")
    assert bad.exit_code == 2
    assert "--window 'lots'" in bad.output
    small = invoke("demo", "--window", "512")
    assert small.exit_code == 2
    assert ">= 1k" in small.output
    with contextlib.closing(__import__("socket").socket()) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = invoke("demo", "--port", str(port))
    assert out.exit_code == 1
    assert f"cannot listen on 127.0.0.1:{port}" in out.output
