"""``abridged demo``: a local provider with a scripted agent model, to try everything offline.

Ctrl-C (SIGINT) or SIGTERM stops it at any moment once the command runs, during start-up too:
it says ``demo provider stopped (SIGINT)`` and exits with 0. Both signals get a handler of the
demo's own, installed first: Python's own turns SIGINT into ``KeyboardInterrupt`` only when
the process was not started with SIGINT ignored, and a background job of a shell is (``cmd &``
in a script): the demo then ignored Ctrl-C and had to be killed.
"""

from __future__ import annotations

import contextlib
import select
import shlex
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from rich.markup import escape

from abridged.cli.common import BAD_INPUT, BAD_USAGE, OK, CliError, fail, size, stdout

#: The demo model's name, as the model strings below spell it.
DEMO_MODEL = "demo-agent"


@dataclass(frozen=True, slots=True)
class DemoCommands:
    """The commands that try ``serve``, ``proxy`` and ``chat`` against a demo provider."""

    provider: str
    serve: str
    proxy: str
    proxy_client: str
    chat: str


def demo_commands(port: int) -> DemoCommands:
    """The commands for a demo provider on ``port``.

    >>> demo_commands(8300).proxy
    'abridged proxy --upstream http://127.0.0.1:8300'
    """
    provider = f"http://127.0.0.1:{port}"
    model = f"'{provider}/v1#{DEMO_MODEL}'"
    tools = "--tools abridged.testing.tools:TOOLS"
    client = (
        "python -c \"import openai; c = openai.OpenAI(base_url='http://127.0.0.1:8100/v1', "
        f"api_key='demo'); print(c.chat.completions.create(model='{DEMO_MODEL}', "
        "messages=[{'role': 'user', 'content': 'write something long'}])"
        '.choices[0].message.content[:300])"'
    )
    return DemoCommands(
        provider=provider,
        serve=f"abridged serve --no-auth --model {model} {tools}",
        proxy=f"abridged proxy --upstream {provider}",
        proxy_client=client,
        chat=f"abridged chat --model {model} {tools}",
    )


def run_demo(*, port: int, window: str, max_output: str, latency: float) -> int:
    """Serve the demo provider until SIGINT or SIGTERM; returns the exit code."""
    with _stop_signals() as stop:
        try:
            context_window = size(window, "window")
            output = size(max_output, "max_output")
        except CliError as exc:
            return fail(exc)
        if context_window is None or context_window < 1_024 or output is None or output < 1:
            return fail(
                CliError(
                    f"--window must be >= 1k and --max-output >= 1 ({window}, {max_output})",
                    BAD_USAGE,
                )
            )
        stdout().print(f"starting the demo provider on 127.0.0.1:{port} ...", highlight=False)
        try:
            from abridged.testing.demo_agent import demo_reply  # noqa: PLC0415
            from abridged.testing.provider_server import ProviderServer  # noqa: PLC0415
        except ImportError as exc:  # the testing extra counts with the o200k tokenizer
            message = f"the demo needs the testing extra ({exc}): pip install 'abridged[testing]'"
            return fail(CliError(message, BAD_USAGE))
        server = ProviderServer(
            context_window=context_window,
            max_output=output,
            replies=demo_reply,
            latency=latency,
            model=DEMO_MODEL,
            port=port,
        )
        try:
            server.start()
        except OSError as exc:
            return fail(CliError(f"cannot listen on 127.0.0.1:{port}: {exc}", BAD_INPUT))
        try:
            if stop.signal is None:  # stopped during start-up: no banner for a demo gone
                _print_banner(demo_commands(port), context_window, output)
            stop.wait()
        finally:
            server.stop()  # handler threads are daemons: an open connection holds nothing
    stdout().print(f"demo provider stopped ({stop.name})", highlight=False)
    return OK


def activate_hint() -> str | None:
    """The command that puts this installation's ``abridged`` (and its ``python``) on a new
    terminal's PATH, when it runs from a virtual environment (``make`` makes ``.venv``), else
    ``None``. An absolute path: a new terminal starts in another directory.

    >>> activate_hint() is None or activate_hint().startswith(". ")
    True
    """
    if sys.prefix == sys.base_prefix:
        return None
    return f". {shlex.quote(str(Path(sys.prefix).resolve() / 'bin' / 'activate'))}"


def _print_banner(commands: DemoCommands, window: int, max_output: int) -> None:
    out = stdout()
    out.print(
        f"demo provider on {commands.provider} (OpenAI and Anthropic APIs; model "
        f"{DEMO_MODEL}, window {window:,} tokens, max output {max_output:,}; no key needed)",
        highlight=False,
        soft_wrap=True,
    )
    out.print(
        "The model acts like a small agent: it searches and reads records when offered the "
        "demo tools, and writes a long answer when asked for something long. Try it, each in "
        "another terminal:",
        highlight=False,
        soft_wrap=True,
    )
    activate = activate_hint()
    if activate:
        out.print(
            f"  (a new terminal does not have abridged on its PATH: first {activate})",
            highlight=False,
            soft_wrap=True,
        )
    for title, lines in (
        ("the service and its page (then open http://127.0.0.1:8000)", [commands.serve]),
        ("the proxy, and an app talking to it", [commands.proxy, commands.proxy_client]),
        ("a chat in the terminal", [commands.chat]),
    ):
        out.print(f"\n  {title}:", highlight=False)
        for line in lines:
            out.print(f"    {escape(line)}", highlight=False, soft_wrap=True)
    out.print("\nCtrl-C stops the demo provider (or SIGTERM; exit code 0).", highlight=False)


class _Stop:
    """A stop asked for by a signal: its handler only notes the signal (a handler that takes a
    lock, as ``threading.Event.set`` does, deadlocks when the signal interrupts the main
    thread holding that lock), and the interpreter's wake-up byte on a socket ends ``wait``."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)

    def note(self, signum: int, frame: FrameType | None) -> None:
        """The signal handler."""
        self.signal = signum

    @property
    def name(self) -> str:
        """The signal's name (``SIGINT``), or ``"interrupted"`` when there was none."""
        return signal.Signals(self.signal).name if self.signal is not None else "interrupted"

    def wait(self) -> None:
        """Wait until a signal arrived (at once if one did already)."""
        while self.signal is None:
            # the timeout only bounds a wake-up byte lost to another wake-up fd's owner
            select.select([self._reader], [], [], 1.0)
            with contextlib.suppress(BlockingIOError):
                self._reader.recv(64)

    def close(self) -> None:
        self._reader.close()
        self._writer.close()


@contextlib.contextmanager
def _stop_signals() -> Iterator[_Stop]:
    """SIGINT and SIGTERM noted by a ``_Stop`` for the block (in the main thread only, where
    handlers can be set; elsewhere, as under a test runner's thread, nothing is installed)."""
    stop = _Stop()
    if threading.current_thread() is not threading.main_thread():
        try:
            yield stop
        finally:
            stop.close()
        return
    wakeup = signal.set_wakeup_fd(stop._writer.fileno(), warn_on_full_buffer=False)
    previous = {sig: signal.signal(sig, stop.note) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(wakeup)
        stop.close()
