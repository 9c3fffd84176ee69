"""Reading the usage report out of a response as it passes through the proxy (``UsageTap``):
a JSON body in any number of chunks, a body over the limit, event streams of OpenAI and
Anthropic split at arbitrary points."""

from __future__ import annotations

import json

from abridged.core.model import Usage
from abridged.server.proxy.upstream import UsageTap

OPENAI_BODY = json.dumps(
    {
        "choices": [{"message": {"role": "assistant", "content": "ok"}}],
        "usage": {
            "prompt_tokens": 120,
            "completion_tokens": 7,
            "prompt_tokens_details": {"cached_tokens": 100},
        },
    }
).encode()


def _split(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def test_a_json_body_read_whole_or_in_pieces_gives_the_same_usage() -> None:
    expected = Usage(input=20, output=7, cache_read=100)
    for size in (len(OPENAI_BODY), 1, 7, 64):
        tap = UsageTap("openai-chat", streaming=False)
        for chunk in _split(OPENAI_BODY, size):
            tap.feed(chunk)
        assert tap.usage() == expected, size


def test_a_json_body_over_the_limit_gives_no_usage_rather_than_a_wrong_one() -> None:
    tap = UsageTap("openai-chat", streaming=False, limit=len(OPENAI_BODY) - 10)
    for chunk in _split(OPENAI_BODY, 16):
        tap.feed(chunk)
    assert tap.usage() is None  # the body's end was not kept: no partial parse
    # a chunk over the limit, then small ones: none of them kept (no body with a hole in it,
    # which could still parse: here the hole is a whole member of the object)
    hole = b'{"padding": "' + b"x" * 64 + b'", '
    tap = UsageTap("openai-chat", streaming=False, limit=60)  # "{" and the usage fit
    for chunk in (b"{", hole[1:], b'"usage": {"prompt_tokens": 5, "completion_tokens": 1}}'):
        tap.feed(chunk)
    assert tap.usage() is None
    assert UsageTap("openai-chat", streaming=False).usage() is None  # nothing fed


def test_an_openai_stream_split_anywhere_gives_its_last_usage() -> None:
    stream = (
        b'data: {"choices":[{"delta":{"content":"o"}}]}\n\n'
        b'data: {"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":3}}\n\n'
        b"data: [DONE]\n\n"
    )
    for size in (1, 5, 33, len(stream)):
        tap = UsageTap("openai-chat", streaming=True)
        for chunk in _split(stream, size):
            tap.feed(chunk)
        assert tap.usage() == Usage(input=50, output=3), size


def test_an_anthropic_stream_merges_the_start_and_the_final_delta() -> None:
    stream = (
        b"event: message_start\n"
        b'data: {"type":"message_start","message":{"usage":{"input_tokens":12,'
        b'"cache_read_input_tokens":900,"output_tokens":1}}}\n\n'
        b"event: message_delta\n"
        b'data: {"type":"message_delta","usage":{"output_tokens":40}}\n\n'
    )
    tap = UsageTap("anthropic", streaming=True)
    for chunk in _split(stream, 10):
        tap.feed(chunk)
    assert tap.usage() == Usage(input=12, output=40, cache_read=900)
