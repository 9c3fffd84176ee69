"""``abridged chat`` in a real terminal (a pty, driven by pexpect) against the local provider."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect  # type: ignore[import-untyped]
import pytest

from abridged.cli.chat import meter, meter_colour
from abridged.testing import ProviderServer, RecordedRequest, Reply
from tests.cli.conftest import ROOT, run_cli

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
GREEN, AMBER, RED = "\x1b[32m", "\x1b[33m", "\x1b[31m"
PROMPT = "you> "


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ABRIDGED_", "OPENAI_"))}
    env.update(TERM="xterm-256color", ABRIDGED_DB=str(tmp_path / "chat.db"), COLUMNS="120")
    env.update(extra)
    return env


def _spawn(tmp_path: Path, *args: str, **env: str) -> pexpect.spawn:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "abridged", "chat", *args],
        cwd=str(ROOT),
        env=_env(tmp_path, **env),
        encoding="utf-8",
        timeout=30,
        dimensions=(50, 160),
    )
    child.expect_exact(PROMPT)
    return child


def _turn(child: pexpect.spawn, text: str) -> str:
    """Send a line; what the terminal showed until the next prompt."""
    child.sendline(text)
    child.expect_exact(PROMPT)
    return str(child.before)


def _meter(screen: str) -> str:
    lines = [line for line in screen.splitlines() if "context ▕" in ANSI.sub("", line)]
    assert lines, screen
    return lines[-1]


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    """A 4k-window provider that answers with ~150 tokens, streamed slowly enough to abort."""

    def reply(request: RecordedRequest) -> Reply:
        last = request.messages[-1].text if request.messages else ""
        if "slow" in last:
            return Reply(" ".join(f"word{n}" for n in range(400)))
        if "break" in last:
            error = {"type": "invalid_request_error", "message": "scripted failure"}
            return Reply(error=(400, {"error": error}))
        return Reply(f"Noted ({len(request.messages)} messages). " + "Details follow. " * 40)

    with ProviderServer(context_window=4_096, max_output=1_024, replies=reply) as srv:
        yield srv


def test_without_a_model_it_names_the_variable_and_exits_2(tmp_path: Path) -> None:
    out = run_cli("chat", env=_env(tmp_path))
    assert out.returncode == 2
    assert "ABRIDGED_MODEL" in out.stderr and "no model configured" in out.stderr
    child = pexpect.spawn(
        sys.executable, ["-m", "abridged", "chat"], env=_env(tmp_path), encoding="utf-8"
    )
    child.expect_exact("set ABRIDGED_MODEL")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2


def test_a_chat_streams_meters_compacts_aborts_and_resumes(
    tmp_path: Path, server: ProviderServer
) -> None:
    model = f"{server.base_url}/v1#test-model"
    child = _spawn(tmp_path, "--summarizer", "extractive", ABRIDGED_MODEL=model)
    banner = str(child.before)
    assert "window 4k (probe)" in ANSI.sub("", banner)
    conversation = re.search(r"new conversation (\w+)", ANSI.sub("", banner))
    assert conversation is not None

    screen = _turn(child, "hello")
    assert "Noted (1 messages)." in screen  # the reply streamed in
    first = _meter(screen)
    assert GREEN in first and "/ 4k" in ANSI.sub("", first) and "trigger 2.3k" in first
    assert "│" in first  # the trigger's mark on the bar

    # grow the context: the meter turns amber, then a compaction is announced with its sizes
    colours = []
    compacted = ""
    for n in range(8):
        screen = _turn(child, f"point {n}: " + "please remember this detail. " * 40)
        colours.append(_meter(screen))
        if "Compacted (" in screen:
            compacted = ANSI.sub("", screen)
            break
    assert any(AMBER in line or RED in line for line in colours), colours
    assert compacted, "no compaction was announced"
    assert re.search(r"Compacted \([\d.]+k -> [\d.]+k?\): system \S+, summary \S+", compacted)

    # Ctrl-C aborts the reply in progress, not the program
    server.stream_delay = 0.02
    child.sendline("a slow one please")
    child.expect_exact("assistant>")
    child.expect_exact("word20")
    child.sendcontrol("c")
    child.expect_exact(PROMPT)
    aborted = ANSI.sub("", str(child.before))
    assert "word399" not in aborted
    # said once, in one line (the runtime's own "Aborted" notice is not repeated)
    assert aborted.count("reply aborted (what arrived is kept)") == 1, aborted
    assert "• Aborted" not in aborted, aborted
    server.stream_delay = 0.0

    # the runtime's slash commands work; /help lists them and /exit
    screen = ANSI.sub("", _turn(child, "/help"))
    for command in ("/status", "/compact", "/resume", "/new", "/clear", "/prune", "/exit"):
        assert command in screen
    screen = ANSI.sub("", _turn(child, "/status"))
    assert "Context:" in screen and "/ 4k window" in screen
    screen = ANSI.sub("", _turn(child, "/compact"))
    assert "context ▕" in screen
    # a failed call ends the turn, not the chat
    screen = ANSI.sub("", _turn(child, "now break please"))
    assert "error:" in screen and "scripted failure" in screen
    assert "Noted" in _turn(child, "still there?")

    child.sendcontrol("d")
    child.expect_exact("saved")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    # everything was stored: the conversation resumes with its context
    cid = conversation.group(1)
    listed = run_cli("sessions", "show", cid, "--json", env=_env(tmp_path))
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert len(data["sessions"]) >= 2 and data["compactions"]
    child = _spawn(tmp_path, "--resume", cid, ABRIDGED_MODEL=model)
    resumed = ANSI.sub("", str(child.before))
    assert f"resumed conversation {cid}" in resumed and "context ▕" in resumed
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_an_unknown_window_shows_a_grey_meter(tmp_path: Path, server: ProviderServer) -> None:
    # a model the server does not list: no window is known for it
    child = _spawn(
        tmp_path, "--model", f"{server.base_url}/v1#unlisted-model", "--max-output", "1k"
    )
    assert "unknown: pass --window" in ANSI.sub("", str(child.before))
    screen = _turn(child, "hello")
    line = _meter(screen)
    assert "window unknown" in ANSI.sub("", line)
    assert GREEN not in line and AMBER not in line and RED not in line
    child.sendline("/exit")
    child.expect(pexpect.EOF)


def test_meter_colours() -> None:
    assert meter_colour(0, 1000) == "green"
    assert meter_colour(749, 1000) == "green"
    assert meter_colour(750, 1000) == "yellow"
    assert meter_colour(999, 1000) == "yellow"
    assert meter_colour(1000, 1000) == "red"
    text = meter(8_192, 16_384, 9_011)
    assert "8k / 16k (50%)" in text.plain and "trigger 8.8k" in text.plain
    grey = meter(1_000, 8_192, 5_000, known=False)
    assert "window unknown" in grey.plain
    assert {span.style for span in grey.spans} & {"grey50"}


def _quick_starts() -> list[tuple[list[str], dict[str, str]]]:
    """The README's chat quick starts: the ``abridged chat`` line of each and its exports."""
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text("utf-8"), re.S)
    out = []
    for block in blocks:
        if "abridged chat" not in block or "abridged demo" in block:
            continue  # the demo's commands are run by tests/cli/test_demo.py
        env: dict[str, str] = {}
        command: list[str] = []
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["export"]:
                env.update(w.partition("=")[::2] for w in words[1:])
            elif words[:2] == ["abridged", "chat"]:
                command = words
        out.append((command, env))
    return out


QUICK_STARTS = _quick_starts()


def test_the_readme_has_both_chat_quick_starts() -> None:
    assert len(QUICK_STARTS) == 2
    assert QUICK_STARTS[0][1]["ABRIDGED_MODEL"].startswith("openai/")
    assert QUICK_STARTS[1][1]["ABRIDGED_MODEL"].startswith("http://localhost")


@pytest.mark.parametrize(("command", "exports"), QUICK_STARTS, ids=["api-key", "local-server"])
def test_a_readme_quick_start_runs_against_the_local_provider(
    tmp_path: Path, command: list[str], exports: dict[str, str]
) -> None:
    # the README's commands as written; the provider is the local test server instead of the
    # real API (OPENAI_BASE_URL) or of the server at localhost:8000
    model = exports["ABRIDGED_MODEL"]
    name = model.split("#", 1)[1] if "#" in model else model.split("/", 1)[1]
    with ProviderServer(context_window=32_768, max_output=32_768, model=name) as srv:
        env = dict(exports)
        if "OPENAI_API_KEY" in env:
            env.update(OPENAI_API_KEY="test-key", OPENAI_BASE_URL=f"{srv.base_url}/v1")
        else:
            env["ABRIDGED_MODEL"] = model.replace(model.split("#")[0], f"{srv.base_url}/v1")
        child = pexpect.spawn(
            sys.executable,
            ["-m", "abridged", *command[1:]],
            cwd=str(ROOT),
            env=_env(tmp_path, **env),
            encoding="utf-8",
            timeout=30,
            dimensions=(50, 160),
        )
        child.expect_exact(PROMPT)
        assert f"{name} · window 32k (probe)" in ANSI.sub("", str(child.before))
        screen = _turn(child, "hello")
        assert "assistant>" in ANSI.sub("", screen) and GREEN in _meter(screen)
        assert srv.requests[-1].model == name
        child.sendline("/exit")
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0


def test_notices_come_before_the_prompt_each_once_and_resume_tells_sessions_apart(
    tmp_path: Path,
) -> None:
    """Against the demo agent (which writes its own summaries): a background compaction's
    notices are shown before the next prompt, /compact's result once, and /resume lists each
    session by the newest request its summary records, the current one by its own."""
    from abridged.testing.demo_agent import demo_reply

    with ProviderServer(8_192, 2_048, replies=demo_reply, model="demo-agent") as srv:
        child = _spawn(tmp_path, "--model", f"{srv.base_url}/v1#demo-agent")
        screens = [ANSI.sub("", _turn(child, f"write long {n}")) for n in range(1, 8)]
        compacted = [s for s in screens if "Compacted (" in s]
        assert compacted, screens
        # the demo agent writes the summaries itself (the cache-reusing mode): no fallback
        assert not any("failed" in s and "Summarizer" in s for s in screens), screens
        for screen in compacted:  # the notice, then the meter, all before the prompt
            assert screen.index("Compacted (") < screen.index("context ▕")
            assert screen.count("Compacted (") == 1
        manual = ANSI.sub("", _turn(child, "/compact"))
        assert manual.count("Compacted (") + manual.count("Nothing to compact") == 1, manual
        listing = ANSI.sub("", _turn(child, "/resume"))
        gists = re.findall(r"#\d+ \w+ \(\w+\): (.+)", listing)
        assert len(gists) >= 3, listing
        # every session told apart: the current one, which starts from the summary the one
        # before it ended with, by what was asked in it (here nothing yet, after /compact)
        assert len(set(gists)) == len(gists), gists
        assert gists[-1].startswith("(no request yet; starts from #"), gists
        again = ANSI.sub("", _turn(child, "write long 8"))
        assert "context ▕" in again
        listing = ANSI.sub("", _turn(child, "/resume"))
        current = re.search(r"\* #\d+ \w+ \(\w+\): (.+)", listing)
        assert current is not None and current[1].strip() == "write long 8", listing
        child.sendline("/exit")
        child.expect(pexpect.EOF)


def test_library_warnings_are_one_readable_notice_each() -> None:
    import io
    import logging

    from rich.console import Console

    from abridged.cli.chat import _Chat, _NoticeHandler

    console = Console(file=io.StringIO(), width=200)
    chat = _Chat(console, convo=None)  # type: ignore[arg-type]
    log = logging.getLogger("abridged.store.base")
    handler = _NoticeHandler(chat)
    logging.getLogger("abridged").addHandler(handler)
    try:
        for _ in range(3):
            log.warning("background finalisation failed: %s", "the database is locked")
    finally:
        logging.getLogger("abridged").removeHandler(handler)
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert shown.count("• warning: background finalisation failed: the database is locked") == 1


def test_an_event_shown_as_a_notice_is_not_shown_again_as_a_warning() -> None:
    import io
    import logging

    from rich.console import Console

    from abridged.cli.chat import _Chat, _NoticeHandler
    from abridged.engine.compaction import CompactionHooks
    from abridged.events.engine import SummarizerFallback
    from abridged.runtime.tracing import log_event, logged

    console = Console(file=io.StringIO(), width=200)
    chat = _Chat(console, convo=None)  # type: ignore[arg-type]
    handler = _NoticeHandler(chat)
    logging.getLogger("abridged").addHandler(handler)
    try:
        # a compaction's fallback: logged, and passed on to the chat's own on_event
        hooks = logged(CompactionHooks(on_event=chat.on_event), "c1")
        assert hooks.on_event is not None
        hooks.on_event(SummarizerFallback("llm", fallback="extractive", reason="timed out"))
        # a session summary's fallback: only logged, so the chat shows the warning
        log_event(SummarizerFallback("llm", fallback="extractive", reason="refused"), "c1")
    finally:
        logging.getLogger("abridged").removeHandler(handler)
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert shown.count("timed out") == 1, shown
    warnings = [line for line in shown.splitlines() if "• warning:" in line]
    assert len(warnings) == 1 and "refused" in warnings[0], shown
