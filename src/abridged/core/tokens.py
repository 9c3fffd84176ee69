"""Token counting: one content-aware estimator, per-message caching, and hybrid context sizes.

The estimator
-------------
``estimate_text_tokens`` imitates a modern byte-level BPE tokenizer (OpenAI's ``o200k_base``) in
two steps, as the tokenizer itself works:

1. Pre-tokenisation with the same kind of regular expression ``o200k_base`` uses: words with their
   leading space or punctuation character (split where lower case turns to upper case), numbers in
   groups of up to 3 digits, punctuation runs, newline runs and whitespace runs. On ASCII text the
   pieces are exactly the tokenizer's own, so only step 2 approximates.
2. A cost per piece, by class: number groups, whitespace and newline runs cost 1; a word costs 1
   up to a length and a fraction of a token per letter beyond it (common words are one token, long
   and rare ones split), more when it has no leading space, is in capitals, mixes cases, has no
   vowel (abbreviations, flags, hex), follows an unusual character ("/", '"', "@"), or is in a
   non-Latin script; punctuation runs cost 1 up to 4 characters and 0.4 per character beyond
   (capped: long repeated runs are single tokens); a Han or kana character costs about 0.87 or
   0.65, a Hangul syllable about 0.5 plus 0.6 per word, a non-ASCII symbol about 2.

Because the pieces carry the content's structure, code (short identifiers, operators, indentation),
JSON (quotes, braces, numbers) and CJK text get their own chars-per-token without any content
classifier. The constants were fitted on general text shipped with Python and the OS (stdlib
source, stdlib documentation, licence texts, generated JSON, gettext catalogues in a dozen
languages) against the real ``o200k_base`` tokenizer; ``bench/tokens.py`` reports the accuracy
per content class.

Messages add a fixed overhead (OpenAI's published chat accounting: 3 tokens per message plus the
role, and 3 to prime the reply), tool call names, ids and arguments, tool result ids and content,
reasoning (see ``estimate_message_tokens``), images by each provider's published formula, and files
at a documented flat cost. Messages marked ``meta["text_protocol"]`` (tools run through plain text,
as mini-swe-agent does) count their wire text only, with the overhead of their wire role.

Context size
------------
The provider's usage report is the ground truth. ``hybrid_context_tokens`` adds to the last report
the estimate of what was added since, scaled by a per-conversation ``Calibration`` learned from
consecutive reports; a report made before the last compaction (``boundary``) is ignored.
``TokenCounter`` caches per-message estimates by fingerprint, so a turn costs O(new messages).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import re
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from abridged.core.calibration import Calibration
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
from abridged.core.protocols import Tokenizer

ImageProvider: TypeAlias = Literal["openai", "anthropic", "gemini"]
IMAGE_PROVIDERS: tuple[ImageProvider, ...] = ("openai", "anthropic", "gemini")

#: Name of the estimator, for reports that say which counting method was used.
ESTIMATE_SOURCE = "estimate"

# -- per-message constants (OpenAI's published chat-format accounting) ------------------------

#: Tokens every message costs beyond its content: 3 for the message frame, 1 for the role.
MESSAGE_OVERHEAD = 4
#: Tokens that prime the model's reply, once per request.
REPLY_PRIMING = 3
#: Tokens framing one tool call (type, name and arguments keys) beyond its name, id and arguments.
TOOL_CALL_OVERHEAD = 4
#: Tokens framing one tool result beyond its call id, name and content.
TOOL_RESULT_OVERHEAD = 3
#: Tokens framing one tool definition beyond its JSON text, and once for the tools block.
TOOL_DEFINITION_OVERHEAD = 8
TOOLS_BLOCK_OVERHEAD = 12
#: A file part of unknown content (a PDF page costs about 1.5k-3k tokens; the page count is
#: unknown): a flat, documented guess.
FILE_TOKENS_DEFAULT = 1_500
#: Encrypted reasoning (OpenAI ``encrypted_content``, Anthropic ``redacted_thinking``) stands for
#: hidden reasoning text: base64 characters * 3/4 = bytes, about 4 bytes per token.
ENCRYPTED_CHARS_PER_TOKEN = 16 / 3

# -- images: each provider's published formula -------------------------------------------------

#: Size assumed for an image whose dimensions are unknown (a typical screenshot or photo after
#: the provider's own downscaling): 1024 x 1024 px. OpenAI 765, Anthropic 1,398, Gemini 1,032.
DEFAULT_IMAGE_SIZE = (1024, 1024)
OPENAI_IMAGE_BASE = 85
OPENAI_IMAGE_TILE = 170
ANTHROPIC_PIXELS_PER_TOKEN = 750
ANTHROPIC_MAX_EDGE = 1568
ANTHROPIC_MAX_PIXELS = 1_150_000
GEMINI_IMAGE_TILE = 258


def estimate_image_tokens(
    width: int | None,
    height: int | None,
    *,
    provider: ImageProvider = "openai",
    detail: str | None = None,
) -> int:
    """Tokens of one image by the provider's published formula.

    - OpenAI (GPT-4o family): ``detail="low"`` costs 85; otherwise the image is scaled to fit
      2048 x 2048, then its short side to 768, and costs 85 + 170 per 512-px tile.
    - Anthropic: scaled so its long edge is at most 1568 px and it has at most 1.15 MP, then
      width * height / 750.
    - Gemini: 258 when both sides are at most 384 px, else 258 per 768 x 768 tile.

    Unknown dimensions assume ``DEFAULT_IMAGE_SIZE``.

    >>> estimate_image_tokens(1024, 1024), estimate_image_tokens(1000, 1000, provider="anthropic")
    (765, 1334)
    """
    w, h = (width, height) if width and height and width > 0 and height > 0 else DEFAULT_IMAGE_SIZE
    if provider == "anthropic":
        scale = min(
            1.0, ANTHROPIC_MAX_EDGE / max(w, h), math.sqrt(ANTHROPIC_MAX_PIXELS / float(w * h))
        )
        return math.ceil(int(w * scale) * int(h * scale) / ANTHROPIC_PIXELS_PER_TOKEN)
    if provider == "gemini":
        if w <= 384 and h <= 384:
            return GEMINI_IMAGE_TILE
        return GEMINI_IMAGE_TILE * math.ceil(w / 768) * math.ceil(h / 768)
    if detail == "low":
        return OPENAI_IMAGE_BASE
    fw, fh = float(w), float(h)
    if max(fw, fh) > 2048:
        s = 2048 / max(fw, fh)
        fw, fh = fw * s, fh * s
    if min(fw, fh) > 768:
        s = 768 / min(fw, fh)
        fw, fh = fw * s, fh * s
    tiles = math.ceil(int(fw) / 512) * math.ceil(int(fh) / 512)
    return OPENAI_IMAGE_BASE + OPENAI_IMAGE_TILE * tiles


# -- text: pre-tokenisation and per-piece costs -------------------------------------------------

# CJK: Han, kana, bopomofo, Hangul jamo and syllables, CJK compatibility, half-width kana.
_HAN_KANA = (
    "\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u31a0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
)
_HANGUL = "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7ff"
_LEAD = r"(?:_|[^\r\n\w])"  # o200k: one optional leading char that is not a letter/digit/newline
# A letter that is not ASCII upper case nor CJK; combining marks count as letters (o200k's \p{M}),
# which Python's \w leaves out: the generic combining block and the Hebrew-to-Thai blocks.
_MARKS = "\u0300-\u036f\u0483-\u0489\u0590-\u0e7f"
_L = rf"[^\W\d_A-Z{_HAN_KANA}{_HANGUL}]"
_M = rf"[{_MARKS}]"
# One or more / zero or more of (_L or _M), written so that the common case (no marks) is a single
# character-class run: alternation per character is several times slower in ``re``.
_LOWER_PLUS = rf"(?:{_L}+(?:{_M}+{_L}*)*|{_M}+(?:{_L}+{_M}*)*)"
_LOWER_STAR = rf"(?:{_L}*(?:{_M}+{_L}*)*)"

_HAN_PIECE, _HANGUL_PIECE, _WORD_PIECE, _NUMBER_PIECE, _PUNCT_PIECE = 1, 2, 3, 4, 5

#: The pre-tokeniser: the alternatives of ``o200k_base``'s pattern in its order, with Python's
#: character classes (and CJK split out so that it can be costed per character).
_PIECE_PATTERNS = (
    rf"{_LEAD}?[{_HAN_KANA}]+",
    rf"{_LEAD}?[{_HANGUL}]+",
    rf"{_LEAD}?(?:[A-Z]*{_LOWER_PLUS}|[A-Z]+{_LOWER_STAR})(?:'(?i:[stmd]|re|ve|ll))?",
    r"\d{1,3}",
    r" ?(?:_|[^\s\w])+[\r\n/]*",
    r"\s*[\r\n]+|\s+(?!\S)|\s+",
)
#: One group per kind of piece (``m.lastindex`` says which).
_PIECES = re.compile("|".join(f"({p})" for p in _PIECE_PATTERNS))
#: The same pieces without groups, so that ``findall`` returns them as strings (in C).
_PIECE_TEXTS = re.compile("|".join(f"(?:{p})" for p in _PIECE_PATTERNS))

# Word costs: 1 + per_letter * max(0, letters - free) + per_letter_long * max(0, letters - long),
# by leading character and case: common words are one token whatever their length up to a point,
# long and rare ones split into several. Fitted against o200k_base on English prose, Python and C
# source and JSON (ASCII) and on gettext catalogues in European languages (non-ASCII); see the
# module docstring.
_WORD_SPACE = (4, 0.04, 14, 0.40)  # " word", " Word"
_WORD_BARE = (1, 0.03, 7, 0.15)  # "word" at a line start or after a digit
_WORD_PUNCT = (0, 0.04, 6, 0.20)  # ".word", "_word", "(word"
#: Leading characters that o200k usually merges into the word; others ("/", '"', ":", "@", ...)
#: often stay a token of their own.
_MERGING_LEADS = "._(#-"
_RARE_LEAD_EXTRA = 0.35
#: ASCII words without a vowel cost more (abbreviations, flags, hex): up to 0.3 more up to five
#: letters, and this much per letter beyond.
_VOWEL = re.compile("[aeiouyAEIOUY]")
_NO_VOWEL_PER_LETTER = 0.35
_WORD_CAPS = (1, 0.17, 6, 0.05)  # "HTTP", " NONE", "HTTPServer"
_WORD_LATIN_SPACE = (2, 0.23, 99, 0.0)  # " café", " слово": Latin, Greek, Cyrillic with a space
_WORD_LATIN_BARE = (0, 0.30, 99, 0.0)
_WORD_OTHER_SPACE = (3, 0.40, 99, 0.0)  # Hebrew, Arabic, Indic, Thai, ...
_WORD_OTHER_BARE = (1, 0.42, 99, 0.0)
_OTHER_SCRIPT_START = 0x0590
# CJK: per character (Han, kana) or per syllable and run (Hangul), plus a fraction for a leading
# space or punctuation character. Fitted on gettext catalogues in Chinese, Japanese and Korean.
_HAN_PER_CHAR = 0.87
_KANA_PER_CHAR = 0.65
_HANGUL_PER_CHAR = 0.49
_HANGUL_PER_RUN = 0.63
_CJK_LEAD = 0.16
# Punctuation runs: 1 up to 4 characters, 0.4 token per character beyond up to 10, then flat
# (long runs such as "-----" are single tokens); each non-ASCII symbol adds about one.
_PUNCT_FREE = 4
_PUNCT_PER_CHAR = 0.4
_PUNCT_MAX = 3.5
_NON_ASCII_SYMBOL = 0.9
# Whitespace and newline runs: one token up to this length.
_SPACE_RUN = 64


def _word_cost(piece: str) -> float:
    n = len(piece)
    first = piece[0]
    letters = n if first.isalpha() else n - 1
    extra = 0.0
    if piece.isascii():
        if piece.islower() or piece.istitle():
            if first == " ":
                shape = _WORD_SPACE
            elif first.isalpha():
                shape = _WORD_BARE
            else:
                shape = _WORD_PUNCT
                if first not in _MERGING_LEADS:
                    extra = _RARE_LEAD_EXTRA
        else:
            shape = _WORD_CAPS
        if letters >= 2 and _VOWEL.search(piece) is None:
            # No vowel: an abbreviation, a hash or flag soup ("drwxr", "cmpxchg"), seldom a token.
            extra += min(0.3, 0.1 * (letters - 1)) + _NO_VOWEL_PER_LETTER * max(0, letters - 5)
    elif ord(max(piece)) >= _OTHER_SCRIPT_START:
        shape = _WORD_OTHER_SPACE if first == " " else _WORD_OTHER_BARE
    else:
        shape = _WORD_LATIN_SPACE if first == " " else _WORD_LATIN_BARE
    free, per, long, per_long = shape
    return 1.0 + extra + per * max(0, letters - free) + per_long * max(0, letters - long)


def _punct_cost(piece: str) -> float:
    n = len(piece)
    cost = 1.0 if n <= _PUNCT_FREE else min(_PUNCT_MAX, 1.0 + (n - _PUNCT_FREE) * _PUNCT_PER_CHAR)
    if not piece.isascii():
        cost += _NON_ASCII_SYMBOL * sum(1 for ch in piece if ord(ch) > 0x7F)
    return cost


def text_cost(text: str) -> float:
    """The estimated tokens of ``text`` as a fraction (sum of per-piece costs).

    ``estimate_text_tokens`` rounds it; summing fractions first and rounding once keeps many
    small texts from accumulating rounding error. A piece's cost depends on its text alone, and
    logs and code repeat their pieces, so costs are memoized per piece (``_piece_cost``).
    """
    if not text:
        return 0.0
    return sum(map(_piece_cost, _PIECE_TEXTS.findall(text)))


@functools.lru_cache(maxsize=1 << 15)
def _piece_cost(piece: str) -> float:
    """The cost of one piece of the pre-tokeniser. ``_PIECES`` finds the same kind for the
    piece alone as in its text: only the last (whitespace) alternative looks ahead."""
    m = _PIECES.fullmatch(piece)
    kind = m.lastindex if m is not None else None
    n = len(piece)
    if kind == _WORD_PIECE:
        if n <= 4 and piece[0] == " ":
            return 1.0
        return _word_cost(piece)
    if kind == _NUMBER_PIECE:
        return 1.0
    if kind == _PUNCT_PIECE:
        if n <= _PUNCT_FREE and piece.isascii():
            return 1.0
        return _punct_cost(piece)
    if kind == _HAN_PIECE:
        core = piece if piece[0].isalpha() else piece[1:]
        kana = sum(1 for ch in core if ch < "\u3100")
        cost = _HAN_PER_CHAR * (len(core) - kana) + _KANA_PER_CHAR * kana
        return cost + _CJK_LEAD if len(core) < n else cost
    if kind == _HANGUL_PIECE:
        letters = n if piece[0].isalpha() else n - 1
        cost = _HANGUL_PER_RUN + _HANGUL_PER_CHAR * letters
        return cost + _CJK_LEAD if letters < n else cost
    return 1.0 + (n - 1) // _SPACE_RUN  # whitespace or newline run


def estimate_text_tokens(text: str) -> int:
    """Estimated tokens of ``text`` (content-aware; see the module docstring). Empty text is 0.

    >>> estimate_text_tokens(""), estimate_text_tokens("Hello, world!")
    (0, 4)
    """
    return _round(text_cost(text))


def _round(value: float) -> int:
    return int(value + 0.5)


# -- messages -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MessageContent:
    """What a message sends, for counting: the texts to tokenize and the tokens fixed by formula
    (message overhead, framing, images, files, encrypted reasoning)."""

    texts: tuple[str, ...]
    fixed: float


def _reasoning_content(part: Reasoning, texts: list[str]) -> float:
    if part.text:
        texts.append(part.text)
    texts.extend(s for s in part.summary if s)
    # The signature only authenticates the block: it is not model-visible content, and providers
    # do not bill it as input. Encrypted content carries the hidden reasoning it stands for.
    return len(part.encrypted) / ENCRYPTED_CHARS_PER_TOKEN if part.encrypted else 0.0


def _media_cost(part: Image | File, provider: ImageProvider) -> float:
    if isinstance(part, Image):
        return float(
            estimate_image_tokens(part.width, part.height, provider=provider, detail=part.detail)
        )
    return float(FILE_TOKENS_DEFAULT)


def message_content(
    message: Message, *, image_provider: ImageProvider = "openai"
) -> MessageContent:
    """Split ``message`` into the texts to tokenize and the tokens fixed by formula.

    Counted: text; reasoning text and summaries (the signature is not, encrypted reasoning by its
    length: see ``ENCRYPTED_CHARS_PER_TOKEN``); tool call id, name and arguments; tool result call
    id, name and content; images by ``estimate_image_tokens``; files at ``FILE_TOKENS_DEFAULT``;
    ``MESSAGE_OVERHEAD`` per message. Whether reasoning is re-sent to the provider is the caller's
    business: count the messages as they will be sent.

    A message with ``meta["text_protocol"]`` is sent as its text: only its ``Text`` parts and the
    content of its tool results count (not the structural ``ToolCall``, nor result ids), with the
    overhead of its wire role (``meta["wire_role"]``, default its role).
    """
    texts: list[str] = []
    fixed = float(MESSAGE_OVERHEAD)
    text_protocol = bool(message.meta.get("text_protocol"))
    for part in message.parts:
        if isinstance(part, Text):
            texts.append(part.text)
        elif isinstance(part, ToolResult):
            if not text_protocol:
                fixed += TOOL_RESULT_OVERHEAD
                texts.append(part.call_id)
                if part.name:
                    texts.append(part.name)
            for item in part.content:
                if isinstance(item, Text):
                    texts.append(item.text)
                else:
                    fixed += _media_cost(item, image_provider)
        elif isinstance(part, ToolCall):
            if not text_protocol:
                fixed += TOOL_CALL_OVERHEAD
                texts.extend((part.id, part.name, part.arguments))
        elif isinstance(part, Reasoning):
            fixed += _reasoning_content(part, texts)
        elif isinstance(part, Opaque):
            # a provider's own item: its JSON as sent (encrypted content in it counts as text,
            # which over-estimates base64 a little: the safe side)
            texts.append(part.data)
        else:
            fixed += _media_cost(part, image_provider)
    return MessageContent(tuple(t for t in texts if t), fixed)


def estimate_message_tokens(message: Message, *, image_provider: ImageProvider = "openai") -> int:
    """Estimated tokens of one message as sent, overhead included (see ``message_content``).

    >>> estimate_message_tokens(Message.user("Hello, world!"))
    8
    """
    content = message_content(message, image_provider=image_provider)
    return _round(content.fixed + sum(text_cost(t) for t in content.texts))


def estimate_tools_tokens(tool_definitions: Sequence[Mapping[str, Any]] | None) -> int:
    """Estimated tokens of tool definitions (OpenAI, Anthropic or plain JSON-schema dicts).

    Each definition counts as its JSON text plus ``TOOL_DEFINITION_OVERHEAD``, plus
    ``TOOLS_BLOCK_OVERHEAD`` once when there are any. Providers render definitions in their own
    (usually terser) syntax, so this errs a little high, which is the safe side for a budget.
    """
    if not tool_definitions:
        return 0
    total = float(TOOLS_BLOCK_OVERHEAD)
    for tool in tool_definitions:
        text = json.dumps(tool, ensure_ascii=False, sort_keys=False, default=str)
        total += TOOL_DEFINITION_OVERHEAD + text_cost(text)
    return _round(total)


def estimate_context_tokens(
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] | None = None,
    *,
    image_provider: ImageProvider = "openai",
) -> int:
    """Estimated tokens of a whole request: messages, tool definitions and the reply priming."""
    if not messages and not tools:
        return 0
    total = sum(estimate_message_tokens(m, image_provider=image_provider) for m in messages)
    return total + estimate_tools_tokens(tools) + REPLY_PRIMING


# -- hybrid context size --------------------------------------------------------------------

MessageEstimator: TypeAlias = Callable[[Message], int]


def reported_tokens(message: Message) -> int | None:
    """The context size the provider reported for the call that produced ``message`` (the tokens
    of everything before it), or ``None`` when it reported nothing usable."""
    usage = message.usage
    if usage is None or usage.context_tokens <= 0:
        return None
    return usage.context_tokens


def find_last_report(messages: Sequence[Message], *, boundary: int = 0) -> tuple[int, int] | None:
    """``(index, tokens)`` of the newest message at or after ``boundary`` whose usage reports a
    context size, or ``None``. ``boundary`` is the index of the first message written after the
    last compaction: reports before it describe a context that no longer exists."""
    for index in range(len(messages) - 1, max(boundary, 0) - 1, -1):
        tokens = reported_tokens(messages[index])
        if tokens is not None:
            return index, tokens
    return None


#: The provider's output count of a message is trusted as its re-sent size only within this
#: factor of the estimate (beyond it, the message was probably edited or is not what was produced).
OUTPUT_TRUST_RATIO = 3.0


def known_message_tokens(message: Message, estimated: int) -> int | None:
    """The provider's own count of ``message`` when it is known: an assistant message that the
    provider produced costs ``usage.output - usage.reasoning`` tokens when it is sent back (its
    visible output, re-tokenized the same way), plus ``MESSAGE_OVERHEAD``.

    Unknown (``None``) when the message carries reasoning parts (whether they are re-sent, and
    whether the output count includes them, differs by provider), has no usage, or when the count
    is implausible against ``estimated`` (the message was edited after it was produced).
    """
    usage = message.usage
    if usage is None or message.role != "assistant" or usage.output <= 0:
        return None
    if any(isinstance(p, Reasoning) for p in message.parts):
        return None
    visible = usage.output - usage.reasoning
    if visible <= 0:
        return None
    content = max(estimated - MESSAGE_OVERHEAD, 1)
    if not (content / OUTPUT_TRUST_RATIO <= visible <= content * OUTPUT_TRUST_RATIO):
        return None
    return visible + MESSAGE_OVERHEAD


def output_sample(message: Message, estimated: int) -> tuple[int, int] | None:
    """``(real, estimated)`` for the content of an assistant message the provider produced: its
    visible output count against the estimate of its content (overhead excluded), when that count
    is trustworthy (see ``known_message_tokens``). The output is tokenized by the same tokenizer as
    the input, so this teaches the calibration as soon as the first reply arrives."""
    known = known_message_tokens(message, estimated)
    if known is None:
        return None
    return known - MESSAGE_OVERHEAD, estimated - MESSAGE_OVERHEAD


def hybrid_context_tokens(
    messages: Sequence[Message],
    last_report_index: int | None,
    last_report_tokens: int | None,
    *,
    boundary: int = 0,
    calibration: Calibration | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    estimate: MessageEstimator = estimate_message_tokens,
    use_output_tokens: bool = True,
) -> int:
    """Tokens of ``messages`` as the provider will count them: the last real report plus the
    calibrated estimate of what was added since.

    ``last_report_index`` is the index of the message whose usage reported
    ``last_report_tokens``: the size of ``messages[:last_report_index]``. That message itself
    counts by the provider's own output count when ``use_output_tokens`` and it is trustworthy
    (``known_message_tokens``), the rest by ``estimate`` scaled by ``calibration``. Without a
    report, or with one from before ``boundary`` (the last compaction), the whole context is
    estimated (calibrated; tool definitions and reply priming included).

    >>> ms = [Message.user("hi"), Message.assistant("hello")]
    >>> hybrid_context_tokens(ms, 1, 1_000) - 1_000
    5
    """
    cal = calibration or Calibration()
    if (
        last_report_index is None
        or last_report_tokens is None
        or last_report_tokens <= 0
        or last_report_index < boundary
        or last_report_index > len(messages)
    ):
        base = sum(estimate(m) for m in messages) + REPLY_PRIMING + estimate_tools_tokens(tools)
        return cal.apply(base) if messages or tools else 0
    added = 0.0
    known = 0
    rest = messages[last_report_index:]
    if rest and use_output_tokens:
        first_estimate = estimate(rest[0])
        exact = known_message_tokens(rest[0], first_estimate)
        if exact is not None:
            known = exact
            rest = rest[1:]
    added = sum(estimate(m) for m in rest)
    return last_report_tokens + known + cal.apply(added)


def calibration_sample(
    messages: Sequence[Message],
    report_index: int,
    *,
    boundary: int = 0,
    estimate: MessageEstimator = estimate_message_tokens,
    tools: Sequence[Mapping[str, Any]] | None = None,
    use_output_tokens: bool = True,
) -> tuple[int, int] | None:
    """``(real, estimated)`` for the report at ``report_index``, to feed ``Calibration.update``.

    With an earlier report at or after ``boundary``: the real tokens added between the two
    reports against the (uncalibrated) estimate of those messages; the assistant message of the
    earlier report counts by its known output on both sides, so it teaches nothing. Without one:
    the whole report against the estimate of the whole context. ``None`` when there is no report
    at ``report_index``.
    """
    real_now = reported_tokens(messages[report_index]) if report_index < len(messages) else None
    if real_now is None:
        return None
    previous = find_last_report(messages[:report_index], boundary=boundary)
    if previous is None:
        # The first report since the start (or since the last compaction) covers the whole
        # context before it, whatever that context is made of.
        head = messages[:report_index]
        estimated = sum(estimate(m) for m in head) + REPLY_PRIMING + estimate_tools_tokens(tools)
        return real_now, estimated
    index, real_before = previous
    segment = messages[index:report_index]
    real = real_now - real_before
    if use_output_tokens and segment:
        first_estimate = estimate(segment[0])
        exact = known_message_tokens(segment[0], first_estimate)
        if exact is not None:
            real -= exact
            segment = segment[1:]
    return real, sum(estimate(m) for m in segment)


# -- the stateful helper: a cache and a calibration -------------------------------------------

#: ``TokenCounter``'s default cache size (entries).
DEFAULT_CACHE_ENTRIES = 1 << 18
#: At most this many messages are also cached by identity (``TokenCounter.message_tokens``).
IDENTITY_CACHE_ENTRIES = 1 << 14


class TokenCounter:
    """Per-message estimates cached by content, and the conversation's calibration.

    Messages are immutable, so an estimate is cached under the message's ``fingerprint`` (plus
    the meta keys that change what is sent: ``text_protocol`` and ``wire_role``). A turn then costs
    O(new messages). The cache is an LRU of ``max_entries`` (``DEFAULT_CACHE_ENTRIES``: a whole
    history of 100,000 messages and more stays cached, at about 200 bytes an entry; a compaction
    reads the history several times, and a cache smaller than the history would estimate every
    message again on each pass); ``computed`` counts estimates actually computed (cache misses).
    With a ``tokenizer`` (see ``abridged.providers.tokenizers``) texts are counted exactly instead
    of estimated; ``source`` says which method is in use. The calibration starts from
    ``calibration``, else from the prior of ``model`` (``Calibration.for_model``).

    >>> counter = TokenCounter()
    >>> m = Message.user("hello")
    >>> counter.message_tokens(m) == counter.message_tokens(m), counter.computed
    (True, 1)
    """

    def __init__(
        self,
        *,
        max_entries: int = DEFAULT_CACHE_ENTRIES,
        image_provider: ImageProvider = "openai",
        calibration: Calibration | None = None,
        tokenizer: Tokenizer | None = None,
        model: str | None = None,
    ) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        self.max_entries = max_entries
        self.image_provider: ImageProvider = image_provider
        self.calibration = calibration or Calibration.for_model(model)
        self.tokenizer = tokenizer
        self.computed = 0
        self._cache: OrderedDict[tuple[str, bool, str], int] = OrderedDict()
        # The same message objects are counted call after call (a history is summed for every
        # model call): a look-up by identity first, checked against the object it holds (so
        # an identity is never reused while cached), skips building the content key. Bounded
        # apart: it keeps its messages alive.
        self._by_identity: dict[int, tuple[Message, int]] = {}
        self._identity_entries = min(max_entries, IDENTITY_CACHE_ENTRIES)

    @property
    def source(self) -> str:
        """Which counting method is used: the tokenizer's source, or ``"estimate"``."""
        return self.tokenizer.source if self.tokenizer is not None else ESTIMATE_SOURCE

    def _compute(self, message: Message) -> int:
        content = message_content(message, image_provider=self.image_provider)
        if self.tokenizer is not None:
            counted = sum(self.tokenizer.count(list(content.texts))) if content.texts else 0
            return _round(content.fixed + counted)
        return _round(content.fixed + sum(text_cost(t) for t in content.texts))

    def message_tokens(self, message: Message) -> int:
        """Tokens of one message (cached)."""
        known = self._by_identity.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        value = self._content_tokens(message)
        by_identity = self._by_identity
        by_identity[id(message)] = (message, value)
        if len(by_identity) > self._identity_entries:
            # the oldest entry (insertion order): a thread counting meanwhile may have taken it
            with contextlib.suppress(KeyError, StopIteration, RuntimeError):
                del by_identity[next(iter(by_identity))]
        return value

    def _content_tokens(self, message: Message) -> int:
        """Tokens of one message, cached by content."""
        meta = message.meta
        key = (
            message.fingerprint,
            bool(meta.get("text_protocol")),
            str(meta.get("wire_role", "")),
        )
        cached = self._cache.get(key)
        if cached is not None:
            # A runtime may count in a worker thread too: the entry may be evicted meanwhile.
            with contextlib.suppress(KeyError):
                self._cache.move_to_end(key)
            return cached
        value = self._compute(message)
        self.computed += 1
        self._cache[key] = value
        if len(self._cache) > self.max_entries:
            with contextlib.suppress(KeyError):
                self._cache.popitem(last=False)
        return value

    def messages_tokens(self, messages: Sequence[Message]) -> int:
        """Sum of ``message_tokens`` (no request overhead)."""
        return sum(self.message_tokens(m) for m in messages)

    def estimate_context(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None = None
    ) -> int:
        """Uncalibrated estimate of a whole request (messages, tools, reply priming)."""
        if not messages and not tools:
            return 0
        return self.messages_tokens(messages) + estimate_tools_tokens(tools) + REPLY_PRIMING

    def context_tokens(
        self,
        messages: Sequence[Message],
        *,
        boundary: int = 0,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> int:
        """Hybrid size of ``messages``: the newest report at or after ``boundary`` plus the
        calibrated estimate of what follows it (the calibrated estimate of everything when there
        is no such report)."""
        report = find_last_report(messages, boundary=boundary)
        index, tokens = report if report is not None else (None, None)
        return hybrid_context_tokens(
            messages,
            index,
            tokens,
            boundary=boundary,
            calibration=self.calibration,
            tools=tools,
            estimate=self.message_tokens,
        )

    def observe(
        self,
        messages: Sequence[Message],
        report_index: int,
        *,
        boundary: int = 0,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> Calibration:
        """Learn from the report carried by ``messages[report_index]`` (call once per new report)
        and return the updated calibration."""
        sample = calibration_sample(
            messages, report_index, boundary=boundary, estimate=self.message_tokens, tools=tools
        )
        if sample is not None:
            self.calibration = self.calibration.update(*sample)
        if report_index < len(messages):
            produced = output_sample(
                messages[report_index], self.message_tokens(messages[report_index])
            )
            if produced is not None:
                self.calibration = self.calibration.update(*produced)
        return self.calibration

    def clear(self) -> None:
        """Forget every cached estimate (the calibration is kept)."""
        self._cache.clear()
        self._by_identity.clear()
