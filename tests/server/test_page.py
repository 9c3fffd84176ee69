"""The web page in a real browser: Debian's chromium driven by Playwright over the service on
loopback (SQLite, the local provider as the model, no API keys)."""

from __future__ import annotations

import math
import os
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from abridged.testing import ProviderServer, Reply
from tests.needs import missing
from tests.server.conftest import service_config, serving

# Debian's, or where ABRIDGED_CHROMIUM says (scripts/install-system-deps.sh looks there too)
CHROMIUM = Path(os.environ.get("ABRIDGED_CHROMIUM") or "/usr/bin/chromium")
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def browser_page() -> Iterator[object]:
    """A page of a fresh headless chromium (skipped without chromium, failed under CI)."""
    if not os.access(CHROMIUM, os.X_OK):  # as the install script's `-x`
        missing("Chromium", f"no {CHROMIUM} (scripts/install-system-deps.sh installs Debian's)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with (
        tempfile.TemporaryDirectory(prefix="abridged-chromium-") as profile,
        sync_api.sync_playwright() as p,
    ):
        context = p.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), args=BROWSER_ARGS, headless=True,
            viewport={"width": 1280, "height": 860},
        )  # fmt: skip
        # Playwright's waits (5 s for an expect, 30 s for an action) are guards against
        # hanging, not bounds: a busy machine took longer than 5 s to show a streamed reply
        sync_api.expect.set_options(timeout=60_000)
        context.set_default_timeout(120_000)
        try:
            yield context.new_page()
        finally:
            context.close()


def test_the_page_streams_shows_the_ring_compacts_and_survives_a_reload(
    browser_page: object, provider: ProviderServer, tmp_path: Path
) -> None:
    from playwright.sync_api import Page, expect

    page: Page = browser_page  # type: ignore[assignment]
    config = service_config(str(tmp_path / "page.db"), provider, open_access=True)
    with serving(config) as base:
        origin = urlsplit(base).netloc
        hosts: set[str] = set()
        page.on("request", lambda r: hosts.add(urlsplit(r.url).netloc))
        page.goto(base + "/")
        page.get_by_test_id("new-conversation").click()
        expect(page.get_by_test_id("conversation")).to_have_count(1)
        expect(page.get_by_test_id("input")).to_be_enabled()
        expect(page.get_by_test_id("ring")).to_have_attribute("data-state", "green")

        # a turn: tool calls stream in, then the reply with its statistics. Each model call
        # takes 0.3 s, so that the live items are seen before the turn ends and the timeline is
        # drawn again from the stored messages (a turn against an instant provider ends first)
        provider.latency = 0.3
        page.get_by_test_id("input").fill("Read the records, please.")
        page.get_by_test_id("send").click()
        expect(page.get_by_test_id("tool-started").first).to_be_visible(timeout=20_000)
        expect(page.get_by_text(re.compile(r"^Done: \d+ results read"))).to_be_visible(
            timeout=20_000
        )
        expect(page.get_by_test_id("stats").last).to_contain_text("first token")
        expect(page.get_by_test_id("tool-result")).to_have_count(3)

        # the ring changes colour when the trigger comes down (settings form, no auto compaction)
        page.get_by_test_id("toggle-settings").click()
        form = page.locator("#settings-form")
        form.locator("input[name=auto_compact]").uncheck()
        form.locator("input[name=trigger]").fill("0.9")
        form.locator("input[name=target]").fill("0.95")
        page.get_by_test_id("save-settings").click()
        expect(page.get_by_test_id("settings-error")).to_contain_text("target")
        form.locator("input[name=trigger]").fill("0.2")
        form.locator("input[name=target]").fill("0.1")
        page.get_by_test_id("save-settings").click()
        expect(page.get_by_test_id("settings")).to_be_hidden()
        expect(page.get_by_test_id("ring")).to_have_attribute("data-state", "red")
        tip = page.get_by_test_id("ring-tip").text_content() or ""
        assert "compaction at" in tip and "reported by the provider" in tip

        # compact: the dry run's preview first, then the confirmation, then the summary card
        page.get_by_test_id("compact").click()
        expect(page.get_by_test_id("compact-panel")).to_be_visible()
        expect(page.get_by_test_id("compact-table")).to_contain_text("before")
        expect(page.get_by_test_id("compaction")).to_have_count(0)
        page.get_by_test_id("compact-confirm").click()
        expect(page.get_by_test_id("compaction")).to_have_count(1, timeout=20_000)
        page.get_by_test_id("compaction").locator("summary").click()
        expect(page.get_by_test_id("summary-card")).to_contain_text("read_record")
        expect(page.get_by_test_id("ring")).not_to_have_attribute("data-state", "red")

        # a reload finds it all again
        url = page.url
        page.goto(url)
        page.reload()
        expect(page.get_by_test_id("conversation")).to_have_count(1)
        expect(page.get_by_test_id("compaction")).to_have_count(1)
        expect(page.get_by_text(re.compile(r"^Done: \d+ results read"))).to_be_visible()
        expect(page.get_by_test_id("message").first).to_contain_text("Read the records")
        assert hosts == {origin}, f"the page asked other hosts: {hosts - {origin}}"


#: Where the page tests leave their screenshots (an artefact of the run; build/ is not tracked).
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


def _shot(page: object, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)  # type: ignore[attr-defined]


def test_commands_errors_markdown_titles_and_conversation_actions(
    browser_page: object, provider: ProviderServer, tmp_path: Path
) -> None:
    """Slash commands are handled by the page (nothing reaches the model); a model error stays
    where the turn failed after the timeline is drawn again; replies render as sanitized
    Markdown; the first message names the conversation; rename, system prompt, sessions and
    delete work; the ring shows the share of the window, as the CLI does."""
    from playwright.sync_api import Page, expect

    page: Page = browser_page  # type: ignore[assignment]
    replies = iter(
        [
            Reply('Here is **bold** and `code`.\n\n<img src=x onerror="window.pwned=1">'),
            Reply(error=(400, {"error": {"message": "scripted refusal: quota exceeded"}})),
        ]
    )
    provider.set_replies(lambda _request: next(replies, Reply("fine")))
    config = service_config(str(tmp_path / "page.db"), provider, open_access=True)
    with serving(config) as base:
        page.goto(base + "/")
        page.get_by_test_id("new-conversation").click()
        expect(page.get_by_test_id("input")).to_be_enabled()
        page.get_by_test_id("input").fill("Tell me about Markdown rendering")
        page.get_by_test_id("send").click()
        expect(page.locator(".markdown-body strong")).to_have_text("bold")
        assert page.locator(".markdown-body img[onerror]").count() == 0
        assert page.evaluate("window.pwned") is None
        # the first message names the conversation
        expect(page.get_by_test_id("title")).to_have_text("Tell me about Markdown rendering")
        expect(page.get_by_test_id("conversation")).to_have_text("Tell me about Markdown rendering")
        # the ring: the share of the window (8k), as the CLI's meter. The service's figure
        # changes when the title's PATCH (sent beside the turn) lands: the conversation is read
        # again, its size an estimate, no longer the provider's report. Read until the page's
        # figure is the service's, not once while either may still change.
        expect(page.get_by_test_id("send")).to_be_enabled()
        context = httpx.get(base + "/v1/conversations").json()[0]["id"]
        label = page.get_by_test_id("ring-label")
        deadline = time.monotonic() + 60  # a guard against hanging, not a bound
        while (shown := label.text_content()) != (share := _ring_share(base, context)):
            assert time.monotonic() < deadline, (shown, share)
            page.wait_for_timeout(100)

        # a model error is shown where the turn failed, with its cause, and stays there
        page.get_by_test_id("input").fill("this one fails")
        page.get_by_test_id("send").click()
        error = page.locator(".event.error")
        expect(error).to_contain_text("scripted refusal")
        expect(error).to_have_count(1)
        _shot(page, "page-error-and-markdown")

        # slash commands never reach the model
        sent = len(provider.requests)
        for command, expected in (
            ("/status", "Context:"),
            ("/help", "/resume"),
            ("/resume", "Sessions"),
            ("/system You answer in French.", "System prompt set."),
            ("/system", "You answer in French."),
        ):
            page.get_by_test_id("input").fill(command)
            page.get_by_test_id("send").click()
            expect(page.get_by_test_id("command-result").last).to_contain_text(expected)
        page.get_by_test_id("input").fill("/frobnicate")
        page.get_by_test_id("send").click()
        expect(page.locator(".event.error").last).to_contain_text("Unknown command /frobnicate")
        assert len(provider.requests) == sent
        expect(page.get_by_test_id("sessions-panel")).to_be_visible()
        expect(page.get_by_test_id("session")).to_have_count(1)
        page.get_by_test_id("input").fill("/new")
        page.get_by_test_id("send").click()
        expect(page.get_by_test_id("session")).to_have_count(2)
        # what the page showed stays where it was when the timeline is drawn again
        expect(page.get_by_test_id("command-result")).to_have_count(5)
        expect(page.locator(".event.error")).to_have_count(2)
        box = page.locator(".event.error").first.bounding_box()
        assert box is not None and box.get("height", 0) < 100  # a line or two, not a panel
        _shot(page, "page-commands-and-sessions")

        # rename, then delete (the page asks first)
        page.get_by_test_id("input").fill("/rename Markdown notes")
        page.get_by_test_id("send").click()
        expect(page.get_by_test_id("conversation")).to_have_text("Markdown notes")
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_test_id("delete").click()
        expect(page.get_by_test_id("conversation")).to_have_count(0)
        assert httpx.get(base + "/v1/conversations").json() == []


def _ring_share(base: str, conversation_id: str) -> str:
    """The ring's label for the service's figure now (rounded as the page's ``Math.round``:
    half up, where Python's ``round`` makes 12.5 12)."""
    context = httpx.get(f"{base}/v1/conversations/{conversation_id}/context").json()
    return f"{math.floor(100 * context['tokens']['total'] / context['window'] + 0.5)}%"


def test_the_api_docs_load_from_the_service_itself(
    browser_page: object, provider: ProviderServer, tmp_path: Path
) -> None:
    from playwright.sync_api import Page, expect

    page: Page = browser_page  # type: ignore[assignment]
    config = service_config(str(tmp_path / "docs.db"), provider, open_access=True)
    with serving(config) as base:
        origin = urlsplit(base).netloc
        hosts: set[str] = set()
        page.on("request", lambda r: hosts.add(urlsplit(r.url).netloc))
        page.goto(base + "/docs")
        expect(page.locator(".opblock").first).to_be_visible(timeout=20_000)
        expect(page.get_by_text("/v1/conversations/{conversation_id}/compact")).to_be_visible()
        _shot(page, "api-docs")
        assert hosts <= {origin, ""}, f"the docs asked other hosts: {hosts - {origin}}"


def test_the_inspector_shows_what_each_call_sent(
    browser_page: object, provider: ProviderServer, tmp_path: Path
) -> None:
    """Every call of a turn with what it sent, part by part; the same after a restart."""
    from playwright.sync_api import Page, expect

    page: Page = browser_page  # type: ignore[assignment]
    config = service_config(str(tmp_path / "inspect.db"), provider, open_access=True)
    with serving(config) as base:
        page.goto(base + "/")
        page.get_by_test_id("new-conversation").click()
        expect(page.get_by_test_id("input")).to_be_enabled()
        page.get_by_test_id("input").fill("Read the records, please.")
        page.get_by_test_id("send").click()
        expect(page.get_by_text(re.compile(r"^Done: \d+ results read"))).to_be_visible(
            timeout=20_000
        )
        # the turn has ended and the timeline was drawn again from the store
        expect(page.get_by_test_id("streaming-reply")).to_have_count(0, timeout=20_000)
        expect(page.get_by_test_id("send")).to_be_enabled()
        page.get_by_test_id("inspect").click()
        calls = page.get_by_test_id("call")
        expect(calls).to_have_count(len(provider.requests))
        calls.last.click()
        sent = page.get_by_test_id("sent-message")
        expect(sent).to_have_count(len(provider.requests[-1].messages))
        expect(sent.first).to_have_attribute("data-section", "kept")  # no system prompt here
        sent.last.locator("summary").click()
        expect(page.get_by_test_id("call-detail")).to_contain_text("→ read_record")
        _shot(page, "page-inspector")
    # a restart of the service: the inspector reads the calls from the store
    made = len(provider.requests)
    with serving(config) as base:
        page.goto(base + "/")
        page.get_by_test_id("conversation").first.click()
        expect(page.get_by_test_id("input")).to_be_enabled()
        page.get_by_test_id("inspect").click()
        expect(page.get_by_test_id("call")).to_have_count(made)
        page.get_by_test_id("call").last.click()
        expect(page.get_by_test_id("sent-message")).to_have_count(
            len(provider.requests[-1].messages)
        )
        _shot(page, "page-inspector-after-restart")


def test_without_a_default_model_new_asks_for_one(
    browser_page: object, provider: ProviderServer, tmp_path: Path
) -> None:
    from playwright.sync_api import Page, expect

    page: Page = browser_page  # type: ignore[assignment]
    model = provider.base_url + "/v1#gpt-test"
    config = service_config(str(tmp_path / "nomodel.db"), provider, open_access=True, models=())
    with serving(config) as base:
        page.goto(base + "/")
        asked: list[str] = []

        def answer(dialog: object) -> None:
            asked.append(dialog.message)  # type: ignore[attr-defined]
            dialog.accept(model)  # type: ignore[attr-defined]

        page.once("dialog", answer)
        page.get_by_test_id("new-conversation").click()
        expect(page.get_by_test_id("conversation")).to_have_count(1)
        expect(page.get_by_test_id("input")).to_be_enabled()
        assert asked and "no default model" in asked[0]
        assert httpx.get(base + "/v1/conversations").json()[0]["model"] == model


def test_the_model_is_chosen_per_conversation_in_the_page(
    browser_page: object, provider: ProviderServer, tmp_path: Path
) -> None:
    """The header's selector lists the service's models; a choice is kept by the conversation
    (a reload shows it) and the next turn goes to that model, each reply naming the model that
    answered it; a model the service refuses is said beside the selector, which keeps the model
    in use."""
    from playwright.sync_api import Page, expect

    page: Page = browser_page  # type: ignore[assignment]
    models = (provider.base_url + "/v1#gpt-test", provider.base_url + "/v1#gpt-other")
    config = service_config(str(tmp_path / "models.db"), provider, open_access=True, models=models)
    with serving(config) as base:
        page.goto(base + "/")
        page.get_by_test_id("new-conversation").click()
        expect(page.get_by_test_id("input")).to_be_enabled()
        select = page.get_by_test_id("model")
        expect(select).to_be_enabled()
        expect(select).to_have_value(models[0])
        expect(select.locator("option")).to_have_count(2)
        done = page.get_by_text(re.compile(r"^Done: \d+ results read"))
        page.get_by_test_id("input").fill("Which model answers first?")
        page.get_by_test_id("send").click()
        expect(done).to_have_count(1)
        before = len(provider.requests)
        assert {r.model for r in provider.requests} == {"gpt-test"}
        select.select_option(models[1])
        expect(page.get_by_test_id("command-result").last).to_contain_text("gpt-other")
        page.get_by_test_id("input").fill("Which model answers now?")
        page.get_by_test_id("send").click()
        expect(done).to_have_count(2)
        assert {r.model for r in provider.requests[before:]} == {"gpt-other"}
        # each reply says which model answered it (the page's own timeline, after a reload too)
        stats = page.locator("li.msg.assistant:has-text('Done:') [data-testid='stats']")
        expect(stats.first).to_contain_text("gpt-test · in ")
        expect(stats.last).to_contain_text("gpt-other · in ")
        cid = httpx.get(base + "/v1/conversations").json()[0]["id"]
        assert httpx.get(f"{base}/v1/conversations/{cid}").json()["model"] == models[1]

        # refused: the reason beside the selector, the model in use unchanged
        page.get_by_test_id("input").fill("/model foo/bar")
        page.get_by_test_id("send").click()
        expect(page.get_by_test_id("model-error")).to_contain_text("one of:")
        expect(select).to_have_value(models[1])
        _shot(page, "page-model-choice")
        page.reload()
        expect(page.get_by_test_id("model")).to_have_value(models[1])
        expect(page.get_by_test_id("model-error")).to_have_text("")
        expect(stats.first).to_contain_text("gpt-test · in ")
        expect(stats.last).to_contain_text("gpt-other · in ")
        assert httpx.get(f"{base}/v1/conversations/{cid}").json()["model"] == models[1]
