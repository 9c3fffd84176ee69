"""A call's estimate of its context counts only the messages new since the last call's (the
same objects), and always equals the sum over the whole context (issue 30)."""

from __future__ import annotations

import pytest

from abridged.core.model import Message
from abridged.core.tokens import REPLY_PRIMING
from abridged.runtime import Conversation, ConversationSettings
from abridged.store import Store
from abridged.testing import ProviderServer
from tests.runtime.support import make_model


async def test_the_estimate_counts_the_new_messages_only_and_equals_the_whole_sum(
    store: Store, server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    convo = await Conversation.open(
        store,
        make_model("openai", server),
        system="You are terse.",
        context_window=16_384,
        max_output_tokens=1_024,
        summarizer="extractive",
        settings=ConversationSettings(debounce=0),
    )
    counter = convo.counter
    counted: list[Message] = []
    real = counter.message_tokens

    def counting(message: Message) -> int:
        counted.append(message)
        return real(message)

    monkeypatch.setattr(counter, "message_tokens", counting)

    def whole(messages: list[Message]) -> int:
        raw = sum(real(m) for m in messages) + convo._manager.tools_raw(convo.tools.specs)
        return counter.calibration.apply(raw + REPLY_PRIMING)

    context = [Message.system("s"), Message.user("first question " * 20)]
    assert convo.estimate_tokens(context) == whole(context)
    for n in range(3):
        counted.clear()
        context = [*context, Message.assistant(f"answer {n} " * 30), Message.user(f"q {n}")]
        assert convo.estimate_tokens(context) == whole(context)
        assert counted == context[-2:]  # the last context's messages were not counted again
    # a message replaced inside it (a prune) or a shorter context (a compaction): all counted
    pruned = [context[0], Message.user("[pruned]"), *context[2:]]
    assert convo.estimate_tokens(pruned) == whole(pruned)
    assert convo.estimate_tokens(pruned[:3]) == whole(pruned[:3])
    await convo.close()
