"""The local provider's token counts: real o200k counts of the wire blocks, by the documented
formula, checked against ``toktok`` directly."""

from __future__ import annotations

import json

import pytest
import toktok

from abridged.testing.counting import (
    FILE_TOKENS,
    IMAGE_TOKENS_ANTHROPIC,
    IMAGE_TOKENS_LOW,
    IMAGE_TOKENS_OPENAI,
    MESSAGE_OVERHEAD,
    REPLY_PRIMING,
    TOOL_CALL_OVERHEAD,
    TokenCounter,
    anthropic_segments,
    canonical,
    chat_segments,
    measure,
    responses_segments,
    total_tokens,
)


def n(text: str) -> int:
    return int(toktok.batch_count([text], "o200k_base")[0])


COUNTER = TokenCounter()
EPHEMERAL = {"type": "ephemeral"}
TOOL = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file from the repository.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}


def chat_total(body: dict[str, object]) -> int:
    return total_tokens(measure(chat_segments(body), COUNTER))


def test_counter_is_the_real_o200k_tokenizer() -> None:
    assert COUNTER.count(["hello world"]) == [2]  # toktok's documented o200k example
    text = "函数 `parse_config()` returned {'ok': false} — 12,345 rows"
    assert COUNTER.count_one(text) == n(text)
    assert TokenCounter("cl100k").count([text]) == toktok.batch_count([text], "cl100k_base")


def test_counter_rejects_an_unknown_encoding_and_accepts_a_callable() -> None:
    with pytest.raises(ValueError, match="unknown encoding"):
        TokenCounter("gpt2")
    words = TokenCounter(lambda texts: [len(t.split()) for t in texts])
    assert words.count(["a b c", ""]) == [3, 0]
    assert words.common_prefix("a b", "a c", 5) == 0


def test_chat_messages_count_text_plus_overhead_per_message() -> None:
    system, user = "You are a careful assistant.", "Summarise the design page in three lines."
    body = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
    expected = n(system) + n(user) + 2 * MESSAGE_OVERHEAD + REPLY_PRIMING
    assert chat_total(body) == expected


def test_chat_tools_calls_and_results_are_counted() -> None:
    arguments = '{"path": "src/abridged/core/model.py"}'
    result = "class Message:\n    role: Role\n" * 5
    body = {
        "tools": [TOOL],
        "messages": [
            {"role": "user", "content": "Read the model."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": result},
        ],
    }
    expected = (
        n(canonical(TOOL))
        + n("Read the model.")
        + n("read_file " + arguments)
        + TOOL_CALL_OVERHEAD
        + n(result)
        + 3 * MESSAGE_OVERHEAD
        + REPLY_PRIMING
    )
    assert chat_total(body) == expected


def test_chat_content_parts_images_and_files() -> None:
    parts = [
        {"type": "text", "text": "What is in these?"},
        {"type": "image_url", "image_url": {"url": "https://x/a.png", "detail": "low"}},
        {"type": "image_url", "image_url": {"url": "https://x/b.png"}},
        {"type": "file", "file": {"file_id": "file-1"}},
    ]
    body = {"messages": [{"role": "user", "content": parts}]}
    expected = (
        n("What is in these?")
        + IMAGE_TOKENS_LOW
        + IMAGE_TOKENS_OPENAI
        + FILE_TOKENS
        + MESSAGE_OVERHEAD
        + REPLY_PRIMING
    )
    assert chat_total(body) == expected


def test_responses_instructions_items_and_outputs() -> None:
    body = {
        "instructions": "Be brief.",
        "tools": [{"type": "function", "name": "ls", "parameters": {"type": "object"}}],
        "input": [
            {"role": "user", "content": "List the files."},
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "ok"}],
            },
            {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "a.py\nb.py"},
        ],
    }
    tool = {"type": "function", "name": "ls", "parameters": {"type": "object"}}
    expected = (
        n(canonical(tool))
        + n("Be brief.")
        + n("List the files.")
        + n("ok")
        + n("ls {}")
        + TOOL_CALL_OVERHEAD
        + n("a.py\nb.py")
        + 5 * MESSAGE_OVERHEAD
        + REPLY_PRIMING
    )
    assert total_tokens(measure(responses_segments(body), COUNTER)) == expected


def test_responses_string_input_is_one_user_message() -> None:
    body = {"input": "Hello there, model."}
    expected = n("Hello there, model.") + MESSAGE_OVERHEAD + REPLY_PRIMING
    assert total_tokens(measure(responses_segments(body), COUNTER)) == expected


def test_anthropic_blocks_and_breakpoints() -> None:
    tool = {"name": "grep", "description": "Search.", "input_schema": {"type": "object"}}
    body = {
        "tools": [{**tool, "cache_control": {"type": "ephemeral"}}],
        "system": [
            {"type": "text", "text": "System rules.", "cache_control": {"type": "ephemeral"}}
        ],
        "messages": [
            {"role": "user", "content": "Find TODOs."},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Search first.", "signature": "s"},
                    {"type": "tool_use", "id": "t1", "name": "grep", "input": {"q": "TODO"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "a.py:3: TODO"},
                    {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}},
                ],
            },
        ],
    }
    segments = measure(anthropic_segments(body), COUNTER)
    expected = (
        n(canonical(tool))
        + n("System rules.")
        + n("Find TODOs.")
        + n("Search first.")
        + n("grep " + json.dumps({"q": "TODO"}, separators=(",", ":")))
        + TOOL_CALL_OVERHEAD
        + n("a.py:3: TODO")
        + TOOL_CALL_OVERHEAD
        + IMAGE_TOKENS_ANTHROPIC
        + 4 * MESSAGE_OVERHEAD
        + REPLY_PRIMING
    )
    assert total_tokens(segments) == expected
    assert [s.breakpoint for s in segments] == [True, True, False, False, False, False, False]


def test_cache_control_does_not_change_a_block_or_its_count() -> None:
    plain = {"messages": [{"role": "user", "content": [{"type": "text", "text": "same"}]}]}
    marked = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "same", "cache_control": {"type": "ephemeral"}}
                ],
            }
        ]
    }
    a, b = anthropic_segments(plain), anthropic_segments(marked)
    assert [s.key for s in a] == [s.key for s in b]
    assert total_tokens(measure(a, COUNTER)) == total_tokens(measure(b, COUNTER))


def test_a_prefix_counts_the_same_inside_a_longer_request() -> None:
    first = [
        {"role": "system", "content": "Rules " * 50},
        {"role": "user", "content": "Question one?"},
    ]
    longer = [
        *first,
        {"role": "assistant", "content": "Answer."},
        {"role": "user", "content": "2?"},
    ]
    a = measure(chat_segments({"messages": first}), COUNTER)
    b = measure(chat_segments({"messages": longer}), COUNTER)
    assert [s.key for s in b[: len(a)]] == [s.key for s in a]
    assert sum(s.tokens for s in b[: len(a)]) == total_tokens(a) - REPLY_PRIMING


def test_same_text_in_another_role_is_another_block() -> None:
    a = chat_segments({"messages": [{"role": "user", "content": "x"}]})
    b = chat_segments({"messages": [{"role": "assistant", "content": "x"}]})
    assert a[0].key != b[0].key


def test_common_prefix_of_two_texts_in_tokens() -> None:
    base = "The quick brown fox jumps over the lazy dog. " * 20
    assert COUNTER.common_prefix(base + " alpha", base + " omega", 10_000) == n(base)
    assert COUNTER.common_prefix("abc", "xyz", 10) == 0
    assert COUNTER.common_prefix(base, base, 7) == 7
