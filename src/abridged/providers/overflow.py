"""Classify provider errors: context overflow versus every other failure, without leaking keys.

**Overflow.** :func:`is_context_overflow` reads an error (an SDK exception, ``(status, body)``,
a body alone or a message string) and answers an :class:`OverflowInfo` when the provider said
the request was too long for the model, else ``None``. It knows the real wording of:

=================  ====================================================================  ======
provider           message (status 400 unless noted)                                     numbers
=================  ====================================================================  ======
OpenAI, Azure      ``code: context_length_exceeded``; "This model's maximum context       yes
                   length is N tokens. However, your messages resulted in M tokens";
                   "... you requested M tokens (A in the messages, B in the completion)"
OpenAI Responses   "Your input exceeds the context window of this model"                  no
OpenAI, Azure      "Input tokens exceed the configured limit of N tokens. Your messages   yes
(gpt-5 family)     resulted in M tokens"
Anthropic          "prompt is too long: M tokens > N maximum"; "input length and          yes
                   `max_tokens` exceed context limit: A + B > N"; 413 request_too_large
Google Gemini      "The input token count (M) exceeds the maximum number of tokens        yes
                   allowed (N)" (INVALID_ARGUMENT)
AWS Bedrock        "Input is too long for requested model" (ValidationException)          no
vLLM               "This model's maximum context length is N tokens. However, you         yes
                   requested M tokens (...)"; "... your request has M input tokens"
Ollama             "prompt too long; exceeded max context length by K tokens";            no
                   "the input length exceeds the context length"
OpenRouter         "This endpoint's maximum context length is N tokens. However, you      yes
                   requested about M tokens (A of text input, B in the output)"
Mistral            "Prompt contains M tokens and 0 draft tokens, too large for model      yes
                   with N maximum context length"
Groq               "Please reduce the length of the messages or completion"               no
                   (``code: context_length_exceeded``)
DeepSeek           OpenAI's wording with ``code: invalid_request_error``                  yes
others             xAI "maximum prompt length is N but the request contains M tokens",    mostly
                   Together "The input (M tokens) is longer than the model's context
                   length (N tokens)", TGI "`inputs` tokens + `max_new_tokens` must be
                   <= N", llama.cpp ``exceed_context_size_error`` (``n_prompt_tokens``,
                   ``n_ctx``), LM Studio, LiteLLM ``ContextWindowExceededError``
proxies            HTTP 413 (Request Entity Too Large), unless it is a rate limit          no
=================  ====================================================================  ======

**Signals.** A wording in no row above counts when three kinds of signal are all in the text:
words of exceeding ("exceed", "too long", "too many", "longer than", "maximum", "limit",
"reduce"...), what exceeds (the context, window, prompt, input, messages, sequence, request,
conversation) and a size in tokens or against the context ("tokens", "context", "window",
``n_ctx``, "sequence length"), a field name read as its words (``prompt_tokens``) and the idioms
"in this context", "in the context of" left out; with an HTTP status
of 400 or 422, or none known (413 counts by itself). Sizes are read from an ``A > B``
comparison when there is one (rule ``"signals"``). Never an overflow: any status below 400 (a
200 never counts, whatever its body says), a model's answer or a message (a body with
``choices``, ``output``, ``candidates``, a role and content...), and text the provider quotes
back from the request (a double-quoted span of 30 characters or more is taken out first: a
user's message quoting an overflow error is not one).

``tokens`` is the total the provider compared with ``limit`` (input plus the reserved output
when it counted both); ``input_tokens`` and ``output_tokens`` are the two parts when it named
them. Never an overflow, whatever the words: HTTP 429, rate and quota limits ("tokens per
minute", TPM, "Too many tokens, please wait" from Bedrock's throttle, Groq's 413 "Request too
large ... on tokens per minute"), "context deadline exceeded" (a Go timeout), a ``max_tokens``
that is too large for the model on its own, authentication, content policy, tool schemas
("In context=('properties', ...)"), tool-pairing errors, cache-control limits.

**Silent truncation.** Some servers (Ollama, LM Studio by default) cut an over-long prompt
instead of failing. :func:`detect_silent_truncation` compares the input the provider reported
with what was sent and the window.

**Exceptions.** :func:`error_from_exception` turns an SDK exception (``openai``, ``anthropic``,
``litellm``, ``httpx``; recognised by duck typing, no SDK is imported here) into
``ContextOverflowError`` or ``ProviderError``; :func:`scrub` removes API keys from any text that
goes into an error. Other exceptions (bugs) are returned unchanged for the caller to re-raise.
"""

from __future__ import annotations

import errno
import json
import math
import re
import socket
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from abridged.errors import (
    AbridgedError,
    ContextOverflowError,
    ProviderConnectionError,
    ProviderError,
)

__all__ = [
    "OverflowInfo",
    "SilentTruncation",
    "connection_failure",
    "detect_silent_truncation",
    "error_from_exception",
    "is_context_overflow",
    "scrub",
]

MAX_MESSAGE_CHARS = 600
"""Longest provider message kept in an error (the rest is cut, marked with an ellipsis)."""


@dataclass(frozen=True, slots=True)
class OverflowInfo:
    """A provider's "the request is too long" error, with the sizes it named.

    ``rule`` names the wording that matched (``"openai-max-context"``, ``"http-413"``...), for
    reports and tests. Sizes the provider did not name are ``None``.
    """

    rule: str
    message: str
    status: int | None = None
    tokens: int | None = None
    limit: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class SilentTruncation:
    """Evidence that the provider cut the prompt without saying so.

    ``reason`` is ``"above_window"`` (it reported more input than the window holds: the window
    configured is wrong, or the provider counts differently) or ``"far_below_sent"`` (it read
    far less than was sent: it dropped part of the prompt).
    """

    reason: str
    reported: int
    sent_estimate: int
    window: int | None


# -- reading error bodies ------------------------------------------------------------------------

_CODE_KEYS = ("code", "type", "status", "reason", "error_type")
_TEXT_KEYS = ("message", "error", "detail", "msg", "raw", "error_message", "errorMessage")


def _load(body: Any) -> Any:
    if isinstance(body, bytes | bytearray):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        text = body.strip()
        if text[:1] in ("{", "["):
            try:
                return json.loads(text)
            except ValueError:
                return body
    return body


def _walk(
    value: Any, texts: list[str], codes: list[str], numbers: dict[str, int], depth: int
) -> None:
    if depth > 6:
        return
    value = _load(value)
    if isinstance(value, str):
        if value.strip():
            texts.append(value)
        return
    if isinstance(value, Mapping):
        for key, raw in value.items():
            item = _load(raw)
            if isinstance(item, bool):
                continue
            if isinstance(item, int) and key in ("n_prompt_tokens", "n_ctx"):
                numbers[key] = item
            if key in _CODE_KEYS and isinstance(item, str | int):
                codes.append(str(item).lower())
                continue
            if key in _TEXT_KEYS or isinstance(item, Mapping | list | tuple):
                _walk(item, texts, codes, numbers, depth + 1)
        return
    if isinstance(value, list | tuple):
        for item in value:
            _walk(item, texts, codes, numbers, depth + 1)


def _read(body: Any) -> tuple[str, list[str], dict[str, int]]:
    """The body's messages joined, its codes (lower case) and llama.cpp's size fields."""
    texts: list[str] = []
    codes: list[str] = []
    numbers: dict[str, int] = {}
    _walk(body, texts, codes, numbers, 0)
    seen: set[str] = set()
    unique = [t for t in texts if not (t in seen or seen.add(t))]  # type: ignore[func-returns-value]
    return " | ".join(unique), codes, numbers


# -- the rules -----------------------------------------------------------------------------------

_N = r"(\d[\d,]*)"


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text.replace(",", ""))
    except ValueError:
        return None


Extract = Callable[[re.Match[str]], dict[str, int | None]]


def _none(_: re.Match[str]) -> dict[str, int | None]:
    return {}


def _groups(**names: int) -> Extract:
    """Sizes from numbered groups: ``_groups(tokens=2, limit=1)``."""

    def extract(match: re.Match[str]) -> dict[str, int | None]:
        return {key: _int(match.group(index)) for key, index in names.items()}

    return extract


def _sum_groups(match: re.Match[str]) -> dict[str, int | None]:
    """``A + B > N`` (Anthropic): input, output and their total against the limit."""
    a, b, n = (_int(match.group(i)) for i in (1, 2, 3))
    total = a + b if a is not None and b is not None else None
    return {"input_tokens": a, "output_tokens": b, "tokens": total, "limit": n}


_PARTS_IN = re.compile(
    _N + r" (?:in|of) (?:the )?(messages|functions|completion|prompt|text input|tool input|"
    r"image input|input|output)",
    re.IGNORECASE,
)


def _max_context(match: re.Match[str]) -> dict[str, int | None]:
    """OpenAI, vLLM, DeepSeek, OpenRouter: the limit, the total, and the parts in parentheses."""
    out: dict[str, int | None] = {"limit": _int(match.group(1))}
    tail = match.string[match.end(1) : match.end(1) + 400]
    total = re.search(
        r"(?:resulted in|requested(?: about)?|request has|contains) " + _N + r"(?: input)? tokens",
        tail,
        re.IGNORECASE,
    )
    if total:
        out["tokens"] = _int(total.group(1))
    inputs = outputs = 0
    found_in = found_out = False
    for part in _PARTS_IN.finditer(tail):
        value = _int(part.group(1)) or 0
        if part.group(2).lower() in ("completion", "output"):
            outputs += value
            found_out = True
        else:
            inputs += value
            found_in = True
    plus = re.search(_N + r" input tokens plus " + _N, tail, re.IGNORECASE)
    if plus:
        inputs, outputs = _int(plus.group(1)) or 0, _int(plus.group(2)) or 0
        found_in = found_out = True
        out["tokens"] = inputs + outputs
    if found_in:
        out["input_tokens"] = inputs
    if found_out:
        out["output_tokens"] = outputs
    if out.get("tokens") is None and found_in:
        out["tokens"] = inputs + outputs
    if out.get("input_tokens") is None and out.get("tokens") is not None and not found_out:
        out["input_tokens"] = out["tokens"]
    return out


def _tgi(match: re.Match[str]) -> dict[str, int | None]:
    limit = _int(match.group(1))
    given = re.search(_N + r" `inputs` tokens and " + _N, match.string, re.IGNORECASE)
    if not given:
        return {"limit": limit}
    a, b = _int(given.group(1)), _int(given.group(2))
    total = a + b if a is not None and b is not None else None
    return {"limit": limit, "input_tokens": a, "output_tokens": b, "tokens": total}


# (rule name, pattern, sizes). Order matters only for which name is reported.
_RULES: tuple[tuple[str, re.Pattern[str], Extract], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE), extract)
    for name, pattern, extract in (
        (
            "anthropic-prompt-too-long",
            r"prompt is too long: " + _N + r" tokens > " + _N,
            _groups(tokens=1, limit=2, input_tokens=1),
        ),
        (
            "anthropic-input-plus-max-tokens",
            r"input length and `?max_tokens`? exceed context limit: "
            + _N
            + r" \+ "
            + _N
            + r" > "
            + _N,
            _sum_groups,
        ),
        (
            "openai-configured-limit",
            r"input tokens exceed the configured limit of " + _N + r" tokens\.?\s*your messages "
            r"resulted in " + _N,
            _groups(limit=1, tokens=2, input_tokens=2),
        ),
        (
            "openai-configured-limit",
            r"input tokens exceed the configured limit of " + _N,
            _groups(limit=1),
        ),
        (
            "openai-max-context",
            r"(?:model's|endpoint's|model) maximum context length is " + _N + r" tokens",
            _max_context,
        ),
        (
            "gemini-input-token-count",
            r"input token count \(?" + _N + r"\)? exceeds the maximum number of tokens allowed"
            r" \(?" + _N,
            _groups(tokens=1, limit=2, input_tokens=1),
        ),
        ("gemini-input-token-count", r"input token count.{0,40}exceeds the maximum", _none),
        (
            "mistral-too-large",
            r"prompt contains "
            + _N
            + r" tokens.{0,40}too large for model with "
            + _N
            + r" maximum context length",
            _groups(tokens=1, limit=2, input_tokens=1),
        ),
        (
            "xai-max-prompt",
            r"maximum prompt length is " + _N + r" but the request contains " + _N + r" tokens",
            _groups(limit=1, tokens=2, input_tokens=2),
        ),
        (
            "together-longer-than-context",
            r"input \(" + _N + r" tokens\) is longer than the model'?s context length \(" + _N,
            _groups(tokens=1, limit=2, input_tokens=1),
        ),
        (
            "tgi-inputs-plus-new-tokens",
            r"`?inputs`? tokens \+ `?max_new_tokens`? must be <= " + _N,
            _tgi,
        ),
        (
            "vllm-prompt-longer-than-max-model-len",
            r"prompt \(?(?:length|total length)?\s*(?:of )?" + _N + r"\)? is (?:longer|too long)"
            r".{0,40}(?:maximum model length|context length) (?:of )?\(?" + _N,
            _groups(tokens=1, limit=2, input_tokens=1),
        ),
        (
            "poolside-max-input",
            r"input length " + _N + r" exceeds the maximum allowed input "
            r"length of " + _N,
            _groups(tokens=1, limit=2, input_tokens=1),
        ),
        (
            "copilot-limit",
            r"prompt token count of " + _N + r" exceeds the limit of " + _N,
            _groups(tokens=1, limit=2, input_tokens=1),
        ),
        (
            "kimi-token-limit",
            r"exceeded model token limit: " + _N + r" \(requested: " + _N,
            _groups(limit=1, tokens=2),
        ),
        (
            "lmstudio-context-length",
            r"trying to keep the first " + _N + r" tokens when context the overflows.{0,80}"
            r"context length of only " + _N,
            _groups(tokens=1, limit=2, input_tokens=1),
        ),
        (
            "lmstudio-context-length",
            r"tokens to keep from the initial prompt is greater than the context length",
            _none,
        ),
        ("openai-responses-context-window", r"exceeds the context window", _none),
        ("bedrock-input-too-long", r"input is too long for requested model", _none),
        ("ollama-prompt-too-long", r"prompt too long; exceeded (?:max )?context length", _none),
        ("ollama-input-exceeds", r"input length exceeds the context length", _none),
        ("llamacpp-context-size", r"exceeds the available context size", _none),
        (
            "openai-reduce-length",
            r"reduce the length of the messages(?: or completion| or functions|, functions,)?",
            _none,
        ),
        ("generic-context-length-exceeded", r"context[_ ]length[_ ]exceeded", _none),
        ("generic-context-window-exceeded", r"context[_ ]window[_ ]exceeded", _none),
        (
            "dashscope-input-length-range",
            r"range of input length should be \[1, " + _N,
            _groups(limit=1),
        ),
    )
)

_OVERFLOW_CODES = {
    "context_length_exceeded": "code-context-length-exceeded",
    "exceed_context_size_error": "llamacpp-context-size",
    "model_context_window_exceeded": "code-context-window-exceeded",
    "request_too_large": "anthropic-request-too-large",
}

_NOT_OVERFLOW = re.compile(
    r"rate[ _-]?limit|tokens per (?:min|minute|day|hour)\b|\b(?:TPM|TPD|RPM)\b|quota|throttl|"
    r"too many requests|please wait before|context deadline exceeded|resource[ _]exhausted|"
    r"overloaded",
    re.IGNORECASE,
)


# -- signals -------------------------------------------------------------------------------------
# A wording no rule above knows is an overflow when all three kinds of signal are there: words of
# exceeding, what exceeds (the context, the prompt, the input, the messages) and a size counted in
# tokens or against the context. Each alone is common in other errors: "exceeds the maximum of 10
# images" (no size in tokens), "max_tokens is too large: ... 16384 completion tokens" (nothing of
# the input), "In context=('properties', ...)" (nothing exceeds).

_EXCEEDING = re.compile(
    r"exceed|too long|too large|too big|too many|longer than|larger than|greater than|"
    r"more than|less than|fewer than|at most|up to|no more than|beyond|\bover\b|maximum|"
    r"\bmax\b|limit|reduce|shorten|truncat",
    re.IGNORECASE,
)
_WHAT = re.compile(
    r"\b(?:context|window|prompts?|inputs?|messages?|sequence|requests?|conversation)\b",
    re.IGNORECASE,
)
_SIZE = re.compile(r"\b(?:tokens?|context|window|n_ctx|num_ctx|sequence length)\b", re.IGNORECASE)
#: "In this context", "in the context of": the word, not the window (an image's pixels, a
#: setting's range "in this context" are no overflow).
_IDIOM = re.compile(r"\bin (?:this context|the context of)\b", re.IGNORECASE)
_A_GREATER_THAN_B = re.compile(_N + r"\s*(?:tokens?\s*)?>\s*" + _N)

# Text a provider quotes back from the request (a message's content in a validation error)
# is the user's, not the provider's: a quoted overflow message is not an overflow.
_QUOTED = re.compile(r'"[^"]{30,}"|“[^”]{30,}”')


def _by_signals(text: str) -> dict[str, int | None] | None:
    """The sizes of an overflow recognised by its signals (see above), or ``None``."""
    # a field name is its words (``prompt_tokens``: the prompt, in tokens)
    text = _IDIOM.sub(" ", text.replace("_", " "))
    if not (_EXCEEDING.search(text) and _WHAT.search(text) and _SIZE.search(text)):
        return None
    pair = _A_GREATER_THAN_B.search(text)
    if pair is None:
        return {}
    return {"tokens": _int(pair.group(1)), "limit": _int(pair.group(2))}


_SUCCESS_KEYS = ("choices", "candidates", "output", "completion")


def _is_answer(body: Any) -> bool:
    """Whether ``body`` is a model's answer or a message, not an error (what it says about
    context lengths is content)."""
    body = _load(body)
    if not isinstance(body, Mapping) or "error" in body:
        return False
    if any(key in body for key in _SUCCESS_KEYS):
        return True
    return ("role" in body and "content" in body) or body.get("type") == "message"


def _status_of(error: Any) -> int | None:
    for attr in ("status_code", "status", "http_status"):
        value = getattr(error, attr, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    response = getattr(error, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def retry_after(headers: Any) -> float | None:
    """The wait in seconds a provider asked for in its response ``headers``
    (``retry-after-ms``, OpenAI's; else ``retry-after``, in seconds), ``None`` when it asked for
    none it says in seconds (an HTTP date is left to the caller's own backoff).

    >>> retry_after({"retry-after": "7"}), retry_after({"retry-after-ms": "250"})
    (7.0, 0.25)
    >>> retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    True
    """
    get = getattr(headers, "get", None)
    if get is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = get(name)
        try:
            seconds = float(value) / scale
        except (TypeError, ValueError):
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


def _unpack(error: Any) -> tuple[int | None, Any, str | None]:
    """``(status, body, exception class names)`` of whatever was given."""
    if isinstance(error, BaseException):
        body = getattr(error, "body", None)
        if body is None or body == "":
            message = getattr(error, "message", None)
            body = message if isinstance(message, str) and message else str(error)
        names = " ".join(c.__name__ for c in type(error).__mro__)
        return _status_of(error), body, names
    if (
        isinstance(error, tuple)
        and len(error) == 2
        and (error[0] is None or isinstance(error[0], int))
    ):
        return error[0], error[1], None
    return None, error, None


def is_context_overflow(error: Any) -> OverflowInfo | None:
    """The overflow ``error`` reports, or ``None`` when it is some other failure.

    ``error`` is an exception (``status_code``/``body``/``message`` are read when present), a
    ``(status, body)`` pair, a parsed JSON body or its text, or a message string. See the module
    docstring for the wordings known and the near misses that are never an overflow.
    """
    status, body, class_names = _unpack(error)
    if status == 429 or (status is not None and status < 400):  # a 200 is never an overflow
        return None
    if _is_answer(body):
        return None
    text, codes, numbers = _read(body)
    message = text or (f"HTTP {status}" if status is not None else "")
    text = _QUOTED.sub('""', text)
    if any(_NOT_OVERFLOW.search(c) for c in codes):
        return None
    if "rate_limit_exceeded" in codes or "insufficient_quota" in codes:
        return None
    # An explicit overflow code wins over words anywhere in the body (a prompt or a tool output
    # quoted back may well mention "quota" or "overloaded").
    explicit = any(c in _OVERFLOW_CODES for c in codes)
    if not explicit and _NOT_OVERFLOW.search(text):
        return None
    for name, pattern, extract in _RULES:
        match = pattern.search(text)
        if match:
            sizes = extract(match)
            return _info(name, message, status, sizes, numbers)
    for code in codes:
        if code in _OVERFLOW_CODES:
            return _info(_OVERFLOW_CODES[code], message, status, {}, numbers)
    if class_names and "ContextWindowExceededError" in class_names:
        return _info("litellm-context-window-exceeded", message, status, {}, numbers)
    if status == 413:
        return _info("http-413", message, status, {}, numbers)
    if status in (None, 400, 422):
        signalled = _by_signals(text)
        if signalled is not None:
            return _info("signals", message, status, signalled, numbers)
    return None


def _info(
    rule: str,
    message: str,
    status: int | None,
    sizes: Mapping[str, int | None],
    numbers: Mapping[str, int],
) -> OverflowInfo:
    tokens = sizes.get("tokens")
    limit = sizes.get("limit")
    input_tokens = sizes.get("input_tokens")
    if "n_prompt_tokens" in numbers:  # llama.cpp names them in the body
        tokens = tokens if tokens is not None else numbers["n_prompt_tokens"]
        input_tokens = input_tokens if input_tokens is not None else numbers["n_prompt_tokens"]
    if "n_ctx" in numbers and limit is None:
        limit = numbers["n_ctx"]
    return OverflowInfo(
        rule=rule,
        message=_clip(message),
        status=status,
        tokens=tokens,
        limit=limit,
        input_tokens=input_tokens,
        output_tokens=sizes.get("output_tokens"),
    )


# -- silent truncation ---------------------------------------------------------------------------


def detect_silent_truncation(
    reported_input_tokens: int | None,
    sent_estimate: int,
    window: int | None,
    *,
    tolerance: float = 0.5,
    min_tokens: int = 1_024,
) -> SilentTruncation | None:
    """Whether the provider's usage report says it did not read the prompt that was sent.

    ``reported_input_tokens`` is the context size the provider reported (input plus cache read
    and write: ``Usage.context_tokens``), ``sent_estimate`` the estimate of what was sent,
    ``window`` the context window assumed (``None`` when unknown).

    - reported above ``window``: the window assumed is wrong (or the provider counts
      differently), so budgets computed from it cannot be trusted: ``"above_window"``;
    - reported below ``(1 - tolerance) * sent_estimate``, for a prompt of at least
      ``min_tokens`` (estimated): the provider dropped part of the prompt (Ollama keeps only the
      last ``num_ctx`` tokens): ``"far_below_sent"``. ``tolerance`` (default 0.5, in (0, 1))
      absorbs estimator error; small prompts are never judged.

    ``None`` when nothing was reported or nothing looks wrong.

    >>> detect_silent_truncation(2_048, 9_000, 32_768).reason
    'far_below_sent'
    >>> detect_silent_truncation(8_700, 9_000, 32_768) is None
    True
    """
    if not 0 < tolerance < 1:
        raise ValueError(f"tolerance must be in (0, 1), got {tolerance}")
    if reported_input_tokens is None or reported_input_tokens <= 0:
        return None
    if window is not None and reported_input_tokens > window:
        return SilentTruncation("above_window", reported_input_tokens, sent_estimate, window)
    if sent_estimate >= min_tokens and reported_input_tokens < (1 - tolerance) * sent_estimate:
        return SilentTruncation("far_below_sent", reported_input_tokens, sent_estimate, window)
    return None


# -- exceptions into abridged errors -------------------------------------------------------------

_KEY_SHAPES = re.compile(
    r"(?:sk-(?:ant-|proj-|or-v1-)?[A-Za-z0-9_\-*]{6,}"
    r"|(?<=Bearer )[A-Za-z0-9._\-~+/=]{8,}"
    r"|(?<=x-api-key: )\S{8,}"
    r"|(?<=api-key=)[^&\s\"']{8,}"
    r"|(?<=key=)[A-Za-z0-9_\-]{20,})",
)


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every secret in ``secrets`` and every key-shaped string replaced.

    Key shapes: ``sk-...`` (OpenAI, Anthropic, OpenRouter, masked or not), ``Bearer ...``,
    ``x-api-key: ...``, ``api-key=...`` and long ``key=...`` query values.

    >>> scrub("bad key sk-proj-abcdefgh1234 for user", ())
    'bad key [redacted] for user'
    """
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return _KEY_SHAPES.sub("[redacted]", text)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 1] + "…"


_SDK_MODULES = ("openai", "anthropic", "litellm", "httpx", "httpx2", "httpcore", "google")


def _is_sdk_error(error: BaseException) -> bool:
    return any(c.__module__.split(".")[0] in _SDK_MODULES for c in type(error).__mro__)


_CONNECTION_ERRNOS = frozenset(
    {
        errno.ECONNREFUSED,
        errno.ECONNRESET,
        errno.ECONNABORTED,
        errno.EHOSTUNREACH,
        errno.ENETUNREACH,
        errno.EHOSTDOWN,
        errno.ENETDOWN,
    }
)


def connection_failure(error: BaseException) -> str | None:
    """What the system said when ``error`` (or an exception it was raised from) is a failure to
    reach the other end: a refused or reset connection, an unknown host, a network out of reach;
    ``None`` otherwise (a timeout stays a timeout).

    The SDKs wrap the cause: ``openai``'s aiohttp client raises ``APITimeoutError`` for a refused
    connection, from httpx's ``ConnectTimeout``, from aiohttp's ``ClientConnectorError``, from
    ``ConnectionRefusedError``; the chain (``__cause__``, ``__context__``) holds the truth.

    >>> try:
    ...     raise TimeoutError("Request timed out.") from ConnectionRefusedError(111, "refused")
    ... except TimeoutError as e:
    ...     connection_failure(e)
    'ConnectionRefusedError: [Errno 111] refused'
    """
    found = None  # the innermost: the system's own words (``ConnectionRefusedError``)
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(seen) < 16:
        seen.add(id(current))
        if isinstance(current, socket.gaierror) or (
            isinstance(current, OSError) and current.errno in _CONNECTION_ERRNOS
        ):
            found = current
        current = current.__cause__ or current.__context__
    return None if found is None else f"{type(found).__name__}: {found}"


def _is_timeout(error: BaseException) -> bool:
    return isinstance(error, TimeoutError) or any(
        "Timeout" in c.__name__ for c in type(error).__mro__
    )


_STATUS_OF_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}
"""Anthropic's error types, for errors that arrive as stream events (with no HTTP status)."""


def _error_code(body: Any) -> str | None:
    """The most specific error code of ``body`` (``"context_length_exceeded"`` over
    ``"invalid_request_error"``; Anthropic's envelope type ``"error"`` never)."""
    _, codes, _ = _read(body)
    candidates = [c for c in codes if not c.isdigit() and c != "error"]
    specific = [c for c in candidates if c != "invalid_request_error"]
    found = specific or candidates or codes
    return found[0] if found else None


def error_from_exception(
    error: BaseException,
    *,
    provider: str,
    model: str | None = None,
    secrets: Sequence[str | None] = (),
    timeout: float | None = None,
) -> BaseException:
    """The abridged error for an exception raised by a provider SDK (or ``error`` itself).

    - an HTTP error whose body is an overflow (:func:`is_context_overflow`) becomes
      ``ContextOverflowError(tokens=, limit=, provider=, status=, rule=)``;
    - any other HTTP error becomes ``ProviderError(status=, provider=, code=, retryable=,
      retry_after=)`` (``retryable`` for 408, 409, 429 and 5xx; ``retry_after``: the seconds
      the provider asked to wait, :func:`retry_after`, or ``None``);
    - a connection failure (refused, reset, unknown host: :func:`connection_failure`, even
      when the SDK calls it a timeout) becomes ``ProviderConnectionError(cause=)``, a timeout
      ``ProviderError`` saying so (``timeout=True``);
    - abridged's own errors and exceptions that do not come from an SDK (bugs) are returned
      unchanged.

    Every text taken from the provider goes through :func:`scrub` with ``secrets``: the message
    never contains an API key. Raise the result ``from None`` so the SDK exception (which holds
    the request, headers included) is not chained.
    """
    if isinstance(error, AbridgedError) or not _is_sdk_error(error):
        return error
    where = f"{provider} ({model})" if model else provider
    status = _status_of(error)
    is_http = status is not None and status >= 400
    names = {c.__name__ for c in type(error).__mro__}
    if is_http or getattr(error, "body", None) is not None or "ContextWindowExceededError" in names:
        info = is_context_overflow(error)
        _, body, _ = _unpack(error)
        if info is not None:
            return ContextOverflowError(
                f"{where} rejected the request as too long for the context window: "
                + scrub(info.message, secrets),
                tokens=info.tokens,
                limit=info.limit,
                provider=provider,
                model=model,
                status=status if is_http else None,
                rule=info.rule,
                input_tokens=info.input_tokens,
                output_tokens=info.output_tokens,
            )
        text, _, _ = _read(body)
        code = _error_code(body)
        if not is_http:  # an error event inside a stream that had started with 200
            status = _STATUS_OF_TYPE.get(code or "")
        what = f"returned HTTP {status}" if status is not None else "returned an error"
        return ProviderError(
            f"{where} {what}: " + _clip(scrub(text or type(error).__name__, secrets)),
            status=status,
            provider=provider,
            model=model,
            code=code,
            retryable=status is not None and (status in (408, 409, 429) or status >= 500),
            request_id=getattr(error, "request_id", None),
            retry_after=retry_after(getattr(getattr(error, "response", None), "headers", None)),
        )
    refused = connection_failure(error)
    if refused is not None:  # before the timeout: an SDK may call a refused connection one
        return _connection_error(where, _clip(scrub(refused, secrets)), provider, model)
    if _is_timeout(error):
        after = f" after {timeout:g} s" if timeout is not None else ""
        return ProviderError(
            f"request to {where} timed out{after}",
            provider=provider,
            model=model,
            timeout=True,
            retryable=True,
        )
    if any(c.__name__ in ("APIConnectionError", "ConnectError") for c in type(error).__mro__):
        # an SDK that did not chain the system's error (LiteLLM): its own words
        cause = _clip(scrub(f"{type(error).__name__}: {error}", secrets))
        return _connection_error(where, cause, provider, model)
    return ProviderError(
        f"{where} failed: {type(error).__name__}: " + _clip(scrub(str(error), secrets)),
        provider=provider,
        model=model,
    )


def _connection_error(
    where: str, cause: str, provider: str, model: str | None
) -> ProviderConnectionError:
    return ProviderConnectionError(
        f"could not connect to {where}", cause=cause, provider=provider, model=model, retryable=True
    )
