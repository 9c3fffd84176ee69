"""Structured logs of the service: one JSON object per line, with the conversation id and the
tenant where there is one; never a key, a message's content or a provider's answer."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

__all__ = ["FIELDS", "JsonFormatter", "configure_logging"]

#: ``extra`` fields copied into each line when present.
FIELDS = (
    "conversation_id",
    "tenant",
    "event",
    "outcome",
    "duration_ms",
    "worker",
    "took_over_from",
    "status",
    # the proxy's request lines (``abridged.server.proxy.requestlog``)
    "method",
    "path",
    "api",
    "action",
    "messages_app",
    "messages_sent",
    "tokens_app",
    "tokens_sent",
    "cache_read",
    "added_ms",
    "reason",
    "window",
)


class JsonFormatter(logging.Formatter):
    """``{"ts": ..., "level": ..., "logger": ..., "msg": ..., <FIELDS>}``."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for name in FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                line[name] = value
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info).splitlines()[-1]
        return json.dumps(line, ensure_ascii=False)


def configure_logging(level: str = "info", *, json_lines: bool = True) -> None:
    """Send the ``abridged`` loggers to stderr, as JSON lines (or plain text)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter() if json_lines else logging.Formatter("%(levelname)s %(name)s %(message)s")
    )
    logger = logging.getLogger("abridged")
    logger.handlers[:] = [handler]
    logger.setLevel(level.upper())
    logger.propagate = False
