"""Resolve a model's limits end to end: override, endpoint probe, vendored registry, default.

Wires :mod:`abridged.providers.probe` (I/O) and :mod:`abridged.providers.registry` (package data)
into the pure :func:`abridged.core.windows.resolve_limits`. Nothing here raises on a probe or
registry failure: the result's ``notes`` say what was tried and what failed, and ``known`` is
false when only the conservative default was left.

The probe is skipped when there is no ``base_url``, when ``probe=False``, when the override
already fixes both the window and the output, and for hosts whose ``/models`` lists no window
(:data:`NO_WINDOW_HOSTS`: OpenAI, Anthropic and Google's public APIs; the registry covers them).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

import httpx

from abridged.core.windows import (
    DEFAULT_LIMITS,
    LimitsOverride,
    ModelLimits,
    ProbedLimits,
    TTLCache,
    resolve_limits,
    with_notes,
)
from abridged.errors import FormatError
from abridged.providers.probe import (
    DEFAULT_TIMEOUT,
    ProbeKey,
    ProbeResult,
    probe_model_limits,
    probe_model_limits_sync,
)
from abridged.providers.registry import load_registry

NO_WINDOW_HOSTS: frozenset[str] = frozenset(
    {"api.openai.com", "api.anthropic.com", "generativelanguage.googleapis.com"}
)
"""Hosts whose ``/models`` listing carries no context window: not probed."""


def _probe_skip_reason(
    base_url: str | None, probe: bool, override: LimitsOverride | None
) -> str | None:
    if not probe:
        return "probe disabled"
    if base_url is None or not base_url.strip():
        return "no base URL to probe"
    if override is not None and None not in (override.context_window, override.max_output):
        return "override sets both context_window and max_output"
    try:
        host = (urlsplit(base_url.strip()).hostname or "").lower()
    except ValueError:
        return None  # the probe reports the bad URL
    if host in NO_WINDOW_HOSTS:
        return f"{host} lists no context window"
    return None


def _registry(registry: Mapping[str, ModelLimits] | None) -> tuple[Mapping[str, ModelLimits], str]:
    if registry is not None:
        return registry, ""
    try:
        return load_registry(), ""
    except FormatError as exc:  # a broken install: carry on without the snapshot
        return {}, f"model registry unavailable: {exc}"


def _combine(
    model: str,
    override: LimitsOverride | None,
    outcome: ProbeResult | None,
    registry: Mapping[str, ModelLimits] | None,
    default: ModelLimits,
) -> ModelLimits:
    table, registry_note = _registry(registry)
    probed: ProbedLimits | None = outcome.limits if outcome is not None else None
    limits = resolve_limits(model, override=override, probe=probed, registry=table, default=default)
    notes: list[str] = []
    if registry_note:
        notes.append(registry_note)
    if outcome is not None and outcome.limits is None:
        notes.append(f"probe of {outcome.url or 'the endpoint'} failed: {outcome.reason}")
    return with_notes(limits, *notes) if notes else limits


async def resolve_model_limits(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    override: LimitsOverride | None = None,
    probe: bool = True,
    registry: Mapping[str, ModelLimits] | None = None,
    default: ModelLimits = DEFAULT_LIMITS,
    timeout: float = DEFAULT_TIMEOUT,
    client: httpx.AsyncClient | None = None,
    cache: TTLCache[ProbeKey, ProbeResult] | None = None,
) -> ModelLimits:
    """The limits of ``model``: ``override``, then a probe of ``base_url``'s ``/v1/models``, then
    ``registry`` (the vendored snapshot by default), then ``default`` (flagged unknown).

    Never raises on a failed probe (its reason goes into ``notes``); the probe is cached per
    base URL and model (:mod:`abridged.providers.probe`).
    """
    outcome: ProbeResult | None = None
    if _probe_skip_reason(base_url, probe, override) is None and base_url is not None:
        outcome = await probe_model_limits(
            base_url, model, api_key=api_key, timeout=timeout, client=client, cache=cache
        )
    return _combine(model, override, outcome, registry, default)


def resolve_model_limits_sync(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    override: LimitsOverride | None = None,
    probe: bool = True,
    registry: Mapping[str, ModelLimits] | None = None,
    default: ModelLimits = DEFAULT_LIMITS,
    timeout: float = DEFAULT_TIMEOUT,
    client: httpx.Client | None = None,
    cache: TTLCache[ProbeKey, ProbeResult] | None = None,
) -> ModelLimits:
    """Blocking :func:`resolve_model_limits` (same arguments, with an ``httpx.Client``)."""
    outcome: ProbeResult | None = None
    if _probe_skip_reason(base_url, probe, override) is None and base_url is not None:
        outcome = probe_model_limits_sync(
            base_url, model, api_key=api_key, timeout=timeout, client=client, cache=cache
        )
    return _combine(model, override, outcome, registry, default)
