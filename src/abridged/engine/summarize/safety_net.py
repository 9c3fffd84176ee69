"""The safety net under a model's summary: what the extractive summary keeps that the model's lost.

A model summary that passes the heading check may still have dropped the user's instructions,
the facts tool output stated or their exact values (a small model writes "Nothing recorded."
under every heading). ``add_net(summary, net)`` takes the deterministic summary of the same
request (``net``: the extractive summarizer's, built within the room the model's summary left
under the ceiling) and adds to the model's summary, section by section, each entry of the
sections that carry what must survive (``NET_SECTIONS``: the user's requests and constraints,
verbatim; the fact ledger; the exact references) that the model's summary does not hold. So an
accepted model summary keeps at least what the extractive path keeps in that room, and never
more than the ceiling: ``net`` was built within the room, and only part of it is added.

*Holds*: a user entry is held when its text (whitespace folded) is in the summary: the user's
words are what a later call must read, a paraphrase is not them. A fact or a reference is held
when every exact reference it names (``harvest_references``) is in the summary, else when its
text is.

Pure: no I/O.
"""

from __future__ import annotations

from abridged.core.tokens import estimate_text_tokens
from abridged.engine.summarize.extractive import section_entries
from abridged.engine.summarize.prompts import add_to_section, parse_sections
from abridged.engine.summarize.references import harvest_references

__all__ = ["NET_SECTIONS", "add_net", "missing_entries", "net_tokens"]

#: The sections of the net added to a model's summary, most critical first.
NET_SECTIONS: tuple[str, ...] = ("intent", "constraints", "decisions", "references")
#: What a section's heading line and the blank line before it cost, about.
HEADING_TOKENS = 8
#: The sections whose entries are the user's own words (held only verbatim).
_VERBATIM = frozenset({"intent", "constraints"})


def net_tokens(net: str) -> int:
    """The estimated tokens of ``net``'s ``NET_SECTIONS`` (headings and bodies): the room the
    net would take in a summary that holds none of it."""
    sections = parse_sections(net)
    return sum(
        estimate_text_tokens(sections[key]) + HEADING_TOKENS
        for key in NET_SECTIONS
        if key in sections
    )


def _folded(text: str) -> str:
    return " ".join(text.split())


def _held(entry: str, key: str, folded_summary: str, summary: str) -> bool:
    if _folded(entry) in folded_summary:
        return True
    if key in _VERBATIM:
        return False
    values = harvest_references(entry)
    return bool(values) and all(v in summary for v in values)


def missing_entries(summary: str, net: str) -> dict[str, list[str]]:
    r"""The entries of each of ``net``'s ``NET_SECTIONS`` that ``summary`` does not hold, in
    ``net``'s order (sections with none left out). Of a group of facts under one source (a head
    line, then ``- fact`` lines), only the facts not held are kept, under their head.

    >>> net = "## Intent\n- Ship OPS-7.\n\n## Refs\n- OPS-7\n- v2"
    >>> missing_entries("## Facts and decisions\n- OPS-7 is the ticket.", net)
    {'intent': ['Ship OPS-7.'], 'references': ['v2']}
    """
    folded_summary = _folded(summary)

    def held(entry: str, key: str) -> bool:
        return _held(entry, key, folded_summary, summary)

    sections = parse_sections(net)
    out: dict[str, list[str]] = {}
    for key in NET_SECTIONS:
        lost: list[str] = []
        for entry in section_entries(sections.get(key, "")):
            head, *lines = entry.split("\n")
            items = [line[2:] for line in lines if line.startswith("- ")]
            if not items or len(items) != len(lines):
                if not held(entry, key):
                    lost.append(entry)
                continue
            items = [item for item in items if not held(item, key)]
            if len(items) == 1:
                lost.append(f"{head} {items[0]}")
            elif items:
                lost.append("\n".join([head, *(f"- {item}" for item in items)]))
        if lost:
            out[key] = lost
    return out


def _bullet(entry: str) -> str:
    first, *rest = entry.split("\n")
    return "\n".join(["- " + first, *(("  " + line) if line.strip() else "" for line in rest)])


def add_net(summary: str, net: str) -> str:
    """``summary`` with ``missing_entries(summary, net)`` added, each to its own section (made
    where the summary has none)."""
    for key, entries in missing_entries(summary, net).items():
        summary = add_to_section(summary, key, "\n".join(_bullet(e) for e in entries))
    return summary
