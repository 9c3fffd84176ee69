"""The context's meter pushed by the server (``GET /v1/conversations/{id}/events``): sent at
once, then whenever a turn, a compaction (in the background too) or a prune changed the
context, always ending on the figures ``/context`` gives once everything settled; the page's
ring follows it (Chromium) without polling."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from abridged.testing import ProviderServer
from tests.server.conftest import RunningService, make_keys, service_config, serving
from tests.server.test_page import _shot, browser_page  # noqa: F401 (a fixture)


def _read_meters(
    client: httpx.Client, cid: str, out: list[dict[str, Any]], stop: threading.Event
) -> None:
    """Read the meters as the page does: a stream ends after a quiet while, the next one
    starts from the last ``seq`` had."""
    since: int | None = None
    while not stop.is_set():
        params = {} if since is None else {"since": since}
        url = f"/v1/conversations/{cid}/events"
        with client.stream("GET", url, params=params, timeout=None) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            name = ""
            for line in response.iter_lines():
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: ") and name == "meter":
                    out.append(json.loads(line[6:]))
                    since = out[-1]["seq"]


def test_the_meter_is_pushed_when_the_context_changes(service: RunningService) -> None:
    client = service.client()
    cid = client.post("/v1/conversations", json={"settings": {"summarizer": "extractive"}}).json()[
        "id"
    ]
    meters: list[dict[str, Any]] = []
    stop = threading.Event()
    reader = threading.Thread(
        target=_read_meters, args=(service.client(), cid, meters, stop), daemon=True
    )
    reader.start()
    deadline = time.monotonic() + 30  # a guard against hanging, not a bound
    while not meters:
        assert time.monotonic() < deadline and reader.is_alive()
        time.sleep(0.05)
    assert meters[0]["context_tokens"] < 200 and meters[0]["state"] == "green"
    for turn in range(12):
        answer = client.post(
            f"/v1/conversations/{cid}/messages?stream=false",
            json={"content": f"task {turn}: read the next records"},
        )
        assert answer.status_code == 200, answer.text
        if client.get(f"/v1/conversations/{cid}/messages").json()["compactions"]:
            break
    else:
        raise AssertionError("12 tool-heavy turns in 8k did not compact")
    # the last meter pushed is the context once the compaction is committed
    while True:
        context = client.get(f"/v1/conversations/{cid}/context").json()
        if meters and meters[-1]["context_tokens"] == context["tokens"]["total"]:
            break
        assert time.monotonic() < deadline + 60, (
            [m["context_tokens"] for m in meters],
            context["tokens"]["total"],
        )
        time.sleep(0.1)
    stop.set()
    assert len(meters) >= turn + 2  # one at least per turn, after the first
    sizes = [m["context_tokens"] for m in meters]
    seqs = [m["seq"] for m in meters]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)  # none twice, in order
    # a watcher that missed a change gets the meter at once
    with client.stream(
        "GET", f"/v1/conversations/{cid}/events", params={"since": seqs[-1] - 1}
    ) as again:
        first = next(line for line in again.iter_lines() if line.startswith("data: "))
    assert json.loads(first[6:]) == meters[-1]
    assert any(b < a for a, b in itertools.pairwise(sizes)), sizes  # a compaction or a prune
    other = service.client("globex").get(f"/v1/conversations/{cid}/events")
    assert other.status_code == 404  # another tenant's conversation: as if it did not exist


def test_the_ring_follows_the_pushed_meter(
    browser_page: object,  # noqa: F811 (the fixture imported above)
    provider: ProviderServer,
    tmp_path: Path,
) -> None:
    """After each turn, and after the compaction that follows one, the ring shows what
    ``/context`` says, brought by the server's events (``data-updates`` counts them)."""
    from playwright.sync_api import Page, expect

    page: Page = browser_page  # type: ignore[assignment]
    config = service_config(str(tmp_path / "watch.db"), provider, open_access=True)
    with serving(config) as base:
        page.goto(base + "/")
        page.get_by_test_id("new-conversation").click()
        expect(page.get_by_test_id("input")).to_be_enabled()
        ring = page.locator("#ring-wrap")
        expect(ring).to_have_attribute("data-updates", "1")  # the first meter, on opening
        for turn in range(12):
            page.get_by_test_id("input").fill(f"task {turn}: read the next records")
            page.get_by_test_id("send").click()
            expect(page.get_by_test_id("send")).to_be_enabled(timeout=30_000)
            if page.get_by_test_id("compaction").count():
                break
        expect(page.get_by_test_id("compaction").first).to_be_visible(timeout=30_000)
        cid = page.evaluate("state.id")
        with httpx.Client(base_url=base) as api:
            deadline = time.monotonic() + 60
            while True:
                total = api.get(f"/v1/conversations/{cid}/context").json()["tokens"]["total"]
                window = api.get(f"/v1/conversations/{cid}/context").json()["window"]
                label = f"{round(total / window * 100)}%"
                if page.locator("#ring-label").text_content() == label:
                    break
                assert time.monotonic() < deadline, (
                    label,
                    page.locator("#ring-label").text_content(),
                )
                time.sleep(0.2)
        assert int(ring.get_attribute("data-updates") or 0) > turn + 1
        _shot(page, "page-meter-pushed")


def test_a_change_made_by_one_worker_reaches_a_watcher_of_another(
    service_db: str, provider: ProviderServer
) -> None:
    """Two app instances on one database (on PostgreSQL as two workers are: the change and its
    meter are announced by NOTIFY; on SQLite the watchers' worker polls the rows and sizes the
    context itself): a watcher of the second hears of the turns the first runs, and its last
    meter is the first one's figure on PostgreSQL, the second one's own ``/context`` on SQLite.
    Before, the second worker's watcher heard nothing after its first meter."""
    keys = asyncio.run(make_keys(service_db))
    config = service_config(service_db, provider)
    with serving(config) as first, serving(config) as second:
        runs = RunningService(first, keys, provider, service_db, config.models[0])
        watches = RunningService(second, keys, provider, service_db, config.models[0])
        client = runs.client()
        cid = client.post("/v1/conversations", json={"settings": {"summarizer": "extractive"}})
        cid = cid.json()["id"]
        meters: list[dict[str, Any]] = []
        stop = threading.Event()
        reader = threading.Thread(
            target=_read_meters, args=(watches.client(), cid, meters, stop), daemon=True
        )
        reader.start()
        deadline = time.monotonic() + 30  # a guard against hanging, not a bound
        while not meters:
            assert time.monotonic() < deadline and reader.is_alive()
            time.sleep(0.05)
        opened = meters[0]["context_tokens"]
        for turn in range(3):
            answer = client.post(
                f"/v1/conversations/{cid}/messages?stream=false",
                json={"content": f"task {turn}: read the next records"},
            )
            assert answer.status_code == 200, answer.text
        here = client.get(f"/v1/conversations/{cid}/context").json()["tokens"]["total"]
        assert here > opened
        watcher = watches.client()
        while True:
            if service_db.startswith("postgresql"):
                expected = here
            else:
                expected = watcher.get(f"/v1/conversations/{cid}/context").json()["tokens"]["total"]
            if len(meters) >= 2 and meters[-1]["context_tokens"] == expected:
                break
            assert time.monotonic() < deadline + 60, (
                [m["context_tokens"] for m in meters],
                expected,
            )
            time.sleep(0.1)
        stop.set()
        seqs = [m["seq"] for m in meters]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        assert expected > opened
        for c in runs.clients + watches.clients:
            c.close()
