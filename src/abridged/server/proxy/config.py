"""What the proxy runs with (each also an ``ABRIDGED_PROXY_<NAME>`` variable, for workers)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from abridged.core.budget import DEFAULT_TARGET_RATIO, DEFAULT_TRIGGER_RATIO
from abridged.errors import SettingError
from abridged.providers.streaming import safe_url
from abridged.server.config import DEFAULT_MAX_HEADER_BYTES, DEFAULT_MAX_HEADERS

__all__ = ["PROXY_ENV_PREFIX", "ProxyConfig"]

PROXY_ENV_PREFIX = "ABRIDGED_PROXY_"
LOG_LEVELS = ("debug", "info", "warning", "error")


@dataclass(frozen=True, slots=True)
class ProxyConfig:
    """The proxy's settings.

    - ``upstream``: the provider's base URL, without ``/v1`` (``https://api.openai.com``,
      ``https://api.anthropic.com``, ``http://localhost:8000`` for a local server).
    - ``db``: the store (default ``ABRIDGED_DB``, else the user's file).
    - ``context_window`` / ``max_output_tokens``: override the model's limits (else the
      registry, then the upstream's ``/v1/models`` listing, then the conservative default).
    - ``trigger`` (0.85) / ``target`` (0.45): shares of the input budget, as everywhere
      (``BudgetSettings``' defaults).
    - ``timeout`` (default 600 s, > 0): the upstream's answer (streams: between two chunks).
    - ``lease_ttl`` (default 30 s, >= 1) / ``queue_timeout`` (default 600 s, > 0): one request
      per conversation at a time across workers, as the service's turns.
    - ``max_open`` (default 1000, >= 1): conversations kept in memory per worker.
    - ``max_body_bytes`` (default 32 MiB, >= 1 KiB): a larger request body is answered 413
      without being read further (Anthropic's own limit is 32 MB; OpenAI's is smaller).
    - ``max_headers`` (default 100, >= 16) / ``max_header_bytes`` (default 32 KiB, >= 4 KiB):
      a request with more headers, or larger headers, is answered 431 and not forwarded (as the
      service's limits).
    - ``log_level`` (default ``info``: one line per request; ``debug``, ``info``, ``warning``
      or ``error``): the JSON-lines log on stderr (``abridged.server.proxy.requestlog``).
    """

    upstream: str
    db: str | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None
    trigger: float = DEFAULT_TRIGGER_RATIO
    target: float = DEFAULT_TARGET_RATIO
    timeout: float = 600.0
    lease_ttl: float = 30.0
    queue_timeout: float = 600.0
    max_open: int = 1000
    max_body_bytes: int = 32 << 20
    max_headers: int = DEFAULT_MAX_HEADERS
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    log_level: str = "info"

    def __post_init__(self) -> None:
        if not isinstance(self.upstream, str) or not self.upstream.startswith(
            ("http://", "https://")
        ):
            shown = safe_url(self.upstream) if isinstance(self.upstream, str) else self.upstream
            raise SettingError("upstream", shown, "an http:// or https:// base URL")
        object.__setattr__(self, "upstream", self.upstream.rstrip("/").removesuffix("/v1"))
        if self.context_window is not None and (
            isinstance(self.context_window, bool)
            or not isinstance(self.context_window, int)
            or self.context_window < 1024
        ):
            raise SettingError("context_window", self.context_window, "None or an integer >= 1024")
        if self.max_output_tokens is not None and (
            not isinstance(self.max_output_tokens, int) or self.max_output_tokens < 1
        ):
            raise SettingError("max_output_tokens", self.max_output_tokens, "None or >= 1")
        for name in ("timeout", "queue_timeout"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or value <= 0:
                raise SettingError(name, value, "a number of seconds > 0")
        if not isinstance(self.lease_ttl, int | float) or self.lease_ttl < 1:
            raise SettingError("lease_ttl", self.lease_ttl, "a number of seconds >= 1")
        if not isinstance(self.max_open, int) or self.max_open < 1:
            raise SettingError("max_open", self.max_open, "an integer >= 1")
        if (
            isinstance(self.max_body_bytes, bool)
            or not isinstance(self.max_body_bytes, int)
            or self.max_body_bytes < 1024
        ):
            raise SettingError("max_body_bytes", self.max_body_bytes, "an integer >= 1024")
        for name, least in (("max_headers", 16), ("max_header_bytes", 4096)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise SettingError(name, value, f"an integer >= {least}")

        if self.log_level not in LOG_LEVELS:
            raise SettingError("log_level", self.log_level, ", ".join(LOG_LEVELS))

    def to_env(self) -> dict[str, str]:
        """The variables that make ``from_env`` return this config."""
        return {
            PROXY_ENV_PREFIX + f.name.upper(): json.dumps(getattr(self, f.name))
            for f in fields(self)
            if getattr(self, f.name) is not None
        }

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ProxyConfig:
        """The config the ``ABRIDGED_PROXY_*`` variables describe."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(PROXY_ENV_PREFIX + f.name.upper())
            if raw is not None:
                try:
                    values[f.name] = json.loads(raw)
                except json.JSONDecodeError as exc:
                    raise SettingError(PROXY_ENV_PREFIX + f.name.upper(), raw, "JSON") from exc
        if "upstream" not in values:
            raise SettingError("upstream", None, "the provider's base URL (--upstream)")
        return cls(**values)
