"""``abridged chat``: an interactive, durable chat in the terminal on the Conversation runtime.

Replies stream as they arrive. After each turn a context meter shows the context used against
the window (the compaction trigger marked ``│``): green below 75% of the trigger, amber from 75%,
red at the trigger; grey, with a note, when the model's window is unknown. Prunes, compactions
and overflow recoveries are announced with their before/after breakdown as the runtime reports
them (also when a background compaction finishes between turns). Every slash command of the
runtime works (``/help`` lists them); ``/exit`` or Ctrl-D leaves. Ctrl-C aborts the reply in
progress (what was received is kept), never the program.

Everything is stored (``--db``; default ``ABRIDGED_DB``, else the user's data directory), so
``--resume`` picks a conversation (or one of its sessions) up again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from abridged.cli.common import (
    BAD_INPUT,
    BAD_USAGE,
    CliError,
    check_database,
    fail,
    size,
    store_url,
)
from abridged.core.budget import format_token_size
from abridged.errors import AbridgedError, ProviderError, SettingError

if TYPE_CHECKING:
    from abridged.runtime.conversation import Conversation

MODEL_VARIABLE = "ABRIDGED_MODEL"
METER_WIDTH = 30
AMBER_SHARE = 0.75
EXIT_COMMANDS = frozenset({"/exit", "/quit"})
PROMPT = "you> "
NO_MODEL = (
    "no model configured: set ABRIDGED_MODEL (for example ABRIDGED_MODEL=openai/gpt-4.1-mini with "
    "OPENAI_API_KEY set, or ABRIDGED_MODEL=http://localhost:8000/v1#my-model for a local "
    "OpenAI-compatible server), or pass --model"
)


def meter_colour(tokens: int, trigger: int) -> str:
    """``green`` below 75% of the trigger, ``yellow`` (amber) from 75%, ``red`` at the trigger."""
    if tokens >= trigger:
        return "red"
    return "yellow" if tokens >= AMBER_SHARE * trigger else "green"


def meter(
    tokens: int, window: int, trigger: int, *, known: bool = True, width: int = METER_WIDTH
) -> Text:
    """The context meter: a bar of ``tokens`` against the window with the trigger marked.

    >>> meter(4_000, 16_384, 9_011).plain.split("▕")[0]
    'context '
    """
    k = format_token_size
    if window <= 0:
        window = 1
    filled = min(width, round(width * tokens / window))
    mark = min(width - 1, int(width * trigger / window))
    colour = meter_colour(tokens, trigger) if known else "grey50"
    out = Text("context ")
    out.append("▕")
    out.append("█" * filled, style=colour)
    out.append("".join("│" if filled + i == mark else "░" for i in range(width - filled)), "dim")
    out.append("▏ ")
    percent = round(100 * tokens / window)
    if known:
        out.append(f"{k(tokens)} / {k(window)} ({percent}%)", style=colour)
        out.append(f" · trigger {k(trigger)}", style="dim")
    else:
        out.append(f"{k(tokens)} / {k(window)}?", style=colour)
        out.append(
            " · window unknown: assumed, pass --window (or ABRIDGED_WINDOW) to set it",
            style="grey50",
        )
    return out


class _Reader:
    """Reads lines in a daemon thread, so the event loop (and a background compaction) keeps
    running while the user types, and quitting never waits for the terminal."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.pending: asyncio.Future[str | None] | None = None

    def cancel(self) -> None:
        """End the wait for a line (the thread stays blocked; it is a daemon)."""
        if self.pending is not None:
            _settle(self.pending, None)

    async def read(self, prompt: str) -> str | None:
        future: asyncio.Future[str | None] = self.loop.create_future()
        self.pending = future

        def run() -> None:
            try:
                line: str | None = input(prompt)
            except EOFError:
                line = None
            except Exception:  # a closed terminal: treat like end of input
                line = None
            self.loop.call_soon_threadsafe(_settle, future, line)

        threading.Thread(target=run, daemon=True, name="abridged-chat-input").start()
        return await future


def _settle(future: asyncio.Future[str | None], value: str | None) -> None:
    if not future.done():
        future.set_result(value)


class _Chat:
    """One chat session in the terminal."""

    def __init__(self, console: Console, convo: Conversation) -> None:
        self.console = console
        self.convo = convo
        self.streaming = False
        self.shown: deque[Any] = deque(maxlen=256)
        self.last_interrupt = 0.0
        self.quit = False
        self.reader: _Reader | None = None
        self.settling = False  # waiting, after a turn, for its compaction to end
        self.turn_notices: list[str] = []  # the texts of the notices shown in this turn
        self.warned: set[str] = set()

    # -- output ---------------------------------------------------------------------------------

    @staticmethod
    def _visible(event: Any) -> bool:
        """Usage reports are shown by the meter, not as notices."""
        inner = getattr(event, "event", None)
        return getattr(inner, "kind", "") != "usage_updated"

    def notice(self, event: Any) -> None:
        """A runtime event: tool calls, notices (prunes, compactions...), retries."""
        if any(event is seen for seen in self.shown):
            return
        self.shown.append(event)
        if not self._visible(event):
            return
        if self.streaming and str(getattr(event, "text", "")).startswith("Aborted"):
            return  # the turn's end says it: "reply aborted (what arrived is kept)", once
        kind = getattr(event, "kind", "")
        style = {"notice": "yellow", "retrying": "yellow"}.get(kind, "dim")
        self.turn_notices.append(event.text)
        self.console.print(f"[{style}]• {escape(event.text)}[/]", highlight=False)

    def on_event(self, event: Any) -> None:
        """``on_event`` of the conversation: events outside a turn (a background compaction;
        after a turn the chat waits for it, so these come before the prompt)."""
        if not self.streaming and self._visible(event):
            if not self.settling:  # the prompt is showing: start a line of our own
                self.console.print()
            self.notice(event)

    def warn(self, text: str) -> None:
        """A warning from abridged's own log (a failed background finalisation, a corrupt row
        left out): one readable notice, each text once."""
        if text in self.warned:
            return
        self.warned.add(text)
        if not self.streaming and not self.settling:
            self.console.print()
        self.console.print(f"[yellow]• warning: {escape(text)}[/]", highlight=False)

    def show_meter(self) -> None:
        convo = self.convo
        budget = convo.budget()
        self.console.print(
            meter(
                convo.context_tokens(),
                convo.limits.context_window,
                budget.trigger,
                known=convo.limits.known,
            )
        )

    # -- input ----------------------------------------------------------------------------------

    def on_sigint(self) -> None:
        """Ctrl-C: abort the reply in progress; at the prompt, say how to leave (twice: leave)."""
        if self.streaming:
            self.convo.abort()  # the turn's end says "reply aborted", once
            return
        now = time.monotonic()
        if now - self.last_interrupt < 2.0:
            self.quit = True
            self.console.print()
            if self.reader is not None:
                self.reader.cancel()
            return
        self.last_interrupt = now
        self.console.print("\n[dim](Ctrl-C again, Ctrl-D or /exit to leave)[/]")
        self.console.print(PROMPT, end="", markup=False, highlight=False)  # input() still waits

    async def turn(self, text: str) -> None:
        """Send one line and render what streams back, then any compaction it started (so its
        notices come before the next prompt), then the meter."""
        self.turn_notices = []
        try:
            await self._turn(text)
        except AbridgedError as exc:
            # a failed call ends the turn, not the chat (the user's message is stored)
            self.streaming = False
            sys.stdout.write("\x1b[0m\n")
            self.console.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
            return
        self.settling = True
        try:
            await self.convo.wait_compaction()
        finally:
            self.settling = False
        self.show_meter()

    async def _turn(self, text: str) -> None:
        from abridged.core.protocols import ReasoningDelta, TextDelta  # noqa: PLC0415
        from abridged.events.runtime import TurnResult  # noqa: PLC0415

        out = sys.stdout
        replied = False  # some reply text was shown
        open_line = False  # the cursor is after streamed text (a notice needs a new line)
        thinking = False
        self.streaming = True
        try:
            async for item in self.convo.stream(text):
                if isinstance(item, TextDelta):
                    if thinking:
                        out.write("\x1b[0m\n")
                        thinking = open_line = False
                    if not open_line:
                        self.console.print("[bold cyan]assistant>[/] ", end="")
                        open_line = replied = True
                    out.write(item.text)
                    out.flush()
                elif isinstance(item, ReasoningDelta):
                    if not thinking:
                        out.write("\n\x1b[2m" if open_line else "\x1b[2m")
                        thinking = open_line = True
                    out.write(item.text)
                    out.flush()
                elif isinstance(item, TurnResult):
                    if thinking:
                        out.write("\x1b[0m")
                    if open_line:
                        out.write("\n")
                        out.flush()
                    if item.command is not None:
                        if item.text not in self.turn_notices:  # /compact's notice said it
                            self.console.print(item.text, markup=False, highlight=False)
                        if item.command == "help":
                            self.console.print("  /exit            leave the chat (also Ctrl-D)")
                    elif item.aborted:
                        self.console.print("[yellow]• reply aborted (what arrived is kept)[/]")
                    elif item.stopped:
                        self.console.print(f"[yellow]• turn stopped: {escape(item.stopped)}[/]")
                    elif not replied and item.text:
                        self.console.print(f"[bold cyan]assistant>[/] {escape(item.text)}")
                elif hasattr(item, "kind"):
                    if self._visible(item) and open_line:
                        out.write("\x1b[0m\n" if thinking else "\n")
                        open_line = thinking = False
                    self.notice(item)
        finally:
            self.streaming = False


class _NoticeHandler(logging.Handler):
    """abridged's own warnings as the chat's notices (see ``_Chat.warn``)."""

    def __init__(self, chat: _Chat) -> None:
        from abridged.runtime.tracing import PASSED_ON  # noqa: PLC0415 (the runtime: lazily)

        super().__init__(logging.WARNING)
        self.chat = chat
        self.passed_on = PASSED_ON

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, self.passed_on, False):
            return  # an event the chat has shown as a notice (``_Chat.on_event``)
        try:
            self.chat.warn(record.getMessage())
        except Exception:  # a broken terminal must not break the logging call
            self.handleError(record)


async def _find_conversation(store: Any, ident: str) -> tuple[str, str | None]:
    from abridged.cli.sessions import _find  # noqa: PLC0415

    conv, session = await _find(store, ident, None)
    return conv.id, session


async def chat_main(
    *,
    model: str,
    base_url: str | None,
    db: str | None,
    resume: str | None,
    system: str | None,
    window: int | None,
    max_output: int | None,
    summarizer: str | None,
    tools: str | None = None,
) -> int:
    """The chat loop (see the module docstring); returns the exit code."""
    from abridged.core.windows import LimitsOverride  # noqa: PLC0415
    from abridged.providers.limits import resolve_model_limits  # noqa: PLC0415
    from abridged.providers.select import chat_model_from_string  # noqa: PLC0415
    from abridged.runtime.conversation import Conversation  # noqa: PLC0415
    from abridged.runtime.tools import load_tools  # noqa: PLC0415
    from abridged.store import Store  # noqa: PLC0415

    console = Console(highlight=False)
    try:
        registry = load_tools(tools)
        chat_model = chat_model_from_string(model, base_url=base_url)
        summarize: Any = summarizer
        if summarizer is not None and summarizer.strip().lower() != "extractive":
            summarize = chat_model_from_string(summarizer, base_url=base_url)
    except SettingError as exc:
        raise CliError(f"{exc.name} {exc.value!r}: expected {exc.valid}", BAD_USAGE) from exc
    except ProviderError as exc:
        raise CliError(f"{exc.message} (model {model!r})", BAD_USAGE) from exc
    store = Store(store_url(db))
    chat: _Chat | None = None
    try:
        conversation_id: str | None = None
        session: str | None = None
        if resume is not None:
            conversation_id, session = await _find_conversation(store, resume)
        # the limits: --window / --max-output over a probe of the server over the registry
        limits = await resolve_model_limits(
            chat_model.name,
            base_url=getattr(chat_model, "base_url", None),
            override=LimitsOverride(context_window=window, max_output=max_output)
            if window is not None or max_output is not None
            else None,
        )
        convo = await Conversation.open(
            store,
            chat_model,
            system=system,
            conversation_id=conversation_id,
            summarizer=summarize,
            limits=limits,
            tools=registry,
            on_event=lambda event: chat.on_event(event) if chat is not None else None,
        )
        chat = _Chat(console, convo)
        limits = convo.limits
        window_text = f"{format_token_size(limits.context_window)} ({limits.source})"
        if not limits.known:
            window_text += " [grey50]unknown: pass --window[/]"
        state = "resumed" if conversation_id else "new"
        console.print(
            f"[bold]abridged chat[/] · {escape(chat_model.name)} · window {window_text} · "
            f"{state} conversation {convo.id}"
        )
        console.print(
            "[dim]/help lists the commands · Ctrl-C aborts a reply · Ctrl-D or /exit leaves[/]"
        )
        if session is not None:
            await chat.turn(f"/resume {session}")
        elif conversation_id is not None:
            chat.show_meter()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, chat.on_sigint)
        warnings = _NoticeHandler(chat)
        library_log = logging.getLogger("abridged")
        library_log.addHandler(warnings)
        propagated = library_log.propagate
        library_log.propagate = False  # no raw log line in the middle of the conversation
        reader = chat.reader = _Reader(loop)
        try:
            while not chat.quit:
                line = await reader.read(PROMPT)
                if line is None:
                    console.print()
                    break
                text = line.strip()
                if not text:
                    continue
                if text.lower() in EXIT_COMMANDS:
                    break
                await chat.turn(text)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            library_log.removeHandler(warnings)
            library_log.propagate = propagated
        await convo.close()
        console.print(f"[dim]conversation {convo.id} saved · abridged chat --resume {convo.id}[/]")
    finally:
        await store.close()
    return 0


def run_chat(
    *,
    model: str | None,
    base_url: str | None,
    db: str | None,
    resume: str | None,
    system: str | None,
    window: str | None,
    max_output: str | None,
    summarizer: str | None,
    tools: str | None = None,
) -> int:
    """Run the command; returns the exit code (0 ok, 1 failure, 2 no model or bad arguments)."""
    spec = model or os.environ.get(MODEL_VARIABLE) or ""
    try:
        if not spec.strip():
            raise CliError(NO_MODEL, BAD_USAGE)
        window = window or os.environ.get("ABRIDGED_WINDOW") or None
        context_window = size(window, "window")
        output = size(max_output, "max_output")
        check_database(store_url(db))
        return asyncio.run(
            chat_main(
                model=spec,
                base_url=base_url,
                db=db,
                resume=resume,
                system=system,
                window=context_window,
                max_output=output,
                summarizer=summarizer,
                tools=tools,
            )
        )
    except CliError as exc:
        return fail(exc)
    except SettingError as exc:
        return fail(CliError(str(exc), BAD_USAGE))
    except AbridgedError as exc:
        return fail(CliError(str(exc), BAD_INPUT))
