"""The runtime: wires the engine to the caller's loop (ContextManager), stores and providers."""

from abridged.runtime.context_manager import ContextManager, Prepared, ReplayStep

__all__ = ["ContextManager", "Prepared", "ReplayStep"]
