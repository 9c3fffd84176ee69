"""Tests for abridged.runtime.recovery and the conversation's recovery: a provider's overflow
runs the emergency path and exactly one retry; a second overflow is a typed error with the sizes;
stored history is untouched; recovery works with compaction switched off, keeps images, handles
silent truncation, and counts exactly (Anthropic) when the estimate is close to the limit."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from abridged.core.budget import BudgetSettings
from abridged.core.model import File, Image, Message, Text, Usage
from abridged.core.protocols import Completion, ToolSpec
from abridged.errors import ContextOverflowError, ProviderError
from abridged.providers.anthropic import AnthropicChatModel
from abridged.providers.scripted import ScriptedModel
from abridged.runtime import Conversation, ConversationSettings, Notice, Retrying, context_manager
from abridged.runtime.driver import Fitted
from abridged.runtime.recovery import (
    SilentTruncationError,
    call_with_recovery,
    check_truncation,
    exact_tokens,
    overflow_after_retry,
    with_retries,
)
from abridged.store import Store
from abridged.testing import ProviderServer, Reply
from abridged.testing.errors import anthropic_overflow, openai_overflow
from tests.runtime.support import (
    ADAPTERS,
    ANTHROPIC_KEY,
    MODELS,
    agent_requests,
    make_model,
)

PARAGRAPH = " ".join(f"Fact {i}: the build step {i} writes artefact-{i}.tar." for i in range(120))


# -- the recovery loop, alone -------------------------------------------------------------------


def overflow(tokens: int = 20_000, limit: int = 16_384) -> ContextOverflowError:
    return ContextOverflowError("too long", tokens=tokens, limit=limit, provider="openai")


async def test_overflow_recovers_then_retries_exactly_once() -> None:
    attempts: list[int] = []
    recovered: list[ContextOverflowError] = []
    retries: list[Retrying] = []

    async def attempt() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise overflow()
        return "answer"

    async def recover(error: ContextOverflowError) -> int:
        recovered.append(error)
        return 3_000

    result = await call_with_recovery(
        attempt, recover, enabled=True, input_budget=10_000, on_retry=retries.append
    )
    assert result == "answer" and len(attempts) == 2 and len(recovered) == 1
    assert retries[0].reason == "overflow" and "2.9k" in retries[0].detail


async def test_a_second_overflow_is_a_typed_error_with_the_sizes() -> None:
    async def attempt() -> str:
        raise overflow(18_000, 16_384)

    async def recover(error: ContextOverflowError) -> int:
        return 9_000

    with pytest.raises(ContextOverflowError) as info:
        await call_with_recovery(attempt, recover, enabled=True, input_budget=11_000)
    error = info.value
    assert error.tokens == 18_000 and error.limit == 16_384
    assert error.context["first_tokens"] == 18_000
    assert error.context["retry_tokens"] == 9_000
    assert error.context["input_budget"] == 11_000
    assert "still too long after emergency compaction" in str(error)


async def test_switched_off_the_provider_error_surfaces_as_it_came() -> None:
    calls: list[int] = []

    async def attempt() -> str:
        calls.append(1)
        raise overflow()

    async def recover(error: ContextOverflowError) -> int:
        raise AssertionError("recovery is off")

    with pytest.raises(ContextOverflowError) as info:
        await call_with_recovery(attempt, recover, enabled=False, input_budget=1)
    assert info.value.message == "too long" and calls == [1]


async def test_ordinary_retries_are_for_retryable_errors_only_and_not_for_overflow() -> None:
    calls: list[str] = []

    async def flaky() -> str:
        calls.append("flaky")
        if len(calls) < 3:
            raise ProviderError("overloaded", status=529, retryable=True)
        return "ok"

    seen: list[Retrying] = []
    assert await with_retries(flaky, retries=2, delay=0, on_retry=seen.append) == "ok"
    assert len(calls) == 3 and [r.reason for r in seen] == ["error", "error"]

    async def bad_request() -> str:
        calls.append("bad")
        raise ProviderError("invalid", status=400, retryable=False)

    with pytest.raises(ProviderError):
        await with_retries(bad_request, retries=5, delay=0)
    assert calls.count("bad") == 1

    async def too_long() -> str:
        calls.append("long")
        raise overflow()

    with pytest.raises(ContextOverflowError):
        await with_retries(too_long, retries=5, delay=0)
    assert calls.count("long") == 1


def test_silent_truncation_is_detected_from_the_usage() -> None:
    with pytest.raises(SilentTruncationError) as info:
        check_truncation(Usage(input=1_000), 9_000, 32_768)
    assert info.value.reported == 1_000 and info.value.tokens == 9_000
    warning = check_truncation(Usage(input=40_000), 39_000, 32_768)
    assert warning is not None and "window" in warning
    assert check_truncation(Usage(input=8_800), 9_000, 32_768) is None
    assert check_truncation(None, 9_000, 32_768) is None


def test_overflow_after_retry_names_a_truncation() -> None:
    second = SilentTruncationError("cut", tokens=5_000, reported=900, limit=8_192)
    error = overflow_after_retry(overflow(), second, retry_estimate=5_000, input_budget=6_000)
    assert "cut the prompt again" in str(error) and error.tokens == 5_000


async def test_exact_tokens_asks_models_that_can_count() -> None:
    class Counting:
        name = "counting"

        async def count_tokens(self, messages: Sequence[Message], tools: Any = None) -> int:
            return 4_321

    class Failing:
        name = "failing"

        async def count_tokens(self, messages: Sequence[Message], tools: Any = None) -> int:
            raise ProviderError("count endpoint down")

    messages = [Message.user("hi")]
    assert await exact_tokens(Counting(), messages, []) == 4_321  # type: ignore[arg-type]
    assert await exact_tokens(Failing(), messages, []) is None  # type: ignore[arg-type]
    assert await exact_tokens(ScriptedModel(), messages, []) is None


# -- the conversation on the local provider ----------------------------------------------------


@pytest.fixture
def tight_server() -> Iterator[ProviderServer]:
    """A provider whose real window (6k) is far smaller than what the conversation believes
    (16k): its requests overflow for real, with the provider's own error."""
    with ProviderServer(context_window=6_144, max_output=1_024) as s:
        yield s


async def open_convo(
    store: Store, server: ProviderServer, adapter: str, **settings: Any
) -> Conversation:
    return await Conversation.open(
        store,
        make_model(adapter, server),
        system="You are a build assistant.",
        context_window=16_384,
        max_output_tokens=1_024,
        summarizer="extractive",
        settings=ConversationSettings(debounce=0, **settings),
    )


async def fill(convo: Conversation, turns: int) -> None:
    for i in range(turns):
        await convo.send(f"Note {i}. {PARAGRAPH}")


def overflow_rejections(server: ProviderServer) -> list[int]:
    return [
        r.index
        for r in agent_requests(server)
        if r.status == 400 and "context" in (r.error_message or "") + " prompt is too long"
    ]


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_real_overflow_is_recovered_with_one_retry(
    adapter: str, store: Store, tight_server: ProviderServer
) -> None:
    convo = await open_convo(store, tight_server, adapter)
    result = None
    for i in range(12):
        result = await convo.send(f"Note {i}. {PARAGRAPH}")
        if any(isinstance(e, Retrying) for e in result.events):
            break
    assert result is not None
    requests = agent_requests(tight_server)
    failed = [r for r in requests if r.status != 200]
    assert len(failed) == 1, [r.error_message for r in failed]
    retry = requests[failed[0].index + 1]
    assert retry.status == 200 and retry.prompt_tokens < failed[0].prompt_tokens
    assert result.text.startswith("Received")  # the server's answer to the retry
    kinds = [e.kind for e in result.events if isinstance(e, Retrying)]
    assert kinds == ["retrying"]
    texts = " ".join(result.notifications)
    assert "Context overflow recovered" in texts and "emergency" in texts
    log = list(convo.call_log)
    assert [c.retry for c in log[-2:]] == [False, True] and not log[-2].ok
    # nothing stored was changed: every user message and every answer is there, in order
    stored = await store.stored_messages(convo.id)
    users = [m.message.text for m in stored if m.message.role == "user"]
    assert users == [f"Note {j}. {PARAGRAPH}" for j in range(len(users))]
    assert len(stored) == 2 * len(users)
    assert len(await store.compactions(convo.id)) >= 1
    # the provider named its real window: the budget uses it from now on, no more overflow
    assert convo.limits.context_window == 6_144
    assert any("The provider's context window is 6k, not 16k" in n for n in result.notifications)
    for i in range(6):
        await convo.send(f"Later note {i}. {PARAGRAPH}")
    assert len([r for r in agent_requests(tight_server) if r.status != 200]) == 1


def overflow_reply(adapter: str, window: int, prompt: int) -> Reply:
    """The provider's real overflow error, as a scripted reply."""
    if adapter == "openai":
        return Reply(error=(400, openai_overflow(window, prompt, None).body))
    return Reply(error=(400, anthropic_overflow(window, prompt, 1_024).body))


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_second_overflow_surfaces_typed_and_history_is_intact(
    adapter: str, store: Store, server: ProviderServer
) -> None:
    convo = await open_convo(store, server, adapter)
    await fill(convo, 4)
    before = [(m.seq, m.message) for m in await store.stored_messages(convo.id)]
    size = convo.context_tokens()
    server.set_replies(
        [overflow_reply(adapter, size, size + 500), overflow_reply(adapter, 900, 1_400)]
    )
    with pytest.raises(ContextOverflowError) as info:
        await convo.send("Summarize the build notes.")
    error = info.value
    requests = agent_requests(server)
    assert [r.status for r in requests[-2:]] == [400, 400]  # the call and exactly one retry
    assert len(requests) == 4 + 2
    assert requests[-1].prompt_tokens < requests[-2].prompt_tokens  # emergency compaction ran
    assert (error.tokens, error.limit) == (1_400, 900)  # the provider's sizes on the retry
    assert error.context["first_tokens"] == size + 500
    assert error.context["retry_tokens"] > 0
    assert error.context["input_budget"] == convo.budget().input_budget
    after = [(m.seq, m.message) for m in await store.stored_messages(convo.id)]
    # stored history untouched: the same messages, plus the user's new one, no reply
    assert after[: len(before)] == before
    assert [m.text for _, m in after[len(before) :]] == ["Summarize the build notes."]
    assert not convo.busy
    server.set_replies(["fine again"])
    assert (await convo.send("Still there?")).text == "fine again"


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_when_even_the_minimal_context_cannot_fit_the_typed_error_surfaces(
    adapter: str, store: Store
) -> None:
    # The system prompt alone is bigger than the provider's real window: nothing can fit.
    system = "You are a build assistant. " + PARAGRAPH * 2
    with ProviderServer(context_window=3_072, max_output=512) as tiny:
        convo = await Conversation.open(
            store,
            make_model(adapter, tiny),
            system=system,
            context_window=16_384,
            max_output_tokens=512,
            summarizer="extractive",
            settings=ConversationSettings(debounce=0),
        )
        with pytest.raises(ContextOverflowError) as info:
            await convo.send("Summarize the build notes.")
        requests = agent_requests(tiny)
    assert [r.status for r in requests] == [400]  # nothing could be cut: no pointless retry
    error = info.value
    assert error.tokens is not None and error.limit is not None and error.tokens > error.limit
    assert "alone fill the input budget" in str(error)  # the real window, learnt from the error
    assert convo.limits.context_window == 3_072
    stored = await store.stored_messages(convo.id)
    assert [m.message.text for m in stored] == ["Summarize the build notes."]


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_recovery_stays_on_with_automatic_compaction_switched_off(
    adapter: str, store: Store, tight_server: ProviderServer
) -> None:
    convo = await open_convo(
        store, tight_server, adapter, budget=BudgetSettings(enabled=False, overflow_recovery=True)
    )
    result = None
    for i in range(12):
        result = await convo.send(f"Note {i}. {PARAGRAPH}")
        if any(isinstance(e, Retrying) for e in result.events):
            break
    assert result is not None and any(isinstance(e, Retrying) for e in result.events)
    log = list(convo.call_log)
    failed = next(k for k, c in enumerate(log) if not c.ok)
    # nothing was compacted before the overflow (compaction is off): one epoch, growing
    assert {c.epoch for c in log[: failed + 1]} == {log[0].epoch}
    assert log[failed + 1].ok and log[failed + 1].epoch > log[failed].epoch
    assert len(await store.compactions(convo.id)) == 1


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_with_recovery_switched_off_the_provider_error_reaches_the_caller(
    adapter: str, store: Store, tight_server: ProviderServer
) -> None:
    convo = await open_convo(
        store, tight_server, adapter, budget=BudgetSettings(enabled=False, overflow_recovery=False)
    )
    with pytest.raises(ContextOverflowError) as info:
        await fill(convo, 12)
    assert info.value.limit == 6_144  # the provider's own numbers
    assert len([r for r in agent_requests(tight_server) if r.status != 200]) == 1
    assert await store.compactions(convo.id) == []


async def test_the_retry_keeps_images_and_files(store: Store, tight_server: ProviderServer) -> None:
    convo = await open_convo(store, tight_server, "openai")
    image = Image(url="https://example.com/diagram.png", detail="high")
    spec = File(file_id="file-spec-123", filename="spec.pdf")
    result = None
    for i in range(12):
        message = Message("user", (Text(f"Note {i}. {PARAGRAPH} What do these show?"), image, spec))
        result = await convo.send(message)
        if any(isinstance(e, Retrying) for e in result.events):
            break
    assert result is not None and any(isinstance(e, Retrying) for e in result.events)
    failed, retry = agent_requests(tight_server)[-2:]
    assert failed.status == 400 and retry.status == 200
    assert len(retry.body["messages"]) < len(failed.body["messages"])  # compacted
    last = retry.body["messages"][-1]
    assert last["role"] == "user" and last == failed.body["messages"][-1]
    assert {"type": "image_url", "image_url": {"url": image.url, "detail": "high"}} in last[
        "content"
    ]
    assert {"type": "file", "file": {"file_id": "file-spec-123", "filename": "spec.pdf"}} in last[
        "content"
    ]


async def test_silent_truncation_drops_the_reply_and_retries_once(store: Store) -> None:
    # a short first task (pinned, as first tasks are): the retry must fit the 600 tokens read
    history = ["Keep these notes.", *(f"Note {i}. {PARAGRAPH}" for i in range(4))]
    truncated = Completion(
        Message.assistant("I only saw the end."), usage=Usage(input=600), finish_reason="stop"
    )
    model = ScriptedModel(["ok"] * len(history) + [truncated, "the full answer"])
    convo = await Conversation.open(
        store,
        model,
        system="s",
        context_window=16_384,
        max_output_tokens=1_024,
        summarizer="extractive",
        settings=ConversationSettings(debounce=0),
    )
    for text in history:
        await convo.send(text)
    result = await convo.send("What do the notes say?")
    assert result.text == "the full answer"
    retrying = [e for e in result.events if isinstance(e, Retrying)]
    assert [e.reason for e in retrying] == ["truncation"]
    stored = [m.message.text for m in await store.stored_messages(convo.id)]
    assert "I only saw the end." not in stored and stored[-1] == "the full answer"
    assert len(model.calls[-1].messages) < len(model.calls[-2].messages)


# -- counting exactly before sending (Anthropic) -----------------------------------------------


async def test_anthropic_counts_exactly_when_the_estimate_is_close_to_the_limit(
    store: Store, server: ProviderServer
) -> None:
    convo = await Conversation.open(
        store,
        make_model("anthropic", server),
        system="s",
        context_window=16_384,
        max_output_tokens=1_024,
        summarizer="extractive",
        settings=ConversationSettings(debounce=0, exact_count_margin=0.1),
    )
    await convo.send("hello")  # far from the limit: no count
    assert [r.api for r in server.requests] == ["anthropic"]
    convo.update_settings(exact_count_margin=1.0)  # now everything is "close"
    await convo.send("again")
    assert [r.api for r in server.requests][1:] == ["anthropic-count", "anthropic"]
    count, sent = server.requests[1], server.requests[2]
    assert count.prompt_tokens == sent.prompt_tokens  # the count is of the request sent


class OverCounting(AnthropicChatModel):
    """An Anthropic model whose count endpoint says the context is over the budget."""

    over: int | None = None

    async def count_tokens(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None, **kw: Any
    ) -> int:
        real = await super().count_tokens(messages, tools, **kw)
        return self.over if self.over is not None else real


async def test_an_exact_count_over_the_budget_compacts_before_sending(
    store: Store, server: ProviderServer
) -> None:
    model = OverCounting("claude-test", base_url=server.base_url, api_key=ANTHROPIC_KEY)
    MODELS.append(model)
    convo = await Conversation.open(
        store,
        model,
        system="s",
        context_window=16_384,
        max_output_tokens=1_024,
        summarizer="extractive",
        settings=ConversationSettings(debounce=0, exact_count_margin=1.0),
    )
    await fill(convo, 4)
    assert convo.state.compactions == 0
    model.over = convo.budget().input_budget + 300
    result = await convo.send("And now?")
    assert convo.state.compactions == 1
    assert all(r.status == 200 for r in server.requests)
    ended = [e for e in result.events if isinstance(e, Notice) and e.event is not None]
    assert any(e.event.kind == "compaction_started" for e in ended)  # type: ignore[union-attr]
    sent = [r for r in server.requests if r.api == "anthropic"][-1]
    assert "Summary of the earlier part" in str(sent.body)


# -- damaged rows are said, not silent ----------------------------------------------------------


async def test_damaged_rows_found_on_load_are_a_notice_of_the_next_turn(store: Store) -> None:
    """A stored message that cannot be read is sent as a placeholder (the store's
    ``Context.damaged``); the conversation says so in a notice of its next turn, naming where
    (sequence numbers), never the row's content."""
    from tests.store.test_corrupt_rows import damage

    first = await Conversation.open(store, ScriptedModel(["one", "two"]), system="s")
    await first.send("remember the code 4417")
    await first.send("and the colour teal")
    await damage(store, "messages", "parts", "[1", conversation_id=first.id, seq=1)
    again = await Conversation.open(
        store, ScriptedModel(["three"]), system="s", conversation_id=first.id
    )
    result = await again.send("what did I say?")
    notices = [e.text for e in result.events if isinstance(e, Notice)]
    said = [n for n in notices if "could not be read" in n]
    assert said == [
        "1 stored message(s) could not be read (seq 1): each is sent to the model as a "
        "placeholder, and the conversation goes on"
    ]
    assert result.text == "three"


# -- one fit loop ---------------------------------------------------------------------------------


class _FitSpy:
    """Records every run of the manager's fit loop (``fit_context`` as the manager calls it)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.runs: list[tuple[bool, Fitted]] = []
        self._real = context_manager.fit_context
        monkeypatch.setattr(context_manager, "fit_context", self)

    async def __call__(self, plan: Any, **options: Any) -> Fitted:
        fitted = await self._real(plan, **options)
        self.runs.append((options.get("strict", False), fitted))
        return fitted


async def test_a_conversations_overflow_recovery_is_the_managers_fit_loop(
    store: Store, server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = _FitSpy(monkeypatch)
    convo = await open_convo(store, server, "openai")
    await fill(convo, 4)
    assert spy.runs == []  # nothing needed fitting so far
    size = convo.context_tokens()
    server.set_replies([overflow_reply("openai", size, size + 500), "recovered"])
    result = await convo.send("Summarize the build notes.")
    assert result.text == "recovered"
    # the recovery ran in the manager's loop, strict, and what it made is what was committed
    assert [strict for strict, _ in spy.runs] == [True]
    made = spy.runs[0][1].first
    assert made is not None and made.status == "compacted" and made.plan.trigger == "overflow"
    stored = await store.compactions(convo.id)
    assert stored[-1].record.summary.text == made.summary_text == convo.state.summary
    assert stored[-1].record.trigger == "overflow"


async def test_a_conversations_foreground_fit_is_the_managers_fit_loop(
    store: Store, server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = _FitSpy(monkeypatch)
    convo = await open_convo(store, server, "openai")
    await fill(convo, 4)
    # one message that takes the context past the input budget at once: no step boundary
    # between, so the call itself must make it fit, in the foreground
    huge = " ".join(f"Line {i}: the deploy step {i} copies bundle-{i}.zip." for i in range(600))
    await convo.send(huge)
    assert [strict for strict, _ in spy.runs] == [False]
    assert spy.runs[0][1].changed and convo.state.compacted
    assert convo.call_log[-1].estimate <= convo.budget().input_budget
