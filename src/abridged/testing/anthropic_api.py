"""The local provider's Anthropic side: Messages (JSON and stream), token counting, models.

Limits: a request is rejected when its input alone exceeds the window (``prompt is too long``) or
when input plus ``max_tokens`` does (``input length and `max_tokens` exceed context limit``), and
when ``max_tokens`` exceeds ``max_output``, with Anthropic's real errors. ``count_tokens`` checks
format and pairing but no limit, and answers the same ``input_tokens`` total a Messages call
would use.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from abridged.errors import FormatError
from abridged.formats.anthropic_messages import messages_from_anthropic
from abridged.testing.counting import TokenCounter, anthropic_segments, measure, total_tokens
from abridged.testing.errors import (
    ApiError,
    anthropic_error,
    anthropic_output_too_large,
    anthropic_overflow,
    check_anthropic_pairing,
    check_anthropic_signatures,
    check_breakpoints,
    core_pairing_issue,
)
from abridged.testing.exchange import LENGTH, STOP, TOOL_CALLS, Event, Output, Prepared, chunks

_STOP_REASON = {STOP: "end_turn", LENGTH: "max_tokens", TOOL_CALLS: "tool_use"}


def prepare_anthropic(
    body: Mapping[str, Any], counter: TokenCounter, *, count_only: bool = False
) -> Prepared:
    """Check a Messages (or ``count_tokens``) request: fields, format, breakpoints, pairing,
    thinking signatures; then measure it."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise anthropic_error("model: Field required")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise anthropic_error("messages: Field required")
    max_tokens = body.get("max_tokens")
    if not count_only:
        if max_tokens is None:
            raise anthropic_error("max_tokens: Field required")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise anthropic_error("max_tokens: Input should be greater than or equal to 1")
    try:
        core = messages_from_anthropic(messages, body.get("system"))
    except FormatError as e:
        raise anthropic_error(str(e)) from None
    for check in (check_breakpoints(body), check_anthropic_pairing(messages)):
        if check is not None:
            raise check
    error = check_anthropic_signatures(messages)
    if error is not None:
        raise error
    issue = core_pairing_issue(core)
    if issue is not None:
        raise anthropic_error(issue)
    segments = measure(anthropic_segments(body), counter)
    return Prepared(
        api="anthropic-count" if count_only else "anthropic",
        model=model,
        messages=core,
        segments=segments,
        prompt_tokens=total_tokens(segments),
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        stream=bool(body.get("stream")) and not count_only,
    )


def check_anthropic(p: Prepared, window: int, max_output: int) -> None:
    """Raise the real error when the request does not fit the model."""
    max_tokens = p.max_tokens or 0
    if max_tokens > max_output:
        raise anthropic_output_too_large(max_tokens, max_output, p.model)
    if p.prompt_tokens > window or p.prompt_tokens + max_tokens > window:
        raise anthropic_overflow(window, p.prompt_tokens, max_tokens)


def _usage(out: Output) -> dict[str, Any]:
    return {
        "input_tokens": out.prompt_tokens - out.cached_tokens - out.cache_write_tokens,
        "cache_creation_input_tokens": out.cache_write_tokens,
        "cache_read_input_tokens": out.cached_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": out.cache_write_tokens,
            "ephemeral_1h_input_tokens": 0,
        },
        "output_tokens": out.output_tokens,
        "service_tier": "standard",
    }


def tool_input(arguments: str) -> dict[str, Any]:
    """A scripted call's arguments as ``tool_use.input`` (a JSON object)."""
    try:
        value = json.loads(arguments)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ApiError(
            500,
            {
                "type": "error",
                "error": {
                    "type": "api_error",
                    "message": f"scripted tool call arguments are not a JSON object: {arguments}",
                },
            },
        )
    return value


def _blocks(out: Output) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if out.reasoning:
        blocks.append({"type": "thinking", "thinking": out.reasoning, "signature": out.signature})
    if out.text or not out.calls:
        blocks.append({"type": "text", "text": out.text})
    for cid, name, args in out.calls:
        blocks.append({"type": "tool_use", "id": cid, "name": name, "input": tool_input(args)})
    return blocks


def _message(p: Prepared, out: Output, content: Sequence[Any], stop: str | None) -> dict[str, Any]:
    return {
        "id": out.response_id,
        "type": "message",
        "role": "assistant",
        "model": p.model,
        "content": list(content),
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": _usage(out),
    }


def render_anthropic(p: Prepared, out: Output) -> dict[str, Any]:
    """A ``message`` object."""
    return _message(p, out, _blocks(out), _STOP_REASON.get(out.finish, out.finish))


def stream_anthropic(p: Prepared, out: Output) -> list[Event]:
    """message_start, a ping, each content block (start, deltas, stop), message_delta with the
    usage, message_stop."""
    start = _message(p, out, [], None)
    start["usage"] = {**start["usage"], "output_tokens": 1}
    events = [
        Event("message_start", {"type": "message_start", "message": start}),
        Event("ping", {"type": "ping"}),
    ]

    def block_event(kind: str, index: int, **data: Any) -> None:
        events.append(Event(kind, {"type": kind, "index": index, **data}))

    for index, block in enumerate(_blocks(out)):
        if block["type"] == "thinking":
            opened: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
            block_event("content_block_start", index, content_block=opened)
            for piece in chunks(block["thinking"]):
                delta: dict[str, Any] = {"type": "thinking_delta", "thinking": piece}
                block_event("content_block_delta", index, delta=delta)
            signature = {"type": "signature_delta", "signature": block["signature"]}
            block_event("content_block_delta", index, delta=signature)
        elif block["type"] == "text":
            block_event("content_block_start", index, content_block={"type": "text", "text": ""})
            for piece in chunks(block["text"]):
                block_event(
                    "content_block_delta", index, delta={"type": "text_delta", "text": piece}
                )
        else:
            opened = {**block, "input": {}}
            block_event("content_block_start", index, content_block=opened)
            arguments = json.dumps(block["input"], ensure_ascii=False)
            for piece in chunks(arguments):
                delta = {"type": "input_json_delta", "partial_json": piece}
                block_event("content_block_delta", index, delta=delta)
        block_event("content_block_stop", index)
    usage = _usage(out)
    delta_usage = {
        "input_tokens": usage["input_tokens"],
        "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
        "cache_read_input_tokens": usage["cache_read_input_tokens"],
        "output_tokens": usage["output_tokens"],
    }
    stop = {"stop_reason": _STOP_REASON.get(out.finish, out.finish), "stop_sequence": None}
    events.append(
        Event("message_delta", {"type": "message_delta", "delta": stop, "usage": delta_usage})
    )
    events.append(Event("message_stop", {"type": "message_stop"}))
    return events


def anthropic_models(models: Sequence[str], window: int, max_output: int) -> dict[str, Any]:
    """The body of Anthropic's ``GET /v1/models``, with ``max_input_tokens`` and
    ``max_tokens``."""
    data = [
        {
            "type": "model",
            "id": m,
            "display_name": m,
            "created_at": "2025-01-01T00:00:00Z",
            "lifecycle": "active",
            "max_input_tokens": window,
            "max_tokens": max_output,
        }
        for m in models
    ]
    return {
        "data": data,
        "has_more": False,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
    }
