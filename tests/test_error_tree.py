"""Every exception class abridged defines derives from ``abridged.errors.AbridgedError``, so one
``except AbridgedError`` catches whatever abridged raises on purpose."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import abridged
from abridged import errors
from abridged.errors import AbridgedError

#: Modules that cannot be imported on their own: the command line's entry point runs the CLI, and
#: Alembic's environment needs a running migration.
NOT_IMPORTABLE = {"abridged.__main__", "abridged.store.migrations.env"}


def _exception_classes() -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    for info in pkgutil.walk_packages(abridged.__path__, "abridged."):
        if info.name in NOT_IMPORTABLE:
            continue
        module = importlib.import_module(info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == module.__name__:
                found.append(value)
    return found


CLASSES = _exception_classes()


def _name(cls: type[BaseException]) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def test_the_walk_finds_the_errors_outside_the_errors_module() -> None:
    names = {_name(cls) for cls in CLASSES}
    assert "abridged.errors.ContentionError" in names
    assert "abridged.cli.common.CliError" in names


@pytest.mark.parametrize(
    "cls",
    CLASSES,
    ids=_name,
)
def test_every_exception_class_is_in_the_tree(cls: type[BaseException]) -> None:
    assert issubclass(cls, AbridgedError)


def test_builtin_bases_are_kept() -> None:
    # Callers may catch these as the builtin they always were.
    assert issubclass(errors.MessageValidationError, ValueError)
    assert issubclass(errors.FormatError, ValueError)
    assert issubclass(errors.SettingError, ValueError)
    assert issubclass(errors.NotFoundError, LookupError)
    assert issubclass(errors.OwnershipError, PermissionError)


def test_the_errors_that_stood_outside_are_in_the_errors_module() -> None:
    from abridged.runtime.recovery import SilentTruncationError

    assert SilentTruncationError is errors.SilentTruncationError
    assert issubclass(errors.SilentTruncationError, errors.ContextOverflowError)
    failed = errors.SummaryFailedError("the model returned no text")
    assert isinstance(failed, AbridgedError)
    assert failed.reason == str(failed) == "the model returned no text"
