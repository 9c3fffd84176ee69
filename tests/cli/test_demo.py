"""``abridged demo``: the provider starts on its port, and the three commands it prints (serve,
proxy, chat) work against it as printed, offline (real processes, real HTTP)."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import socket
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
        if "first . " in text:
            commands["activate"] = text.split("first ", 1)[1].rstrip(")")
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
    assert {"serve", "proxy", "client", "chat"} <= set(commands)
    for name in ("serve", "proxy", "chat"):
        assert f"127.0.0.1:{port}" in commands[name]
    # run from a virtual environment (make's .venv), it says how a new terminal gets abridged
    # on its PATH: without it, `abridged serve` in another terminal is "command not found"
    if sys.prefix != sys.base_prefix:
        script = Path(commands["activate"].removeprefix(". "))
        assert script.is_absolute()  # a new terminal starts elsewhere
        assert script.resolve() == Path(sys.prefix, "bin", "activate").resolve()
        assert {"serve", "proxy", "client", "chat", "activate"} == set(commands)
    else:
        assert "activate" not in commands


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


#: A bound on the demo's exit after a signal: a hang guard, not a speed (a loaded machine).
EXIT_WAIT = 60.0


def _demo_argv(port: int, *, ignore_sigint: bool, latency: str = "0") -> list[str]:
    """``abridged demo`` on ``port``; with ``ignore_sigint``, started as a shell starts a
    background job (``cmd &`` in a script: SIGINT ignored), the way a suite run in the
    background starts it."""
    argv = [sys.executable, "-m", "abridged", "demo", "--port", str(port), "--latency", latency]
    if not ignore_sigint:
        return argv
    return ["sh", "-c", 'trap "" INT; exec "$@"', "sh", *argv]


def _stream_request(port: int) -> socket.socket:
    """An idle kept-alive connection (one request answered on it), then a streaming chat
    request on another one, left in flight (the demo waits ``--latency`` before answering)."""
    idle = socket.create_connection(("127.0.0.1", port), timeout=START_WAIT)
    idle.sendall(b"GET /v1/models HTTP/1.1\r\nHost: demo\r\n\r\n")
    assert idle.recv(64).startswith(b"HTTP/1.1 200")
    body = json.dumps(
        {"model": "demo-agent", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    ).encode()
    busy = socket.create_connection(("127.0.0.1", port), timeout=START_WAIT)
    busy.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: demo\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    return idle  # the in-flight one stays open with it: closed with the demo


@pytest.mark.parametrize(
    ("signum", "moment", "ignore_sigint"),
    [
        (signal.SIGINT, "starting", True),
        (signal.SIGINT, "serving", True),
        (signal.SIGINT, "streaming", False),
        (signal.SIGTERM, "starting", False),
        (signal.SIGTERM, "streaming", True),
    ],
)
def test_the_demo_stops_on_a_signal_at_any_moment(
    tmp_path: Path, signum: signal.Signals, moment: str, ignore_sigint: bool
) -> None:
    """SIGINT or SIGTERM while it starts, while it serves, or with a request in flight and a
    kept-alive connection open, also when started with SIGINT ignored: the demo exits with
    0, saying so (a process still running after ``EXIT_WAIT`` fails the test)."""
    port = free_port()
    log = tmp_path / "demo.log"
    argv = _demo_argv(port, ignore_sigint=ignore_sigint, latency="10")
    open_sockets: list[socket.socket] = []
    with log.open("w") as out:
        process = subprocess.Popen(argv, env=_env(tmp_path), stdout=out, stderr=subprocess.STDOUT)
        try:
            if moment == "starting":  # its handlers are installed; the port may not be open
                _wait_until(lambda: "starting the demo provider" in log.read_text(), process, log)
            else:
                _wait_until(lambda: "Ctrl-C stops" in log.read_text(), process, log)
            if moment == "streaming":
                open_sockets.append(_stream_request(port))
            process.send_signal(signum)
            try:
                code = process.wait(timeout=EXIT_WAIT)
            except subprocess.TimeoutExpired:
                pytest.fail(f"the demo did not exit after {signum.name}:\n{log.read_text()}")
        finally:
            for sock in open_sockets:
                sock.close()
            if process.poll() is None:
                process.kill()
                process.wait()
    printed = log.read_text()
    assert code == 0, printed
    assert f"demo provider stopped ({signum.name})" in printed, printed


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# what CPython prints when KeyboardInterrupt stops it before the program runs (Modules/main.c,
# Python/pylifecycle.c)
_PYTHON_STARTING = ("Could not import runpy module", "Fatal Python error")


def test_a_signal_as_the_demo_process_starts_ends_it(tmp_path: Path) -> None:
    """SIGINT before the demo's own code runs (Python still imports the command) ends it as it
    ends any Python program; once the command runs, as documented. It never hangs."""
    process = subprocess.Popen(
        _demo_argv(free_port(), ignore_sigint=False),
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # SIGINT at its default in the child whatever this suite inherited (a suite started in
        # the background has it ignored): an ignored signal sent before the demo's own handler
        # is installed is gone, and no program can end on it.
        preexec_fn=_default_sigint,  # noqa: PLW1509 (the test starts no thread before it)
    )
    process.send_signal(signal.SIGINT)
    try:
        out, _ = process.communicate(timeout=EXIT_WAIT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail("the demo did not exit after SIGINT at its start")
    if process.returncode == 0:
        assert "demo provider stopped (SIGINT)" in out, out
    elif process.returncode == 1:
        # Python's own, while it still starts up: KeyboardInterrupt in importing runpy (``-m``)
        # or the site module ends the interpreter with status 1 before any program runs
        assert "KeyboardInterrupt" in out, out
        assert any(start in out for start in _PYTHON_STARTING), out
    else:  # Python's own: KeyboardInterrupt (130), or the signal's default action
        assert process.returncode in (130, -signal.SIGINT), (process.returncode, out)
