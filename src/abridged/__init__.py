"""abridged: keep long LLM conversations and agent sessions inside the model's context window.

Layers, each importing only from those below it (``tests/test_layers.py`` enforces this):

- core (``abridged.core``): pure types and functions: messages, tokens, windows, turns, budget.
- engine (``abridged.engine``): pure decisions over the core: pruning, compaction plans.
- edges (``abridged.formats``, ``abridged.providers``): translation to and from the outside world.
- surfaces (``abridged.cli``): what people run.

The package imports nothing heavy at import time; names below are resolved on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "Message": "abridged.core.model",
    "Text": "abridged.core.model",
    "Reasoning": "abridged.core.model",
    "Image": "abridged.core.model",
    "File": "abridged.core.model",
    "ToolCall": "abridged.core.model",
    "ToolResult": "abridged.core.model",
    "Usage": "abridged.core.model",
    "assign_ids": "abridged.core.model",
}

if TYPE_CHECKING:
    from abridged.core.model import (
        File,
        Image,
        Message,
        Reasoning,
        Text,
        ToolCall,
        ToolResult,
        Usage,
        assign_ids,
    )

__all__ = [
    "File",
    "Image",
    "Message",
    "Reasoning",
    "Text",
    "ToolCall",
    "ToolResult",
    "Usage",
    "__version__",
    "assign_ids",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'abridged' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
