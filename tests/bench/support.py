"""Shared by the benchmark tests: loading a ``bench/`` script as a module or running its main in
this process, a fake policy kit, and picking real sessions that compact."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from abridged.core.model import Message
from abridged.core.tokens import estimate_context_tokens

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def load_bench(name: str) -> ModuleType:
    """``bench/NAME.py`` as the module ``bench_NAME`` (the bench directory on ``sys.path``: the
    scripts import their neighbours, such as ``results`` and ``policy_kit``). Loaded once per
    process: a second copy would make the first one's functions unpicklable for a process pool
    (pickle finds functions by module name), and test files share a process under xdist."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    loaded = sys.modules.get(f"bench_{name}")
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def bench_main(
    name: str, args: Sequence[str], capsys: pytest.CaptureFixture[str]
) -> tuple[dict[str, Any], str]:
    """``bench/NAME.py ARGS`` (with ``--json``) run by its ``main`` in this process: the JSON
    object of its last line, and all it printed. A test of a benchmark's figures needs no
    process of its own (starting one and importing abridged again is most of a tiny run);
    each benchmark the README shows keeps one test that runs it as a command."""
    capsys.readouterr()  # what was printed before is not the benchmark's
    load_bench(name).main(list(args))
    out = capsys.readouterr().out
    return json.loads(out.strip().splitlines()[-1]), out


def bench_usage_error(name: str, args: Sequence[str], capsys: pytest.CaptureFixture[str]) -> str:
    """What ``bench/NAME.py ARGS`` says on stderr when it refuses its options as a usage error
    (argparse's exit status 2), run by its ``main`` in this process."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        load_bench(name).main(list(args))
    assert exited.value.code == 2, (args, exited.value.code)
    return capsys.readouterr().err


@dataclass
class Summary:
    """One ``Kit.summarize`` call a fake kit recorded."""

    messages: list[Message]
    previous: str | None
    request: list[Message]
    max_tokens: int


@dataclass
class FakeKit:
    """A policy kit counting with abridged's estimate; its summaries are ``{label} N``."""

    window: Any
    label: str = "summary"
    summaries: list[Summary] = field(default_factory=list)

    def count(self, messages: Sequence[Message]) -> int:
        return estimate_context_tokens(messages)

    def summarize(
        self,
        messages: Sequence[Message],
        *,
        previous: str | None,
        request: Sequence[Message],
        max_tokens: int,
    ) -> str:
        self.summaries.append(Summary(list(messages), previous, list(request), max_tokens))
        return f"{self.label} {len(self.summaries)}"


def compacting_sessions(source: Path, target: Path, count: int) -> None:
    """Write to ``target`` the ``count`` shortest sessions of ``source`` whose recorded context
    went past 17k tokens (they compact under a 16k window)."""
    rows = []
    for line in source.read_text(encoding="utf-8").splitlines():
        if line.strip():
            obj = json.loads(line)
            peak = max((m.get("usage") or {}).get("prompt_tokens", 0) for m in obj["messages"])
            if peak >= 17_000:
                rows.append((len(obj["messages"]), obj["instance_id"], line))
    rows.sort()
    target.write_text("".join(r[2] + "\n" for r in rows[:count]), encoding="utf-8")
