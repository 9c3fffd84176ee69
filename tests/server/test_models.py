"""A conversation's model, chosen per conversation and changed on the way (``PATCH`` on the
conversation, ``GET /v1/models``): validated against the service's models and the providers it
can call (422 naming the model, nothing changed), tenant-scoped, and used from the next turn on
while the history stays as it was; on SQLite and PostgreSQL, over real HTTP against the local
provider."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_for

import pytest

from abridged.core.model import Message, Usage
from abridged.providers.registry import lookup_model
from abridged.store import Store
from abridged.testing import ProviderServer, RecordedRequest, Reply
from tests.server.conftest import (
    RunningService,
    make_keys,
    service_config,
    serving,
    tool_replies,
)


@pytest.fixture
def two_models(service_db: str, provider: ProviderServer) -> Iterator[RunningService]:
    """The service with two models of the local provider (the first the default)."""
    keys = asyncio.run(make_keys(service_db))
    models = (provider.base_url + "/v1#gpt-test", provider.base_url + "/v1#gpt-other")
    config = service_config(service_db, provider, models=models)
    with serving(config) as url:
        running = RunningService(url, keys, provider, service_db, models[0])
        try:
            yield running
        finally:
            for client in running.clients:
                client.close()


def test_the_model_changes_from_the_next_turn_and_the_history_stays(
    two_models: RunningService,
) -> None:
    service = two_models
    client = service.client()
    listed = client.get("/v1/models").json()
    test_model, other_model = listed["models"]
    assert listed == {"models": [test_model, other_model], "default": test_model, "any": False}
    cid = client.post("/v1/conversations", json={"system": "Be brief."}).json()["id"]
    send = {"content": "read one record"}
    assert client.post(f"/v1/conversations/{cid}/messages?stream=false", json=send).is_success
    assert {r.model for r in service.provider.requests} == {"gpt-test"}
    before = len(service.provider.requests)
    stored = client.get(f"/v1/conversations/{cid}/messages").json()["messages"]

    changed = client.patch(f"/v1/conversations/{cid}", json={"model": other_model})
    assert changed.status_code == 200, changed.text
    assert changed.json()["model"] == other_model
    assert changed.json()["system"] == "Be brief."  # the rest of the conversation is as it was
    assert client.get(f"/v1/conversations/{cid}").json()["model"] == other_model
    assert client.post(f"/v1/conversations/{cid}/messages?stream=false", json=send).is_success
    after = service.provider.requests[before:]
    assert after and {r.model for r in after} == {"gpt-other"}
    # the new model was sent everything said before, as it was stored
    first = [m.text for m in after[0].messages]
    assert first[0] == "Be brief." and all(m["text"] in first for m in stored if m["text"])
    again = client.get(f"/v1/conversations/{cid}/messages").json()["messages"]
    assert again[: len(stored)] == stored


def test_a_model_the_service_cannot_use_is_refused_and_nothing_changes(
    two_models: RunningService,
) -> None:
    client = two_models.client()
    cid = client.post("/v1/conversations", json={"title": "kept"}).json()["id"]
    for wrong in ("foo/bar", "openai/gpt-4.1", two_models.provider.base_url + "/v1#gpt-third"):
        refused = client.patch(f"/v1/conversations/{cid}", json={"model": wrong, "title": "new"})
        assert refused.status_code == 422, refused.text
        assert "model" in refused.json()["detail"] and refused.json()["setting"] == "model"
    empty = client.patch(f"/v1/conversations/{cid}", json={"model": ""})
    assert empty.status_code == 422
    now = client.get(f"/v1/conversations/{cid}").json()
    assert now["model"] == two_models.model and now["title"] == "kept"
    # another tenant's conversation reads as missing, whatever the model
    other = two_models.client("globex")
    models = client.get("/v1/models").json()["models"]
    assert other.patch(f"/v1/conversations/{cid}", json={"model": models[1]}).status_code == 404
    assert client.get(f"/v1/conversations/{cid}").json()["model"] == two_models.model


def test_with_no_models_listed_any_model_the_service_can_call_is_allowed(
    service_db: str, provider: ProviderServer
) -> None:
    keys = asyncio.run(make_keys(service_db))
    config = service_config(service_db, provider, models=())
    with serving(config) as url:
        service = RunningService(url, keys, provider, service_db, "")
        client = service.client()
        assert client.get("/v1/models").json() == {"models": [], "default": None, "any": True}
        first = provider.base_url + "/v1#gpt-test"
        cid = client.post("/v1/conversations", json={"model": first}).json()["id"]
        # a provider with no key here (the fixture removed OPENAI_API_KEY) and a string that
        # names no provider: refused with the reason, before anything is stored
        no_key = client.patch(f"/v1/conversations/{cid}", json={"model": "openai/gpt-4.1"})
        assert no_key.status_code == 422 and "no API key for openai" in no_key.json()["detail"]
        unknown = client.patch(f"/v1/conversations/{cid}", json={"model": "nonsense"})
        assert unknown.status_code == 422 and "nonsense" in unknown.json()["detail"]
        moved = client.patch(
            f"/v1/conversations/{cid}", json={"model": provider.base_url + "/v1#gpt-free"}
        )
        assert moved.status_code == 200, moved.text
        done = client.post(f"/v1/conversations/{cid}/messages?stream=false", json={"content": "hi"})
        assert done.is_success and provider.requests[-1].model == "gpt-free"
        for c in service.clients:
            c.close()


def test_a_turn_running_when_the_model_changes_ends_on_its_own_model(
    two_models: RunningService,
) -> None:
    """The change is asked for while a turn of four model calls waits in its second: it
    returns only once that turn has ended, every call of which went to the old model; the next
    turn goes to the new one."""
    service = two_models
    client, other = service.client(), service.client()
    other_model = client.get("/v1/models").json()["models"][1]
    cid = client.post("/v1/conversations", json={}).json()["id"]
    steps = tool_replies()
    inside, release = threading.Event(), threading.Event()
    calls = 0

    def gated(record: RecordedRequest) -> Reply:
        nonlocal calls
        calls += 1
        if calls == 2:  # the turn's second call waits (in the provider's thread) until told
            inside.set()
            release.wait(60)
        return steps(record)

    service.provider.set_replies(gated)
    send = {"content": "read some records"}
    url = f"/v1/conversations/{cid}"
    with ThreadPoolExecutor(2) as pool:
        turn = pool.submit(client.post, url + "/messages?stream=false", json=send)
        assert inside.wait(60)
        change = pool.submit(other.patch, url, json={"model": other_model})
        # the change waits for the turn: given a second to (wrongly) finish while it runs
        finished, _ = wait_for([change], timeout=1.0)
        release.set()
        assert not finished, "the model changed while a turn ran"
        assert turn.result().is_success
        assert change.result().status_code == 200 and change.result().json()["model"] == other_model
    first = service.provider.requests
    assert len(first) == 4 and {r.model for r in first} == {"gpt-test"}
    assert client.post(url + "/messages?stream=false", json=send).is_success
    after = service.provider.requests[4:]
    assert after and {r.model for r in after} == {"gpt-other"}
    answered = [
        m for m in client.get(url + "/messages").json()["messages"] if m["role"] == "assistant"
    ]
    # each reply stored with the model that answered it, as the provider named it
    assert [m["model"] for m in answered] == ["gpt-test"] * 4 + ["gpt-other"] * len(after)


async def _priced(db: str) -> None:
    store = Store(db)
    try:
        info = await store.create_conversation(name="priced", owner="acme", model="openai/gpt-4.1")
        await store.append(info.id, Message.user("hi"), owner="acme")
        usage = Usage(input=1_000_000, output=1_000_000)
        reply = Message.assistant("hello", usage=usage)
        await store.append(info.id, reply, owner="acme", model="openai/gpt-4.1-mini")
    finally:
        await store.close()


def test_a_reply_is_priced_as_the_model_that_gave_it(two_models: RunningService) -> None:
    """A conversation now on gpt-4.1 whose earlier reply came from gpt-4.1-mini: that reply's
    cost is gpt-4.1-mini's."""
    asyncio.run(_priced(two_models.db_url))
    listed = two_models.client().get("/v1/conversations/priced/messages").json()["messages"]
    reply = listed[-1]
    assert reply["model"] == "openai/gpt-4.1-mini"
    mini = lookup_model("openai/gpt-4.1-mini")
    assert mini is not None and mini.pricing is not None
    assert reply["cost"] == pytest.approx(mini.pricing.input + mini.pricing.output)
