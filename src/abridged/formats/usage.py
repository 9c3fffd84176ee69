"""Provider usage reports normalised once into ``Usage`` (input excludes cached tokens)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from abridged.core.model import Usage
from abridged.errors import FormatError


def _int(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError, OverflowError):  # garbage, NaN, infinity: nothing reported
        return 0


def _report(usage: object, format: str) -> Mapping[str, Any] | None:
    """``usage`` when it is a report (a mapping), ``None`` when empty or absent (as before: an
    empty list or string reports nothing); anything else is a ``FormatError``."""
    if not usage:
        return None
    if not isinstance(usage, Mapping):
        raise FormatError(
            f"usage report is a {type(usage).__name__}, not an object",
            format=format,
            expected="usage: a JSON object",
            field="usage",
        )
    return usage


def _get(obj: Mapping[str, Any] | None, *path: str) -> Any:
    current: Any = obj
    for key in path:
        if not isinstance(current, Mapping):
            return None
        current = current.get(key)
    return current


def usage_from_openai(usage: Mapping[str, Any] | None) -> Usage | None:
    """Normalise an OpenAI-style usage report (Chat Completions or Responses).

    OpenAI counts cached tokens inside ``prompt_tokens``/``input_tokens``; abridged's ``input``
    excludes them, so the context size is ``input + cache_read``. Flattened reports that put
    ``cached_tokens`` and ``reasoning_tokens`` at the top level are accepted too.

    >>> usage_from_openai({"prompt_tokens": 100, "completion_tokens": 7,
    ...                    "prompt_tokens_details": {"cached_tokens": 64}})
    Usage(input=36, output=7, cache_read=64, cache_write=0, reasoning=0)

    Raises ``FormatError`` when ``usage`` is not a mapping (a list, a string, a number).
    """
    usage = _report(usage, "openai")
    if usage is None:
        return None
    prompt = _int(usage.get("prompt_tokens", usage.get("input_tokens")))
    output = _int(usage.get("completion_tokens", usage.get("output_tokens")))
    cached = _int(
        _get(usage, "prompt_tokens_details", "cached_tokens")
        or _get(usage, "input_tokens_details", "cached_tokens")
        or usage.get("cached_tokens")
    )
    cache_write = _int(
        _get(usage, "prompt_tokens_details", "cache_write_tokens")
        or usage.get("cache_write_tokens")
    )
    reasoning = _int(
        _get(usage, "completion_tokens_details", "reasoning_tokens")
        or _get(usage, "output_tokens_details", "reasoning_tokens")
        or usage.get("reasoning_tokens")
    )
    cached = min(cached, prompt)
    cache_write = min(cache_write, prompt - cached)
    return Usage(
        input=prompt - cached - cache_write,
        output=output,
        cache_read=cached,
        cache_write=cache_write,
        reasoning=reasoning,
    )


def usage_from_anthropic(usage: Mapping[str, Any] | None) -> Usage | None:
    """Normalise an Anthropic usage report: input, cache read and cache write are separate.

    >>> usage_from_anthropic({"input_tokens": 12, "output_tokens": 5,
    ...                       "cache_read_input_tokens": 900, "cache_creation_input_tokens": 40})
    Usage(input=12, output=5, cache_read=900, cache_write=40, reasoning=0)

    Raises ``FormatError`` when ``usage`` is not a mapping (a list, a string, a number).
    """
    usage = _report(usage, "anthropic")
    if usage is None:
        return None
    return Usage(
        input=_int(usage.get("input_tokens")),
        output=_int(usage.get("output_tokens")),
        cache_read=_int(usage.get("cache_read_input_tokens")),
        cache_write=_int(usage.get("cache_creation_input_tokens")),
    )


def usage_to_openai(usage: Usage) -> dict[str, Any]:
    """``Usage`` as an OpenAI Chat Completions usage object (cached tokens inside prompt tokens)."""
    prompt = usage.context_tokens
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output,
        "total_tokens": prompt + usage.output,
    }
    if usage.cache_read or usage.cache_write:
        details: dict[str, int] = {"cached_tokens": usage.cache_read}
        if usage.cache_write:
            details["cache_write_tokens"] = usage.cache_write
        out["prompt_tokens_details"] = details
    if usage.reasoning:
        out["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning}
    return out


def usage_to_anthropic(usage: Usage) -> dict[str, int]:
    """``Usage`` as an Anthropic Messages usage object."""
    return {
        "input_tokens": usage.input,
        "output_tokens": usage.output,
        "cache_read_input_tokens": usage.cache_read,
        "cache_creation_input_tokens": usage.cache_write,
    }
