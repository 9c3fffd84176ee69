"""A module that moved: its old path keeps giving the same objects, with a DeprecationWarning."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from types import ModuleType


def moved_names(old: str, new: ModuleType, names: Iterable[str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``old`` that gives ``new``'s objects for ``names``, warning.

    The warning fires on each access, not once at import: Python imports a module once per
    process, so a warning at import reaches only whoever imports it first (a doctest collector,
    an IDE), and its location is inside importlib rather than the line to change. From
    ``__getattr__`` (``stacklevel=2``) it names the caller's line, so Python's default filters
    show it for ``__main__`` and pytest shows it for a test.
    """
    known = frozenset(names)

    def __getattr__(name: str) -> object:  # noqa: N807 (a module's own hook)
        if name not in known:
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(
            f"{old} moved to {new.__name__}: import {name} from there; "
            f"{old} will be removed in a later release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(new, name)

    return __getattr__
