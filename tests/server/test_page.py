"""The web page in a real browser: Debian's chromium driven by Playwright over the service on
loopback (SQLite, the local provider as the model, no API keys)."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from abridged.testing import ProviderServer
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
    if not CHROMIUM.exists():
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
