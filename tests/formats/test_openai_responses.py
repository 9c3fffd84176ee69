"""Tests of the OpenAI Responses converter: fixtures, grouping, round trips, errors, properties."""

from __future__ import annotations

import copy
import json
import string
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abridged.core.model import File, Image, Message, Reasoning, Text, ToolCall, ToolResult
from abridged.errors import FormatError
from abridged.formats.openai_chat import messages_from_openai, messages_to_openai
from abridged.formats.openai_responses import messages_from_responses, messages_to_responses
from tests.formats.support import mini_swe_agent_sessions, prune_observations

# Input items as the Responses API documents them: the previous responses' output items passed
# back (reasoning with an encrypted payload and a summary, an output message, two parallel
# function calls), the function outputs, and a second response.
ITEMS: list[dict[str, Any]] = [
    {"role": "developer", "content": "Talk like a pirate."},
    {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "Weather in Paris and Bogotá? Here is a photo."},
            {"type": "input_image", "image_url": "https://example.com/sky.jpg", "detail": "auto"},
        ],
    },
    {
        "type": "reasoning",
        "id": "rs_67ccd2bf17f0819081ff3bb2cf6508e6",
        "summary": [{"type": "summary_text", "text": "**Planning** Two cities: two calls."}],
        "encrypted_content": "gAAAAABoISQ24OyVRYbkYfukJ6sBRBqvuA==",
    },
    {
        "type": "message",
        "id": "msg_67ccd2bf17f0819081ff3bb2cf6508e7",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Arr, checking both.", "annotations": []}],
    },
    {
        "type": "function_call",
        "id": "fc_12345xyz",
        "call_id": "call_12345xyz",
        "name": "get_weather",
        "arguments": '{"location":"Paris, France"}',
        "status": "completed",
    },
    {
        "type": "function_call",
        "id": "fc_67890abc",
        "call_id": "call_67890abc",
        "name": "get_weather",
        "arguments": '{"location":"Bogotá, Colombia"',
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_12345xyz", "output": "18°C"},
    {
        "type": "function_call_output",
        "call_id": "call_67890abc",
        "output": [{"type": "input_text", "text": "14°C"}],
    },
    {
        "type": "reasoning",
        "id": "rs_2",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "Both results are in."}],
    },
    {
        "type": "message",
        "id": "msg_2",
        "status": "completed",
        "role": "assistant",
        "content": [
            {
                "type": "output_text",
                "text": "Paris be 18°C, Bogotá 14°C.",
                "annotations": [{"type": "url_citation", "url": "https://weather.test"}],
                "logprobs": [],
            }
        ],
    },
]


def test_items_read_into_grouped_messages() -> None:
    messages = messages_from_responses(ITEMS)

    assert [m.role for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert messages[0].meta["developer"] is True
    assert messages[1].parts[1] == Image(url="https://example.com/sky.jpg", detail="auto")
    first = messages[2]
    assert first.parts == (
        Reasoning(
            encrypted="gAAAAABoISQ24OyVRYbkYfukJ6sBRBqvuA==",
            summary=("**Planning** Two cities: two calls.",),
            id="rs_67ccd2bf17f0819081ff3bb2cf6508e6",
            provider="openai",
        ),
        Text("Arr, checking both."),
        ToolCall("call_12345xyz", "get_weather", '{"location":"Paris, France"}'),
        ToolCall("call_67890abc", "get_weather", '{"location":"Bogotá, Colombia"'),
    )
    parts_meta = first.meta["openai_responses"]["parts"]
    assert parts_meta["1"]["item"]["extra"]["id"] == "msg_67ccd2bf17f0819081ff3bb2cf6508e7"
    assert parts_meta["2"]["extra"] == {"id": "fc_12345xyz", "status": "completed"}
    assert messages[3].parts == (ToolResult("call_12345xyz", "get_weather", (Text("18°C"),)),)
    assert messages[4].tool_results[0].name == "get_weather"
    assert messages[5].parts[0] == Reasoning(
        text="Both results are in.", id="rs_2", provider="openai"
    )


def test_items_round_trip_exactly() -> None:
    original = copy.deepcopy(ITEMS)
    messages = messages_from_responses(ITEMS)
    assert messages_to_responses(messages) == original
    assert original == ITEMS
    assert messages_from_responses(messages_to_responses(messages)) == messages


def test_assistant_message_items_keep_their_boundaries() -> None:
    items: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "a", "annotations": []}],
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {"type": "output_text", "text": "b", "annotations": []},
                {"type": "refusal", "refusal": "no"},
            ],
        },
        {"role": "assistant", "content": "easy"},
        {"role": "assistant", "content": [{"type": "input_text", "text": "typed as input"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "c"}]},
    ]
    messages = messages_from_responses(items)
    assert len(messages) == 2
    assert messages[1].parts == tuple(
        Text(t) for t in ("a", "b", "no", "easy", "typed as input", "c")
    )
    assert messages_to_responses(messages) == items


def test_several_reasoning_texts_and_odd_summaries_are_kept() -> None:
    items: list[dict[str, Any]] = [
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "s", "index": 0}],
            "content": [
                {"type": "reasoning_text", "text": "first"},
                {"type": "reasoning_text", "text": "second"},
            ],
            "encrypted_content": None,
            "status": "completed",
        },
        {"type": "reasoning", "id": "rs_2"},
    ]
    messages = messages_from_responses(items)
    assert messages[0].parts == (
        Reasoning(text="first\nsecond", summary=("s",), id="rs_1", provider="openai"),
        Reasoning(id="rs_2", provider="openai"),
    )
    assert messages_to_responses(messages) == items


def test_function_output_with_images_and_files() -> None:
    items: list[dict[str, Any]] = [
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "screenshot",
            "arguments": "{}",
        },
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": [
                {"type": "input_text", "text": "Here it is"},
                {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="},
                {"type": "input_image", "file_id": "file-img", "detail": "low"},
                {
                    "type": "input_file",
                    "filename": "a.pdf",
                    "file_data": "data:application/pdf;base64,JVBE",
                },
                {"type": "input_file", "file_url": "https://example.com/b.pdf"},
                {"type": "input_file", "file_id": "file-abc"},
            ],
            "id": "fco_1",
            "status": "completed",
        },
    ]
    messages = messages_from_responses(items)
    result = messages[1].tool_results[0]
    assert result.name == "screenshot"
    assert result.content == (
        Text("Here it is"),
        Image(data="iVBORw0KGgo=", media_type="image/png"),
        Image(detail="low"),
        File(data="JVBE", media_type="application/pdf", filename="a.pdf"),
        File(url="https://example.com/b.pdf"),
        File(file_id="file-abc"),
    )
    assert messages_to_responses(messages) == items


def test_core_messages_export_and_come_back_equal() -> None:
    messages = [
        Message.system("Be terse."),
        Message("system", (Text("dev"),), meta={"developer": True}),
        Message("user", (Text("look"), Image(url="https://x.test/a.png", detail="high"))),
        Message(
            "assistant",
            (
                Reasoning(summary=("thinking",), encrypted="ENC", id="rs_a", provider="openai"),
                Text("one"),
                Text("two"),
                ToolCall("c1", "ls", "{}"),
                ToolCall("c2", "cat", "not json"),
            ),
        ),
        Message.tool("c2", "B", name="cat"),
        Message.tool("c1", "A", name="ls"),
        Message.assistant("done"),
    ]
    items = messages_to_responses(messages)
    assert items[1] == {"type": "message", "role": "developer", "content": "dev"}
    assert items[3] == {
        "type": "reasoning",
        "id": "rs_a",
        "summary": [{"type": "summary_text", "text": "thinking"}],
        "encrypted_content": "ENC",
    }
    assert items[4] == {
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "output_text", "text": "one", "annotations": []},
            {"type": "output_text", "text": "two", "annotations": []},
        ],
    }
    assert items[6]["arguments"] == "not json"
    assert items[7] == {"type": "function_call_output", "call_id": "c2", "output": "B"}
    assert messages_from_responses(items) == messages


def test_export_drops_what_responses_cannot_carry() -> None:
    messages = [
        Message.assistant(
            "x",
            reasoning=[Reasoning("t", signature="sig", provider="anthropic"), Reasoning("compat")],
            tool_calls=[ToolCall("a", "f"), ToolCall("b", "g")],
        ),
        Message(
            "tool",
            (
                ToolResult("a", "f", (Text("err"),), is_error=True),
                ToolResult("b", "g", (Text("ok"),)),
            ),
        ),
    ]
    items = messages_to_responses(messages)
    assert [i["type"] for i in items] == [
        "message",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert items[3] == {"type": "function_call_output", "call_id": "a", "output": "err"}


def test_responses_to_chat_keeps_tool_pairing() -> None:
    chat = messages_to_openai(messages_from_responses(ITEMS))
    assert [m["role"] for m in chat] == [
        "developer",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert [c["id"] for c in chat[2]["tool_calls"]] == ["call_12345xyz", "call_67890abc"]
    assert [m["tool_call_id"] for m in chat[3:5]] == ["call_12345xyz", "call_67890abc"]
    back = messages_from_openai(chat)
    assert [r.tool_results[0].name for r in back[3:5]] == ["get_weather", "get_weather"]


@pytest.mark.parametrize(
    ("message", "text"),
    [
        (Message("assistant", (Image(url="https://x.test/a.png"),)), "image part cannot be"),
        (Message("user", (ToolCall("a", "f"),)), "tool_call part cannot be in a user message"),
        (Message("tool", (Text("loose"),)), "text part cannot be in a tool message"),
        (Message("system", (File(file_id="f"),)), "file part cannot be in a system message"),
        (Message("assistant", (ToolResult("a"),)), "tool_result part cannot be"),
    ],
)
def test_export_errors_name_the_message(message: Message, text: str) -> None:
    with pytest.raises(FormatError) as info:
        messages_to_responses([Message.user("first"), message])
    assert info.value.index == 1
    assert info.value.format == "openai-responses"
    assert text in info.value.message


# -- errors --------------------------------------------------------------------------------------

_OK = {"role": "user", "content": "fine"}


@pytest.mark.parametrize(
    ("item", "text", "expected"),
    [
        (["not", "an", "item"], "item 1 is not an object", "an input or output item"),
        ({"content": "no type nor role"}, "item has no type", "type: a string"),
        ({"type": 5, "id": "ws_1"}, "unknown item type 5", "type:"),
        ({"type": "message", "content": "x"}, "message has no role", "role: one of"),
        ({"type": "message", "role": "tool", "content": "x"}, "unknown role 'tool'", "role:"),
        ({"role": "user"}, "user message has no content", "content"),
        ({"role": "user", "content": 3}, "content of item 1 is a int", "content: a string"),
        ({"role": "user", "content": [7]}, "content[0] of item 1 is not an object", "a content"),
        ({"role": "user", "content": [{"type": "input_video"}]}, "is unknown", "part type"),
        (
            {"role": "user", "content": [{"type": "refusal", "refusal": "x"}]},
            "'refusal' is not allowed here",
            "input_text",
        ),
        ({"role": "user", "content": [{"type": "input_text"}]}, "no string 'text'", "text:"),
        (
            {"role": "system", "content": [{"type": "input_image", "image_url": "u"}]},
            "'input_image' is not allowed here",
            "input_text, output_text",
        ),
        (
            {"role": "assistant", "content": []},
            "assistant message item has no content",
            "non-empty",
        ),
        (
            {"role": "assistant", "content": [{"type": "input_image", "image_url": "u"}]},
            "'input_image' is not allowed here",
            "output_text",
        ),
        (
            {"role": "assistant", "content": [{"type": "refusal"}]},
            "refusal part has no string 'refusal'",
            "refusal:",
        ),
        (
            {"type": "function_call", "name": "f", "arguments": "{}"},
            "no string 'call_id'",
            "call_id",
        ),
        ({"type": "function_call", "call_id": "c", "arguments": "{}"}, "no string 'name'", "name"),
        (
            {"type": "function_call", "call_id": "c", "name": "f"},
            "no string 'arguments'",
            "arguments",
        ),
        ({"type": "function_call_output", "output": "x"}, "no string 'call_id'", "call_id"),
        ({"type": "function_call_output", "call_id": "c"}, "has no output", "output:"),
        (
            {"type": "function_call_output", "call_id": "c", "output": {}},
            "output of item 1 is a dict",
            "output:",
        ),
        ({"type": "reasoning", "summary": "s"}, "summary is not a list", "summary:"),
        (
            {"type": "reasoning", "summary": [{"type": "summary_text"}]},
            "summary[0] of reasoning item 1",
            "summary parts",
        ),
        ({"type": "reasoning", "summary": [], "content": "c"}, "content is not a list", "content:"),
    ],
)
def test_malformed_items_raise_format_error(item: Any, text: str, expected: str) -> None:
    with pytest.raises(FormatError) as info:
        messages_from_responses([_OK, item])
    error = info.value
    assert error.format == "openai-responses"
    assert error.index == 1
    assert text in error.message
    assert error.expected is not None and expected in error.expected


@pytest.mark.parametrize("items", ["input text", {"type": "message"}, None])
def test_input_that_is_not_a_list(items: Any) -> None:
    with pytest.raises(FormatError, match="expected a list of Responses items") as info:
        messages_from_responses(items)
    assert info.value.index is None


# -- properties ----------------------------------------------------------------------------------

_ids = st.text(string.ascii_letters + string.digits + "_", min_size=1, max_size=10)
_texts = st.text(max_size=30)
_b64 = st.text(string.ascii_letters + string.digits + "+/", min_size=4, max_size=16)
_detail = st.none() | st.sampled_from(["low", "high", "auto"])
_images = st.builds(Image, url=_ids.map(lambda s: f"https://img.test/{s}.png"), detail=_detail) | (
    st.builds(
        Image, data=_b64, media_type=st.sampled_from(["image/png", "image/webp"]), detail=_detail
    )
)
_files = st.one_of(
    st.builds(File, file_id=_ids),
    st.builds(File, data=_b64, media_type=st.just("application/pdf"), filename=_ids | st.none()),
    st.builds(File, url=_ids.map(lambda s: f"https://files.test/{s}.pdf")),
)
_content = st.builds(Text, _texts) | _images | _files
_reasoning = st.builds(
    Reasoning,
    text=_texts,
    encrypted=st.none() | _b64,
    summary=st.lists(_texts, max_size=2).map(tuple),
    id=_ids.map(lambda s: "rs_" + s) | st.none(),
    provider=st.just("openai"),
)


@st.composite
def responses_conversations(draw: st.DrawFn) -> list[Message]:
    """Core conversations the Responses API can express: never two assistant messages in a row
    (one response is one assistant message), one result per tool message, named after its call."""
    messages: list[Message] = []
    if draw(st.booleans()):
        meta = {"developer": True} if draw(st.booleans()) else {}
        messages.append(Message("system", (Text(draw(_texts)),), meta=meta))
    counter = 0
    for _ in range(draw(st.integers(1, 3))):
        messages.append(Message("user", tuple(draw(st.lists(_content, max_size=3)))))
        for _step in range(draw(st.integers(0, 2))):
            calls = []
            for _call in range(draw(st.integers(1, 3))):
                counter += 1
                calls.append(ToolCall(f"call_{counter}", draw(_ids), draw(_texts)))
            others = draw(st.lists(_reasoning | st.builds(Text, _texts), max_size=3))
            parts = draw(st.permutations([*others, *calls]))
            messages.append(Message("assistant", tuple(parts)))
            for call in draw(st.permutations(calls)):
                content = draw(st.lists(_content, max_size=2))
                messages.append(Message("tool", (ToolResult(call.id, call.name, tuple(content)),)))
        final = draw(st.lists(_reasoning | st.builds(Text, _texts), min_size=1, max_size=3))
        messages.append(Message("assistant", tuple(final)))
    return messages


@given(responses_conversations())
def test_core_conversations_round_trip(messages: list[Message]) -> None:
    items = messages_to_responses(messages)
    assert messages_from_responses(items) == messages
    assert messages_to_responses(messages_from_responses(items)) == items
    json.dumps(items)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
_fuzz_parts = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["input_text", "output_text"]), "text": _texts},
        optional={"annotations": st.just([]) | _json, "logprobs": _json},
    ),
    st.fixed_dictionaries({"type": st.just("refusal"), "refusal": _texts}),
    st.fixed_dictionaries(
        {"type": st.just("input_image")},
        optional={
            "image_url": _ids | _b64.map(lambda d: f"data:image/png;base64,{d}"),
            "detail": _json,
            "file_id": _ids,
        },
    ),
    st.fixed_dictionaries(
        {"type": st.just("input_file")},
        optional={"file_id": _ids, "file_data": _b64 | _json, "file_url": _ids, "filename": _json},
    ),
    _json,
)
_fuzz_content = _texts | st.lists(_fuzz_parts, min_size=1, max_size=3) | _json
_fuzz_item = st.one_of(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "system", "developer", "assistant"]),
            "content": _fuzz_content,
        },
        optional={"type": st.just("message"), "id": _ids, "status": _json},
    ),
    st.fixed_dictionaries(
        {"type": st.just("reasoning")},
        optional={
            "id": _ids | _json,
            "summary": st.lists(
                st.fixed_dictionaries(
                    {"type": st.just("summary_text"), "text": _texts}, optional={"index": _json}
                ),
                max_size=2,
            ),
            "content": st.lists(
                st.fixed_dictionaries({"type": st.just("reasoning_text"), "text": _texts}) | _json,
                max_size=2,
            ),
            "encrypted_content": _b64 | _json,
            "status": _json,
        },
    ),
    st.fixed_dictionaries(
        {"type": st.just("function_call"), "call_id": _ids, "name": _ids, "arguments": _texts},
        optional={"id": _json, "status": _json},
    ),
    st.fixed_dictionaries(
        {"type": st.just("function_call_output"), "call_id": _ids, "output": _fuzz_content},
        optional={"id": _json},
    ),
)


@given(st.lists(_fuzz_item, max_size=5))
def test_arbitrary_input_reads_or_raises_format_error(items: list[Any]) -> None:
    """Whatever the input, the reader raises FormatError or reads it so the writer gives it back."""
    try:
        messages = messages_from_responses(items)
    except FormatError as error:
        assert error.format == "openai-responses"
        return
    assert messages_to_responses(messages) == items


# -- text-protocol messages (mini-swe-agent): written as the plain text they were sent as -------


def _as_items(messages: list[Message], sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Responses items of the plain messages sent: one ``message`` item each, string content,
    except a plain (not text-protocol) assistant message, spelled as a list as always."""
    return [
        {"type": "message", **s}
        if m.role != "assistant" or m.meta.get("text_protocol")
        else {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": s["content"], "annotations": []}],
        }
        for m, s in zip(messages, sent, strict=True)
    ]


def test_text_protocol_messages_export_as_the_plain_messages_sent() -> None:
    for messages, sent in mini_swe_agent_sessions():
        items = messages_to_responses(messages)
        assert items == _as_items(messages, sent)
        assert {item["type"] for item in items} == {"message"}  # no function_call(_output)


def test_pruned_text_protocol_messages_export_as_their_placeholder_text() -> None:
    for messages, sent in mini_swe_agent_sessions():
        pruned, expected = prune_observations(messages, sent)
        assert messages_to_responses(pruned) == _as_items(messages, expected)


def test_lone_surrogates_are_read_and_kept() -> None:
    # a valid JSON escape a provider or a tool can send: kept as given, never a crash
    items = json.loads(
        '[{"role": "user", "content": "a\\ud800b"},'
        ' {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{\\"p\\": 1}"},'
        ' {"type": "function_call_output", "call_id": "c1", "output": "\\udc00"}]'
    )
    messages = messages_from_responses(items)
    assert messages[0].text == "a\ud800b"
    assert messages[2].tool_results[0].text == "\udc00"
    assert messages_to_responses(messages) == items
