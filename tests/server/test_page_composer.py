"""The page's composer belongs to one conversation: while a new one is being created and opened,
nothing typed can be sent to the one still on screen (Chromium)."""

from __future__ import annotations

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

        # the new conversation's timeline is held until the test lets it go: the first
        # conversation's composer must not be usable while the second one is being opened.
        # (A handler that sleeps would close the window on the test's own thread, between checks.)
        held: list[Route] = []
        released = False

        def hold_timeline(route: Route) -> None:
            if released:
                route.continue_()
            else:
                held.append(route)

        page.route("**/v1/conversations/*/messages", hold_timeline)
        page.get_by_test_id("new-conversation").click()
        expect(page.get_by_test_id("input")).to_be_disabled()
        expect(page.get_by_test_id("send")).to_be_disabled()
        while not held:  # waits for the request, bounds nothing
            page.wait_for_timeout(20)
        # the timeline is still held, so the new conversation cannot be open yet
        expect(page.get_by_test_id("input")).to_be_disabled()
        expect(page.get_by_test_id("send")).to_be_disabled()
        released = True
        for route in held:
            route.continue_()
        expect(page.get_by_test_id("input")).to_be_enabled(timeout=20_000)
        page.unroute("**/v1/conversations/*/messages")
        page.get_by_test_id("input").fill("Who approved the invoice?")
        page.get_by_test_id("send").click()
        expect(page.get_by_test_id("send")).to_be_enabled(timeout=20_000)
        expect(page.get_by_test_id("title")).to_have_text("Who approved the invoice?")
        page.get_by_test_id("conversation").filter(has_text="Plan the garden").click()
        expect(page.get_by_test_id("title")).to_have_text("Plan the garden")
        expect(page.locator("#timeline .msg")).to_have_count(2)
