"""What every framework adapter builds its ``ContextManager``s from: the options, and the ids of
the conversations it keeps in the store."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from abridged.core.budget import BudgetSettings
from abridged.core.windows import ModelLimits
from abridged.engine.compaction import CompactionHooks
from abridged.engine.compaction_settings import CompactionSettings
from abridged.runtime.context_manager import ContextManager
from abridged.store import Store

__all__ = ["ManagerOptions", "stored_conversation_id"]

#: The longest conversation id the store takes.
MAX_ID = 64


def stored_conversation_id(prefix: str, key: str) -> str:
    """The store's id of the conversation a framework names ``key`` (a thread, a session):
    ``<prefix>-<key>``, or a digest of the key when that is longer than the store takes.

    >>> stored_conversation_id("langchain", "thread-1")
    'langchain-thread-1'
    >>> len(stored_conversation_id("langchain", "t" * 100))
    50
    """
    name = f"{prefix}-{key}"
    if len(name) <= MAX_ID:
        return name
    return f"{prefix}-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:40]


@dataclass(frozen=True, slots=True)
class ManagerOptions:
    """The ``ContextManager`` options an adapter takes (each as for ``ContextManager``)."""

    limits: ModelLimits | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None
    model: str | None = None
    budget: BudgetSettings | None = None
    settings: CompactionSettings | None = None
    summarizer: Any = None
    hooks: CompactionHooks | None = None

    def manager(
        self,
        format: str,
        *,
        store: Store | None = None,
        conversation_id: str | None = None,
        owner: str | None = None,
    ) -> ContextManager:
        """A manager with these options (``SettingError`` when one is out of range)."""
        return ContextManager(
            self.limits,
            context_window=self.context_window,
            max_output_tokens=self.max_output_tokens,
            model=self.model,
            format=format,
            budget=self.budget,
            settings=self.settings,
            summarizer=self.summarizer,
            hooks=self.hooks,
            store=store,
            conversation_id=conversation_id if store is not None else None,
            owner=owner if store is not None else None,
        )
