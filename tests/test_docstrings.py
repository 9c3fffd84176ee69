"""Docstrings say what and why; the figures measured for a choice live in bench/RESULTS.md."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "abridged"

# The shapes a measurement took in docstrings: a percentile, a time set against another, a
# CPU cost, a collection count per run. A default or a limit ("16 ms", "5 ms by default") is
# not one: it says what the code does.
MEASUREMENT = re.compile(
    r"\bp(50|95|99)\b"
    r"|\d(\.\d+)? ?(ms )?(against|without|instead of) \d"
    r"|\d(\.\d+)? ?ms (sooner|later|slower|faster)\b"
    r"|\d(\.\d+)? ?ms of CPU\b"
    r"|\bcollections over \d"
)


def measurements(source: str) -> list[str]:
    """The docstrings of ``source`` (module, classes, functions) that quote a measurement."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node) or ""
            if MEASUREMENT.search(" ".join(doc.split())):
                found.append(getattr(node, "name", "<module>"))
    return found


def test_the_pattern_finds_a_narrated_measurement() -> None:
    narrated = '"""A hop. (``bench/proxy.py``: p99 added latency 8.6 ms without, 4.5 ms with)."""'
    assert measurements(narrated) == ["<module>"]
    cpu = 'def f():\n    """That walk cost about 20 ms of CPU a call."""\n'
    assert measurements(cpu) == ["f"]
    assert measurements('"""Events go out in one write per 16 ms at most."""') == []


def test_no_docstring_narrates_a_measurement() -> None:
    found = {
        str(path.relative_to(PACKAGE)): names
        for path in sorted(PACKAGE.rglob("*.py"))
        if (names := measurements(path.read_text(encoding="utf-8")))
    }
    assert found == {}, f"move these figures to bench/RESULTS.md: {found}"
