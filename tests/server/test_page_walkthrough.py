"""The page as a person first meets it, in Chromium, against the demo agent (``abridged demo``'s
model: it reads records and writes long answers, and summarizes when asked): what a first visit
says, a conversation through a background compaction (its card, the sessions panel and the ring
following without a reload), the inspector on the call after it (pinned task, summary, kept
tail), and the export. Screenshots in build/screenshots/."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx

from abridged.testing import ProviderServer
from abridged.testing.demo_agent import demo_reply
from tests.server.conftest import free_port, service_config, serving
from tests.server.test_page import _shot, browser_page  # noqa: F401 (a fixture)


def test_a_first_conversation_through_a_compaction_the_inspector_and_the_export(
    browser_page: object,  # noqa: F811 (the fixture imported above)
    provider: ProviderServer,
    tmp_path: Path,
) -> None:
    from playwright.sync_api import Page, Route, expect

    page: Page = browser_page  # type: ignore[assignment]
    provider.set_replies(demo_reply)
    config = service_config(str(tmp_path / "walk.db"), provider, open_access=True)
    with serving(config) as base:
        page.goto(base + "/")
        # a first visit says how to start, naming the model New will use
        welcome = page.get_by_test_id("welcome")
        expect(welcome).to_contain_text("Press New to start a conversation with gpt-test")
        page.get_by_test_id("new-conversation").click()
        expect(page.get_by_test_id("input")).to_be_enabled()
        expect(welcome).to_have_count(0)
        expect(page.get_by_test_id("session")).to_have_count(1)

        # turns until a compaction ran (in the background, after a turn's stream): its card,
        # a second session in the panel and the ring follow without a reload
        asks = iter(
            ["Find the records about invoices"]
            + [f"Write a long essay, part {n}" for n in range(1, 12)]
        )
        for ask in asks:
            page.get_by_test_id("input").fill(ask)
            page.get_by_test_id("send").click()
            expect(page.get_by_test_id("send")).to_be_enabled(timeout=60_000)
            cid = page.evaluate("state.id")
            if httpx.get(f"{base}/v1/conversations/{cid}/context").json()["compactions"]:
                break
        else:
            raise AssertionError("no compaction in 12 turns")
        expect(page.get_by_test_id("compaction")).to_have_count(1)
        expect(page.get_by_test_id("session")).to_have_count(2)
        context = httpx.get(f"{base}/v1/conversations/{cid}/context").json()
        share = round(100 * context["tokens"]["total"] / context["window"])
        expect(page.get_by_test_id("ring-label")).to_have_text(f"{share}%")

        # the sessions panel tells them apart as the chat's /resume does: the finished one by
        # the newest request its summary records, the current one by what was asked in it.
        # (The turn's tool results may set off the next compaction in the background: then a
        # third session follows, and the second is labelled by the same request.)
        page.get_by_test_id("input").fill("Search for the refunds")
        page.get_by_test_id("send").click()
        expect(page.get_by_test_id("send")).to_be_enabled(timeout=60_000)
        sessions = page.get_by_test_id("session")
        expect(sessions.nth(1)).to_have_text("#2 compaction · Search for the refunds")
        expect(sessions.first).to_contain_text("#1 start · Write a long essay, part")
        listed = httpx.get(f"{base}/v1/conversations/{cid}/sessions").json()
        assert [s["gist"] for s in listed][1] == "Search for the refunds"

        # the inspector on the newest call: what it sent, part by part, the summary among it
        page.get_by_test_id("inspect").click()
        calls = page.get_by_test_id("call")
        made = httpx.get(f"{base}/v1/conversations/{cid}/calls").json()
        assert len(made) > 3  # the turns' calls (the summarizer's are not the conversation's)
        expect(calls).to_have_count(len(made))
        calls.last.click()
        # what it sent is brought into view (below the table, in the panel's own scroll)
        expect(page.get_by_test_id("call-detail").locator("h2")).to_be_in_viewport(ratio=1)
        sent = page.get_by_test_id("sent-message")
        expect(sent.first).to_have_attribute("data-section", "pinned")
        expect(page.locator("[data-testid='sent-message'][data-section='summary']")).to_have_count(
            1
        )
        expect(sent.last).to_have_attribute("data-section", "kept")
        summary = page.locator("[data-testid='sent-message'][data-section='summary']")
        summary.locator("summary").click()
        expect(summary).to_contain_text("Find the records about invoices")
        page.get_by_test_id("inspector").scroll_into_view_if_needed()
        _shot(page, "page-conversation-with-compaction-and-inspector")
        page.get_by_test_id("inspect").click()  # closed again: the timeline with its card
        first_card = page.get_by_test_id("compaction").first  # a second may follow (above)
        first_card.locator("summary").click()
        first_card.scroll_into_view_if_needed()
        page.screenshot(path=str(_screenshots() / "page-compaction-card.png"))

        # the export: a JSON file of everything said, the compacted part too
        with page.expect_download() as download:
            page.get_by_test_id("export").click()
        exported = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
        texts = json.dumps(exported)
        assert "Find the records about invoices" in texts and "Search for the refunds" in texts
        expect(page.get_by_test_id("command-result").last).to_contain_text(
            re.compile(r"Exported to conversation-\w+\.json")
        )

        # Compact: the engine's dry run first (the summary it would make, not the ceiling);
        # the model summarizes this conversation, so the page says the size is an estimate
        page.get_by_test_id("compact").click()
        expect(page.get_by_test_id("compact-panel")).to_be_visible()
        expect(page.get_by_test_id("compact-text")).to_contain_text("the model writes its own")
        _shot(page, "page-compaction-preview")
        page.get_by_test_id("compact-cancel").click()
        # with the extractive summarizer (Settings), the compaction is the one promised
        # (the form takes no change before the stored settings are in: the test holds them)
        held: list[Route] = []
        page.route(
            "**/v1/conversations/*/settings",
            lambda route: (
                held.append(route) if route.request.method == "GET" else route.continue_()
            ),
        )
        page.get_by_test_id("toggle-settings").click()
        while not held:  # waits for the request, bounds nothing
            page.wait_for_timeout(20)
        summarizer = page.locator("#settings-form select[name=summarizer]")
        expect(summarizer).to_be_disabled()
        expect(page.get_by_test_id("save-settings")).to_be_disabled()
        held[0].continue_()
        page.unroute("**/v1/conversations/*/settings")
        expect(summarizer).to_have_value("model")
        summarizer.select_option("extractive")
        page.get_by_test_id("save-settings").click()
        expect(page.get_by_test_id("settings")).to_be_hidden()
        cards = page.get_by_test_id("compaction")
        made = cards.count()
        page.get_by_test_id("compact").click()
        expect(page.get_by_test_id("compact-panel")).to_be_visible()
        expect(page.get_by_test_id("compact-text")).not_to_contain_text("writes its own")
        total = page.get_by_test_id("compact-table").locator("tr", has_text="total")
        promised = _tokens(total.locator("td").nth(2).text_content() or "")
        page.get_by_test_id("compact-confirm").click()
        expect(cards).to_have_count(made + 1)
        card = cards.last.locator("summary").text_content() or ""
        assert "(manual)" in card, card
        got = _tokens(card.split("→")[1].split("(")[0])
        assert abs(promised - got) <= max(100, promised // 10), (promised, got, card)


def _tokens(shown: str) -> int:
    """A size as the page prints it ("2.3k" = 2.3 x 1,024, "807") in tokens."""
    text = shown.strip()
    return round(float(text[:-1]) * 1024) if text.endswith("k") else int(text)


def _screenshots() -> Path:
    from tests.server.test_page import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


def test_a_provider_that_refuses_the_connection_is_said_where_the_turn_failed(
    browser_page: object,  # noqa: F811 (the fixture imported above)
    provider: ProviderServer,
    tmp_path: Path,
) -> None:
    """The model's server is not running (a closed port): the turn's place in the timeline
    says the connection was refused (not a time-out), and says so after the timeline is drawn
    again from the store."""
    from playwright.sync_api import Page, expect

    page: Page = browser_page  # type: ignore[assignment]
    closed = free_port()  # nothing listens there
    model = f"http://127.0.0.1:{closed}/v1#gpt-test"
    config = service_config(
        str(tmp_path / "refused.db"), provider, open_access=True, models=(model,)
    )
    with serving(config) as base:
        page.goto(base + "/")
        page.get_by_test_id("new-conversation").click()
        expect(page.get_by_test_id("input")).to_be_enabled()
        page.get_by_test_id("input").fill("Is anyone there?")
        page.get_by_test_id("send").click()
        error = page.locator(".event.error")
        expect(error).to_contain_text("could not connect", timeout=60_000)
        expect(error).to_contain_text("ConnectionRefusedError")
        expect(error).not_to_contain_text("timed out")
        expect(page.get_by_test_id("send")).to_be_enabled()
        # the failed turn's message stays, the error right after it
        expect(page.get_by_test_id("message").last).to_contain_text("Is anyone there?")
        items = page.locator("#timeline > li")
        expect(items.last).to_contain_text("could not connect")
        expect(items.nth(-2)).to_contain_text("Is anyone there?")
        _shot(page, "page-provider-refused")
    assert provider.requests == []
