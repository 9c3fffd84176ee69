"""The providers' real error bodies, and the wire checks of tool pairing that produce them.

Every text below is the one the provider sends, as quoted in public bug reports (the issue
thread is named next to each); numbers, ids and indexes are filled in:

- OpenAI overflow (Chat Completions), without and with a requested completion size
  (chathub-dev/chathub#126, ChatGPTNextWeb/NextChat#3195): ``This model's maximum context length
  is W tokens. However, your messages resulted in P tokens. Please reduce the length of the
  messages.`` / ``... However, you requested T tokens (P in the messages, C in the completion).
  Please reduce the length of the messages or completion.`` (``param: "messages"``,
  ``code: "context_length_exceeded"``).
- OpenAI overflow (Responses; dyad-sh/dyad#1672): ``Your input exceeds the context window of this
  model. Please adjust your input and try again.`` (``param: "input"``, same code).
- OpenAI output ceiling (forgecode#1185): ``max_tokens is too large: N. This model supports at
  most M completion tokens, whereas you provided N.`` (``code: "invalid_value"``).
- OpenAI pairing (miurla/morphic#136, router-for-me/CLIProxyAPI#2798): ``Invalid parameter:
  messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`` and
  ``An assistant message with 'tool_calls' must be followed by tool messages responding to each
  'tool_call_id'. The following tool_call_ids did not have response messages: ID, ...``
  (``param: "messages.[N].role"``, ``code: null``); Responses (microsoft/vscode#320060,
  bytedance/trae-agent#358): ``No tool call found for function call output with call_id ID.``
  and ``No tool output found for function call ID.`` (``param: "input"``).
- Anthropic overflow (entropy-research/Devon#88, docker/docker-agent#569): ``prompt is too long:
  P tokens > W maximum`` and ``input length and `max_tokens` exceed context limit: P + M > W,
  decrease input length or `max_tokens` and try again``; output ceiling (NextChat#4964):
  ``max_tokens: N > M, which is the maximum allowed number of output tokens for MODEL``.
- Anthropic pairing (router-for-me/CLIProxyAPI#497, anthropics/claude-code#5060):
  ``messages.N.content.K: unexpected `tool_use_id` found in `tool_result` blocks: ID. Each
  `tool_result` block must have a corresponding `tool_use` block in the previous message.`` and
  ``messages.N: `tool_use` ids were found without `tool_result` blocks immediately after: ID.
  Each `tool_use` block must have a corresponding `tool_result` block in the next message.``
- Anthropic thinking (anthropics/claude-code#10627): ``messages.N.content.K: Invalid `signature`
  in `thinking` block``; breakpoints (tghamm/Anthropic.SDK#50): ``A maximum of 4 blocks with
  cache_control may be provided. Found 5.``
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from abridged.core.model import Message
from abridged.core.validate import validate_messages
from abridged.errors import ProviderError

SIGNATURE_PREFIX = "abridged-test-sig:"
"""Prefix of the thinking signatures this server issues (and verifies when they come back)."""

PAIRING_CODES = frozenset({"orphan_tool_result", "missing_tool_result", "misplaced_tool_result"})


def error_text(body: Any) -> str:
    """The message text of an error body, wherever the body keeps it."""
    error = body.get("error") if isinstance(body, Mapping) else None
    if isinstance(error, Mapping) and isinstance(error.get("message"), str):
        return str(error["message"])
    return str(body)


class ApiError(ProviderError):
    """An error response: HTTP status and JSON body (raised or returned by the handlers);
    ``message`` is the body's message text."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(error_text(body), status=status)
        self.status = status
        self.body = body


# -- bodies ---------------------------------------------------------------------------------------


def openai_error(
    message: str,
    *,
    param: str | None = None,
    code: str | None = None,
    kind: str = "invalid_request_error",
    status: int = 400,
) -> ApiError:
    """An OpenAI error: ``{"error": {"message", "type", "param", "code"}}``."""
    return ApiError(
        status, {"error": {"message": message, "type": kind, "param": param, "code": code}}
    )


def anthropic_error(
    message: str, *, kind: str = "invalid_request_error", status: int = 400
) -> ApiError:
    """An Anthropic error: ``{"type": "error", "error": {"type", "message"}}``."""
    return ApiError(status, {"type": "error", "error": {"type": kind, "message": message}})


def openai_overflow(window: int, prompt: int, completion: int | None) -> ApiError:
    """Chat Completions' context overflow, with the completion size when one was requested."""
    if completion is None:
        message = (
            f"This model's maximum context length is {window} tokens. However, your messages "
            f"resulted in {prompt} tokens. Please reduce the length of the messages."
        )
    else:
        message = (
            f"This model's maximum context length is {window} tokens. However, you requested "
            f"{prompt + completion} tokens ({prompt} in the messages, {completion} in the "
            "completion). Please reduce the length of the messages or completion."
        )
    return openai_error(message, param="messages", code="context_length_exceeded")


def responses_overflow() -> ApiError:
    """The Responses API's context overflow."""
    return openai_error(
        "Your input exceeds the context window of this model. Please adjust your input and try "
        "again.",
        param="input",
        code="context_length_exceeded",
    )


def openai_output_too_large(requested: int, maximum: int, param: str) -> ApiError:
    """A requested completion size above the model's output ceiling."""
    return openai_error(
        f"max_tokens is too large: {requested}. This model supports at most {maximum} completion "
        f"tokens, whereas you provided {requested}.",
        param=param,
        code="invalid_value",
    )


def anthropic_overflow(window: int, prompt: int, max_tokens: int) -> ApiError:
    """Anthropic's overflow: the prompt alone, or the prompt plus ``max_tokens``."""
    if prompt > window:
        return anthropic_error(f"prompt is too long: {prompt} tokens > {window} maximum")
    return anthropic_error(
        f"input length and `max_tokens` exceed context limit: {prompt} + {max_tokens} > "
        f"{window}, decrease input length or `max_tokens` and try again"
    )


def anthropic_output_too_large(requested: int, maximum: int, model: str) -> ApiError:
    """A ``max_tokens`` above the model's output ceiling."""
    return anthropic_error(
        f"max_tokens: {requested} > {maximum}, which is the maximum allowed number of output "
        f"tokens for {model}"
    )


# -- pairing on the wire --------------------------------------------------------------------------


def check_chat_pairing(messages: Sequence[Any]) -> ApiError | None:
    """Chat Completions: tool messages answer the assistant message right before them, and
    every call of that message is answered before the next other message."""
    pending: list[str] = []
    answering: set[str] = set()
    at = -1
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            continue
        role = m.get("role")
        if role == "tool":
            call_id = m.get("tool_call_id")
            if call_id not in answering or call_id not in pending:
                return openai_error(
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    param=f"messages.[{i}].role",
                )
            pending.remove(call_id)
            continue
        if pending:
            return _chat_missing(at, pending)
        answering = set()
        calls = m.get("tool_calls") if role == "assistant" else None
        if isinstance(calls, list) and calls:
            pending = [str(c.get("id")) for c in calls if isinstance(c, Mapping)]
            answering = set(pending)
            at = i
    if pending:
        return _chat_missing(at, pending)
    return None


def _chat_missing(at: int, pending: Sequence[str]) -> ApiError:
    return openai_error(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(pending),
        param=f"messages.[{at}].role",
    )


def check_responses_pairing(items: Any) -> ApiError | None:
    """Responses: every ``function_call_output`` follows its ``function_call``, and every
    ``function_call`` has an output somewhere after it."""
    if not isinstance(items, list):
        return None
    calls: list[str] = []
    answered: set[str] = set()
    for item in items:
        if not isinstance(item, Mapping):
            continue
        if item.get("type") == "function_call":
            calls.append(str(item.get("call_id")))
        elif item.get("type") == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in calls:
                return openai_error(
                    f"No tool call found for function call output with call_id {call_id}.",
                    param="input",
                )
            answered.add(call_id)
    for call_id in calls:
        if call_id not in answered:
            return openai_error(f"No tool output found for function call {call_id}.", param="input")
    return None


def _blocks(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, Mapping) else None
    return content if isinstance(content, list) else []


def _of_type(block: Any, kind: str) -> bool:
    return isinstance(block, Mapping) and block.get("type") == kind


def check_anthropic_pairing(messages: Sequence[Any]) -> ApiError | None:
    """Anthropic: the ``tool_result`` blocks that open a user message answer the ``tool_use``
    blocks of the assistant message right before it, all of them."""
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            continue
        if m.get("role") == "user":
            previous = messages[i - 1] if i > 0 else None
            offered = (
                {str(b.get("id")) for b in _blocks(previous) if _of_type(b, "tool_use")}
                if isinstance(previous, Mapping) and previous.get("role") == "assistant"
                else set()
            )
            unexpected = [
                (k, str(b.get("tool_use_id")))
                for k, b in enumerate(_blocks(m))
                if _of_type(b, "tool_result") and str(b.get("tool_use_id")) not in offered
            ]
            if unexpected:
                return anthropic_error(
                    f"messages.{i}.content.{unexpected[0][0]}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {', '.join(u for _, u in unexpected)}. Each "
                    "`tool_result` block must have a corresponding `tool_use` block in the "
                    "previous message."
                )
        elif m.get("role") == "assistant":
            uses = [str(b.get("id")) for b in _blocks(m) if _of_type(b, "tool_use")]
            if not uses:
                continue
            following = messages[i + 1] if i + 1 < len(messages) else None
            answered: set[str] = set()
            if isinstance(following, Mapping) and following.get("role") == "user":
                for b in _blocks(following):
                    if not _of_type(b, "tool_result"):
                        break
                    answered.add(str(b.get("tool_use_id")))
            missing = [u for u in uses if u not in answered]
            if missing:
                return anthropic_error(
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                    "corresponding `tool_result` block in the next message."
                )
    return None


def sign_thinking(thinking: str) -> str:
    """The signature this server gives a thinking text."""
    return SIGNATURE_PREFIX + hashlib.blake2b(thinking.encode("utf-8"), digest_size=24).hexdigest()


def check_anthropic_signatures(messages: Sequence[Any]) -> ApiError | None:
    """Thinking blocks signed by this server must come back unchanged."""
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or m.get("role") != "assistant":
            continue
        for k, b in enumerate(_blocks(m)):
            if not _of_type(b, "thinking"):
                continue
            signature = b.get("signature")
            if (
                isinstance(signature, str)
                and signature.startswith(SIGNATURE_PREFIX)
                and signature != sign_thinking(str(b.get("thinking", "")))
            ):
                return anthropic_error(
                    f"messages.{i}.content.{k}: Invalid `signature` in `thinking` block"
                )
    return None


def check_breakpoints(body: Mapping[str, Any]) -> ApiError | None:
    """At most four ``cache_control`` blocks in tools, system and messages."""
    found = 0
    for tool in body.get("tools") or []:
        found += isinstance(tool, Mapping) and tool.get("cache_control") is not None
    system = body.get("system")
    for block in system if isinstance(system, list) else []:
        found += isinstance(block, Mapping) and block.get("cache_control") is not None
    for m in body.get("messages") or []:
        for block in _blocks(m):
            found += isinstance(block, Mapping) and block.get("cache_control") is not None
    if found > 4:
        return anthropic_error(
            f"A maximum of 4 blocks with cache_control may be provided. Found {found}."
        )
    return None


def core_pairing_issue(messages: Sequence[Message]) -> str | None:
    """The first pairing problem ``abridged.core.validate`` finds in the converted messages."""
    for issue in validate_messages(messages):
        if issue.code in PAIRING_CODES:
            return f"messages.{issue.index}: {issue.message}"
    return None
