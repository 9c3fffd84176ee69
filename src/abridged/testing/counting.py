"""How the local provider counts a request's tokens: blocks of the wire request, real tokenizer.

The count is independent of abridged's estimator: texts are counted with a real tokenizer
(``toktok``, o200k by default) and the fixed costs below are the provider's documented or
customary ones, not the estimator's.

**Formula.** A request is read from the wire, in the order the providers put it in the prompt,
as a sequence of *blocks* (``Segment``s):

1. each tool definition: the tokens of its canonical JSON (keys sorted, compact, without
   ``cache_control``);
2. the system prompt (OpenAI Chat ``system``/``developer`` messages, Responses ``instructions``,
   Anthropic ``system``), then every message, each message split into its content blocks:

   - text (and refusal, reasoning text, reasoning summaries, thinking): the tokens of the text;
   - a tool call: the tokens of ``name + " " + arguments`` (Anthropic: the canonical JSON of
     ``input``) plus ``TOOL_CALL_OVERHEAD``;
   - a tool result: the tokens of its text (Anthropic ``tool_result`` blocks also get
     ``TOOL_CALL_OVERHEAD``, OpenAI tool results are messages of their own);
   - an image: ``IMAGE_TOKENS_LOW`` for OpenAI ``detail: "low"``, ``IMAGE_TOKENS_OPENAI``
     otherwise, ``IMAGE_TOKENS_ANTHROPIC`` for Anthropic (the sizes of a 768x768 image, and of a
     full-size 1.15 megapixel one; the server does not decode images);
   - a file or document: its text for Anthropic text documents, else ``FILE_TOKENS``;
   - a message ``name``: its tokens plus 1;
   - anything else: the tokens of its canonical JSON;

   and the first block of every message also carries ``MESSAGE_OVERHEAD`` (role and delimiters;
   a message without content is one block of just that overhead);
3. ``REPLY_PRIMING`` tokens for the start of the reply.

``prompt_tokens`` = the sum of the blocks + ``REPLY_PRIMING``. Since every block is counted on
its own, the count of a prefix of blocks is the sum of those blocks: a request that extends
another one shares that sum exactly, which is what the prompt cache needs.

Output tokens of a reply: tokens of its text + tokens of its reasoning + for each tool call the
tokens of ``name + " " + arguments`` plus ``TOOL_CALL_OVERHEAD``.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

MESSAGE_OVERHEAD = 4
"""Per message: ``<|start|>``, the role, ``<|message|>`` and ``<|end|>``."""
REPLY_PRIMING = 3
"""Per request: the start of the assistant's reply."""
TOOL_CALL_OVERHEAD = 3
"""Per tool call (and per Anthropic ``tool_result`` block): the call's delimiters."""
IMAGE_TOKENS_LOW = 85
IMAGE_TOKENS_OPENAI = 765
IMAGE_TOKENS_ANTHROPIC = 1_600
FILE_TOKENS = 1_000

ENCODINGS: Mapping[str, str] = {
    "o200k": "o200k_base",
    "o200k_base": "o200k_base",
    "cl100k": "cl100k_base",
    "cl100k_base": "cl100k_base",
    "o200k_harmony": "o200k_harmony",
}

CountFunction = Callable[[list[str]], list[int]]


def canonical(value: Any) -> str:
    """``value`` as canonical JSON: keys sorted, compact, unicode kept."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def digest(text: str) -> str:
    """A short stable hash of ``text``."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


class TokenCounter:
    """Counts texts with a real tokenizer: ``"o200k"`` (default) or ``"cl100k"`` through
    ``toktok``, or any callable ``list[str] -> list[int]`` (then partial-block cache matches are
    not computed, see ``common_prefix``)."""

    def __init__(self, count: str | CountFunction = "o200k") -> None:
        self._function: CountFunction | None = None
        self.encoding: str | None = None
        if callable(count):
            self._function = count
        else:
            if count not in ENCODINGS:
                raise ValueError(
                    f"unknown encoding {count!r}: expected one of {', '.join(ENCODINGS)}"
                )
            self.encoding = ENCODINGS[count]
            # the real tokenizer (package toktok-rs, a dev dependency), imported on first use
            self._toktok: Any = importlib.import_module("toktok")

    def count(self, texts: Sequence[str]) -> list[int]:
        """The token count of each text."""
        if not texts:
            return []
        if self._function is not None:
            return [int(n) for n in self._function(list(texts))]
        counts = self._toktok.batch_count(list(texts), self.encoding)
        return [int(n) for n in counts]

    def count_one(self, text: str) -> int:
        """The token count of one text."""
        return self.count([text])[0] if text else 0

    def truncate(self, text: str, max_tokens: int) -> str:
        """``text`` cut to at most ``max_tokens`` tokens (unchanged with a callable counter)."""
        if self.encoding is None:
            return text
        cut, _total = self._toktok.truncate(text, max_tokens, self.encoding)
        return str(cut)

    def common_prefix(self, a: str, b: str, limit: int) -> int:
        """How many leading tokens ``a`` and ``b`` share (at most ``limit``).

        Found by bisection on the largest ``n`` whose first ``n`` tokens decode to the same text
        in both; 0 with a callable counter.
        """
        if self.encoding is None or limit <= 0 or not a or not b or a[0] != b[0]:
            return 0
        lo, hi = 0, limit
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.truncate(a, mid) == self.truncate(b, mid):
                lo = mid
            else:
                hi = mid - 1
        return lo


@dataclass(frozen=True, slots=True)
class Segment:
    """One block of a request: what is tokenized, its fixed tokens and its identity.

    ``key`` is equal for equal blocks at the same place of a message (role and message fields
    included); ``head`` names what precedes the text (a partial match of two blocks needs equal
    heads and equal ``extra``). ``breakpoint`` marks an Anthropic ``cache_control``.
    """

    key: str
    head: str
    text: str
    extra: int = 0
    breakpoint: bool = False
    tokens: int = 0


def measure(segments: Sequence[Segment], counter: TokenCounter) -> list[Segment]:
    """The segments with their ``tokens`` (text tokens + ``extra``), counted in one batch."""
    counts = counter.count([s.text for s in segments])
    return [replace(s, tokens=n + s.extra) for s, n in zip(segments, counts, strict=True)]


def total_tokens(segments: Sequence[Segment]) -> int:
    """``prompt_tokens`` of a measured request: its blocks plus ``REPLY_PRIMING``."""
    return sum(s.tokens for s in segments) + REPLY_PRIMING


# -- building blocks ------------------------------------------------------------------------------

Piece = tuple[Any, str, int, bool]  # raw block (for the key), text, extra tokens, breakpoint


def _strip_cache_control(block: Any) -> tuple[Any, bool]:
    if isinstance(block, Mapping) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}, block[
            "cache_control"
        ] is not None
    return block, False


def _message_segments(section: str, role: str, fields: Any, pieces: list[Piece]) -> list[Segment]:
    if not pieces:
        pieces = [({}, "", 0, False)]
    out: list[Segment] = []
    for i, (raw, text, extra, breakpoint) in enumerate(pieces):
        head = canonical([section, role, fields if i == 0 else None, i == 0])
        out.append(
            Segment(
                key=digest(head + canonical(raw)),
                head=head,
                text=text,
                extra=extra + (MESSAGE_OVERHEAD if i == 0 else 0),
                breakpoint=breakpoint,
            )
        )
    return out


def _tool_segments(tools: Any) -> list[Segment]:
    out: list[Segment] = []
    if not isinstance(tools, list | tuple):
        return out
    for tool in tools:
        raw, breakpoint = _strip_cache_control(tool)
        text = canonical(raw)
        head = canonical(["tool"])
        out.append(Segment(digest(head + text), head, text, 0, breakpoint))
    return out


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


# -- OpenAI Chat Completions ----------------------------------------------------------------------


def _openai_image_tokens(detail: Any) -> int:
    return IMAGE_TOKENS_LOW if detail == "low" else IMAGE_TOKENS_OPENAI


def _chat_part(part: Any) -> Piece:
    if not isinstance(part, Mapping):
        return (part, canonical(part), 0, False)
    kind = part.get("type")
    if kind in ("text", "refusal"):
        return (part, _str(part.get(kind)), 0, False)
    if kind == "image_url":
        obj = part.get("image_url")
        detail = obj.get("detail") if isinstance(obj, Mapping) else None
        return (part, "", _openai_image_tokens(detail), False)
    if kind in ("input_audio", "file"):
        return (part, "", FILE_TOKENS, False)
    return (part, canonical(part), 0, False)


def chat_segments(body: Mapping[str, Any]) -> list[Segment]:
    """The blocks of a Chat Completions request (tools, then messages in order)."""
    out = _tool_segments(body.get("tools"))
    messages = body.get("messages")
    for m in messages if isinstance(messages, list) else ():
        if not isinstance(m, Mapping):
            out.extend(_message_segments("chat", "?", None, [(m, canonical(m), 0, False)]))
            continue
        role = _str(m.get("role"))
        skip = ("content", "tool_calls", "reasoning_content", "reasoning", "name")
        fields = {k: v for k, v in m.items() if k not in skip}
        pieces: list[Piece] = []
        name = m.get("name")
        if isinstance(name, str) and name:
            pieces.append(({"name": name}, name, 1, False))
        reasoning = m.get("reasoning_content") or m.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            pieces.append(({"reasoning": reasoning}, reasoning, 0, False))
        content = m.get("content")
        if isinstance(content, str):
            pieces.append(({"text": content}, content, 0, False))
        elif isinstance(content, list):
            pieces.extend(_chat_part(p) for p in content)
        calls = m.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            fn = call.get("function") if isinstance(call, Mapping) else None
            fn = fn if isinstance(fn, Mapping) else {}
            arguments = fn.get("arguments")
            if not isinstance(arguments, str):
                arguments = canonical(arguments)
            text = _str(fn.get("name")) + " " + arguments
            pieces.append((call, text, TOOL_CALL_OVERHEAD, False))
        out.extend(_message_segments("chat", role, fields, pieces))
    return out


# -- OpenAI Responses -----------------------------------------------------------------------------


def _responses_part(part: Any) -> Piece:
    if isinstance(part, str):
        return ({"text": part}, part, 0, False)
    if not isinstance(part, Mapping):
        return (part, canonical(part), 0, False)
    kind = part.get("type")
    if kind in ("input_text", "output_text", "text", "summary_text", "reasoning_text"):
        return (part, _str(part.get("text")), 0, False)
    if kind == "refusal":
        return (part, _str(part.get("refusal")), 0, False)
    if kind == "input_image":
        return (part, "", _openai_image_tokens(part.get("detail")), False)
    if kind in ("input_file", "input_audio"):
        return (part, "", FILE_TOKENS, False)
    return (part, canonical(part), 0, False)


def responses_segments(body: Mapping[str, Any]) -> list[Segment]:
    """The blocks of a Responses request (tools, ``instructions``, then input items)."""
    out = _tool_segments(body.get("tools"))
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        out.extend(
            _message_segments(
                "responses", "system", None, [({"text": instructions}, instructions, 0, False)]
            )
        )
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, Mapping):
            out.extend(_message_segments("responses", "?", None, [_responses_part(item)]))
            continue
        kind = item.get("type") or ("message" if "role" in item else None)
        fields = {
            k: v
            for k, v in item.items()
            if k not in ("content", "output", "arguments", "summary", "id", "status")
        }
        pieces: list[Piece] = []
        role = _str(item.get("role")) or _str(kind)
        if kind == "message":
            content = item.get("content")
            if isinstance(content, str):
                pieces.append(({"text": content}, content, 0, False))
            elif isinstance(content, list):
                pieces.extend(_responses_part(p) for p in content)
        elif kind == "function_call":
            arguments = item.get("arguments")
            if not isinstance(arguments, str):
                arguments = canonical(arguments)
            text = _str(item.get("name")) + " " + arguments
            pieces.append(({"arguments": arguments}, text, TOOL_CALL_OVERHEAD, False))
        elif kind == "function_call_output":
            output = item.get("output")
            if isinstance(output, list):
                pieces.extend(_responses_part(p) for p in output)
            else:
                text = output if isinstance(output, str) else canonical(output)
                pieces.append(({"output": text}, text, 0, False))
        elif kind == "reasoning":
            for part in (item.get("summary") or []) + (item.get("content") or []):
                pieces.append(_responses_part(part))
        else:
            pieces.append((item, canonical(item), 0, False))
        out.extend(_message_segments("responses", role, fields, pieces))
    return out


# -- Anthropic Messages ---------------------------------------------------------------------------


def _anthropic_result_content(content: Any) -> tuple[str, int]:
    if isinstance(content, str):
        return content, 0
    texts: list[str] = []
    extra = 0
    for block in content if isinstance(content, list) else ():
        if isinstance(block, Mapping) and block.get("type") == "text":
            texts.append(_str(block.get("text")))
        elif isinstance(block, Mapping) and block.get("type") == "image":
            extra += IMAGE_TOKENS_ANTHROPIC
        elif isinstance(block, Mapping) and block.get("type") == "document":
            text, n = _anthropic_document(block)
            texts.append(text)
            extra += n
        else:
            texts.append(canonical(block))
    return "\n".join(texts), extra


def _anthropic_document(block: Mapping[str, Any]) -> tuple[str, int]:
    source = block.get("source")
    if isinstance(source, Mapping) and source.get("type") == "text":
        return _str(source.get("data")), 0
    if isinstance(source, Mapping) and source.get("type") == "content":
        return _anthropic_result_content(source.get("content"))
    return "", FILE_TOKENS


def _anthropic_block(block: Any) -> Piece:
    raw, breakpoint = _strip_cache_control(block)
    if isinstance(block, str):
        return ({"text": block}, block, 0, False)
    if not isinstance(block, Mapping):
        return (raw, canonical(raw), 0, breakpoint)
    kind = block.get("type")
    if kind == "text":
        return (raw, _str(block.get("text")), 0, breakpoint)
    if kind == "thinking":
        return (raw, _str(block.get("thinking")), 0, breakpoint)
    if kind == "redacted_thinking":
        return (raw, "", 0, breakpoint)
    if kind == "image":
        return (raw, "", IMAGE_TOKENS_ANTHROPIC, breakpoint)
    if kind == "document":
        text, extra = _anthropic_document(block)
        return (raw, text, extra, breakpoint)
    if kind == "tool_use":
        text = _str(block.get("name")) + " " + canonical(block.get("input"))
        return (raw, text, TOOL_CALL_OVERHEAD, breakpoint)
    if kind == "tool_result":
        text, extra = _anthropic_result_content(block.get("content"))
        return (raw, text, extra + TOOL_CALL_OVERHEAD, breakpoint)
    return (raw, canonical(raw), 0, breakpoint)


def anthropic_segments(body: Mapping[str, Any]) -> list[Segment]:
    """The blocks of an Anthropic Messages request (tools, system, then messages), with the
    ``cache_control`` breakpoints marked."""
    out = _tool_segments(body.get("tools"))
    system = body.get("system")
    if isinstance(system, str) and system:
        out.extend(
            _message_segments("anthropic", "system", None, [({"text": system}, system, 0, False)])
        )
    elif isinstance(system, list) and system:
        out.extend(
            _message_segments("anthropic", "system", None, [_anthropic_block(b) for b in system])
        )
    messages = body.get("messages")
    for m in messages if isinstance(messages, list) else ():
        if not isinstance(m, Mapping):
            out.extend(_message_segments("anthropic", "?", None, [(m, canonical(m), 0, False)]))
            continue
        role = _str(m.get("role"))
        content = m.get("content")
        if isinstance(content, str):
            pieces: list[Piece] = [({"text": content}, content, 0, False)]
        elif isinstance(content, list):
            pieces = [_anthropic_block(b) for b in content]
        else:
            pieces = []
        out.extend(_message_segments("anthropic", role, None, pieces))
    return out
