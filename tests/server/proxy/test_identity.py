"""Which conversation a proxied request belongs to (``conversation_identity``): stable as the
history grows, different when the stable prefix differs, and the same ids as before: a changed
fingerprint would orphan every conversation a proxy already stored."""

from __future__ import annotations

from typing import Any

from abridged.server.proxy.identity import conversation_identity

KEY = {"authorization": "Bearer sk-test"}
OPENING: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "hi"},
]
TOOLS = [{"type": "function", "function": {"name": "read"}}]


def _id(messages: list[dict[str, Any]], headers: dict[str, str] = KEY) -> str:
    body = {"model": "m", "messages": messages, "tools": TOOLS}
    return conversation_identity("openai-chat", headers, body).conversation_id


def test_the_id_stays_as_the_history_grows_and_a_later_system_message_is_not_the_prompt() -> None:
    first = _id(OPENING)
    later = [
        *OPENING,
        {"role": "assistant", "content": "hello"},
        {"role": "developer", "content": "a later instruction"},
        {"role": "user", "content": "more"},
    ]
    assert _id(later) == first


def test_another_system_prompt_or_key_is_another_conversation() -> None:
    other = [{"role": "system", "content": "Be thorough."}, OPENING[1]]
    assert _id(other) != _id(OPENING)
    assert _id(OPENING, {"authorization": "Bearer sk-other"}) != _id(OPENING)


def test_the_fingerprints_are_those_stored_conversations_already_carry() -> None:
    body = {"model": "m", "messages": [*OPENING, {"role": "developer", "content": "later"}]}
    body["tools"] = TOOLS
    assert conversation_identity("openai-chat", KEY, body).conversation_id == (
        "px-e7266141f94117f75b913b22799fad1d"
    )
    plain = {"messages": [{"role": "user", "content": "hi"}]}
    assert conversation_identity("openai-chat", KEY, plain).conversation_id == (
        "px-be64517bb354113f37bcb81c0462085a"
    )
