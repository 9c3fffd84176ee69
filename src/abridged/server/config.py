"""What the service runs with: database, models, tools, window, lease and limits.

``abridged serve`` passes its options to every worker through the environment (uvicorn starts
the workers), so a ``ServiceConfig`` is also read from and written to ``ABRIDGED_SERVE_*``
variables. Provider keys are never part of it: the adapters read them from the server's own
environment.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from abridged.errors import SettingError
from abridged.runtime.tools import load_tools

__all__ = ["ENV_PREFIX", "ServiceConfig", "load_tools"]

ENV_PREFIX = "ABRIDGED_SERVE_"

DEFAULT_MAX_HEADERS = 100
"""Headers a request may carry (Apache's ``LimitRequestFields``; browsers send about 20)."""

DEFAULT_MAX_HEADER_BYTES = 32 << 10
"""Bytes of a request's line and headers together (nginx: 8 KiB a line, 32 KiB in all)."""


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    """The service's settings (each also an ``ABRIDGED_SERVE_<NAME>`` variable).

    - ``db``: database URL or SQLite path (default: ``ABRIDGED_DB``, else the user's data dir).
    - ``models``: the model strings a conversation may use (``chat_model_from_string`` forms);
      the first is the default. Empty: conversations must name one and any is allowed.
    - ``context_window`` / ``max_output_tokens``: override the model's limits (else resolved
      from the provider or the registry).
    - ``tools``: ``"module:attribute"`` naming a list of tools or a ``ToolRegistry`` the
      conversations may call (default: none).
    - ``lease_ttl`` (default 30 s, >= 1): how long a turn lease lasts unless renewed; a worker
      that dies mid-turn holds its conversation at most this long.
    - ``queue_timeout`` (default 600 s, > 0): how long a queued message waits for its turn.
    - ``max_body_bytes`` (default 1 MiB, >= 1 KiB): a larger request body gets 413.
    - ``max_upload_bytes`` (default 20 MiB, >= 1 KiB): the same for a transcript uploaded to
      ``/v1/replay``.
    - ``max_open`` (default 1000, >= 1): conversations kept open per worker (idle ones are
      closed first when it is exceeded).
    - ``max_headers`` (default 100, >= 16) / ``max_header_bytes`` (default 32 KiB, >= 4 KiB):
      a request with more headers, or a larger request line and headers, gets 431.
    - ``log_level`` (default ``info``): the level of the JSON-lines log on stderr (``debug``,
      ``info``, ``warning``, ``error``).
    - ``event_batch_ms`` (default 16 ms, 0 .. 1000): a turn's events go to its client in one
      write per this many milliseconds at most (the first event of a write waits that long for
      the ones that follow it: a step's end puts several within a few milliseconds, the tool
      running between them); 0 writes each as soon as it is ready. The turn's last events go
      at once. The price: an event reaches the client up to that much later, while the turn
      ends sooner (the response's status line still goes at once). 16 ms is a frame of a 60 Hz
      screen, and each write saved is a wake-up of the client and a system call
      (``bench/service.py``; the figures are in ``bench/RESULTS.md``, "moved from
      docstrings"; what else was tried: ``TurnHandle.batches``).
    - ``open_access``: serve without API keys, every request as tenant ``local`` (for one
      person on loopback; refused with ``--host`` other than a loopback address).
    """

    db: str | None = None
    models: tuple[str, ...] = ()
    context_window: int | None = None
    max_output_tokens: int | None = None
    tools: str | None = None
    lease_ttl: float = 30.0
    queue_timeout: float = 600.0
    max_body_bytes: int = 1 << 20
    max_upload_bytes: int = 20 << 20
    max_open: int = 1000
    max_headers: int = DEFAULT_MAX_HEADERS
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    log_level: str = "info"
    event_batch_ms: float = 16.0
    open_access: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.context_window is not None and (
            not isinstance(self.context_window, int) or self.context_window < 1024
        ):
            raise SettingError("context_window", self.context_window, "None or an integer >= 1024")
        if self.max_output_tokens is not None and (
            not isinstance(self.max_output_tokens, int) or self.max_output_tokens < 1
        ):
            raise SettingError("max_output_tokens", self.max_output_tokens, "None or >= 1")
        if not isinstance(self.lease_ttl, int | float) or self.lease_ttl < 1:
            raise SettingError("lease_ttl", self.lease_ttl, "a number of seconds >= 1")
        if not isinstance(self.queue_timeout, int | float) or self.queue_timeout <= 0:
            raise SettingError("queue_timeout", self.queue_timeout, "a number of seconds > 0")
        if not isinstance(self.max_body_bytes, int) or self.max_body_bytes < 1024:
            raise SettingError("max_body_bytes", self.max_body_bytes, "an integer >= 1024")
        if self.log_level not in ("debug", "info", "warning", "error"):
            raise SettingError("log_level", self.log_level, "debug, info, warning or error")
        if not isinstance(self.max_upload_bytes, int) or self.max_upload_bytes < 1024:
            raise SettingError("max_upload_bytes", self.max_upload_bytes, "an integer >= 1024")
        if not isinstance(self.max_open, int) or self.max_open < 1:
            raise SettingError("max_open", self.max_open, "an integer >= 1")
        for name, least in (("max_headers", 16), ("max_header_bytes", 4096)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise SettingError(name, value, f"an integer >= {least}")
        if (
            isinstance(self.event_batch_ms, bool)
            or not isinstance(self.event_batch_ms, int | float)
            or not 0 <= self.event_batch_ms <= 1000
        ):
            raise SettingError("event_batch_ms", self.event_batch_ms, "milliseconds, 0 .. 1000")

    @property
    def default_model(self) -> str | None:
        """The model of a conversation created without one."""
        return self.models[0] if self.models else None

    def to_env(self) -> dict[str, str]:
        """The variables that make ``from_env`` return this config."""
        out: dict[str, str] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or f.name == "extra":
                continue
            out[ENV_PREFIX + f.name.upper()] = json.dumps(
                list(value) if isinstance(value, tuple) else value
            )
        return out

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServiceConfig:
        """The config the ``ABRIDGED_SERVE_*`` variables describe (defaults for the others)."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(ENV_PREFIX + f.name.upper())
            if raw is None or f.name == "extra":
                continue
            try:
                value = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise SettingError(ENV_PREFIX + f.name.upper(), raw, "JSON") from exc
            values[f.name] = tuple(value) if f.name == "models" else value
        return cls(**values)
