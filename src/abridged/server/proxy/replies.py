"""The proxy's own answers, in the error shape of the API the client speaks (OpenAI's
``{"error": {...}}``, Anthropic's ``{"type": "error", "error": {...}}``), so that its SDK reads
them as it reads the provider's."""

from __future__ import annotations

import json
from typing import Literal

__all__ = ["PASSTHROUGH_HEADER", "Shape", "error_body", "shape_of"]

Shape = Literal["openai", "anthropic"]

PASSTHROUGH_HEADER = b"x-abridged-passthrough"
"""Response header naming why a managed API's request went upstream unchanged."""

# Anthropic's error types by status (its SDK picks the exception from the status alone).
_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    409: "invalid_request_error",
    413: "request_too_large",
    431: "invalid_request_error",
    503: "overloaded_error",
}


def shape_of(path: str) -> Shape:
    """The error shape of the API at ``path``: Anthropic's under ``/v1/messages``."""
    return "anthropic" if path.startswith("/v1/messages") else "openai"


def error_body(shape: Shape, status: int, message: str, *, code: str) -> bytes:
    """An error body in ``shape``; ``code`` is OpenAI's ``type`` and ``code``.

    >>> error_body("anthropic", 413, "too big", code="body_too_large")
    b'{"type":"error","error":{"type":"request_too_large","message":"too big"}}'
    """
    if shape == "anthropic":
        kind = _ANTHROPIC_TYPES.get(status, "api_error")
        payload: dict[str, object] = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        payload = {"error": {"message": message, "type": code, "param": None, "code": code}}
    return json.dumps(payload, separators=(",", ":")).encode("utf-8")
