"""The proxy's index past one page: 130 conversations (some compacted, some with a last request
kept in the store) listed 100 a page with links between the pages, each page read in the same
few queries however many rows it holds (counted by a SQLAlchemy event listener on the proxy's
own store). Real HTTP to the proxy under uvicorn, on SQLite and PostgreSQL; Chromium follows
the links."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from abridged.store import Store
from abridged.testing import ProviderServer
from tests.server.test_page import _shot, browser_page  # noqa: F401 (a fixture)
from tests.server.test_proxy import config_for, proxying, proxying_app
from tests.store.helpers import proxy_conversations, statements

ROW = re.compile(r"data-testid='conversation-row' data-id='([^']+)'")


async def _fill(url: str) -> list[str]:
    store = Store(url)
    try:
        return await proxy_conversations(store, 130, compacted=3, noted=4)
    finally:
        await store.close()


def _row(html: str, cid: str) -> str:
    start = html.index(f"data-id='{cid}'")
    return html[start : html.index("</tr>", start)]


def test_the_index_pages_past_100_conversations_in_a_fixed_number_of_queries(
    service_db: str, provider: ProviderServer, tmp_path: Path
) -> None:
    ids = asyncio.run(_fill(service_db))
    with proxying_app(config_for(provider, service_db)) as (base, app):
        assert httpx.get(base + "/").is_success  # the store open, its statements built
        store: Store = app.pages.state.store
        with statements(store) as first_queries:
            first = httpx.get(base + "/").text
        with statements(store) as second_queries:
            second = httpx.get(base + "/?page=2").text
        with statements(store) as beyond_queries:
            beyond = httpx.get(base + "/?page=3")
        refused = httpx.get(base + "/?page=0")
    assert len(first_queries) == len(second_queries) <= 3, first_queries
    assert len(beyond_queries) <= 3
    on_first, on_second = ROW.findall(first), ROW.findall(second)
    assert len(on_first) == 100 and len(on_second) == 30
    assert sorted(on_first + on_second) == sorted(ids)  # each once; the tenants' never
    assert "Conversations (130)" in first and "page 1 of 2" in first
    assert "href='/?page=2' rel='next'" in first and "rel='prev'" not in first
    assert "href='/?page=1' rel='prev'" in second and "rel='next'" not in second
    assert beyond.status_code == 200 and not ROW.findall(beyond.text)
    assert "No page 3" in beyond.text
    assert refused.status_code == 422
    html = first + second
    compacted = _row(html, ids[0])
    assert "<td class='num'>2</td>" in compacted and "→" in compacted  # its newest compaction
    noted = _row(html, ids[3])
    assert "last request" in noted and "passed at" in noted and "of 8k" in noted
    assert "not known yet" in _row(html, ids[-1])


def test_chromium_follows_the_index_pages(
    provider: ProviderServer,
    tmp_path: Path,
    browser_page: object,  # noqa: F811 (the fixture imported above)
) -> None:
    from playwright.sync_api import Page, expect

    page: Page = browser_page  # type: ignore[assignment]
    url = f"sqlite+aiosqlite:///{tmp_path / 'pages.db'}"
    with ThreadPoolExecutor(1) as pool:  # Playwright's own loop runs in this thread
        pool.submit(asyncio.run, _fill(url)).result()
    with proxying(config_for(provider, url)) as base:
        page.goto(base + "/")
        rows = page.get_by_test_id("conversation-row")
        expect(rows).to_have_count(100)
        expect(page.get_by_test_id("pager")).to_contain_text("page 1 of 2")
        page.get_by_test_id("older").click()
        expect(rows).to_have_count(30)
        expect(page.get_by_test_id("pager")).to_contain_text("page 2 of 2")
        expect(page.get_by_test_id("older")).to_have_count(0)
        _shot(page, "proxy-index-page-2")
        page.get_by_test_id("newer").click()
        expect(rows).to_have_count(100)
