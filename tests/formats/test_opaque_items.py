"""Provider-native items and blocks that abridged does not interpret: read as ``Opaque`` parts,
written back to their own provider's format unchanged, dropped for any other, counted,
stored and shown to a summarizer by type. The fixtures follow the shapes in the providers'
public API references (Responses output items; Anthropic server tools, MCP, Files and
compaction)."""

from __future__ import annotations

import json
from typing import Any

from abridged.core.model import Message, Opaque, message_from_dict, message_to_dict
from abridged.core.tokens import estimate_message_tokens
from abridged.engine.summarize.transcript import render_transcript
from abridged.formats.anthropic_messages import messages_from_anthropic, messages_to_anthropic
from abridged.formats.openai_chat import messages_to_openai
from abridged.formats.openai_responses import messages_from_responses, messages_to_responses

ENCRYPTED = "gAAAAABo" + "Zk1xY2VyeXB0ZWQ" * 40

RESPONSES_ITEMS: list[dict[str, Any]] = [
    {"type": "compaction", "id": "cmp_68a1", "encrypted_content": ENCRYPTED},
    {"role": "user", "content": "What was in the news today, and plot 2+2?"},
    {
        "type": "web_search_call",
        "id": "ws_67c9fa0502748190b7dd390736892e10",
        "status": "completed",
        "action": {"type": "search", "query": "positive news today"},
    },
    {
        "type": "code_interpreter_call",
        "id": "ci_6841",
        "status": "completed",
        "code": "print(2 + 2)",
        "container_id": "cntr_6841",
        "outputs": [{"type": "logs", "logs": "4"}],
    },
    {
        "type": "mcp_call",
        "id": "mcp_682d",
        "server_label": "deepwiki",
        "name": "ask_question",
        "arguments": '{"repoName":"modelcontextprotocol/modelcontextprotocol"}',
        "output": "The spec supports 2 transports.",
        "error": None,
    },
    {
        "type": "message",
        "id": "msg_67c9",
        "role": "assistant",
        "status": "completed",
        "content": [
            {"type": "output_text", "text": "Good news: ... and 2+2 is 4.", "annotations": []}
        ],
    },
    {
        "type": "computer_call",
        "id": "cu_67cc",
        "call_id": "call_zw3",
        "action": {"type": "click", "button": "left", "x": 156, "y": 50},
        "pending_safety_checks": [],
        "status": "completed",
    },
    {
        "type": "computer_call_output",
        "call_id": "call_zw3",
        "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,iVBORw0K"},
    },
    {"type": "item_reference", "id": "fs_684b"},
    {"role": "user", "content": "Thanks."},
]

ANTHROPIC_MESSAGES: list[dict[str, Any]] = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Analyse this file and tell me when Shannon was born."},
            {"type": "container_upload", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"},
        ],
    },
    {
        "role": "assistant",
        "content": [
            {"type": "compaction", "content": "Earlier: the user asked for a CSV analysis."},
            {"type": "text", "text": "I'll search for that."},
            {
                "type": "server_tool_use",
                "id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
                "name": "web_search",
                "input": {"query": "claude shannon birth date"},
            },
            {
                "type": "web_search_tool_result",
                "tool_use_id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
                "content": [
                    {
                        "type": "web_search_result",
                        "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
                        "title": "Claude Shannon - Wikipedia",
                        "encrypted_content": ENCRYPTED,
                        "page_age": "April 30, 2025",
                    }
                ],
            },
            {"type": "text", "text": "Claude Shannon was born on April 30, 1916."},
        ],
    },
    {"role": "user", "content": "Thanks."},
]


def _bytes(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_responses_items_of_every_kind_round_trip_byte_for_byte() -> None:
    messages = messages_from_responses(RESPONSES_ITEMS)
    written = messages_to_responses(messages)
    assert written == RESPONSES_ITEMS
    for sent, given in zip(written, RESPONSES_ITEMS, strict=True):
        if given.get("type") not in ("message", None):  # the provider's own items, to the byte
            assert _bytes(sent) == _bytes(given)
    opaque = [p for m in messages for p in m.parts if isinstance(p, Opaque)]
    assert [p.type for p in opaque] == [
        "compaction",
        "web_search_call",
        "code_interpreter_call",
        "mcp_call",
        "computer_call",
        "computer_call_output",
        "item_reference",
    ]
    assert all(p.format == "openai-responses" for p in opaque)
    assert opaque[0].is_compaction and not opaque[1].is_compaction
    # the computer call and its output share one assistant message: no cut can split them
    types = [{p.type for p in m.parts if isinstance(p, Opaque)} for m in messages]
    assert any({"computer_call", "computer_call_output"} <= t for t in types)


def test_anthropic_blocks_of_the_provider_round_trip_byte_for_byte() -> None:
    messages = messages_from_anthropic(ANTHROPIC_MESSAGES)
    system, out = messages_to_anthropic(messages)
    assert system is None
    assert _bytes(out) == _bytes(ANTHROPIC_MESSAGES)
    kinds = [p.type for m in messages for p in m.parts if isinstance(p, Opaque)]
    assert kinds == ["container_upload", "compaction", "server_tool_use", "web_search_tool_result"]


def test_another_providers_items_are_dropped_not_sent() -> None:
    from_anthropic = messages_from_anthropic(ANTHROPIC_MESSAGES)
    as_responses = messages_to_responses(from_anthropic)
    as_chat = messages_to_openai(from_anthropic)
    text = _bytes(as_responses) + _bytes(as_chat)
    for word in ("server_tool_use", "web_search_tool_result", "container_upload", "compaction"):
        assert word not in text
    assert "Claude Shannon was born on April 30, 1916." in text  # the rest is kept
    from_responses = messages_from_responses(RESPONSES_ITEMS)
    _, anthropic = messages_to_anthropic(from_responses)
    assert "web_search_call" not in _bytes(anthropic)
    assert "Good news" in _bytes(anthropic)


def test_opaque_parts_survive_the_store_encoding_and_keep_their_ids() -> None:
    for messages in (
        messages_from_responses(RESPONSES_ITEMS),
        messages_from_anthropic(ANTHROPIC_MESSAGES),
    ):
        again = [message_from_dict(json.loads(json.dumps(message_to_dict(m)))) for m in messages]
        assert again == messages
        assert [m.id for m in again] == [m.id for m in messages]


def test_opaque_parts_are_counted_by_their_size() -> None:
    small = Message("assistant", (Opaque.of("anthropic", {"type": "compaction", "content": "x"}),))
    big = Message(
        "assistant",
        (Opaque.of("anthropic", {"type": "compaction", "content": "word " * 2_000}),),
    )
    assert estimate_message_tokens(big) - estimate_message_tokens(small) >= 1_500


def test_a_summarizer_sees_the_items_type_and_readable_fields_not_encrypted_content() -> None:
    transcript = render_transcript(messages_from_responses(RESPONSES_ITEMS)).text
    assert "web_search_call" in transcript and "positive news today" in transcript
    assert "mcp_call" in transcript
    assert ENCRYPTED not in transcript and ENCRYPTED[:40] not in transcript
    anthropic = render_transcript(messages_from_anthropic(ANTHROPIC_MESSAGES)).text
    assert "web_search_tool_result" in anthropic and "Claude Shannon - Wikipedia" in anthropic
