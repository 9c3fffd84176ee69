"""The local provider's OpenAI side: Chat Completions, Responses and the models listing.

Requests are checked and measured here (``prepare_*``), limits enforced (``check_*``), replies
written as JSON (``render_*``) or as the server-sent events the official SDK reads (``stream_*``).

Limits: Chat Completions rejects ``prompt + max_completion_tokens`` (or ``max_tokens``) above the
window when a completion size is requested, else a prompt above the window, with the real
``context_length_exceeded`` error; a requested size above ``max_output`` is rejected too. The
Responses API rejects only an input above the window; ``max_output_tokens`` merely caps the reply
(the response is then ``incomplete``), as the real API does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from abridged.core.model import Message
from abridged.errors import FormatError
from abridged.formats.openai_chat import messages_from_openai
from abridged.formats.openai_responses import messages_from_responses
from abridged.testing.counting import (
    TokenCounter,
    chat_segments,
    measure,
    responses_segments,
    total_tokens,
)
from abridged.testing.errors import (
    check_chat_pairing,
    check_responses_pairing,
    core_pairing_issue,
    openai_error,
    openai_output_too_large,
    openai_overflow,
    responses_overflow,
)
from abridged.testing.exchange import (
    LENGTH,
    STOP,
    TOOL_CALLS,
    Event,
    Output,
    Prepared,
    chunks,
    make_id,
)

_CHAT_FINISH = {STOP: "stop", LENGTH: "length", TOOL_CALLS: "tool_calls"}


def _model(body: Mapping[str, Any]) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise openai_error("you must provide a model parameter")
    return model


def _max_tokens(body: Mapping[str, Any], names: Sequence[str]) -> tuple[int | None, str]:
    for name in names:
        value = body.get(name)
        if value is not None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise openai_error(
                    f"Invalid '{name}': integer below minimum value. Expected a value >= 1, but "
                    f"got {value} instead.",
                    param=name,
                    code="integer_below_min_value",
                )
            return value, name
    return None, names[0]


# -- Chat Completions -----------------------------------------------------------------------------


def prepare_chat(body: Mapping[str, Any], counter: TokenCounter) -> Prepared:
    """Check a Chat Completions request (format, pairing) and measure it."""
    model = _model(body)
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise openai_error(
            "Missing required parameter: 'messages'.",
            param="messages",
            code="missing_required_parameter",
        )
    try:
        core = messages_from_openai(messages)
    except FormatError as e:
        raise openai_error(f"Invalid 'messages': {e}", param="messages") from None
    error = check_chat_pairing(messages)
    if error is not None:
        raise error
    issue = core_pairing_issue(core)
    if issue is not None:
        raise openai_error(f"Invalid parameter: {issue}", param="messages")
    segments = measure(chat_segments(body), counter)
    max_tokens, param = _max_tokens(body, ("max_completion_tokens", "max_tokens"))
    options = body.get("stream_options")
    return Prepared(
        api="openai-chat",
        model=model,
        messages=core,
        segments=segments,
        prompt_tokens=total_tokens(segments),
        max_tokens=max_tokens,
        stream=bool(body.get("stream")),
        include_usage=isinstance(options, Mapping) and bool(options.get("include_usage")),
        extra={"max_tokens_param": param},
    )


def check_chat(p: Prepared, window: int, max_output: int) -> None:
    """Raise the real error when the request does not fit the model."""
    if p.max_tokens is not None and p.max_tokens > max_output:
        raise openai_output_too_large(p.max_tokens, max_output, p.extra["max_tokens_param"])
    if p.max_tokens is not None and p.prompt_tokens + p.max_tokens > window:
        raise openai_overflow(window, p.prompt_tokens, p.max_tokens)
    if p.prompt_tokens > window:
        raise openai_overflow(window, p.prompt_tokens, None)


def _chat_usage(out: Output) -> dict[str, Any]:
    return {
        "prompt_tokens": out.prompt_tokens,
        "completion_tokens": out.output_tokens,
        "total_tokens": out.prompt_tokens + out.output_tokens,
        "prompt_tokens_details": {"cached_tokens": out.cached_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": out.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _chat_base(p: Prepared, out: Output, kind: str) -> dict[str, Any]:
    return {
        "id": out.response_id,
        "object": kind,
        "created": out.created,
        "model": p.model,
        "service_tier": "default",
        "system_fingerprint": "fp_abridged_test",
    }


def render_chat(p: Prepared, out: Output) -> dict[str, Any]:
    """A ``chat.completion`` object."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": out.text if out.text or not out.calls else None,
        "refusal": None,
        "annotations": [],
    }
    if out.reasoning:
        message["reasoning_content"] = out.reasoning
    if out.calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args in out.calls
        ]
    return {
        **_chat_base(p, out, "chat.completion"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": _CHAT_FINISH.get(out.finish, out.finish),
            }
        ],
        "usage": _chat_usage(out),
    }


def stream_chat(p: Prepared, out: Output) -> list[Event]:
    """``chat.completion.chunk`` events, the usage chunk when asked for, then ``[DONE]``."""
    base = _chat_base(p, out, "chat.completion.chunk")
    if p.include_usage:
        base["usage"] = None

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Event:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return Event(None, {**base, "choices": [choice]})

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    events.extend(chunk({"reasoning_content": piece}) for piece in chunks(out.reasoning))
    events.extend(chunk({"content": piece}) for piece in chunks(out.text))
    for k, (cid, name, args) in enumerate(out.calls):
        start = {"index": k, "id": cid, "type": "function"}
        events.append(
            chunk({"tool_calls": [{**start, "function": {"name": name, "arguments": ""}}]})
        )
        events.extend(
            chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]})
            for piece in chunks(args)
        )
    events.append(chunk({}, _CHAT_FINISH.get(out.finish, out.finish)))
    if p.include_usage:
        events.append(Event(None, {**base, "choices": [], "usage": _chat_usage(out)}))
    events.append(Event(None, "[DONE]"))
    return events


# -- Responses ------------------------------------------------------------------------------------


def prepare_responses(body: Mapping[str, Any], counter: TokenCounter) -> Prepared:
    """Check a Responses request (format, pairing) and measure it."""
    model = _model(body)
    previous = body.get("previous_response_id")
    if previous is not None:
        raise openai_error(
            f"Previous response with id '{previous}' not found.",
            param="previous_response_id",
            code="previous_response_not_found",
        )
    items = body.get("input")
    if not isinstance(items, str | list):
        raise openai_error(
            "Missing required parameter: 'input'.", param="input", code="missing_required_parameter"
        )
    try:
        core: list[Message] = (
            [Message.user(items)] if isinstance(items, str) else messages_from_responses(items)
        )
    except FormatError as e:
        raise openai_error(f"Invalid 'input': {e}", param="input") from None
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        core.insert(0, Message.system(instructions))
    error = check_responses_pairing(items)
    if error is not None:
        raise error
    issue = core_pairing_issue(core)
    if issue is not None:
        raise openai_error(f"Invalid parameter: {issue}", param="input")
    segments = measure(responses_segments(body), counter)
    max_tokens, _ = _max_tokens(body, ("max_output_tokens",))
    return Prepared(
        api="openai-responses",
        model=model,
        messages=core,
        segments=segments,
        prompt_tokens=total_tokens(segments),
        max_tokens=max_tokens,
        stream=bool(body.get("stream")),
        extra={"body": body},
    )


def check_responses(p: Prepared, window: int, max_output: int) -> None:
    """Raise the real error when the input does not fit the window."""
    if p.max_tokens is not None and p.max_tokens > max_output:
        raise openai_output_too_large(p.max_tokens, max_output, "max_output_tokens")
    if p.prompt_tokens > window:
        raise responses_overflow()


def _responses_usage(out: Output) -> dict[str, Any]:
    return {
        "input_tokens": out.prompt_tokens,
        "input_tokens_details": {"cached_tokens": out.cached_tokens, "cache_write_tokens": 0},
        "output_tokens": out.output_tokens,
        "output_tokens_details": {"reasoning_tokens": out.reasoning_tokens},
        "total_tokens": out.prompt_tokens + out.output_tokens,
    }


def _responses_items(out: Output) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if out.reasoning:
        items.append(
            {
                "type": "reasoning",
                "id": make_id("rs_", out.response_id, "reasoning"),
                "summary": [{"type": "summary_text", "text": out.reasoning}],
                "encrypted_content": out.signature,
            }
        )
    if out.text or not out.calls:
        items.append(
            {
                "type": "message",
                "id": make_id("msg_", out.response_id, "message"),
                "status": "incomplete" if out.finish == LENGTH else "completed",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": out.text, "annotations": [], "logprobs": []}
                ],
            }
        )
    for k, (cid, name, args) in enumerate(out.calls):
        items.append(
            {
                "type": "function_call",
                "id": make_id("fc_", out.response_id, k),
                "call_id": cid,
                "name": name,
                "arguments": args,
                "status": "completed",
            }
        )
    return items


def _response_object(
    p: Prepared, out: Output, status: str, output: list[dict[str, Any]], usage: Any
) -> dict[str, Any]:
    body: Mapping[str, Any] = p.extra["body"]
    return {
        "id": out.response_id,
        "object": "response",
        "created_at": out.created,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "metadata": body.get("metadata") or {},
        "model": p.model,
        "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": None,
        "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0),
        "truncation": body.get("truncation", "disabled"),
        "usage": usage,
        "user": None,
    }


def _final_status(out: Output) -> str:
    return "incomplete" if out.finish == LENGTH else "completed"


def render_responses(p: Prepared, out: Output) -> dict[str, Any]:
    """A ``response`` object."""
    return _response_object(
        p, out, _final_status(out), _responses_items(out), _responses_usage(out)
    )


def stream_responses(p: Prepared, out: Output) -> list[Event]:
    """The Responses stream: created, in_progress, each output item with its deltas, then
    ``response.completed`` (``response.incomplete`` when the reply was cut)."""
    events: list[Event] = []

    def emit(kind: str, **data: Any) -> None:
        events.append(Event(kind, {"type": kind, "sequence_number": len(events), **data}))

    pending = _response_object(p, out, "in_progress", [], None)
    emit("response.created", response=pending)
    emit("response.in_progress", response=pending)
    items = _responses_items(out)
    for index, item in enumerate(items):
        at = {"item_id": item["id"], "output_index": index}
        if item["type"] == "reasoning":
            emit("response.output_item.added", output_index=index, item={**item, "summary": []})
            text = item["summary"][0]["text"]
            part: dict[str, Any] = {"type": "summary_text", "text": ""}
            emit("response.reasoning_summary_part.added", **at, summary_index=0, part=part)
            for piece in chunks(text):
                emit("response.reasoning_summary_text.delta", **at, summary_index=0, delta=piece)
            emit("response.reasoning_summary_text.done", **at, summary_index=0, text=text)
            emit(
                "response.reasoning_summary_part.done",
                **at,
                summary_index=0,
                part={**part, "text": text},
            )
        elif item["type"] == "message":
            added = {**item, "status": "in_progress", "content": []}
            emit("response.output_item.added", output_index=index, item=added)
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            emit("response.content_part.added", **at, content_index=0, part=part)
            for piece in chunks(out.text):
                emit("response.output_text.delta", **at, content_index=0, delta=piece, logprobs=[])
            emit("response.output_text.done", **at, content_index=0, text=out.text, logprobs=[])
            emit(
                "response.content_part.done",
                **at,
                content_index=0,
                part={**part, "text": out.text},
            )
        else:
            added = {**item, "arguments": "", "status": "in_progress"}
            emit("response.output_item.added", output_index=index, item=added)
            for piece in chunks(item["arguments"]):
                emit("response.function_call_arguments.delta", **at, delta=piece)
            emit(
                "response.function_call_arguments.done",
                **at,
                name=item["name"],
                arguments=item["arguments"],
            )
        emit("response.output_item.done", output_index=index, item=item)
    status = _final_status(out)
    final = _response_object(p, out, status, items, _responses_usage(out))
    emit("response.completed" if status == "completed" else "response.incomplete", response=final)
    return events


# -- models ---------------------------------------------------------------------------------------


def openai_model(model: str, window: int, max_output: int) -> dict[str, Any]:
    """One entry of ``GET /v1/models``, with the window as vLLM and OpenRouter list it."""
    return {
        "id": model,
        "object": "model",
        "created": 0,
        "owned_by": "abridged-testing",
        "max_model_len": window,
        "context_length": window,
        "max_completion_tokens": max_output,
    }


def openai_models(models: Sequence[str], window: int, max_output: int) -> dict[str, Any]:
    """The body of ``GET /v1/models``."""
    return {"object": "list", "data": [openai_model(m, window, max_output) for m in models]}
