"""The layers of the design hold: each module imports only its layer and those below; the core
and the engine do no I/O."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "abridged"

# Lower number = lower layer. A module may import its own layer and anything lower.
LAYER = {
    "errors": 0,
    "core": 1,
    "engine": 2,
    "formats": 3,
    "providers": 3,
    "store": 3,
    "runtime": 4,
    # abridged.events: the engine's and the runtime's events in one place, plain data over the
    # core; on the engine's level because the engine reports them
    "events": 2,
    "cli": 5,
    "server": 5,
    "integrations": 5,
    "testing": 5,
}
# The surfaces are separate top layers: none imports another (the service never reaches into
# the CLI, an integration into the service). The one crossing: the commands that start another
# surface, each named here by module, so that a new crossing fails.
SURFACES = {"cli", "server", "integrations", "testing"}
SURFACE_CROSSINGS = {
    "cli/serve.py": {"server"},  # ``abridged serve`` and ``abridged proxy`` run the service
    "cli/demo.py": {"testing"},  # ``abridged demo`` runs the local test provider
}
# Edges translate between the outside world and the core: they do not import each other's
# package or the engine. One exception: a provider adapter is a translation edge built on the
# wire formats, so ``providers`` may import ``formats`` (never the other way round).
EDGES = {"formats", "providers", "store"}
EDGE_IMPORTS_ALLOWED = {("providers", "formats")}
IO_MODULES = {
    "os",
    "sys",
    "io",
    "pathlib",
    "socket",
    "subprocess",
    "time",
    "random",
    "sqlite3",
    "httpx",
    "sqlalchemy",
    "asyncio",
    "shutil",
    "tempfile",
    "urllib",
    # a log line is output: the runtime logs the engine's decisions (abridged.runtime.tracing)
    "logging",
}
PURE = {"core", "engine", "events"}


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _parse(path: Path) -> ast.Module:
    source = path.read_text(encoding="utf-8")
    try:
        return ast.parse(source)
    except SystemError as e:
        # CPython 3.11 keeps one AST recursion counter for every thread (gh-106905): a traceback
        # formatted by another thread meanwhile (3.11 parses the failing line to underline it)
        # makes a correct parse fail. The file is not at fault: parse it again.
        if "recursion depth mismatch" not in str(e):
            raise
        return ast.parse(source)


def _layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py") if len(rel.parts) > 1 else rel.stem


def _imports(path: Path) -> list[str]:
    tree = _parse(path)
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_imports_respect_layers(path: Path) -> None:
    layer = _layer_of(path)
    if layer in {"__init__", "__main__"}:
        return
    assert layer in LAYER, f"{path}: package {layer!r} has no layer; add it to LAYER"
    for name in _imports(path):
        parts = name.split(".")
        if parts[0] != "abridged" or len(parts) < 2:
            continue
        target = parts[1]
        assert target in LAYER, f"{path} imports {name}, which is in no layer"
        assert LAYER[target] <= LAYER[layer], f"{path} ({layer}) imports upward: {name}"
        if layer in SURFACES and target in SURFACES and target != layer:
            crossing = SURFACE_CROSSINGS.get(str(path.relative_to(PACKAGE)), set())
            assert target in crossing, f"surface {layer} imports another surface: {name}"
        if layer in EDGES and target in EDGES and (layer, target) not in EDGE_IMPORTS_ALLOWED:
            assert target == layer, f"edge {layer} imports another edge: {name}"
        if layer in EDGES:
            assert target != "engine", f"edge {layer} imports the engine: {name}"


@pytest.mark.parametrize(
    "path",
    [p for p in _modules() if _layer_of(p) in PURE],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_pure_layers_do_no_io(path: Path) -> None:
    for name in _imports(path):
        assert name.split(".")[0] not in IO_MODULES, f"{path} is pure but imports {name}"
    tree = _parse(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in {"open", "print", "input"}, (
                f"{path}:{node.lineno} calls {node.func.id}() in a pure layer"
            )


def test_every_module_has_a_one_line_docstring() -> None:
    missing = []
    for path in _modules():
        doc = ast.get_docstring(_parse(path))
        if not doc or not doc.strip():
            missing.append(str(path.relative_to(PACKAGE)))
    assert not missing, f"modules without a docstring: {missing}"


def test_importing_the_package_is_cheap() -> None:
    """No import-time work: importing abridged pulls in none of the heavy dependencies."""
    import subprocess
    import sys

    code = (
        "import sys, abridged, abridged.core.model; "
        "heavy = [m for m in ('httpx','typer','rich','sqlalchemy','pydantic','toktok') "
        "if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
