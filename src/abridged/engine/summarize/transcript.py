"""Render messages as a transcript for a summarizer: tagged, clipped, escaped, within a budget.

The transcript is what a summarizer model reads. Each message becomes one block of light tags::

    <user>
    Fix the parser; keep the public API.
    </user>
    <assistant>
    I'll look at the reader first.
    <tool_call name="bash" id="c1">{"command": "cat src/reader.py"}</tool_call>
    </assistant>
    <tool_result name="bash" id="c1" error="true">
    Traceback (most recent call last):
    [... 12,345 characters (~3.1k tokens) omitted ...]
    ValueError: bad unit
    </tool_result>

and ``render_transcript`` wraps the blocks in ``<conversation>`` tags. Tool results and tool call
arguments are clipped to their head and tail with a count of what was left out; reasoning is
short or left out; images and files become placeholders (their data is never copied).

**Escaping.** The messages are untrusted: a tool output may contain ``</conversation>`` followed
by instructions, or a forged ``<user>`` block. Every opening or closing tag (``<name``, ``</name``,
any case, any spacing) whose name is one of ``RESERVED_TAGS`` has its ``<`` replaced by ``&lt;``
wherever it comes from the messages (text, arguments, tool names, ids), so the only real tags in
a transcript are the ones it was built with. A line that would read as one of the summary's own
headings (``## User intent and requests``) gets a backslash before it (``escape_untrusted``).
``needs_escaping`` tells whether a message holds anything to escape (the cache-reusing mode of
``LLMSummarizer`` sends such messages as an escaped transcript, not as they are).

Secrets are redacted from the rendered text (``abridged.engine.summarize.redact``) unless
``TranscriptOptions.redact`` is off, so they are not even sent to the summarizer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from abridged.core.budget import format_token_size
from abridged.core.model import (
    File,
    Image,
    Message,
    Opaque,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
)
from abridged.core.tokens import estimate_text_tokens
from abridged.engine.summarize.folding import RESERVED_TAGS, TAG_PATTERN, escape_tags, fold
from abridged.engine.summarize.prompts import defuse_headings
from abridged.engine.summarize.redact import redact
from abridged.errors import SettingError

OPEN = "<conversation>"
CLOSE = "</conversation>"


def _attr(value: str) -> str:
    """An attribute value: quotes and angle brackets escaped, on one line."""
    value = value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    return value.replace(">", "&gt;").replace("\n", " ")


# -- clipping -----------------------------------------------------------------------------------


def _longest_fit(text: str, max_tokens: int, *, suffix: bool) -> int:
    """The length of the longest prefix (or suffix) of ``text`` within ``max_tokens``.

    Starts from a guess made from the text's own chars-per-token, brackets the answer around it
    and bisects to within about 1.5%, so a cut costs a handful of estimates, not one per bit
    of the length. The length returned always fits.
    """
    n = len(text)
    if max_tokens <= 0 or n == 0:
        return 0

    def fits(length: int) -> bool:
        piece = text[n - length :] if suffix else text[:length]
        return estimate_text_tokens(piece) <= max_tokens

    sample = text[n - 2_000 :] if suffix else text[:2_000]
    ratio = len(sample) / max(1, estimate_text_tokens(sample))
    guess = max(1, min(n, int(max_tokens * ratio)))
    if fits(guess):
        lo, hi = guess, guess
        while hi < n:
            hi = min(n, hi + max(16, hi // 4))
            if not fits(hi):
                break
            lo = hi
        else:
            return n
    else:
        lo, hi = guess, guess
        while lo > 0:
            lo = max(0, lo - max(16, lo // 4))
            if fits(lo):
                break
            hi = lo
        else:
            return 0
    # fits(lo) and not fits(hi)
    while hi - lo > max(1, hi // 64):
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo


def _longest_prefix(text: str, max_tokens: int) -> int:
    """The length of the longest prefix of ``text`` within ``max_tokens``."""
    return _longest_fit(text, max_tokens, suffix=False)


def _longest_suffix(text: str, max_tokens: int) -> int:
    """The length of the longest suffix of ``text`` within ``max_tokens``."""
    return _longest_fit(text, max_tokens, suffix=True)


def _exceeds(text: str, max_tokens: int) -> bool:
    """Whether ``text`` holds more than ``max_tokens`` (estimated), without estimating all of a
    long text when a prefix already does."""
    probe = max_tokens * 8 + 64
    if len(text) > probe and estimate_text_tokens(text[:probe]) > max_tokens:
        return True
    return estimate_text_tokens(text) > max_tokens


#: Texts longer than this are estimated from a sample of their head and tail.
_SAMPLE_CHARS = 2_000


def approx_tokens(text: str) -> int:
    """The estimated tokens of ``text``, from a head-and-tail sample when it is long (for notes
    such as the omission marker, which only say "about")."""
    if len(text) <= _SAMPLE_CHARS:
        return estimate_text_tokens(text)
    half = _SAMPLE_CHARS // 2
    sample = estimate_text_tokens(text[:half]) + estimate_text_tokens(text[-half:])
    return round(sample * len(text) / _SAMPLE_CHARS)


def omission_marker(chars: int, tokens: int) -> str:
    """The note that replaces a clipped middle.

    >>> omission_marker(1234, 310)
    '[... 1,234 characters (~310 tokens) omitted ...]'
    """
    return f"[... {chars:,} characters (~{format_token_size(tokens)} tokens) omitted ...]"


#: A line that is an ``omission_marker`` alone (a clipped text's bookkeeping, never content).
OMISSION_LINE = re.compile(r"^\s*\[\.\.\. [\d,]+ characters \(~[^)]*\) omitted \.\.\.\]\s*$")


def clip_middle(text: str, max_tokens: int, *, head_share: float = 0.5) -> str:
    """``text`` unchanged if it holds at most ``max_tokens`` (estimated), else its head and tail
    with an ``omission_marker`` between them; the result holds at most ``max_tokens`` unless even
    the marker alone does not fit (then it is the marker alone).

    Cuts snap back to a line break when one is near, so that lines stay whole where possible.

    >>> clip_middle("short", 10)
    'short'
    """
    if not _exceeds(text, max_tokens):
        return text
    # The marker's size depends only on its numbers: bound them by the text's length.
    marker_tokens = estimate_text_tokens(omission_marker(len(text), len(text))) + 2
    room = max(0, max_tokens - marker_tokens)
    clipped = _clip_once(text, room, head_share)
    while estimate_text_tokens(clipped) > max_tokens and room > 0:
        room = max(0, room - (estimate_text_tokens(clipped) - max_tokens) - 1)
        clipped = _clip_once(text, room, head_share)
    return clipped


def _clip_once(text: str, room: int, head_share: float) -> str:
    head_len = _longest_prefix(text, int(room * head_share))
    tail_len = _longest_suffix(text, room - estimate_text_tokens(text[:head_len]))
    # Snap to line boundaries when a break is within the last fifth of each piece.
    nl = text.rfind("\n", 0, head_len)
    if nl >= 0 and nl >= head_len * 4 // 5:
        head_len = nl + 1
    if tail_len:
        start = len(text) - tail_len
        nl = text.find("\n", start)
        if nl >= 0 and nl - start <= tail_len // 5:
            tail_len = len(text) - nl - 1
    head_len = min(head_len, len(text) - tail_len)
    omitted = text[head_len : len(text) - tail_len]
    marker = omission_marker(len(omitted), approx_tokens(omitted))
    head = text[:head_len]
    tail = text[len(text) - tail_len :] if tail_len else ""
    pieces = [head.rstrip("\n"), marker, tail.lstrip("\n")]
    return "\n".join(p for p in pieces if p)


def truncate_tokens(text: str, max_tokens: int, *, ellipsis: str = "…") -> str:
    """``text`` cut after at most ``max_tokens`` (estimated), ``ellipsis`` marking the cut.

    >>> truncate_tokens("one two three four five six", 4)
    'one two…'
    """
    if estimate_text_tokens(text) <= max_tokens:
        return text
    keep = _longest_prefix(text, max(0, max_tokens - estimate_text_tokens(ellipsis)))
    return text[:keep].rstrip() + ellipsis


# -- rendering ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TranscriptOptions:
    """How messages are rendered; every size is in estimated tokens.

    - ``tool_result_tokens`` (default 400; >= 16): each tool result is clipped to this, head and
      tail kept.
    - ``tool_call_tokens`` (default 300; >= 16): each tool call's arguments are clipped to this.
    - ``reasoning_tokens`` (default 150; >= 0): reasoning text is clipped to this; 0 leaves
      reasoning out.
    - ``message_tokens`` (default ``None``; >= 16): any single message text is clipped to this
      (``None``: never; the map-reduce of ``LLMSummarizer`` sets it so a block fits a chunk).
    - ``include_system`` (default ``False``): render system messages (they are re-sent anyway).
    - ``redact`` (default ``True``): redact secrets from the rendered text.
    """

    tool_result_tokens: int = 400
    tool_call_tokens: int = 300
    reasoning_tokens: int = 150
    message_tokens: int | None = None
    include_system: bool = False
    redact: bool = True

    def __post_init__(self) -> None:
        for name, minimum in (
            ("tool_result_tokens", 16),
            ("tool_call_tokens", 16),
            ("reasoning_tokens", 0),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise SettingError(f"TranscriptOptions.{name}", value, f"an integer >= {minimum}")
        m = self.message_tokens
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 16):
            raise SettingError("TranscriptOptions.message_tokens", m, "None or an integer >= 16")


def _media(part: Image | File) -> str:
    if isinstance(part, Image):
        bits = ["image"]
        if part.width and part.height:
            bits.append(f"{part.width}x{part.height}")
        if part.media_type:
            bits.append(part.media_type)
        if part.url and not part.url.startswith("data:") and len(part.url) <= 200:
            bits.append(part.url)
        return "[" + " ".join(bits) + "]"
    bits = ["file"]
    for value in (part.filename, part.media_type, part.file_id):
        if value:
            bits.append(value)
    if part.url and not part.url.startswith("data:") and len(part.url) <= 200:
        bits.append(part.url)
    return "[" + " ".join(bits) + "]"


#: Strings longer than this in a provider's own item (encrypted content, page bodies) are left
#: out of what a summarizer sees of it: they are not readable, or too long to be worth it.
_OPAQUE_STRING_CHARS = 300
#: Tokens of a provider's own item shown to a summarizer (its type, query, URLs, titles).
_OPAQUE_TOKENS = 200


def _readable(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= _OPAQUE_STRING_CHARS else "…"
    if isinstance(value, list):
        return [_readable(v) for v in value]
    if isinstance(value, dict):
        return {k: _readable(v) for k, v in value.items()}
    return value


def _opaque(part: Opaque) -> str:
    """A provider's own item as a summarizer sees it: its type and its short readable fields."""
    try:
        shown = json.dumps(_readable(part.value()), ensure_ascii=False)
    except (ValueError, RecursionError):
        shown = ""
    return f"[{part.type or 'provider item'} {shown}]"


def _min_limit(a: int, b: int | None) -> int:
    return a if b is None else min(a, b)


class _Cache:
    """Redacted texts and clipped texts of one ``render_transcript`` call, so that re-rendering
    at a tighter level only computes what changed."""

    def __init__(self) -> None:
        self.redacted: dict[str, str] = {}
        self.clipped: dict[tuple[str, int], str] = {}

    def prep(self, text: str, limit: int | None, options: TranscriptOptions) -> str:
        """Redact (before clipping, so no half secret survives a cut), clip, then escape."""
        if options.redact:
            cached = self.redacted.get(text)
            if cached is None:
                cached = self.redacted[text] = redact(text)
            text = cached
        if limit is not None:
            key = (text, limit)
            clipped = self.clipped.get(key)
            if clipped is None:
                clipped = self.clipped[key] = clip_middle(text, limit)
            text = clipped
        return escape_untrusted(text)


def escape_untrusted(text: str) -> str:
    r"""Text from a conversation as it may go into a summarizer's input: reserved tags defused
    (``escape_tags``) and lines that read as the summary's headings escaped
    (``prompts.defuse_headings``).

    >>> print(escape_untrusted("</conversation>\n## Facts and decisions"))
    &lt;/conversation>
    \## Facts and decisions
    """
    return defuse_headings(escape_tags(text))


def needs_escaping(message: Message) -> bool:
    """Whether a transcript of ``message`` would escape anything in it: a reserved tag or a
    summary heading in its text, reasoning, tool call arguments or tool results (system
    messages are the caller's own and are not rendered)."""
    if message.role == "system":
        return False
    for part in message.parts:
        if isinstance(part, Text | ToolResult):
            text = part.text
        elif isinstance(part, ToolCall):
            text = f"{part.name}\n{part.arguments}"
        elif isinstance(part, Reasoning):
            text = part.text or "\n".join(part.summary)
        else:
            continue
        if text and escape_untrusted(text) != text:
            return True
    return False


def _render_result(result: ToolResult, options: TranscriptOptions, cache: _Cache) -> str:
    attrs = f' name="{_attr(result.name)}"' if result.name else ""
    attrs += f' id="{_attr(result.call_id)}"'
    if result.is_error:
        attrs += ' error="true"'
    pieces: list[str] = []
    for item in result.content:
        pieces.append(item.text if isinstance(item, Text) else _media(item))
    limit = _min_limit(options.tool_result_tokens, options.message_tokens)
    body = cache.prep("\n".join(pieces), limit, options)
    return f"<tool_result{attrs}>\n{body}\n</tool_result>"


def _render_call(call: ToolCall, options: TranscriptOptions, cache: _Cache) -> str:
    limit = _min_limit(options.tool_call_tokens, options.message_tokens)
    args = cache.prep(call.arguments, limit, options)
    return f'<tool_call name="{_attr(call.name)}" id="{_attr(call.id)}">{args}</tool_call>'


def render_message(message: Message, options: TranscriptOptions | None = None) -> str:
    """One message as a tagged block (empty for a system message unless ``include_system``).

    Messages whose tools ran through their text (``meta["text_protocol"]``) show their text only,
    since the command is already in it; their tool results show as ``<tool_result>`` blocks.
    """
    return _render_message(message, options or TranscriptOptions(), _Cache())


def _render_message(message: Message, opts: TranscriptOptions, cache: _Cache) -> str:
    if message.role == "system" and not opts.include_system:
        return ""
    text_protocol = bool(message.meta.get("text_protocol"))
    results = [p for p in message.parts if isinstance(p, ToolResult)]
    result_texts = {r.text for r in results}
    inner: list[str] = []
    for part in message.parts:
        if isinstance(part, Text):
            if part.text and not (results and part.text in result_texts):
                inner.append(cache.prep(part.text, opts.message_tokens, opts))
        elif isinstance(part, Reasoning):
            shown = part.text or "\n".join(part.summary)
            if opts.reasoning_tokens and shown and not part.redacted:
                limit = _min_limit(opts.reasoning_tokens, opts.message_tokens)
                inner.append(f"<reasoning>{cache.prep(shown, limit, opts)}</reasoning>")
        elif isinstance(part, ToolCall):
            if not text_protocol:
                inner.append(_render_call(part, opts, cache))
        elif isinstance(part, ToolResult):
            inner.append(_render_result(part, opts, cache))
        elif isinstance(part, Opaque):
            shown = cache.prep(_opaque(part), _OPAQUE_TOKENS, opts)
            inner.append(f"<attachment>{shown}</attachment>")
        else:
            inner.append(f"<attachment>{cache.prep(_media(part), None, opts)}</attachment>")
    if message.role == "tool" or (
        results and all(isinstance(p, ToolResult) for p in message.parts)
    ):
        # A tool message is its results; no wrapper needed.
        return "\n".join(inner)
    tag: str = message.role
    if message.is_summary:
        tag = "summary"
    return f"<{tag}>\n" + "\n".join(inner) + f"\n</{tag}>"


@dataclass(frozen=True, slots=True)
class Transcript:
    """A rendered transcript: ``text`` (wrapped in ``<conversation>`` tags), one block per
    rendered message with its index in the input and its estimated tokens, the total
    estimated tokens of ``text``, whether it fits the budget asked for, and the options used."""

    text: str
    blocks: tuple[str, ...]
    indices: tuple[int, ...]
    block_tokens: tuple[int, ...]
    tokens: int
    fits: bool
    options: TranscriptOptions


#: Successively tighter clipping levels tried when a transcript does not fit its budget.
_TIGHTER: tuple[tuple[int, int, int], ...] = (
    (200, 150, 80),
    (100, 80, 40),
    (48, 48, 0),
)


def wrap(blocks: Sequence[str]) -> str:
    """The blocks inside ``<conversation>`` tags, one per line group."""
    return OPEN + "\n" + "\n".join(blocks) + ("\n" if blocks else "") + CLOSE


def _render(messages: Sequence[Message], options: TranscriptOptions, cache: _Cache) -> Transcript:
    blocks: list[str] = []
    indices: list[int] = []
    for index, message in enumerate(messages):
        block = _render_message(message, options, cache)
        if block:
            blocks.append(block)
            indices.append(index)
    text = wrap(blocks)
    sizes = [estimate_text_tokens(b) + 1 for b in blocks]
    return Transcript(
        text=text,
        blocks=tuple(blocks),
        indices=tuple(indices),
        block_tokens=tuple(sizes),
        tokens=estimate_text_tokens(text),
        fits=True,
        options=options,
    )


def render_transcript(
    messages: Sequence[Message],
    options: TranscriptOptions | None = None,
    *,
    budget_tokens: int | None = None,
) -> Transcript:
    """``messages`` rendered inside ``<conversation>`` tags.

    With ``budget_tokens``, tool results, arguments and reasoning are clipped ever tighter until
    the transcript fits; when even the tightest level does not fit, the tightest rendering is
    returned with ``fits=False`` (the caller splits it into chunks: see ``LLMSummarizer``).
    """
    opts = options or TranscriptOptions()
    cache = _Cache()
    transcript = _render(messages, opts, cache)
    if budget_tokens is None or transcript.tokens <= budget_tokens:
        return transcript
    for position, (results, calls, reasoning) in enumerate(_TIGHTER):
        if results >= opts.tool_result_tokens and calls >= opts.tool_call_tokens:
            continue
        # Skip a level that cannot shrink the transcript enough (tool output dominates it).
        current = transcript.options.tool_result_tokens
        last = position == len(_TIGHTER) - 1
        if not last and results > current * budget_tokens / max(1, transcript.tokens) * 1.5:
            continue
        tighter = replace(
            opts,
            tool_result_tokens=min(results, opts.tool_result_tokens),
            tool_call_tokens=min(calls, opts.tool_call_tokens),
            reasoning_tokens=min(reasoning, opts.reasoning_tokens),
        )
        transcript = _render(messages, tighter, cache)
        if transcript.tokens <= budget_tokens:
            return transcript
    return replace(transcript, fits=False)


def leading_summaries(messages: Sequence[Message]) -> tuple[str | None, tuple[Message, ...]]:
    """Split off summary messages (``meta.kind == "summary"``) at the start of ``messages``:
    their text joined (or ``None``) and the rest. System messages before them are kept in the
    rest."""
    summaries: list[str] = []
    rest: list[Message] = []
    in_head = True
    for message in messages:
        if in_head and message.is_summary:
            summaries.append(message.text)
            continue
        if message.role != "system":
            in_head = False
        rest.append(message)
    return ("\n\n".join(summaries) if summaries else None), tuple(rest)


__all__ = [
    "CLOSE",
    "OPEN",
    "RESERVED_TAGS",
    "TAG_PATTERN",
    "Transcript",
    "TranscriptOptions",
    "approx_tokens",
    "clip_middle",
    "escape_tags",
    "escape_untrusted",
    "fold",
    "leading_summaries",
    "needs_escaping",
    "omission_marker",
    "render_message",
    "render_transcript",
    "truncate_tokens",
    "wrap",
]
