"""The page's composer belongs to one conversation: while a new one is being created and opened,
nothing typed can be sent to the one still on screen (Chromium)."""

from __future__ import annotations

import time
from pathlib import Path

from abridged.testing import ProviderServer, Reply
from tests.server.conftest import service_config, serving
from tests.server.test_page import browser_page  # noqa: F401 (a fixture)


def test_a_new_conversation_takes_the_composer_only_once_it_is_open(
    browser_page: object,  # noqa: F811 (the fixture imported above)
    provider: ProviderServer,
    tmp_path: Path,
) -> None:
    from playwright.sync_api import Page, Route, expect

    page: Page = browser_page  # type: ignore[assignment]
    provider.set_replies(lambda _request: Reply("Noted."))
    config = service_config(str(tmp_path / "composer.db"), provider, open_access=True)
    with serving(config) as base:
        page.goto(base + "/")
        page.get_by_test_id("new-conversation").click()
        expect(page.get_by_test_id("input")).to_be_enabled()
        page.get_by_test_id("input").fill("Plan the garden")
        page.get_by_test_id("send").click()
        expect(page.get_by_test_id("send")).to_be_enabled(timeout=20_000)
        expect(page.get_by_test_id("title")).to_have_text("Plan the garden")

        # a slow timeline widens the window a loaded machine opens by chance: the first
        # conversation's composer must not stay usable while the second one is opened
        def slow_timeline(route: Route) -> None:
            time.sleep(1.0)  # the window, not a bound: nothing here is timed
            route.continue_()

        page.route("**/v1/conversations/*/messages", slow_timeline)
        page.get_by_test_id("new-conversation").click()
        expect(page.get_by_test_id("input")).to_be_disabled()
        expect(page.get_by_test_id("send")).to_be_disabled()
        expect(page.get_by_test_id("input")).to_be_enabled(timeout=20_000)
        page.unroute("**/v1/conversations/*/messages")
        page.get_by_test_id("input").fill("Who approved the invoice?")
        page.get_by_test_id("send").click()
        expect(page.get_by_test_id("send")).to_be_enabled(timeout=20_000)
        expect(page.get_by_test_id("title")).to_have_text("Who approved the invoice?")
        page.get_by_test_id("conversation").filter(has_text="Plan the garden").click()
        expect(page.get_by_test_id("title")).to_have_text("Plan the garden")
        expect(page.locator("#timeline .msg")).to_have_count(2)
