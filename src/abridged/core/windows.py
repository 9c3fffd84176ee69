"""Context windows: model limits, name normalisation, and the pure resolution of a model's window.

The window of a model is resolved from, in order of precedence:

1. an explicit :class:`LimitsOverride` (context window and/or max output), validated with
   :class:`~abridged.errors.SettingError`;
2. a provider probe result (:class:`ProbedLimits`, from an OpenAI-compatible ``/models``
   endpoint; the probe itself is an edge, ``abridged.providers.probe``);
3. a registry snapshot: any mapping from lower-case model names to :class:`ModelLimits`
   (``abridged.providers.registry`` ships one built from models.dev);
4. a conservative default, flagged ``known=False``: :data:`DEFAULT_LIMITS`, 8,192 tokens of
   window and 4,096 of output.

Why 8,192 / 4,096: a window guessed too large makes every request past the real window fail (or,
on servers that silently truncate, lose the oldest context); one guessed too small only compacts
early. 8,192 is the smallest window among chat models still commonly served (GPT-4's original
window, Llama 3.0, Gemma 2) and covers every mainstream API model. 4,096 is the classic output
ceiling (GPT-3.5/4 Turbo, Claude 3); since the budget caps the output reserve at half the window,
it leaves about 4k for input, tight but safe, and the caller is told (``known=False``, a note) to
set ``context_window``. Local servers configured below 8k (Ollama's default ``num_ctx`` is smaller
on older versions) need that setting anyway: nothing outside the server can see it.

Each field is taken from the first source that has it: an override of ``context_window`` alone
keeps ``max_output`` from the probe, registry or default (capped at the window). ``max_input``
(a separate input ceiling, e.g. 272,000 for GPT-5's 400,000 window) is kept only from the source
that gave the window. Prices, when the registry has them, are attached whatever gave the window.

Names are matched in :func:`model_name_candidates` order: the exact name, then lower case, then
with provider prefixes stripped one by one, then fully normalised (:func:`normalize_model_name`)
and canonical (:func:`canonical_model_name`: version dots as dashes, ``4.5`` -> ``4-5``), then
looser forms (``:tag`` dropped, a 4-digit ``-MMDD``/``-YYMM`` suffix dropped, the last path
segment).

Everything here is pure: no I/O and no clock. :class:`TTLCache` takes ``now`` explicitly.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Annotated, Generic, Literal, TypeAlias, TypeVar

from annotated_types import Gt, Interval

from abridged.core.fields import Positive, check_fields, check_value
from abridged.errors import SettingError

LimitsSource: TypeAlias = Literal["override", "probe", "registry", "default"]
SOURCES: tuple[LimitsSource, ...] = ("override", "probe", "registry", "default")

MIN_CONTEXT_WINDOW = 1_024
MAX_TOKENS = 100_000_000
"""Upper bound of any window or output size accepted from a setting (10^8 tokens)."""

DEFAULT_CONTEXT_WINDOW = 8_192
DEFAULT_MAX_OUTPUT = 4_096

Tokens: TypeAlias = Annotated[int, Interval(ge=1, le=MAX_TOKENS)]
"""A window or output size: an integer from 1 to ``MAX_TOKENS``."""


Seconds: TypeAlias = Annotated[float, Gt(0)]
"""A duration in seconds, > 0."""


def _at_most(name: str, value: int, limit: int, valid: str) -> None:
    if value > limit:
        raise SettingError(name, value, valid)


@dataclass(frozen=True, slots=True)
class Pricing:
    """Prices in US dollars per million tokens, as the registry lists them (``None``: unknown)."""

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None

    def cost(
        self, *, input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0
    ) -> float | None:
        """The dollars of these token counts (uncached ``input``); ``None`` when the input or
        output price is unknown. Cache prices default to the input price.

        >>> Pricing(input=2.0, output=8.0).cost(input=1_000_000, output=500_000)
        6.0
        """
        if self.input is None or self.output is None:
            return None
        read = self.cache_read if self.cache_read is not None else self.input
        write = self.cache_write if self.cache_write is not None else self.input
        dollars = (
            input * self.input + output * self.output + cache_read * read + cache_write * write
        )
        return dollars / 1_000_000


@dataclass(frozen=True, slots=True)
class ModelLimits:
    """What a model can take and produce, and where each number came from.

    ``context_window`` counts input and output together. ``max_output`` is at most the window.
    ``max_input`` is a separate input ceiling when the provider has one (else ``None``).
    ``source`` names where the window came from, ``output_source`` where ``max_output`` came
    from; ``known`` is false exactly when the window is the conservative default.
    ``model`` is the name that was asked for, ``matched`` the registry key or listed id that
    answered. ``notes`` say what was tried and why (probe failures, capped values).
    """

    context_window: Tokens
    max_output: Tokens
    source: LimitsSource
    known: bool
    max_input: Tokens | None = None
    output_source: LimitsSource | None = None
    pricing: Pricing | None = None
    model: str = ""
    matched: str | None = None
    notes: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        check_fields(self)
        window = f"an integer from 1 to the context window ({self.context_window:,})"
        _at_most("max_output", self.max_output, self.context_window, window)
        if self.max_input is not None:
            _at_most("max_input", self.max_input, self.context_window, window)
        if self.known != (self.source != "default"):
            raise SettingError(
                "known", self.known, "False exactly when source is 'default'", source=self.source
            )


DEFAULT_LIMITS = ModelLimits(
    context_window=DEFAULT_CONTEXT_WINDOW,
    max_output=DEFAULT_MAX_OUTPUT,
    source="default",
    known=False,
    output_source="default",
)
"""The conservative default (8,192 window, 4,096 output), flagged unknown; see the module doc."""


@dataclass(frozen=True, slots=True)
class LimitsOverride:
    """Explicit limits from the user's settings; each field is optional.

    ``context_window`` must be an integer from 1,024 to 100,000,000; ``max_output`` an integer
    from 1 to 100,000,000 and, when both are given, at most ``context_window``. Anything else
    raises :class:`~abridged.errors.SettingError` naming the setting, its value and the range.
    """

    context_window: Annotated[int, Interval(ge=MIN_CONTEXT_WINDOW, le=MAX_TOKENS)] | None = None
    max_output: Tokens | None = None

    def __post_init__(self) -> None:
        check_fields(self)
        if self.max_output is not None and self.context_window is not None:
            valid = f"an integer from 1 to context_window ({self.context_window:,})"
            _at_most("max_output", self.max_output, self.context_window, valid)

    @property
    def is_empty(self) -> bool:
        """True when the override sets nothing."""
        return self.context_window is None and self.max_output is None


@dataclass(frozen=True, slots=True)
class ProbedLimits:
    """What a provider's ``/models`` endpoint said about one model.

    ``model_id`` is the id the endpoint listed, ``field`` the field the window came from
    (``max_model_len``, ``context_length``, ...), ``url`` the endpoint (without credentials).
    """

    context_window: Tokens
    max_output: Tokens | None = None
    model_id: str = ""
    field: str = ""
    url: str = ""

    def __post_init__(self) -> None:
        check_fields(self)


# --- names -------------------------------------------------------------------------------------

PROVIDER_PREFIXES: frozenset[str] = frozenset(
    {
        # APIs and their model namespaces
        "openai",
        "anthropic",
        "google",
        "gemini",
        "models",  # Google's API lists models as "models/gemini-..."
        "mistral",
        "mistralai",
        "deepseek",
        "xai",
        "cohere",
        "groq",
        "cerebras",
        "perplexity",
        "deepinfra",
        "huggingface",
        "openrouter",
        # routing prefixes used by LiteLLM and similar
        "azure",
        "azure_ai",
        "bedrock",
        "vertex_ai",
        "vertex_ai_beta",
        "together_ai",
        "fireworks_ai",
        "hosted_vllm",
        "vllm",
        "ollama",
        "ollama_chat",
        "lm_studio",
        "litellm_proxy",
        "text-completion-openai",
    }
)
"""First path segments dropped by :func:`normalize_model_name` (lower case)."""

_DATE_SUFFIX = re.compile(r"(?:[-_]\d{4}-\d{2}-\d{2}|[-_@]\d{8})$")
_LATEST_SUFFIX = re.compile(r"(?:[-@:]latest|@default)$")
_SHORT_DATE_SUFFIX = re.compile(r"-\d{4}$")
_TAG_SUFFIX = re.compile(r":[a-z0-9._-]+$")
_VERSION_DOT = re.compile(r"(?<=\d)\.(?=\d)")


def _strip_prefix(name: str) -> str | None:
    head, sep, rest = name.partition("/")
    rest = rest.strip()
    if sep and rest and head.strip() in PROVIDER_PREFIXES:
        return rest
    return None


def _strip_suffixes(name: str) -> str:
    while True:
        stripped = _LATEST_SUFFIX.sub("", _DATE_SUFFIX.sub("", name)).strip()
        if stripped == name or not stripped:
            return name
        name = stripped


def normalize_model_name(name: str) -> str:
    """The canonical form of a model name, used to match names across providers.

    Lower case, surrounding whitespace removed, known provider prefixes (``openai/``,
    ``anthropic/``, ``openrouter/``, ``google/``, ``models/``, LiteLLM's ``bedrock/``, ...; see
    :data:`PROVIDER_PREFIXES`) removed one after another, then dated suffixes (``-2024-08-06``,
    ``-20250929``, ``@20240620``) and ``-latest`` removed::

        >>> normalize_model_name("openrouter/anthropic/claude-sonnet-4-5-20250929")
        'claude-sonnet-4-5'
        >>> normalize_model_name("models/gemini-2.5-pro")
        'gemini-2.5-pro'

    Unknown namespaces (``meta-llama/...``) are kept: they are part of the name.
    """
    out = name.strip().lower()
    while (stripped := _strip_prefix(out)) is not None:
        out = stripped
    return _strip_suffixes(out)


def canonical_model_name(name: str) -> str:
    """:func:`normalize_model_name` with version dots written as dashes.

    The registry's loosest key: ``claude-sonnet-4.5`` (OpenRouter's spelling) and
    ``claude-sonnet-4-5`` (Anthropic's) share ``claude-sonnet-4-5``.
    """
    return _VERSION_DOT.sub("-", normalize_model_name(name))


def model_name_candidates(name: str, *, fuzzy: bool = True) -> tuple[str, ...]:
    """Names to look a model up by, most specific first, without duplicates.

    Always: the name as given (stripped), its lower case, and each form with one more provider
    prefix removed. Then, with ``fuzzy`` (the default): the normalised name
    (:func:`normalize_model_name`) and its canonical form (:func:`canonical_model_name`), the
    same without an ``:tag`` (Ollama, OpenRouter ``:free``), without a 4-digit
    ``-MMDD``/``-YYMM`` suffix (``gpt-4-0613`` -> ``gpt-4``), and the last path segment
    (``meta-llama/llama-3.3-70b-instruct`` -> ``llama-3.3-70b-instruct``).
    """
    out: list[str] = []

    def add(*candidates: str) -> None:
        for candidate in candidates:
            if candidate and candidate not in out:
                out.append(candidate)

    def with_canonical(form: str) -> tuple[str, str]:
        return form, _VERSION_DOT.sub("-", form)

    stripped = name.strip()
    add(stripped)
    current = stripped.lower()
    add(current)
    while (shorter := _strip_prefix(current)) is not None:
        current = shorter
        add(current)
    if not fuzzy:
        return tuple(out)

    base = _strip_suffixes(current)
    add(*with_canonical(base))
    untagged = _strip_suffixes(_TAG_SUFFIX.sub("", base))
    add(*with_canonical(untagged))
    add(*with_canonical(_SHORT_DATE_SUFFIX.sub("", untagged)))
    add(*with_canonical(untagged.rsplit("/", 1)[-1]))
    return tuple(out)


def lookup_limits(
    registry: Mapping[str, ModelLimits], model: str
) -> tuple[str, ModelLimits] | None:
    """The first registry entry found under :func:`model_name_candidates`, with its key."""
    for candidate in model_name_candidates(model):
        hit = registry.get(candidate)
        if hit is not None:
            return candidate, hit
    return None


# --- resolution --------------------------------------------------------------------------------


def resolve_limits(
    model: str,
    *,
    override: LimitsOverride | None = None,
    probe: ProbedLimits | None = None,
    registry: Mapping[str, ModelLimits] | None = None,
    default: ModelLimits = DEFAULT_LIMITS,
) -> ModelLimits:
    """Resolve a model's limits: override, then probe, then registry, then ``default``.

    Each of ``context_window`` and ``max_output`` comes from the first source that has it;
    ``max_output`` is then capped at the window (with a note). ``registry`` is any mapping from
    lower-case names to limits, looked up with :func:`lookup_limits`. The result's ``source`` is
    where the window came from; ``known`` is false only when the window is the default's.
    """
    notes: list[str] = []
    found = lookup_limits(registry, model) if registry is not None else None
    entry = found[1] if found is not None else None

    window: int
    max_input: int | None = None
    source: LimitsSource
    matched: str | None = None
    if override is not None and override.context_window is not None:
        window, source = override.context_window, "override"
    elif probe is not None:
        window, source = probe.context_window, "probe"
        matched = probe.model_id or None
    elif entry is not None:
        window, source, max_input = entry.context_window, "registry", entry.max_input
        matched = entry.matched or (found[0] if found is not None else None)
    else:
        window, source = default.context_window, "default"
        notes.append(
            f"no limits known for {model!r}: assuming the conservative default window of "
            f"{window:,} tokens; set context_window to override"
        )

    output: int
    output_source: LimitsSource
    if override is not None and override.max_output is not None:
        output, output_source = override.max_output, "override"
    elif probe is not None and probe.max_output is not None:
        output, output_source = probe.max_output, "probe"
    elif entry is not None:
        output, output_source = entry.max_output, entry.output_source or "registry"
    else:
        output, output_source = default.max_output, "default"
    if output > window:
        notes.append(f"max_output {output:,} ({output_source}) capped at the window {window:,}")
        output = window
    if output_source != source:
        notes.append(f"context window from {source}, max_output from {output_source}")

    return ModelLimits(
        context_window=window,
        max_output=output,
        source=source,
        known=source != "default",
        max_input=max_input,
        output_source=output_source,
        pricing=entry.pricing if entry is not None else None,
        model=model,
        matched=matched,
        notes=tuple(notes),
    )


def with_notes(limits: ModelLimits, *notes: str) -> ModelLimits:
    """The same limits with more notes appended."""
    return replace(limits, notes=(*limits.notes, *notes))


# --- TTL cache ---------------------------------------------------------------------------------

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass(slots=True)
class _Entry(Generic[V]):
    value: V
    expires_at: float


class TTLCache(Generic[K, V]):
    """A small mapping whose entries expire ``ttl`` seconds after they were stored.

    Pure: every call takes ``now`` (seconds on any monotonic clock the caller chooses). An entry
    stored at ``t`` with ``ttl`` is returned while ``now < t + ttl``. At ``max_entries`` the
    expired entries go first, then the oldest stored. ``None`` values cannot be cached (``get``
    returns ``None`` for a miss). Not thread-safe: callers that share one across threads lock.
    """

    def __init__(self, ttl: float, *, max_entries: int = 256) -> None:
        check_value("ttl", ttl, Seconds)
        check_value("max_entries", max_entries, Positive)
        self.ttl = float(ttl)
        self.max_entries = max_entries
        self._entries: dict[K, _Entry[V]] = {}

    def get(self, key: K, *, now: float) -> V | None:
        """The live value under ``key``, or ``None`` (an expired entry is dropped)."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        if now >= entry.expires_at:
            del self._entries[key]
            return None
        return entry.value

    def put(self, key: K, value: V, *, now: float, ttl: float | None = None) -> None:
        """Store ``value`` under ``key`` until ``now + ttl`` (the cache's ``ttl`` by default)."""
        if value is None:
            raise SettingError("value", value, "a value other than None")
        life = self.ttl if ttl is None else ttl
        if ttl is not None:
            check_value("ttl", life, Seconds)
        self._entries.pop(key, None)
        if len(self._entries) >= self.max_entries:
            self.purge(now=now)
        while len(self._entries) >= self.max_entries:
            del self._entries[next(iter(self._entries))]
        self._entries[key] = _Entry(value, now + life)

    def pop(self, key: K) -> V | None:
        """Remove ``key``; its value if it was there (expired or not)."""
        entry = self._entries.pop(key, None)
        return entry.value if entry is not None else None

    def purge(self, *, now: float) -> int:
        """Drop every expired entry; how many were dropped."""
        dead = [key for key, entry in self._entries.items() if now >= entry.expires_at]
        for key in dead:
            del self._entries[key]
        return len(dead)

    def clear(self) -> None:
        """Drop everything."""
        self._entries.clear()

    def __len__(self) -> int:
        """Entries stored, expired ones included until a ``get`` or ``purge`` drops them."""
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def keys(self) -> Iterator[K]:
        """Keys stored, oldest first (expired ones included)."""
        return iter(list(self._entries))
