"""Search over message text in the service: ``GET /v1/search/messages`` (every word, any case,
the tenant's own conversations only) and the page's search box, which lists the messages found
under the conversations and opens the conversation at the message (Chromium)."""

from __future__ import annotations

import re
from pathlib import Path

from abridged.testing import ProviderServer, Reply
from tests.server.conftest import RunningService, service_config, serving
from tests.server.test_page import _shot, browser_page  # noqa: F401 (a fixture)


def _turn(client: object, cid: str, text: str) -> None:
    answer = client.post(  # type: ignore[attr-defined]
        f"/v1/conversations/{cid}/messages?stream=false", json={"content": text}
    )
    assert answer.status_code == 200, answer.text


def test_the_api_finds_words_in_the_tenants_messages(service: RunningService) -> None:
    service.provider.set_replies(lambda r: Reply("The pelican signed invoice ZX-4471."))
    acme, globex = service.client("acme"), service.client("globex")
    mine = acme.post("/v1/conversations", json={}).json()["id"]
    _turn(acme, mine, "Who approved the invoice?")
    theirs = globex.post("/v1/conversations", json={}).json()["id"]
    _turn(globex, theirs, "Did the pelican approve it?")

    found = acme.get("/v1/search/messages", params={"q": "PELICAN invoice"}).json()
    assert [(h["conversation_id"], h["role"]) for h in found] == [(mine, "assistant")]
    assert "pelican signed invoice" in found[0]["snippet"] and found[0]["seq"] == 2
    # the other tenant's own message only; a word nobody wrote: nothing
    found = globex.get("/v1/search/messages", params={"q": "pelican"}).json()
    assert {(h["conversation_id"], h["role"]) for h in found} == {
        (theirs, "user"),
        (theirs, "assistant"),
    }
    assert acme.get("/v1/search/messages", params={"q": "walrus"}).json() == []
    one = acme.get("/v1/search/messages", params={"q": "invoice", "limit": 1}).json()
    assert len(one) == 1 and one[0]["role"] == "assistant"  # the newest first
    assert acme.get("/v1/search/messages", params={"q": ""}).status_code == 422
    assert service.client(None).get("/v1/search/messages", params={"q": "x"}).status_code == 401


def test_the_search_box_finds_a_message_and_opens_it(
    browser_page: object,  # noqa: F811 (the fixture imported above)
    provider: ProviderServer,
    tmp_path: Path,
) -> None:
    from playwright.sync_api import Page, expect

    page: Page = browser_page  # type: ignore[assignment]
    replies = iter([Reply("Noted."), Reply("The pelican signed invoice ZX-4471.")])
    provider.set_replies(lambda _request: next(replies, Reply("fine")))
    config = service_config(str(tmp_path / "search.db"), provider, open_access=True)
    with serving(config) as base:
        page.goto(base + "/")
        for text in ("Plan the garden", "Who approved the invoice?"):
            page.get_by_test_id("new-conversation").click()
            expect(page.get_by_test_id("input")).to_be_enabled()
            page.get_by_test_id("input").fill(text)
            page.get_by_test_id("send").click()
            expect(page.get_by_test_id("send")).to_be_enabled(timeout=20_000)
            expect(page.get_by_test_id("title")).to_have_text(text)
        page.get_by_test_id("conversation").filter(has_text="Plan the garden").click()
        expect(page.get_by_test_id("title")).to_have_text("Plan the garden")

        # in no title: the conversations list is empty, the message is found
        page.get_by_test_id("search").fill("pelican")
        expect(page.get_by_test_id("conversation")).to_have_count(0)
        hits = page.get_by_test_id("message-hit")
        expect(hits).to_have_count(1)
        expect(hits).to_contain_text("Who approved the invoice? · assistant")
        expect(hits).to_contain_text("pelican signed invoice")
        _shot(page, "page-search")
        hits.click()
        expect(page.get_by_test_id("title")).to_have_text("Who approved the invoice?")
        found = page.locator(".msg.found")
        expect(found).to_have_count(1)
        expect(found).to_contain_text(re.compile("pelican signed invoice"))
        # words in a title and in messages: both lists
        page.get_by_test_id("search").fill("invoice")
        expect(page.get_by_test_id("conversation")).to_have_count(1)
        expect(page.get_by_test_id("message-hit")).to_have_count(2)
        page.get_by_test_id("search").fill("")
        expect(page.get_by_test_id("message-hits")).to_be_hidden()
