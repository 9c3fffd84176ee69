"""``abridged demo``: a local provider with a scripted agent model, to try everything offline."""

from __future__ import annotations

import signal
import threading
from dataclasses import dataclass

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
    """Serve the demo provider until interrupted; returns the exit code."""
    try:
        context_window = size(window, "window")
        output = size(max_output, "max_output")
    except CliError as exc:
        return fail(exc)
    if context_window is None or context_window < 1_024 or output is None or output < 1:
        return fail(
            CliError(
                f"--window must be >= 1k and --max-output >= 1 ({window}, {max_output})", BAD_USAGE
            )
        )
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
        _print_banner(demo_commands(port), context_window, output)
        _wait_for_interrupt()
    finally:
        server.stop()
    return OK


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
    for title, lines in (
        ("the service and its page (then open http://127.0.0.1:8000)", [commands.serve]),
        ("the proxy, and an app talking to it", [commands.proxy, commands.proxy_client]),
        ("a chat in the terminal", [commands.chat]),
    ):
        out.print(f"\n  {title}:", highlight=False)
        for line in lines:
            out.print(f"    {escape(line)}", highlight=False, soft_wrap=True)
    out.print("\nCtrl-C stops the demo provider.", highlight=False)


def _wait_for_interrupt() -> None:
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
