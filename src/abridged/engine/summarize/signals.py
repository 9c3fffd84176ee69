"""The fact ledger's ranking: a few named signals, each a small function, combined in one place.

A candidate fact is ranked by what it holds, never by particular words of particular facts:

- ``specificity``: exact references (tickets, versions, quantities, hosts, paths, e-mails, ...),
  a ``key: value`` shape, names of people; the more exact it is, the less a reader can rebuild it;
- ``modality``: rule, decision or finding language (must, never, only, prefer, agreed, the root
  cause is, ...);
- ``reuse``: what it names comes up again later in the conversation (the agent acted on it);
- ``recency``: how late it was said (``order`` against the newest);
- ``source``: who said it (the user first).

``combine`` is the one place they are weighed (``WEIGHTS``); ``without`` gives the weights with
some signals removed, for the ablation in ``bench/retention.py --ablate``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final, Literal

from abridged.engine.summarize.references import STRONG_KINDS
from abridged.errors import SettingError

Signal = Literal["specificity", "modality", "reuse", "recency", "source"]
SIGNALS: Final[tuple[Signal, ...]] = ("specificity", "modality", "reuse", "recency", "source")

#: How much each signal counts (each signal is in [0, 1]).
WEIGHTS: Final[Mapping[str, float]] = {
    "specificity": 2.5,
    "modality": 2.5,
    "reuse": 1.0,
    "recency": 1.5,
    "source": 0.5,
}

_RULE = re.compile(
    r"\b(?:must(?:n't| not)?|never|always|do not|don't|does not need|should(?:n't| not)?|shall|"
    r"avoid|prefer(?:s|red|ably|ence)?|make sure|ensure|only|at most|at least|no more than|"
    r"not allowed|forbidden|required?|requirement|rule|from now on|deadline|limit|budget|"
    r"deprecated|warning|important|note that|policy|please|keep|has to|have to|mandatory|"
    r"allowed|instead|may not|cannot|can't|is not to|are not to|no longer|stop|"
    r"from here on|going forward)\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(
    r"^(?:[-*>#•]+\s*)?(?:please\s+|also,?\s+|and\s+)?(?:use|write|run|keep|make|add|put|avoid|"
    r"remember|ask|call|send|set|store|check|contact|include|exclude|skip|report|tell|leave|"
    r"prefer|don't|do not|never|always|only|note|point|switch|email|e-mail|upload|delete|"
    r"remove|copy|move|post|push|deploy|target|stick)\b",
    re.IGNORECASE,
)
DECISION = re.compile(
    r"\b(?:root cause|decided|decision|agreed|we agree|going with|go with|chose|chosen|"
    r"opt(?:ed)? for|settled on|went with|picked|we will|we'll|we won't|will not|won't be|"
    r"the plan is|plan|rather than|instead of|approved|signed off)",
    re.IGNORECASE,
)
_FINDING = re.compile(
    r"\b(?:the (?:root )?(?:cause|problem|issue|bug|culprit|reason) (?:is|was|lies)|turns out|"
    r"confirmed|this means|which means|is caused by|because)\b",
    re.IGNORECASE,
)
#: ``name: value`` or ``name = value`` (a setting, a field, a header of a table row).
_KEYED = re.compile(r"^\s*[-+*>#|•\s]*\"?[A-Za-z_][\w .\-]{0,40}\"?\s*(?:=|:|\|)\s*\S")
#: A person's name: two capitalized words, not the text's first (``Maren Lindqvist``).
PERSON = re.compile(r"(?<=[\s(\"'])[A-Z][a-z]+(?:[ -][A-Z][a-z]+)+\b")
#: Shapes worth less than the strong ones: code names and source files.
_WEAK_KINDS = frozenset({"code", "file", "identifier"})


def specificity(references: Sequence[tuple[str, str]], text: str) -> float:
    """How exact ``text`` is, in [0, 1]: its references (``reference_kinds``: strong shapes
    and paths count most, code names and source files little), a keyed shape, a person's name.

    >>> specificity([("OPS-1", "ticket"), ("2.1.0", "version")], "Ticket OPS-1 ships in 2.1.0")
    0.8
    >>> specificity([], "we will see")
    0.0
    """
    strong = sum(1 for _v, k in references if k in STRONG_KINDS or k == "path")
    weak = sum(1 for _v, k in references if k in _WEAK_KINDS)
    found = 0.6 * min(strong, 1) + 0.2 * min(max(strong - 1, 0), 2) + 0.15 * min(weak, 2)
    if _KEYED.match(text):
        found += 0.25
    if PERSON.search(text):
        found += 0.3
    return min(1.0, found)


def modality(text: str) -> float:
    """How much ``text`` binds, in [0, 1]: a rule or an instruction (must, never, only, prefer,
    an imperative opening) or a decision counts 1, a finding (the cause is, turns out) 0.5.

    >>> modality("Never push to main."), modality("It turns out it was cold."), modality("ok")
    (1.0, 0.5, 0.0)
    """
    if _RULE.search(text) or _IMPERATIVE.match(text) or DECISION.search(text):
        return 1.0
    if _FINDING.search(text):
        return 0.5
    return 0.0


def is_rule(text: str) -> bool:
    """Whether ``text`` reads as an instruction or a decision (``modality`` of 1)."""
    return modality(text) >= 1.0


def reuse(last_use: int, position: int) -> float:
    """1 when what a fact names is used again after its message (``last_use`` > ``position``,
    the message indexes), else 0."""
    return 1.0 if last_use > position else 0.0


def recency(order: int, newest: int) -> float:
    """How late a fact was said, in [0, 1]: ``order`` against the ``newest`` order."""
    return max(0.0, min(1.0, order / newest)) if newest > 0 else 0.0


_SOURCE_VALUE: Final[Mapping[str, float]] = {"user": 1.0, "assistant": 0.5, "tool": 0.5}


def source(origin: str) -> float:
    """Who said it: the user 1, the assistant or a tool 0.5."""
    return _SOURCE_VALUE.get(origin, 0.5)


def combine(values: Mapping[str, float], weights: Mapping[str, float] = WEIGHTS) -> float:
    """The weighted sum of the signal ``values``: the one place signals are weighed."""
    return sum(weights.get(name, 0.0) * value for name, value in values.items())


def without(*names: str, weights: Mapping[str, float] = WEIGHTS) -> dict[str, float]:
    """``weights`` with the signals ``names`` removed (weighted 0): one row of the ablation."""
    unknown = [n for n in names if n not in SIGNALS]
    if unknown:
        raise SettingError("ledger signal", unknown[0], f"one of {', '.join(SIGNALS)}")
    return {k: (0.0 if k in names else v) for k, v in weights.items()}


__all__ = [
    "DECISION",
    "PERSON",
    "SIGNALS",
    "WEIGHTS",
    "Signal",
    "combine",
    "is_rule",
    "modality",
    "recency",
    "reuse",
    "source",
    "specificity",
    "without",
]
