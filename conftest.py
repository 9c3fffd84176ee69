"""The package's doctests run with the suite: every module under ``src/abridged`` is collected
for its ``>>>`` examples (the ``testpaths`` of pyproject.toml name it). A module whose import
needs an optional extra that is not installed (``fastapi`` for the service, a framework for an
integration) is skipped saying which, so a clone with only some extras still runs the rest."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from _pytest.doctest import DoctestModule

PACKAGE = Path(__file__).parent / "src" / "abridged"

# Alembic's scripts run only under ``alembic`` (``env.py`` reads ``context.config``).
MIGRATIONS = PACKAGE / "store" / "migrations"


class PackageDoctests(DoctestModule):
    """A module's doctests, skipped when the module needs an extra that is not installed."""

    def collect(self):  # type: ignore[no-untyped-def]
        name = ".".join(self.path.relative_to(PACKAGE.parent).with_suffix("").parts)
        name = name.removesuffix(".__init__")
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            missing = (exc.name or "").partition(".")[0]
            if not missing or missing == "abridged":
                raise
            pytest.skip(f"{name} needs {missing}, not installed (an optional extra)")
        yield from super().collect()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> PackageDoctests | None:
    if file_path.suffix != ".py" or not file_path.is_relative_to(PACKAGE):
        return None
    if file_path.name == "__main__.py" or file_path.is_relative_to(MIGRATIONS):
        return None
    return PackageDoctests.from_parent(parent, path=file_path)
