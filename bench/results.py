"""Shared by the benchmarks: replace one ``## name`` section of ``bench/RESULTS.md``."""

from __future__ import annotations

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
