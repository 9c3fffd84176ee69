"""The examples in the package's docstrings run, and say what they show: a docstring's example
that no longer holds is a wrong statement about the code, caught here, not by a reader."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import abridged

#: Modules that run only inside a tool that imports them (Alembic's migration environment).
NOT_IMPORTABLE_ALONE = ("abridged.store.migrations",)


def _modules() -> list[str]:
    names = [
        info.name
        for info in pkgutil.walk_packages(abridged.__path__, "abridged.")
        if not info.name.startswith(NOT_IMPORTABLE_ALONE)
        and not info.name.endswith(".__main__")  # (runs the command line when imported)
    ]
    return sorted(["abridged", *names])


def _examples(name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(name)
    # (an example marked ``+SKIP`` shows a call that needs a server or a loop: not run)
    return [
        t
        for t in doctest.DocTestFinder().find(module, name)
        if any(not e.options.get(doctest.SKIP) for e in t.examples)
    ]


MODULES = [name for name in _modules() if _examples(name)]


def test_the_modules_with_examples_are_found() -> None:
    # (the ledger and the signals are known to hold examples: an empty list means the walk
    # found nothing, not that every example holds)
    assert "abridged.engine.summarize.ledger" in MODULES
    assert "abridged.engine.summarize.signals" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_of_a_module_hold(name: str) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS, verbose=False)
    failed: list[str] = []
    for test in _examples(name):
        result = runner.run(test, out=lambda _text: None)
        if result.failed:
            failed.append(test.name)
    assert runner.tries > 0
    assert not failed, f"examples that no longer hold: {failed}"
