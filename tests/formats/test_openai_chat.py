"""Tests of the OpenAI Chat Completions converter: fixtures, round trips, errors, properties."""

from __future__ import annotations

import copy
import json
import string
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abridged.core.model import (
    File,
    Image,
    Message,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
    Usage,
)
from abridged.errors import FormatError
from abridged.formats.openai_chat import (
    completion_from_openai,
    messages_from_openai,
    messages_to_openai,
)
from tests.formats.support import PNG, mini_swe_agent_sessions, prune_observations

# A conversation as the Chat Completions API documents it: developer prompt, multi-part user
# content with images, parallel tool calls (one with arguments that are not valid JSON), their
# results, and a final answer as the API returned it (refusal and annotations fields included).
CONVERSATION: list[dict[str, Any]] = [
    {"role": "developer", "content": "You are a weather assistant. Answer briefly."},
    {
        "role": "user",
        "name": "alice",
        "content": [
            {"type": "text", "text": "What's the weather in Paris and London? See the map."},
            {
                "type": "image_url",
                "image_url": {"url": "https://example.com/map.png", "detail": "high"},
            },
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_abc123",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'},
            },
            {
                "id": "call_def456",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location": "London"'},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_abc123", "content": "18°C and sunny"},
    {
        "role": "tool",
        "tool_call_id": "call_def456",
        "content": [{"type": "text", "text": "12°C, rain"}],
    },
    {
        "role": "assistant",
        "content": "Paris: 18°C and sunny. London: 12°C with rain.",
        "refusal": None,
        "annotations": [],
    },
]


def test_conversation_reads_into_the_core_model() -> None:
    messages = messages_from_openai(CONVERSATION)

    assert [m.role for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert messages[0].meta["developer"] is True
    assert messages[0].text == "You are a weather assistant. Answer briefly."
    user = messages[1]
    assert user.parts == (
        Text("What's the weather in Paris and London? See the map."),
        Image(url="https://example.com/map.png", detail="high"),
        Image(data=PNG, media_type="image/png"),
    )
    assert user.meta["openai"]["extra"] == {"name": "alice"}
    assert messages[2].parts == (
        ToolCall("call_abc123", "get_weather", '{"location": "Paris"}'),
        ToolCall("call_def456", "get_weather", '{"location": "London"'),
    )
    assert not messages[2].tool_calls[1].arguments_valid  # kept verbatim, not repaired
    assert messages[3].parts == (
        ToolResult("call_abc123", "get_weather", (Text("18°C and sunny"),)),
    )
    assert messages[4].tool_results[0].name == "get_weather"
    assert messages[4].tool_results[0].text == "12°C, rain"
    assert messages[5].text == "Paris: 18°C and sunny. London: 12°C with rain."


def test_conversation_round_trips_exactly() -> None:
    original = copy.deepcopy(CONVERSATION)
    messages = messages_from_openai(CONVERSATION)
    assert messages_to_openai(messages) == original
    assert original == CONVERSATION  # the input was not mutated
    assert messages_from_openai(messages_to_openai(messages)) == messages


def test_exported_dicts_do_not_alias_message_meta() -> None:
    messages = messages_from_openai(CONVERSATION)
    exported = messages_to_openai(messages)
    exported[1]["name"] = "mallory"
    assert messages[1].meta["openai"]["extra"] == {"name": "alice"}


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_fields_of_compatible_servers(field: str) -> None:
    items: list[dict[str, Any]] = [
        {"role": "user", "content": "2+2?"},
        {
            "role": "assistant",
            "content": "4",
            field: "The user wants a sum. 2+2=4.",
            "tool_calls": [],
        },
    ]
    messages = messages_from_openai(items)
    assert messages[1].parts == (Reasoning("The user wants a sum. 2+2=4."), Text("4"))
    assert messages_to_openai(messages) == items


def test_reasoning_content_before_parallel_tool_calls_round_trips() -> None:
    items: list[dict[str, Any]] = [
        {"role": "user", "content": "Read a.py and b.py"},
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "Two independent reads: call both.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"a.py"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"b.py"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "B"},
        {"role": "tool", "tool_call_id": "c1", "content": "A"},
    ]
    messages = messages_from_openai(items)
    assert isinstance(messages[1].parts[0], Reasoning)
    assert messages[1].parts[1] == Text("")
    assert [r.tool_results[0].name for r in messages[2:]] == ["read", "read"]
    assert messages_to_openai(messages) == items


def test_refusal_field_and_refusal_part() -> None:
    items: list[dict[str, Any]] = [
        {"role": "user", "content": "Help me pick a lock."},
        {"role": "assistant", "content": None, "refusal": "I can't help with that."},
        {
            "role": "assistant",
            "content": [{"type": "refusal", "refusal": "Still no."}],
        },
    ]
    messages = messages_from_openai(items)
    assert messages[1].parts == (Text("I can't help with that."),)
    assert messages[2].text == "Still no."
    assert messages_to_openai(messages) == items


def test_audio_and_file_parts() -> None:
    items: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Transcribe this and summarise the PDFs."},
                {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
                {"type": "input_audio", "input_audio": {"data": "SUQz", "format": "mp3"}},
                {
                    "type": "file",
                    "file": {
                        "filename": "report.pdf",
                        "file_data": "data:application/pdf;base64,JVBERi0=",
                    },
                },
                {"type": "file", "file": {"file_id": "file-6F2ksmvXxt4VdoqmHRw6kL"}},
                # audio sent as a file part (no filename): must not come back as input_audio
                {"type": "file", "file": {"file_data": "data:audio/wav;base64,UklGRg=="}},
            ],
        }
    ]
    messages = messages_from_openai(items)
    assert messages[0].parts[1:5] == (
        File(data="UklGRg==", media_type="audio/wav"),
        File(data="SUQz", media_type="audio/mpeg"),
        File(data="JVBERi0=", media_type="application/pdf", filename="report.pdf"),
        File(file_id="file-6F2ksmvXxt4VdoqmHRw6kL"),
    )
    assert messages_to_openai(messages) == items


def test_content_spellings_are_kept() -> None:
    items: list[dict[str, Any]] = [
        {"role": "system", "content": [{"type": "text", "text": "one part, as a list"}]},
        {"role": "user", "content": ""},
        {"role": "user", "content": []},
        {"role": "assistant", "tool_calls": None},  # no content key at all
        {"role": "assistant", "content": []},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "cached", "cache_control": {"type": "ephemeral"}},
                {"type": "image_url", "image_url": "https://example.com/bare.png"},
            ],
        },
    ]
    messages = messages_from_openai(items)
    assert messages[1].parts == (Text(""),)
    assert messages[2].parts == ()
    assert messages[3].parts == ()
    assert messages[5].parts == (Text("a"), Text("b"))
    assert messages[6].parts[1] == Image(url="https://example.com/bare.png")
    assert messages_to_openai(messages) == items


def test_arguments_sent_as_an_object_come_back_as_an_object() -> None:
    items: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "function": {"name": "f", "arguments": {"x": [1, 2]}}, "index": 0}
            ],
        }
    ]
    messages = messages_from_openai(items)
    assert messages[0].tool_calls[0].parsed_arguments() == {"x": [1, 2]}
    assert messages_to_openai(messages) == items


def test_tool_message_name_field_and_orphan_result() -> None:
    items: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": "nowhere", "content": "orphan"},
        {"role": "tool", "tool_call_id": "c9", "name": "search", "content": "x"},
    ]
    messages = messages_from_openai(items)
    assert messages[0].tool_results[0].name == ""
    assert messages[1].tool_results[0].name == "search"
    assert messages_to_openai(messages) == items


def test_completion_response_with_usage() -> None:
    response: dict[str, Any] = {
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "object": "chat.completion",
        "created": 1741570283,
        "model": "gpt-4o-2024-08-06",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {
                                "name": "get_weather",
                                "arguments": '{"location":"Paris"}',
                            },
                        }
                    ],
                    "refusal": None,
                    "annotations": [],
                },
                "logprobs": None,
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {
            "prompt_tokens": 1117,
            "completion_tokens": 46,
            "total_tokens": 1163,
            "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0},
        },
        "system_fingerprint": "fp_fc9f1d7035",
    }
    message = completion_from_openai(response)
    assert message.role == "assistant"
    assert message.tool_calls == (ToolCall("call_1", "get_weather", '{"location":"Paris"}'),)
    assert message.usage == Usage(input=93, output=46, cache_read=1024)
    assert message.meta["response_id"] == "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG"
    assert message.meta["model"] == "gpt-4o-2024-08-06"
    assert message.meta["stop_reason"] == "tool_calls"
    # the id is derived from the content including usage (assign_ids treats it as derived)
    assert message.id == "m" + message.fingerprint[:20]
    assert messages_to_openai([message]) == [response["choices"][0]["message"]]


def test_completion_without_usage() -> None:
    message = completion_from_openai(
        {"choices": [{"message": {"role": "assistant", "content": "hi"}}]}
    )
    assert message.usage is None
    assert message.text == "hi"


# -- export of core messages --------------------------------------------------------------------


def test_core_messages_export_and_come_back_equal() -> None:
    messages = [
        Message.system("Be terse."),
        Message("system", (Text("From the developer."),), meta={"developer": True}),
        Message("user", (Text("Look:"), Image(url="https://x.test/a.png", detail="low"))),
        Message.assistant(
            "On it.",
            reasoning=[Reasoning("plan")],
            tool_calls=[ToolCall("a", "ls", "{}"), ToolCall("b", "cat", '{"f": 1')],
        ),
        Message.tool("a", "x.py", name="ls"),
        Message(
            "tool", (ToolResult("b", "cat", (Text("1"), Image(data=PNG, media_type="image/png"))),)
        ),
        Message.assistant("Done."),
    ]
    wire = messages_to_openai(messages)
    assert wire[1]["role"] == "developer"
    assert wire[3] == {
        "role": "assistant",
        "content": "On it.",
        "reasoning_content": "plan",
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
            {"id": "b", "type": "function", "function": {"name": "cat", "arguments": '{"f": 1'}},
        ],
    }
    assert wire[5]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{PNG}"},
    }
    assert messages_from_openai(wire) == messages


def test_export_drops_what_chat_cannot_carry() -> None:
    messages = [
        Message.assistant(
            "hm",
            reasoning=[Reasoning("signed", signature="sig", provider="anthropic")],
            tool_calls=[ToolCall("a", "f"), ToolCall("b", "g")],
        ),
        Message(
            "tool",
            (
                ToolResult("a", "f", (Text("boom"),), is_error=True),
                ToolResult("b", "g", (Text("ok"),)),
            ),
        ),
    ]
    wire = messages_to_openai(messages)
    assert "reasoning_content" not in wire[0]
    assert wire[1:] == [
        {"role": "tool", "tool_call_id": "a", "content": "boom"},
        {"role": "tool", "tool_call_id": "b", "content": "ok"},
    ]


@pytest.mark.parametrize(
    ("message", "text"),
    [
        (Message("assistant", (Image(url="https://x.test/a.png"),)), "image part cannot be"),
        (Message("user", (Image(),)), "neither url nor data"),
        (Message("user", (File(url="https://x.test/a.pdf"),)), "is a URL"),
        (Message("user", (ToolCall("a", "f"),)), "tool_call part cannot be"),
        (Message("tool", (Text("loose"),)), "text part cannot be in a tool message"),
        (Message("system", (Image(url="https://x.test/a.png"),)), "cannot be in a system message"),
    ],
)
def test_export_errors_name_the_message(message: Message, text: str) -> None:
    with pytest.raises(FormatError) as info:
        messages_to_openai([Message.user("first"), message])
    assert info.value.index == 1
    assert info.value.format == "openai-chat"
    assert text in info.value.message


def test_export_rejects_something_that_is_not_a_message() -> None:
    with pytest.raises(FormatError) as info:
        messages_to_openai([Message.user("ok"), {"role": "user"}])  # type: ignore[list-item]
    assert info.value.index == 1


# -- errors --------------------------------------------------------------------------------------

_OK = {"role": "user", "content": "fine"}


def _call(**function: Any) -> dict[str, Any]:
    return {
        "id": "c1",
        "type": "function",
        "function": {"name": "f", "arguments": "{}", **function},
    }


@pytest.mark.parametrize(
    ("item", "text", "expected"),
    [
        ("just a string", "not an object", "a message object with a role"),
        ({"content": "no role"}, "message has no role", "role: one of"),
        ({"role": "function", "content": "x"}, "unknown role 'function'", "role: one of"),
        ({"role": "user"}, "user message has no content", "content"),
        ({"role": "user", "content": 42}, "content of message 1 is a int", "content: a string"),
        (
            {"role": "user", "content": ["x"]},
            "content[0] of message 1 is not an object",
            "a content",
        ),
        ({"role": "user", "content": [{"type": "video"}]}, "unknown content part type", "one of"),
        ({"role": "user", "content": [{"type": "text", "text": 3}]}, "without a string", "text:"),
        ({"role": "user", "content": [{"type": "image_url"}]}, "image_url.url", "image_url:"),
        (
            {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "x"}}]},
            "input_audio part without",
            "input_audio:",
        ),
        ({"role": "user", "content": [{"type": "file", "file": "x"}]}, "without a file", "file:"),
        (
            {"role": "system", "content": [{"type": "image_url", "image_url": {"url": "u"}}]},
            "'image_url' is not allowed in a system message",
            "part type one of text",
        ),
        (
            {"role": "assistant", "content": [{"type": "input_audio"}]},
            "not allowed in a assistant message",
            "text, refusal",
        ),
        ({"role": "assistant", "tool_calls": {"id": "c1"}}, "tool_calls of message 1", "a list"),
        ({"role": "assistant", "tool_calls": ["c1"]}, "tool_calls[0] of message 1", "tool call"),
        ({"role": "assistant", "tool_calls": [{"type": "function"}]}, "no string id", "id:"),
        (
            {"role": "assistant", "tool_calls": [{**_call(), "type": "custom"}]},
            "unsupported tool call type 'custom'",
            "type: function",
        ),
        (
            {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"arguments": "{}"}}]},
            "no function name",
            "function:",
        ),
        ({"role": "assistant", "tool_calls": [_call(arguments=None)]}, "no arguments", "JSON"),
        (
            {"role": "assistant", "tool_calls": [_call(arguments={"s": {1, 2}})]},
            "arguments cannot be written as JSON",
            "JSON object",
        ),
        ({"role": "tool", "content": "x"}, "no tool_call_id", "tool_call_id:"),
        ({"role": "tool", "tool_call_id": "c1"}, "tool message has no content", "content"),
    ],
)
def test_malformed_messages_raise_format_error(item: Any, text: str, expected: str) -> None:
    with pytest.raises(FormatError) as info:
        messages_from_openai([_OK, item])
    error = info.value
    assert error.format == "openai-chat"
    assert error.index == 1
    assert text in error.message
    assert error.expected is not None and expected in error.expected
    assert "index=1" in str(error)


@pytest.mark.parametrize("items", ["a string", {"role": "user"}, None, 7])
def test_input_that_is_not_a_list(items: Any) -> None:
    with pytest.raises(FormatError, match="expected a list of chat messages") as info:
        messages_from_openai(items)
    assert info.value.index is None


@pytest.mark.parametrize(
    ("response", "text"),
    [
        ([], "response is not an object"),
        ({"choices": []}, "response has no choices"),
        ({"choices": [{"finish_reason": "stop"}]}, "choices[0] has no message"),
        ({"choices": [{"message": {"role": "user", "content": "x"}}]}, "has role 'user'"),
        ({"choices": [{"message": {"content": "x"}}], "usage": 5}, "usage is not an object"),
        ({"choices": [{"message": {"content": 5}}]}, "content of message 0 is a int"),
    ],
)
def test_malformed_completion_raises_format_error(response: Any, text: str) -> None:
    with pytest.raises(FormatError) as info:
        completion_from_openai(response)
    assert text in info.value.message
    assert info.value.format == "openai-chat"


# -- properties ----------------------------------------------------------------------------------

_ids = st.text(string.ascii_letters + string.digits + "_-", min_size=1, max_size=10)
_texts = st.text(max_size=30)
_json_args = st.dictionaries(_ids, st.integers() | _texts, max_size=3).map(json.dumps)
_arguments = _json_args | _texts  # anything: arguments are kept verbatim
_detail = st.none() | st.sampled_from(["low", "high", "auto"])
_b64 = st.text(string.ascii_letters + string.digits + "+/", min_size=4, max_size=16)
_images = st.builds(Image, url=_ids.map(lambda s: f"https://img.test/{s}.png"), detail=_detail) | (
    st.builds(
        Image, data=_b64, media_type=st.sampled_from(["image/png", "image/jpeg"]), detail=_detail
    )
)
_files = st.one_of(
    st.builds(File, data=_b64, media_type=st.sampled_from(["audio/wav", "audio/mpeg"])),
    st.builds(File, file_id=_ids.map(lambda s: "file-" + s)),
    st.builds(File, data=_b64, media_type=st.just("application/pdf"), filename=_ids),
    st.builds(File, data=_b64),
)
_user_parts = st.lists(st.builds(Text, _texts) | _images | _files, max_size=4)


@st.composite
def chat_conversations(draw: st.DrawFn) -> list[Message]:
    """Core conversations Chat Completions can express: one reasoning text before the answer's
    texts and tool calls, one result per tool message, named after its call."""
    messages: list[Message] = []
    if draw(st.booleans()):
        meta = {"developer": True} if draw(st.booleans()) else {}
        messages.append(
            Message("system", tuple(draw(st.lists(st.builds(Text, _texts), max_size=2))), meta=meta)
        )
    counter = 0
    for _ in range(draw(st.integers(1, 3))):
        messages.append(Message("user", tuple(draw(_user_parts))))
        for _step in range(draw(st.integers(0, 2))):
            calls = []
            for _call in range(draw(st.integers(1, 3))):
                counter += 1
                calls.append(ToolCall(f"call_{counter}", draw(_ids), draw(_arguments)))
            reasoning = [Reasoning(draw(_texts))] if draw(st.booleans()) else []
            texts = draw(st.lists(st.builds(Text, _texts), max_size=2))
            messages.append(Message("assistant", (*reasoning, *texts, *calls)))
            for call in draw(st.permutations(calls)):
                content = draw(st.lists(st.builds(Text, _texts) | _images, max_size=2))
                messages.append(Message("tool", (ToolResult(call.id, call.name, tuple(content)),)))
        messages.append(Message.assistant(draw(_texts)))
    return messages


@given(chat_conversations())
def test_core_conversations_round_trip(messages: list[Message]) -> None:
    wire = messages_to_openai(messages)
    assert messages_from_openai(wire) == messages
    assert messages_to_openai(messages_from_openai(wire)) == wire
    json.dumps(wire)  # plain JSON data


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
_extra_keys = st.dictionaries(st.sampled_from(["name", "x_vendor", "annotations", "audio"]), _json)
_urls = _ids.map(lambda s: f"https://img.test/{s}") | _b64.map(
    lambda d: f"data:image/png;base64,{d}"
)
_fuzz_parts = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("text"), "text": _texts}, optional={"cache_control": _json}
    ),
    st.fixed_dictionaries({"type": st.just("refusal"), "refusal": _texts}),
    st.fixed_dictionaries(
        {
            "type": st.just("image_url"),
            "image_url": _urls
            | st.fixed_dictionaries({"url": _urls}, optional={"detail": _json, "x": _json}),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("input_audio"),
            "input_audio": st.fixed_dictionaries(
                {"data": _b64, "format": st.sampled_from(["wav", "mp3", "mpeg", "flac"])}
            ),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("file"),
            "file": st.fixed_dictionaries(
                {},
                optional={
                    "file_id": _ids | st.none(),
                    "file_data": _b64 | _b64.map(lambda d: f"data:audio/wav;base64,{d}"),
                    "filename": _ids | st.none(),
                },
            ),
        }
    ),
    _json,
)
_fuzz_content = st.none() | _texts | st.lists(_fuzz_parts, max_size=3) | _json
_fuzz_calls = st.lists(
    st.fixed_dictionaries(
        {
            "id": _ids,
            "function": st.fixed_dictionaries(
                {"name": _ids, "arguments": _arguments | st.dictionaries(_ids, _json, max_size=2)},
                optional={"x": _json},
            ),
        },
        optional={"type": st.just("function") | _json, "index": st.integers(0, 3)},
    ),
    max_size=2,
)
_fuzz_item = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "system", "developer"]), "content": _fuzz_content}
    ),
    st.fixed_dictionaries(
        {"role": st.just("assistant")},
        optional={
            "content": _fuzz_content,
            "tool_calls": _fuzz_calls | _json,
            "refusal": _texts | st.none(),
            "reasoning_content": _texts | st.none(),
            "reasoning": _texts | _json,
        },
    ),
    st.fixed_dictionaries(
        {"role": st.just("tool"), "tool_call_id": _ids, "content": _fuzz_content}
    ),
)
_fuzz_items = st.lists(
    st.tuples(_fuzz_item, _extra_keys).map(
        lambda pair: {**pair[1], **pair[0]} if isinstance(pair[0], dict) else pair[0]
    ),
    max_size=3,
)


@given(_fuzz_items)
def test_arbitrary_input_reads_or_raises_format_error(items: list[Any]) -> None:
    """Whatever the input, the reader raises FormatError or reads it so the writer gives it back."""
    try:
        messages = messages_from_openai(items)
    except FormatError as error:
        assert error.format == "openai-chat"
        return
    assert messages_to_openai(messages) == items


# -- text-protocol messages (mini-swe-agent): written as the plain text they were sent as -------


def test_text_protocol_messages_export_as_the_plain_messages_sent() -> None:
    for messages, sent in mini_swe_agent_sessions():
        assert messages_to_openai(messages) == sent


def test_pruned_text_protocol_messages_export_as_their_placeholder_text() -> None:
    for messages, sent in mini_swe_agent_sessions():
        pruned, expected = prune_observations(messages, sent)
        assert messages_to_openai(pruned) == expected


def test_lone_surrogates_are_read_and_kept() -> None:
    # a valid JSON escape a provider or a tool can send: kept as given, never a crash
    items = json.loads(
        '[{"role": "user", "content": "a\\ud800b"},'
        ' {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",'
        ' "function": {"name": "f", "arguments": "{\\"p\\": \\"\\\\udfff\\"}"}}]},'
        ' {"role": "tool", "tool_call_id": "c1", "content": "\\udc00"}]'
    )
    messages = messages_from_openai(items)
    assert messages[0].text == "a\ud800b"
    assert messages[1].tool_calls[0].parsed_arguments() == {"p": "\udfff"}
    assert messages[2].tool_results[0].text == "\udc00"
    assert messages_to_openai(messages) == items
    reply = completion_from_openai(
        json.loads('{"choices": [{"message": {"role": "assistant", "content": "\\ud800"}}]}')
    )
    assert reply.text == "\ud800" and reply.fingerprint
