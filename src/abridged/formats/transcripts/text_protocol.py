"""mini-swe-agent's text tool protocol: bash blocks and their observations as tool calls/results.

mini-swe-agent asks the model for exactly one fenced bash block per reply and sends the command's
observation back as the next *user* message (``<returncode>``, ``<output>``, sometimes
``<warning>`` or a timeout notice). ``messages_from_text_protocol`` recovers that structure:

- an assistant message with exactly one bash block, followed by a user message, becomes a tool
  step. The assistant keeps its whole original text as one ``Text`` part and gains
  ``ToolCall(call_id, "bash", json.dumps({"command": cmd}))``; the user message becomes a ``tool``
  message with ``ToolResult(call_id, "bash", <original text>, is_error)``. Both carry
  ``meta["text_protocol"] = True``; the observation also ``meta["wire_role"] = "user"``.
- an assistant message with no bash block or several stays plain text, and so does the user
  message after it (mini-swe-agent's format-error notice).
- an assistant message with one bash block but no user message after it (a session that ended
  on a command, or a final submit whose output was not recorded) stays plain text, so that no
  tool call is ever left without its result (counted as ``unanswered``). The final submit step
  of a finished mini-swe-agent session *is* followed by the submission output as a user message,
  so it becomes an ordinary tool step.

``is_error`` is ``returncode != 0`` when the observation starts with ``<returncode>`` (after an
optional ``<exception>``), true for a timeout notice, and false otherwise (the submission output,
a human's reply in interactive mode). ``messages_to_text_protocol`` is the exact inverse.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from abridged.core.model import Message, Text, ToolCall, ToolResult, Usage, assign_ids
from abridged.errors import FormatError
from abridged.formats.transcripts.records import LoaderStats
from abridged.formats.usage import usage_from_openai

TEXT_PROTOCOL = "mini-swe-agent-text"
BASH_TOOL = "bash"
# mini-swe-agent's own action regex: one fenced ```bash block, its body stripped.
BASH_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
_RETURNCODE = re.compile(
    r"\s*(?:<exception>.*?</exception>\s*)?<returncode>\s*(-?\d+)\s*</returncode>", re.DOTALL
)
_TIMEOUT = re.compile(r"\s*The last command <command>.*?</command> timed out", re.DOTALL)
_ROLES = ("system", "user", "assistant")
_CALL_META: Mapping[str, Any] = {"text_protocol": True}
_RESULT_META: Mapping[str, Any] = {"text_protocol": True, "wire_role": "user"}


def bash_commands(text: str) -> list[str]:
    """The commands of every fenced bash block in ``text``, stripped as mini-swe-agent runs them.

    >>> bash_commands("THOUGHT: look\\n\\n```bash\\nls -la\\n```")
    ['ls -la']
    """
    return [m.strip() for m in BASH_BLOCK.findall(text)]


def text_protocol_call_id(transcript_id: str, step: int) -> str:
    """The deterministic call id of the tool step made by model call ``step`` (1-based).

    >>> text_protocol_call_id("astropy__astropy-14369", 3)
    'call_9464e4b7_3'
    """
    # (a lone surrogate, valid in a JSON string, hashes as itself: ``surrogatepass``)
    digest = hashlib.blake2b(
        transcript_id.encode("utf-8", "surrogatepass"), digest_size=4
    ).hexdigest()
    return f"call_{digest}_{step}"


def observation_is_error(text: str) -> bool:
    """Whether an observation reports a failure: non-zero return code, or a timeout notice."""
    match = _RETURNCODE.match(text)
    if match is not None:
        return int(match.group(1)) != 0
    return _TIMEOUT.match(text) is not None


def usage_report(item: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The provider's usage report of a raw message: beside it (``usage``, the flattened JSONL)
    or under ``extra.response.usage`` (mini-swe-agent's ``.traj.json``)."""
    usage = item.get("usage")
    if isinstance(usage, Mapping) and usage:
        return usage
    extra = item.get("extra")
    if isinstance(extra, Mapping):
        response = extra.get("response")
        if isinstance(response, Mapping):
            usage = response.get("usage")
            if isinstance(usage, Mapping) and usage:
                return usage
    return None


def _content(item: Mapping[str, Any], index: int, context: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    # mini-swe-agent with cache control wraps the text in a list of text blocks.
    if isinstance(content, list) and all(
        isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
        for b in content
    ):
        return "".join(b["text"] for b in content)
    raise FormatError(
        f"message {index}: content is neither text nor a list of text blocks",
        index=index,
        field="content",
        expected="content as a string",
        **context,
    )


def messages_from_text_protocol(
    items: Sequence[Mapping[str, Any]],
    *,
    transcript_id: str,
    format: str = TEXT_PROTOCOL,
    path: str | None = None,
    line: int | None = None,
) -> tuple[list[Message], LoaderStats]:
    """Recover tool steps from mini-swe-agent's plain-text messages (see the module docstring).

    ``items`` are raw ``{"role", "content"}`` dicts, with the usage report beside each assistant
    message or under ``extra.response.usage``. Returns the messages (ids unique within the list)
    and the counts. ``format``, ``path`` and ``line`` only name the input in errors.
    """
    context: dict[str, Any] = {"format": format, "path": path, "line": line}
    parsed: list[tuple[str, str]] = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise FormatError(
                f"message {index} is not an object",
                index=index,
                expected="a message object",
                **context,
            )
        role = item.get("role")
        if role not in _ROLES:
            raise FormatError(
                f"message {index}: unknown role {role!r}",
                index=index,
                field="role",
                expected="role 'system', 'user' or 'assistant'",
                **context,
            )
        parsed.append((role, _content(item, index, context)))

    out: list[Message] = []
    counts = dict.fromkeys(
        ("assistant", "steps", "no_block", "multi_block", "unanswered", "plain_after", "usage"), 0
    )
    pending_call: str | None = None  # the previous message opened a tool step
    after_plain = False  # the previous message was a no-block / multi-block assistant message
    n = len(parsed)
    for index, (role, text) in enumerate(parsed):
        call_id, pending_call = pending_call, None
        was_plain, after_plain = after_plain, False
        if role == "assistant":
            counts["assistant"] += 1
            report = usage_report(items[index])
            usage: Usage | None = usage_from_openai(report) if report else None
            counts["usage"] += usage is not None
            commands = bash_commands(text)
            answered = index + 1 < n and parsed[index + 1][0] == "user"
            if len(commands) == 1 and answered:
                counts["steps"] += 1
                pending_call = text_protocol_call_id(transcript_id, counts["assistant"])
                arguments = json.dumps({"command": commands[0]})
                parts = (Text(text), ToolCall(pending_call, BASH_TOOL, arguments))
                out.append(Message("assistant", parts, meta=_CALL_META, usage=usage))
                continue
            if len(commands) == 1:
                counts["unanswered"] += 1
            else:
                counts["no_block" if not commands else "multi_block"] += 1
                after_plain = True
            out.append(Message("assistant", (Text(text),), usage=usage))
        elif call_id is not None:
            result = ToolResult(call_id, BASH_TOOL, (Text(text),), observation_is_error(text))
            out.append(Message("tool", (result,), meta=_RESULT_META))
        else:
            if role == "user" and was_plain:
                counts["plain_after"] += 1
            out.append(Message(role, (Text(text),)))  # type: ignore[arg-type]

    plain = counts["no_block"] + counts["multi_block"] + counts["unanswered"]
    stats = LoaderStats(
        messages=n,
        assistant_messages=counts["assistant"],
        tool_steps=counts["steps"],
        plain_assistant=plain,
        no_block=counts["no_block"],
        multi_block=counts["multi_block"],
        unanswered=counts["unanswered"],
        plain_user_after=counts["plain_after"],
        usage_reports=counts["usage"],
    )
    return assign_ids(out), stats


def _flat_usage(usage: Usage) -> dict[str, int]:
    out = {
        "prompt_tokens": usage.context_tokens,
        "completion_tokens": usage.output,
        "cached_tokens": usage.cache_read,
        "reasoning_tokens": usage.reasoning,
    }
    if usage.cache_write:
        out["cache_write_tokens"] = usage.cache_write
    return out


def messages_to_text_protocol(
    messages: Iterable[Message], *, with_usage: bool = False
) -> list[dict[str, Any]]:
    """The plain-text wire form of messages: ``{"role", "content"}`` dicts, exactly as sent.

    The inverse of ``messages_from_text_protocol``: recovered observations go back to role
    ``meta["wire_role"]`` (``user``) with their exact text, recovered tool calls disappear into
    the text they came from. Reasoning parts are not part of the wire text and are left out.
    ``with_usage`` adds each assistant message's usage in the flattened JSONL form
    (``prompt_tokens``, ``completion_tokens``, ``cached_tokens``, ``reasoning_tokens``), which
    reproduces the shared JSONL's message objects exactly.

    Raises ``FormatError`` (naming the index) for a native tool call or result, which has no
    plain-text form.
    """
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        text_protocol = bool(message.meta.get("text_protocol"))
        if message.role == "tool" or message.tool_results:
            if not text_protocol:
                raise FormatError(
                    f"message {index}: a native tool result has no plain-text form",
                    format=TEXT_PROTOCOL,
                    index=index,
                    expected="tool messages recovered from text (meta text_protocol)",
                )
            role = str(message.meta.get("wire_role", "user"))
            content = "\n".join(r.text for r in message.tool_results)
        else:
            if message.tool_calls and not text_protocol:
                raise FormatError(
                    f"message {index}: a native tool call has no plain-text form",
                    format=TEXT_PROTOCOL,
                    index=index,
                    expected="tool calls recovered from text (meta text_protocol)",
                )
            role = message.role
            content = message.text
        wire: dict[str, Any] = {"role": role, "content": content}
        if with_usage and message.role == "assistant" and message.usage is not None:
            wire["usage"] = _flat_usage(message.usage)
        out.append(wire)
    return out
