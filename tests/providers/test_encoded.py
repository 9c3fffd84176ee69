"""``EncodedMessages``: a body joined from each message's JSON, the last body of a conversation
taken whole when the next call sends it again plus new messages (issue 30)."""

from __future__ import annotations

import json

from abridged.core.model import Message
from abridged.providers.encoded import EncodedMessages


def _encode(message: Message, index: int) -> bytes:
    return json.dumps({"role": message.role, "text": message.text}).encode()


def _plain(messages: list[Message]) -> bytes:
    return b",".join(_encode(m, i) for i, m in enumerate(messages))


def test_a_grown_history_reuses_the_last_body_and_reads_only_the_new_messages() -> None:
    enc = EncodedMessages(_encode)
    history = [Message.system("s"), Message.user("a")]
    assert enc.join(history) == _plain(history)
    for text in ("b", "c", "d"):
        history += [Message.assistant("ok " + text), Message.user(text)]
        assert enc.join(list(history)) == _plain(history)  # a new list, the same objects
    # each call took the previous body whole: 2 + 4 + 6 messages reused, none encoded twice
    assert enc.reused == 12
    assert enc.encoded == len(history) == 8


def test_a_changed_message_inside_the_last_body_is_never_sent_stale() -> None:
    enc = EncodedMessages(_encode)
    history = [Message.system("s"), Message.user("a"), Message.tool("c1", "long output")]
    enc.join(history)
    pruned = [history[0], history[1], Message.tool("c1", "[pruned]"), Message.user("next")]
    assert enc.join(pruned) == _plain(pruned)
    shorter = pruned[:2]  # a compaction's context can be shorter than the last one
    assert enc.join(shorter) == _plain(shorter)
    # another conversation sharing the system prompt object keeps its own body
    other = [history[0], Message.user("elsewhere")]
    assert enc.join(other) == _plain(other)
    assert enc.join([*pruned, Message.assistant("x")]) == _plain([*pruned, Message.assistant("x")])


def test_the_kept_bodies_are_bounded_in_bytes() -> None:
    enc = EncodedMessages(_encode, max_run_bytes=200)
    for n in range(20):
        history = [Message.system("s"), Message.user(f"conversation {n} " + "x" * 50)]
        enc.join(history)
    assert enc._run_bytes <= 200
    assert len(enc._runs) < 20
    assert enc.join([]) == b""
