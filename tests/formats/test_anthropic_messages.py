"""Tests of the Anthropic Messages converter: fixtures, tool results, errors, properties."""

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
from abridged.errors import FormatError, SettingError
from abridged.formats.anthropic_messages import (
    RAW_ARGUMENTS_KEY,
    completion_from_anthropic,
    messages_from_anthropic,
    messages_to_anthropic,
)
from abridged.formats.openai_chat import messages_from_openai
from tests.formats.support import PNG, mini_swe_agent_sessions, prune_observations

SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"

# A request as the Messages API documents it: a cached system prompt, a user turn with images and
# a PDF, extended thinking with a signature before parallel tool use, all results in one user
# message (one of them an error, one with an image), and a turn with redacted thinking.
SYSTEM: list[dict[str, Any]] = [
    {"type": "text", "text": "You are a field-trip planner."},
    {
        "type": "text",
        "text": "<long reference material>",
        "cache_control": {"type": "ephemeral", "ttl": "1h"},
    },
]
MESSAGES: list[dict[str, Any]] = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Weather in Paris and London? Map and itinerary attached."},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            {"type": "image", "source": {"type": "url", "url": "https://example.com/map.jpg"}},
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"},
                "title": "itinerary.pdf",
                "citations": {"enabled": True},
                "cache_control": {"type": "ephemeral"},
            },
        ],
    },
    {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": "Two cities: call get_weather twice, in parallel.",
                "signature": SIGNATURE,
            },
            {"type": "text", "text": "I'll check both cities."},
            {
                "type": "tool_use",
                "id": "toolu_01A09q90qw90lq917835lq9",
                "name": "get_weather",
                "input": {"location": "Paris, France", "unit": "celsius"},
            },
            {
                "type": "tool_use",
                "id": "toolu_01B09q90qw90lq917835lq8",
                "name": "get_weather",
                "input": {"location": "London, UK"},
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                "content": "18°C, sunny",
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01B09q90qw90lq917835lq8",
                "content": [
                    {"type": "text", "text": "Service unavailable"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                    },
                ],
                "is_error": True,
                "cache_control": {"type": "ephemeral"},
            },
        ],
    },
    {
        "role": "assistant",
        "content": [
            {
                "type": "redacted_thinking",
                "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
            },
            {"type": "text", "text": "Paris is 18°C and sunny; London's service is down."},
        ],
    },
]


def test_request_reads_into_the_core_model() -> None:
    messages = messages_from_anthropic(MESSAGES, system=SYSTEM)

    assert [m.role for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert messages[0].parts == (
        Text("You are a field-trip planner."),
        Text("<long reference material>"),
    )
    assert messages[0].meta["anthropic"]["parts"]["1"]["extra"] == {
        "cache_control": {"type": "ephemeral", "ttl": "1h"}
    }
    assert messages[1].parts[1:] == (
        Image(data=PNG, media_type="image/png"),
        Image(url="https://example.com/map.jpg"),
        File(data="JVBERi0x", media_type="application/pdf", filename="itinerary.pdf"),
    )
    assert messages[2].parts == (
        Reasoning(
            text="Two cities: call get_weather twice, in parallel.",
            signature=SIGNATURE,
            provider="anthropic",
        ),
        Text("I'll check both cities."),
        ToolCall(
            "toolu_01A09q90qw90lq917835lq9",
            "get_weather",
            '{"location":"Paris, France","unit":"celsius"}',
        ),
        ToolCall("toolu_01B09q90qw90lq917835lq8", "get_weather", '{"location":"London, UK"}'),
    )
    assert messages[3].parts == (
        ToolResult("toolu_01A09q90qw90lq917835lq9", "get_weather", (Text("18°C, sunny"),)),
    )
    error = messages[4].tool_results[0]
    assert error.is_error and error.name == "get_weather"
    assert error.content == (Text("Service unavailable"), Image(data=PNG, media_type="image/png"))
    assert messages[5].parts[0] == Reasoning(
        encrypted="EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
        redacted=True,
        provider="anthropic",
    )


def test_parallel_tool_use_and_signed_thinking_round_trip_exactly() -> None:
    original = (copy.deepcopy(SYSTEM), copy.deepcopy(MESSAGES))
    messages = messages_from_anthropic(MESSAGES, system=SYSTEM)
    assert messages_to_anthropic(messages) == original
    assert original == (SYSTEM, MESSAGES)
    system, wire = messages_to_anthropic(messages)
    assert messages_from_anthropic(wire, system=system) == messages


def test_text_beside_tool_results_becomes_a_user_message_and_merges_back() -> None:
    wire: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "a", "input": {}},
                {"type": "tool_use", "id": "t2", "name": "b", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "before (unusual, but kept in place)"},
                {"type": "tool_result", "tool_use_id": "t1", "content": "A"},
                {"type": "text", "text": "between"},
                {"type": "tool_result", "tool_use_id": "t2"},
                {"type": "text", "text": "Now summarise."},
                {"type": "image", "source": {"type": "url", "url": "https://x.test/p.png"}},
            ],
        },
    ]
    messages = messages_from_anthropic(wire)
    assert [m.role for m in messages] == ["assistant", "user", "tool", "user", "tool", "user"]
    assert messages[4].parts == (ToolResult("t2", "b"),)
    assert messages[5].parts == (Text("Now summarise."), Image(url="https://x.test/p.png"))
    assert all(m.meta["anthropic"]["merge"] is True for m in messages[2:])
    assert messages_to_anthropic(messages) == (None, wire)


def test_tool_results_in_separate_user_messages_stay_separate() -> None:
    wire: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "a", "input": {}},
                {"type": "tool_use", "id": "t2", "name": "a", "input": {}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "2"}]},
        {"role": "user", "content": "and a plain user message"},
    ]
    messages = messages_from_anthropic(wire)
    assert [m.role for m in messages] == ["assistant", "tool", "tool", "user"]
    assert messages[2].meta["anthropic"]["merge"] is False
    assert "anthropic" not in messages[3].meta
    assert messages_to_anthropic(messages) == (None, wire)


def test_invalid_arguments_are_wrapped_and_unwrapped() -> None:
    messages = [
        Message.user("go"),
        Message.assistant(
            tool_calls=[
                ToolCall("t1", "f", '{"path": "a.py"'),  # truncated JSON
                ToolCall("t2", "g", "[1, 2]"),  # JSON, but not an object
                ToolCall("t3", "h", '{"_raw_arguments":"{\\"x\\":1}"}'),  # looks like a wrapper
            ]
        ),
    ]
    _, wire = messages_to_anthropic(messages)
    inputs = [b["input"] for b in wire[1]["content"]]
    assert inputs == [
        {"_raw_arguments": '{"path": "a.py"'},
        {"_raw_arguments": "[1, 2]"},
        {"_raw_arguments": '{"x":1}'},
    ]
    assert messages_from_anthropic(wire) == messages


def test_invalid_arguments_can_raise_instead() -> None:
    messages = [Message.user("go"), Message.assistant(tool_calls=[ToolCall("t1", "f", "{oops")])]
    with pytest.raises(FormatError) as info:
        messages_to_anthropic(messages, invalid_arguments="raise")
    assert info.value.index == 1
    assert "arguments of tool call 't1' in message 1 are not a JSON object" in info.value.message
    assert info.value.context["field"] == "parts[0].arguments"
    with pytest.raises(SettingError):
        messages_to_anthropic(messages, invalid_arguments="ignore")  # type: ignore[arg-type]


def test_arguments_are_written_compact_and_read_back_as_the_same_object() -> None:
    call = ToolCall("t1", "f", '{"b": 1,  "a": [true, null]}')
    _, wire = messages_to_anthropic([Message.assistant(tool_calls=[call])])
    assert wire[0]["content"][0]["input"] == {"b": 1, "a": [True, None]}
    back = messages_from_anthropic(wire)[0].tool_calls[0]
    assert back.arguments == '{"b":1,"a":[true,null]}'  # the canonical spelling
    assert back.parsed_arguments() == call.parsed_arguments()


def test_system_prompt_spellings() -> None:
    assert messages_to_anthropic(messages_from_anthropic([], system="plain")) == ("plain", [])
    one = [{"type": "text", "text": "one block"}]
    assert messages_to_anthropic(messages_from_anthropic([], system=one)) == (one, [])
    assert messages_to_anthropic(messages_from_anthropic([], system=[])) == ([], [])
    assert messages_to_anthropic(messages_from_anthropic([{"role": "user", "content": "x"}])) == (
        None,
        [{"role": "user", "content": "x"}],
    )
    two = [Message.system("a"), Message.system("b"), Message.user("q")]
    assert messages_to_anthropic(two)[0] == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b"},
    ]


def test_documents_and_unusual_sources_round_trip() -> None:
    wire: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                {
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": "Plain notes."},
                    "title": "notes",
                    "context": "meeting",
                },
                {"type": "document", "source": {"type": "url", "url": "https://x.test/a.pdf"}},
                {"type": "document", "source": {"type": "file", "file_id": "file_011CNha8"}},
                {
                    "type": "document",
                    "source": {"type": "content", "content": [{"type": "text", "text": "chunk"}]},
                },
                {"type": "image", "source": {"type": "file", "file_id": "file_img"}},
                {"type": "text", "text": "cited", "citations": None},
            ],
        },
        {"role": "assistant", "content": "plain answer"},
        {"role": "assistant", "content": [{"type": "text", "text": "list answer"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "no signature"}]},
    ]
    messages = messages_from_anthropic(wire)
    assert messages[0].parts[:3] == (
        File(data="Plain notes.", media_type="text/plain", filename="notes"),
        File(url="https://x.test/a.pdf"),
        File(file_id="file_011CNha8"),
    )
    assert messages[3].parts == (Reasoning("no signature", provider="anthropic"),)
    assert messages_to_anthropic(messages) == (None, wire)


def test_completion_response_with_usage() -> None:
    response: dict[str, Any] = {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [
            {"type": "thinking", "thinking": "Need the weather.", "signature": SIGNATURE},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 12,
            "output_tokens": 85,
            "cache_creation_input_tokens": 40,
            "cache_read_input_tokens": 2048,
        },
    }
    message = completion_from_anthropic(response)
    assert message.usage == Usage(input=12, output=85, cache_read=2048, cache_write=40)
    assert message.usage.context_tokens == 2100
    assert message.meta["stop_reason"] == "tool_use"
    assert message.meta["response_id"] == "msg_01XFDUDYJgAACzvnptvVoYEL"
    assert message.meta["model"] == "claude-sonnet-4-5-20250929"
    assert message.parts[0] == Reasoning(
        "Need the weather.", signature=SIGNATURE, provider="anthropic"
    )
    assert messages_to_anthropic([message])[1] == [
        {"role": "assistant", "content": response["content"]}
    ]


# -- cross-format -------------------------------------------------------------------------------


def test_openai_chat_to_anthropic_and_back_keeps_tool_pairing() -> None:
    chat: list[dict[str, Any]] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Sizes of a.txt and b.txt?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "reasoning_content": "two stats",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "stat", "arguments": '{"p": "a.txt"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "stat", "arguments": "{bad"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_2", "content": "error: bad arguments"},
        {"role": "tool", "tool_call_id": "call_1", "content": "12 bytes"},
        {"role": "user", "content": "Thanks. And c.txt?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_3",
                    "type": "function",
                    "function": {"name": "stat", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_3", "content": "7 bytes"},
    ]
    core = messages_from_openai(chat)
    system, wire = messages_to_anthropic(core)
    assert system == "Be brief."
    assert [m["role"] for m in wire] == ["user", "assistant", "user", "user", "assistant", "user"]
    # both parallel results in ONE user message, in their original order, right after the calls
    assert [b["tool_use_id"] for b in wire[2]["content"]] == ["call_2", "call_1"]
    assert wire[1]["content"][-1]["input"] == {"_raw_arguments": "{bad"}
    assert all(b["type"] != "thinking" for b in wire[1]["content"])  # unsigned: not sendable

    back = messages_from_anthropic(wire, system=system)
    calls = {c.id: c for m in back for c in m.tool_calls}
    results = [(i, r) for i, m in enumerate(back) for r in m.tool_results]
    assert [r.call_id for _, r in results] == ["call_2", "call_1", "call_3"]
    for i, result in results:
        call = calls[result.call_id]
        assert result.name == call.name
        caller = next(j for j, m in enumerate(back) if call in m.tool_calls)
        assert caller < i and all(m.role == "tool" for m in back[caller + 1 : i])
    assert calls["call_2"].arguments == "{bad"  # the invalid arguments survived verbatim
    assert [r.text for _, r in results] == ["error: bad arguments", "12 bytes", "7 bytes"]


# -- export errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "text"),
    [
        (Message.system("late"), "system message 1 comes after the conversation started"),
        (
            Message("assistant", (Image(url="https://x.test/a.png"),)),
            "image part cannot be in a assistant",
        ),
        (Message("user", (ToolCall("a", "f"),)), "tool_call part cannot be in a user message"),
        (Message("user", (Reasoning("r", signature="s"),)), "reasoning part cannot be in a user"),
        (Message("tool", (Text("loose"),)), "text part cannot be in a tool message"),
        (Message("user", (Image(data=PNG),)), "image data has no media type"),
        (Message("user", (File(data="JVBE"),)), "document data has no media type"),
        (Message("user", (Image(),)), "image has no data, url or file id"),
    ],
)
def test_export_errors_name_the_message(message: Message, text: str) -> None:
    with pytest.raises(FormatError) as info:
        messages_to_anthropic([Message.user("first"), message])
    assert info.value.index == 1
    assert info.value.format == "anthropic"
    assert text in info.value.message


def test_system_message_with_an_image_cannot_be_exported() -> None:
    with pytest.raises(FormatError, match="image part cannot be in a system message"):
        messages_to_anthropic([Message("system", (Image(url="https://x.test/a.png"),))])


# -- errors --------------------------------------------------------------------------------------

_OK = {"role": "user", "content": "fine"}
_TEXT = {"type": "text", "text": "t"}


@pytest.mark.parametrize(
    ("item", "text", "expected"),
    [
        ("a string", "message 1 is not an object", "a message object"),
        ({"content": "x"}, "message has no role", "role: user or assistant"),
        ({"role": "system", "content": "x"}, "role 'system' is not a message role", "system"),
        ({"role": "tool", "content": "x"}, "unknown role 'tool'", "role: user or assistant"),
        ({"role": "user"}, "message 1 has no content", "content: a string or a list"),
        ({"role": "user", "content": {"type": "text"}}, "content is a dict", "content:"),
        ({"role": "user", "content": [None]}, "content[0] of message 1 is not an object", "block"),
        (
            {"role": "user", "content": [{"type": 7}]},
            "block type 7 is unknown",
            "block type one of",
        ),
        (
            {
                "role": "user",
                "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
            },
            "'tool_use' is not allowed in a user message",
            "tool_result",
        ),
        (
            {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t"}]},
            "'tool_result' is not allowed in a assistant message",
            "tool_use",
        ),
        (
            {"role": "user", "content": [{"type": "text"}]},
            "text block has no string 'text'",
            "text:",
        ),
        ({"role": "user", "content": [{"type": "image"}]}, "image block has no source", "source:"),
        (
            {"role": "user", "content": [{"type": "document", "source": "u"}]},
            "no source",
            "source:",
        ),
        (
            {"role": "user", "content": [{"type": "tool_result"}]},
            "no string 'tool_use_id'",
            "tool_use_id",
        ),
        (
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": 5}],
            },
            "tool_result content is a int",
            "content: a string or a list",
        ),
        (
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t",
                        "content": [{"type": "tool_result"}],
                    }
                ],
            },
            "'tool_result' is not allowed in a tool_result",
            "text, image, document",
        ),
        (
            {"role": "assistant", "content": [{"type": "thinking"}]},
            "no string 'thinking'",
            "thinking:",
        ),
        (
            {"role": "assistant", "content": [{"type": "redacted_thinking"}]},
            "no string 'data'",
            "data:",
        ),
        (
            {"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]},
            "no string 'id'",
            "id:",
        ),
        (
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "input": {}}]},
            "no string 'name'",
            "name:",
        ),
        (
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "{}"}],
            },
            "tool_use block has no input object",
            "input: an object",
        ),
        (
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {"b": b"x"}}],
            },
            "tool_use input cannot be written as JSON",
            "input: a JSON object",
        ),
    ],
)
def test_malformed_messages_raise_format_error(item: Any, text: str, expected: str) -> None:
    with pytest.raises(FormatError) as info:
        messages_from_anthropic([_OK, item])
    error = info.value
    assert error.format == "anthropic"
    assert error.index == 1
    assert text in error.message
    assert error.expected is not None and expected in error.expected


@pytest.mark.parametrize(
    ("system", "text", "field"),
    [
        (42, "system is a int", "system"),
        ([_TEXT, {"type": "image"}], "system[1] is not a text block", "system[1]"),
        ([{"type": "text", "text": None}], "text block has no string 'text'", "system[0].text"),
    ],
)
def test_malformed_system_raises_format_error(system: Any, text: str, field: str) -> None:
    with pytest.raises(FormatError) as info:
        messages_from_anthropic([_OK], system=system)
    assert info.value.index is None
    assert info.value.context["field"] == field
    assert text in info.value.message


@pytest.mark.parametrize("messages", ["hello", {"role": "user"}, None])
def test_input_that_is_not_a_list(messages: Any) -> None:
    with pytest.raises(FormatError, match="expected a list of Anthropic messages") as info:
        messages_from_anthropic(messages)
    assert info.value.index is None


@pytest.mark.parametrize(
    ("response", "text"),
    [
        ("nope", "response is not an object"),
        ({"type": "error", "error": {"type": "overloaded_error"}}, "response is a 'error' object"),
        ({"type": "message", "role": "user", "content": []}, "with role 'user'"),
        ({"type": "message", "content": "hi"}, "response has no content list"),
        ({"type": "message", "content": [], "usage": [1]}, "usage is not an object"),
        ({"type": "message", "content": [{"type": "text"}]}, "text block has no string 'text'"),
    ],
)
def test_malformed_completion_raises_format_error(response: Any, text: str) -> None:
    with pytest.raises(FormatError) as info:
        completion_from_anthropic(response)
    assert text in info.value.message
    assert info.value.format == "anthropic"


# -- properties ----------------------------------------------------------------------------------

_ids = st.text(string.ascii_letters + string.digits + "_", min_size=1, max_size=10)
_texts = st.text(max_size=30)
_b64 = st.text(string.ascii_letters + string.digits + "+/", min_size=4, max_size=16)
_scalars = st.none() | st.booleans() | st.integers(-1000, 1000) | _texts
_objects = st.dictionaries(
    _ids.filter(lambda k: k != "_raw_arguments"),
    _scalars | st.lists(_scalars, max_size=2),
    max_size=3,
)
# tool_use.input is an object: arguments are either its canonical JSON text or wrapped text
_arguments = _objects.map(lambda o: json.dumps(o, ensure_ascii=False, separators=(",", ":"))) | (
    _texts.filter(lambda t: not isinstance(_loads(t), dict))
)
_images = st.builds(Image, url=_ids.map(lambda s: f"https://img.test/{s}.png")) | st.builds(
    Image, data=_b64, media_type=st.sampled_from(["image/png", "image/jpeg", "image/gif"])
)
_files = st.one_of(
    st.builds(File, data=_b64, media_type=st.just("application/pdf"), filename=_ids | st.none()),
    st.builds(File, url=_ids.map(lambda s: f"https://files.test/{s}.pdf")),
    st.builds(File, file_id=_ids),
)
_thinking = st.builds(
    Reasoning, text=_texts, signature=_b64 | st.none(), provider=st.just("anthropic")
) | st.builds(Reasoning, encrypted=_b64, redacted=st.just(True), provider=st.just("anthropic"))


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


@st.composite
def anthropic_conversations(draw: st.DrawFn) -> list[Message]:
    """Core conversations Anthropic Messages can express: at most one leading system message,
    thinking signed by Anthropic, one result per tool message, named after its call."""
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(
            Message("system", tuple(draw(st.lists(st.builds(Text, _texts), max_size=3))))
        )
    counter = 0
    for _ in range(draw(st.integers(1, 3))):
        user = draw(st.lists(st.builds(Text, _texts) | _images | _files, max_size=3))
        messages.append(Message("user", tuple(user)))
        for _step in range(draw(st.integers(0, 2))):
            calls = []
            for _call in range(draw(st.integers(1, 3))):
                counter += 1
                calls.append(ToolCall(f"toolu_{counter}", draw(_ids), draw(_arguments)))
            others = draw(st.lists(_thinking | st.builds(Text, _texts), max_size=3))
            messages.append(Message("assistant", tuple(draw(st.permutations([*others, *calls])))))
            for call in draw(st.permutations(calls)):
                content = tuple(draw(st.lists(st.builds(Text, _texts) | _images, max_size=2)))
                result = ToolResult(call.id, call.name, content, draw(st.booleans()))
                messages.append(Message("tool", (result,)))
            if draw(st.booleans()):
                messages.append(Message.user(draw(_texts)))  # a user interjection after results
        messages.append(
            Message(
                "assistant", tuple(draw(st.lists(_thinking | st.builds(Text, _texts), max_size=3)))
            )
        )
    return messages


@given(anthropic_conversations())
def test_core_conversations_round_trip(messages: list[Message]) -> None:
    system, wire = messages_to_anthropic(messages)
    assert messages_from_anthropic(wire, system=system) == messages
    assert messages_to_anthropic(messages_from_anthropic(wire, system=system)) == (system, wire)
    json.dumps(wire)
    # tool results always sit in the user message right after their calls' assistant message
    for n, message in enumerate(wire):
        results = [
            b for b in message["content"] if isinstance(b, dict) and b["type"] == "tool_result"
        ]
        if results:
            called = {b["id"] for b in wire[n - 1]["content"] if b["type"] == "tool_use"}
            assert {b["tool_use_id"] for b in results} <= called


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
_extra = st.dictionaries(
    st.sampled_from(["cache_control", "citations", "x_vendor"]), _json, max_size=2
)
_sources = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["base64", "text"]),
            "media_type": st.sampled_from(["image/png", "application/pdf", "text/plain"]),
            "data": _b64,
        }
    ),
    st.fixed_dictionaries({"type": st.just("url"), "url": _ids}),
    st.fixed_dictionaries({"type": st.just("file"), "file_id": _ids}),
    st.fixed_dictionaries(
        {"type": st.just("base64")}, optional={"data": _json, "media_type": _json}
    ),
)
_inner_blocks = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": _texts}),
    st.fixed_dictionaries({"type": st.just("image"), "source": _sources}),
    st.fixed_dictionaries(
        {"type": st.just("document"), "source": _sources},
        optional={"title": _json, "context": _json},
    ),
)
_tool_result_blocks = st.fixed_dictionaries(
    {"type": st.just("tool_result"), "tool_use_id": _ids},
    optional={
        "content": _texts | st.lists(_inner_blocks, max_size=2) | _json,
        "is_error": _json,
    },
)
_assistant_blocks = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": _texts}),
    st.fixed_dictionaries(
        {"type": st.just("thinking"), "thinking": _texts}, optional={"signature": _b64 | _json}
    ),
    st.fixed_dictionaries({"type": st.just("redacted_thinking"), "data": _b64}),
    st.fixed_dictionaries(
        {
            "type": st.just("tool_use"),
            "id": _ids,
            "name": _ids,
            "input": _objects | st.fixed_dictionaries({"_raw_arguments": _texts | _json}),
        }
    ),
)


def _blocks(blocks: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    with_extra = st.tuples(blocks, _extra).map(lambda p: {**p[1], **p[0]})
    return _texts | st.lists(with_extra, max_size=4) | st.lists(with_extra | _json, max_size=2)


_fuzz_messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.just("user"), "content": _blocks(_inner_blocks | _tool_result_blocks)}
    )
    | st.fixed_dictionaries({"role": st.just("assistant"), "content": _blocks(_assistant_blocks)}),
    max_size=4,
)


@given(
    _fuzz_messages,
    st.none()
    | _texts
    | st.lists(
        st.fixed_dictionaries(
            {"type": st.just("text"), "text": _texts}, optional={"cache_control": _json}
        ),
        max_size=2,
    ),
)
def test_arbitrary_input_reads_or_raises_format_error(messages: list[Any], system: Any) -> None:
    """Whatever the input, the reader raises FormatError or reads it so the writer gives it back."""
    try:
        core = messages_from_anthropic(messages, system=system)
    except FormatError as error:
        assert error.format == "anthropic"
        return
    assert messages_to_anthropic(core) == (system, messages)


# -- text-protocol messages (mini-swe-agent): written as the plain text they were sent as -------


def test_text_protocol_messages_export_as_the_plain_messages_sent() -> None:
    for messages, sent in mini_swe_agent_sessions():
        assert messages_to_anthropic(messages) == (sent[0]["content"], sent[1:])


def test_pruned_text_protocol_messages_export_as_their_placeholder_text() -> None:
    for messages, sent in mini_swe_agent_sessions():
        pruned, expected = prune_observations(messages, sent)
        assert messages_to_anthropic(pruned) == (expected[0]["content"], expected[1:])


def test_text_protocol_messages_are_never_merged_with_their_neighbours() -> None:
    # Consecutive user messages are valid (the API combines them into one turn itself), so an
    # observation followed by another observation or by a plain user message stays as sent.
    messages, sent = mini_swe_agent_sessions()[0]
    task, step, observation = messages[1:4]
    assert observation.role == "tool" and observation.meta["text_protocol"] is True
    _, out = messages_to_anthropic([task, step, observation, observation, Message.user("go on")])
    assert out == [*sent[1:4], sent[3], {"role": "user", "content": "go on"}]


def test_lone_surrogates_are_read_and_kept() -> None:
    # a valid JSON escape a provider or a tool can send: kept as given, never a crash
    items = json.loads(
        '[{"role": "user", "content": "a\\ud800b"},'
        ' {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "f",'
        ' "input": {"p": "\\udfff"}}]},'
        ' {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1",'
        ' "content": "\\udc00"}]}]'
    )
    messages = messages_from_anthropic(items)
    assert messages[0].text == "a\ud800b"
    assert messages[1].tool_calls[0].parsed_arguments() == {"p": "\udfff"}
    assert messages[2].tool_results[0].text == "\udc00"
    assert messages_to_anthropic(messages) == (None, items)
    reply = completion_from_anthropic(
        json.loads('{"role": "assistant", "content": [{"type": "text", "text": "\\ud800"}]}')
    )
    assert reply.text == "\ud800" and reply.fingerprint


def test_deeply_nested_arguments_and_input() -> None:
    deep = "[" * 5_000 + "]" * 5_000
    messages = [
        Message.user("go"),
        Message.assistant("", tool_calls=[ToolCall("c1", "f", deep)]),
        Message.tool("c1", "ok", name="f"),
    ]
    # kept verbatim in the wrapper (not an object); "raise" names the message instead
    _, wire_messages = messages_to_anthropic(messages)
    assert wire_messages[1]["content"][0]["input"] == {RAW_ARGUMENTS_KEY: deep}
    assert messages_from_anthropic(wire_messages) == messages
    with pytest.raises(FormatError) as raised:
        messages_to_anthropic(messages, invalid_arguments="raise")
    assert raised.value.index == 1
    # an input object nested deeper than JSON can be written: a FormatError naming where
    nested: dict[str, Any] = {}
    inner = nested
    for _ in range(5_000):
        inner["a"] = {}
        inner = inner["a"]
    block = {"type": "tool_use", "id": "c1", "name": "f", "input": nested}
    with pytest.raises(FormatError) as raised:
        messages_from_anthropic(
            [{"role": "user", "content": "go"}, {"role": "assistant", "content": [block]}]
        )
    assert raised.value.index == 1 and raised.value.context["field"].endswith(".input")
