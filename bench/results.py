"""Shared by the benchmarks: their output options, and replacing one ``## name`` section of
``bench/RESULTS.md``."""

from __future__ import annotations

import argparse
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def write_section(section: str, path: Path = RESULTS) -> None:
    """Replace the section whose heading is ``section``'s first line (create it if missing).

    Every other section of the file is kept as it was, so the benchmarks can run in any order.
    """
    heading = section.splitlines()[0].rstrip()
    if not heading.startswith("## "):
        raise ValueError(f"a section starts with '## ', got {heading!r}")
    section = section.rstrip("\n") + "\n"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    lines = text.splitlines(keepends=True)
    start = next((k for k, ln in enumerate(lines) if ln.rstrip() == heading), None)
    if start is None:
        path.write_text(text.rstrip("\n") + "\n\n" + section, encoding="utf-8")
        return
    end = next((k for k in range(start + 1, len(lines)) if lines[k].startswith("## ")), len(lines))
    rest = "".join(lines[end:])
    path.write_text("".join(lines[:start]) + section + ("\n" + rest if rest else ""), "utf-8")


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """The options every benchmark has: ``--json`` (one JSON object printed last),
    ``--results PATH`` (the file its section goes to, ``RESULTS.md`` by default) and
    ``--no-results`` (write no file)."""
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    parser.add_argument("--results", type=Path, default=RESULTS, help="the results file")
    parser.add_argument("--no-results", action="store_true", help="do not write RESULTS.md")


def save_section(args: argparse.Namespace, section: str) -> None:
    """Write ``section`` to the results file the options chose (none with ``--no-results``)."""
    if not args.no_results:
        write_section(section, args.results)
