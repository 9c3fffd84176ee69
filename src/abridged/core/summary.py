"""The message that carries a summary into a context: the same bytes wherever it is built."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from abridged.core.model import Message, Text

__all__ = ["SUMMARY_HEADER", "summary_message"]

#: The first line of the summary message a context carries; the summary text follows it.
SUMMARY_HEADER = (
    "[Summary of the earlier part of this conversation. It was compacted to fit the context "
    "window: this summary replaces those messages.]"
)


def summary_message(text: str, meta: Mapping[str, Any] | None = None) -> Message:
    """The message that carries a summary into a context (role ``user``, kind ``summary``);
    ``meta`` adds to its metadata (the kind stays ``summary``).

    >>> m = summary_message("## User intent and requests\\nFix the bug.")
    >>> m.is_summary, m.role, m.text.splitlines()[2]
    (True, 'user', '## User intent and requests')
    """
    return Message(
        "user", (Text(f"{SUMMARY_HEADER}\n\n{text}"),), meta={**(meta or {}), "kind": "summary"}
    )
