"""Watching the proxy: one log line per request (what the app sent, what went upstream, what
abridged did), ``--log-level``, the index page read from the store, forks shown as forks with
their parent, and a fork that starts from its parent's summary. Real HTTP through the official
SDKs, the proxy under uvicorn, the local provider with an 8k window."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from abridged.core.budget import format_token_size
from abridged.server.logs import JsonFormatter
from abridged.store import Store
from abridged.testing import ProviderServer
from tests.server.conftest import free_port
from tests.server.test_page import _shot, browser_page  # noqa: F401 (a fixture)
from tests.server.test_proxy import (
    KEY,
    WINDOW,
    always_a_tool_call,
    config_for,
    openai_steps,
    proxying,
)
from tests.serving import wait_until_healthy


@pytest.fixture
def provider() -> Iterator[ProviderServer]:
    with ProviderServer(
        context_window=WINDOW, max_output=1_024, replies=always_a_tool_call
    ) as server:
        yield server


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def request_lines(level: int = logging.INFO) -> Iterator[list[dict[str, Any]]]:
    """The proxy's request lines as the JSON formatter writes them (a handler on the proxy's
    logger itself: whatever another test made of the ``abridged`` logger's propagation)."""
    logger = logging.getLogger("abridged.proxy")
    handler = _Lines()
    before = logger.level
    logger.addHandler(handler)
    logger.setLevel(level)
    out: list[dict[str, Any]] = []
    try:
        yield out
    finally:
        logger.removeHandler(handler)
        logger.setLevel(before)
        formatter = JsonFormatter()
        out += [json.loads(formatter.format(r)) for r in handler.records if hasattr(r, "action")]


def test_every_request_is_one_line_saying_what_abridged_did(
    provider: ProviderServer, tmp_path: Path
) -> None:
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Read every record."},
    ]
    with request_lines() as lines, proxying(config_for(provider, tmp_path / "l.db")) as base:
        client = openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
        openai_steps(client, history, 40)
        httpx.get(base + "/v1/models", headers={"authorization": f"Bearer {KEY}"})
        logging.getLogger("abridged.proxy").setLevel(logging.WARNING)  # the log off: no line
        openai_steps(client, history, 1, start=41)
    requests = provider.requests
    managed = [line for line in lines if line["path"] == "/v1/chat/completions"]
    assert len(managed) == 40 and len(requests) == 41
    for line, sent in zip(managed, requests, strict=False):
        assert line["method"] == "POST" and line["api"] == "openai-chat"
        assert line["conversation_id"].startswith("px-") and line["status"] == 200
        assert line["messages_sent"] == len(sent.body["messages"])
        assert line["added_ms"] >= 0
        if not sent.stream:  # a JSON answer carries the provider's usage: its own count
            assert line["tokens_sent"] == sent.prompt_tokens
    first = managed[0]
    assert first["action"] == "passed" and first["messages_app"] == first["messages_sent"] == 2
    assert first["tokens_app"] == first["tokens_sent"]
    actions = {line["action"] for line in managed}
    assert actions & {"compacted", "pruned", "compacted+pruned"}, actions
    last = managed[-1]
    assert last["messages_app"] == len(history) - 4  # before the last two steps' replies
    assert last["messages_app"] > last["messages_sent"]
    assert last["tokens_app"] > WINDOW > last["tokens_sent"]
    listing = [line for line in lines if line["path"] == "/v1/models"]
    assert listing == [
        {**listing[0], "action": "passthrough", "api": "other", "status": 200, "method": "GET"}
    ]
    assert "->" in listing[0]["msg"] or "passthrough" in listing[0]["msg"]
    text = json.dumps(lines)
    assert KEY not in text and "Read every record" not in text and "alpha bravo" not in text


def test_the_proxy_command_logs_a_json_line_per_request_at_its_log_level(
    provider: ProviderServer, tmp_path: Path
) -> None:
    port = free_port()
    command = [
        sys.executable, "-m", "abridged", "proxy", "--upstream", provider.base_url,
        "--window", "8192", "--db", str(tmp_path / "cmd.db"), "--port", str(port),
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    proc = subprocess.Popen(
        [*command, "--log-level", "info"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_healthy(proc, f"http://127.0.0.1:{port}")
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, max_retries=0)
        history: list[dict[str, Any]] = [{"role": "user", "content": "Read every record."}]
        openai_steps(client, history, 3)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    lines = [json.loads(x) for x in err.splitlines() if x.startswith("{")]
    managed = [x for x in lines if x.get("path") == "/v1/chat/completions"]
    assert len(managed) == 3, err
    assert all(x["level"] == "info" and x["logger"] == "abridged.proxy" for x in managed)
    assert managed[0]["action"] == "passed" and managed[0]["messages_app"] == 1
    assert KEY not in err
    bad = subprocess.run(
        [*command, "--log-level", "loud"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2 and "log_level" in bad.stderr


async def _compactions_of_fork(db: Path) -> tuple[str, list[Any], list[Any], dict[str, Any]]:
    store = Store(str(db))
    try:
        forks = [c for c in await store.list_conversations() if c.id.endswith("-f1")]
        assert len(forks) == 1
        fork = forks[0]
        parent = fork.id.removesuffix("-f1")
        return (
            parent,
            await store.compactions(parent),
            await store.compactions(fork.id),
            dict(fork.settings.get("forked", {})),
        )
    finally:
        await store.close()


def test_a_fork_starts_from_its_parents_summary_and_compacts_as_usual(
    provider: ProviderServer, tmp_path: Path
) -> None:
    """The app edits its newest tool output after 30 steps (the parent compacted twice): the
    fork holds the shared messages and the parent's summary, its first request is the
    parent's context with the edit, and its first compaction of its own is an ordinary one that
    updates that summary (not the emergency path over the whole history)."""
    db = tmp_path / "f.db"
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Read every record."},
    ]
    with request_lines() as lines, proxying(config_for(provider, db)) as base:
        client = openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
        openai_steps(client, history, 30)
        before = len(provider.requests)
        # the newest tool output the proxy has seen (the last step's are not sent yet)
        assert history[-3]["role"] == "tool"
        history[-3] = {**history[-3], "content": "record edited: nothing here"}
        shared = len(history) - 4  # after the system prompt, before the edited one
        openai_steps(client, history, 30, start=30)
    parent, parent_done, fork_done, forked = asyncio.run(_compactions_of_fork(db))
    assert len(parent_done) >= 2
    inherited, own = fork_done[0], fork_done[1]
    assert inherited.record.trigger == "fork"
    assert forked == {"from": parent, "shared": shared}
    assert inherited.record.summary.text == parent_done[-1].record.summary.text
    assert own.record.trigger == "tokens", own.record
    assert "emergency" not in own.record.summary.meta
    assert own.record.tokens_before < WINDOW  # not the whole history (25k+) again
    count = parent_done[-1].record.summary.meta["compactions"]
    assert own.record.summary.meta["compactions"] == count + 1  # an update of the parent's
    fork_requests = provider.requests[before:]
    assert all(r.status == 200 for r in fork_requests)
    # the fork's first context opens as the parent's last one did: system, the pinned task,
    # the parent's summary (the provider's prompt cache still holds that prefix)
    first, last = fork_requests[0].body["messages"], provider.requests[before - 1].body["messages"]
    assert first[:3] == last[:3]
    assert parent_done[-1].record.summary.text[:200] in first[2]["content"]
    fork_lines = [x for x in lines if x["conversation_id"] != parent]
    assert len(fork_lines) == 30 and "recovered" not in {x["action"] for x in fork_lines}


def test_the_index_lists_the_conversations_and_forks_after_a_restart(
    provider: ProviderServer,
    tmp_path: Path,
    browser_page: object,  # noqa: F811 (the fixture imported above)
) -> None:
    """Chromium on the proxy's index: a conversation and its fork, read from the store after a
    restart (no request since), the fork linked to its parent, each with its last request as
    the store kept it; the meter page of the fork names the summary it inherited; after a
    request, the row shows it."""
    from playwright.sync_api import Page, expect

    page: Page = browser_page  # type: ignore[assignment]
    db = tmp_path / "ix.db"
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Read every record."},
    ]
    with proxying(config_for(provider, db)) as base:
        client = openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
        openai_steps(client, history, 24)
        history[-3] = {**history[-3], "content": "record edited: nothing here"}
        openai_steps(client, history, 4, start=24)
    # a restart: nothing in memory; the request log on (a request's own sizes are kept)
    with request_lines(), proxying(config_for(provider, db)) as base:
        page.goto(base + "/")
        rows = page.get_by_test_id("conversation-row")
        expect(rows).to_have_count(2)
        fork = page.locator("tr[data-id$='-f1']")
        parent_id = (fork.get_attribute("data-id") or "").removesuffix("-f1")
        expect(fork.get_by_test_id("fork-of")).to_contain_text(f"fork of {parent_id}")
        parent = page.locator(f"tr[data-id='{parent_id}']")
        expect(parent.get_by_test_id("continues-as")).to_contain_text(parent_id + "-f1")
        expect(fork.get_by_test_id("meter")).to_contain_text("of 8k")
        # the last request of each, kept in the store: the provider's count and the action
        expect(fork.get_by_test_id("meter")).to_contain_text("last request")
        expect(fork.locator("meter")).to_have_count(1)
        expect(fork.get_by_test_id("last-action")).to_contain_text(", 200 at ")
        expect(parent.get_by_test_id("meter")).to_contain_text("last request")
        expect(parent).to_contain_text("tokens")  # its last compaction's trigger
        _shot(page, "proxy-index")
        fork.get_by_role("link", name=parent_id + "-f1").first.click()
        expect(page.get_by_role("heading", level=1)).to_contain_text(parent_id + "-f1")
        expect(page.get_by_test_id("compactions")).to_contain_text(
            f"fork (the summary of {parent_id})"
        )
        expect(page.get_by_test_id("meter")).to_contain_text("last request")
        _shot(page, "proxy-fork")
        # a request after the restart: the index shows it as the fork's last action
        client = openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
        openai_steps(client, history, 1, start=28)
        page.goto(base + "/")
        fork = page.locator("tr[data-id$='-f1']")
        expect(fork.get_by_test_id("meter")).to_contain_text("last request")
        expect(fork).to_contain_text(", 200 at ")


def test_the_closing_check_65_steps_a_restart_and_a_fork_seen_in_the_log_and_the_index(
    provider: ProviderServer, tmp_path: Path
) -> None:
    """Issue 28's closing check, as a person would watch it: 65 steps of an agent keeping its
    whole history, through the official OpenAI SDK, in an 8k window; the proxy restarted after
    30 (same store); after 35 the app drops the newest step it sent (a fork). The log has one
    line per request saying what abridged did; the index, read from the store, shows the meter
    and the fork as a fork of its parent, and after another restart each one's last request."""
    db = tmp_path / "closing.db"
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Read every record."},
    ]
    with request_lines() as lines:
        with proxying(config_for(provider, db)) as base:
            client = openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
            openai_steps(client, history, 30)
        with proxying(config_for(provider, db)) as base:  # restarted: nothing in memory
            client = openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
            openai_steps(client, history, 5, start=30)
            # the newest step the proxy has seen (the last step's reply is not sent yet)
            assert [m["role"] for m in history[-4:]] == ["assistant", "tool"] * 2
            del history[-4:-2]
            openai_steps(client, history, 30, start=35)
            index = httpx.get(base + "/").text
    requests = provider.requests
    managed = [line for line in lines if line["path"] == "/v1/chat/completions"]
    assert len(managed) == len(requests) == 65  # one line per request, none other
    for line, sent in zip(managed, requests, strict=True):
        assert line["status"] == sent.status == 200
        assert line["messages_sent"] == len(sent.body["messages"])
    parent = managed[0]["conversation_id"]
    assert {line["conversation_id"] for line in managed[:35]} == {parent}  # the restart too
    assert {line["conversation_id"] for line in managed[35:]} == {parent + "-f1"}
    actions = [line["action"] for line in managed]
    assert actions[0] == "passed"
    assert any("compacted" in a for a in actions) and any("pruned" in a for a in actions)
    assert "recovered" not in actions  # the fork built on its parent's summary
    last = managed[-1]
    assert last["messages_app"] == len(history) - 2 > last["messages_sent"]
    assert last["tokens_app"] > 3 * WINDOW and last["tokens_sent"] < WINDOW
    assert max(r.prompt_tokens for r in requests) <= WINDOW - 1_024
    text = json.dumps(lines)
    assert KEY not in text and "Read every record" not in text
    # the index: both conversations with their meters, the fork said to be one
    assert index.count("data-testid='conversation-row'") == 2
    assert f"fork of <a href='/abridged/conversations/{parent}'>{parent}</a>" in index
    assert "continues as" in index and index.count("of 8k") >= 2
    # restarted once more, no request since: each row's meter and last action are its last
    # request's, as the store kept them
    with proxying(config_for(provider, db)) as base:
        restarted = httpx.get(base + "/").text
    for cid, line in ((parent, managed[34]), (parent + "-f1", managed[-1])):
        start = restarted.index(f"data-id='{cid}'")
        row = restarted[start : restarted.index("</tr>", start)]
        assert f"{format_token_size(line['tokens_sent'])} of 8k" in row, row
        assert "last request" in row and f"{line['action']}, 200 at " in row


def test_the_index_shows_the_meter_after_a_restart_when_the_window_is_looked_up(
    provider: ProviderServer, tmp_path: Path
) -> None:
    """No ``--window``: the proxy looks the model's window up (the provider's ``/models``) at
    its first request. After a restart, before any request, the index still shows each
    conversation's meter against that window: the last request keeps the window it was sized
    to."""
    db = tmp_path / "lookup.db"
    config = config_for(provider, db, context_window=None, max_output_tokens=None)
    history: list[dict[str, Any]] = [{"role": "user", "content": "Read every record."}]
    with request_lines() as lines, proxying(config) as base:
        client = openai.OpenAI(base_url=base + "/v1", api_key=KEY, max_retries=0)
        openai_steps(client, history, 3)
    assert [line["window"] for line in lines] == [WINDOW] * 3
    with proxying(config) as base:  # restarted: no window looked up in this process
        index = httpx.get(base + "/").text
    row = index[index.index("data-testid='conversation-row'") :]
    row = row[: row.index("</tr>")]
    sent = format_token_size(lines[-1]["tokens_sent"])
    assert f"{sent} of {format_token_size(WINDOW)}" in row and "<meter" in row, row
