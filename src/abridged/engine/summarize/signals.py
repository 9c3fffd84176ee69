"""The fact ledger's ranking: a few named signals, each a small function, combined in one place.

A candidate fact is ranked by what it holds, never by particular words of particular facts:

- ``specificity``: exact references (tickets, versions, quantities, hosts, paths, e-mails, ...),
  code names the conversation names only once, a ``key: value`` shape (in any notation, JSON
  too), names of people; the more exact it is, the less a reader can rebuild it;
- ``modality``: rule, decision or finding language (must, never, only, prefer, agreed, the root
  cause is, ...), halved when hedged or when the agent plans its own move around it; words
  inside a code span are the code's, and *instead of* binds only when the user says it. The
  ledger halves it again for the agent's or a tool's line that holds nothing exact (its own
  plan, what code does: *run the script*, *use it if it is set*).

Facts of equal weight rank newest first. Three more signals were measured and dropped (the
ablation in bench/RESULTS.md: removing each changed survival on generated canaries by at most
0.002): *reuse* (what a fact names comes up again later), *recency* as a weight (the tie-break
already orders by it) and *source* (user facts are quoted by the summary, not ranked here).

``combine`` is the one place they are weighed (``WEIGHTS``); ``without`` gives the weights with
some signals removed, for the ablation in ``bench/retention.py --ablate``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Final, Literal

from abridged.engine.summarize.references import STRONG_KINDS, setting_file
from abridged.errors import SettingError

Signal = Literal["specificity", "modality"]
SIGNALS: Final[tuple[Signal, ...]] = ("specificity", "modality")

#: How much each signal counts (each signal is in [0, 1]).
WEIGHTS: Final[Mapping[str, float]] = {
    "specificity": 2.5,
    "modality": 2.5,
}

#: Words that bind: a rule, a prohibition, a limit, a preference.
_STRONG = re.compile(
    r"\b(?:must(?:n't| not)?|never|always|do not|don't|does not need|shall|avoid|"
    r"prefer(?:s|red|ably|ence)?|only|at most|at least|no more than|not allowed|forbidden|"
    r"required?|requirement|mandatory|rule|policy|from now on|from here on|going forward|"
    r"has to|have to|may not|is not to|are not to|no longer|not to be|please)\b",
    re.IGNORECASE,
)
#: Words that advise more than bind (and that an agent also uses when it plans).
_WEAK = re.compile(
    r"\b(?:should(?:n't| not)?|make sure|ensure|keep|note that|important|warning|"
    r"deadline|limit|budget|deprecated|instead|allowed|cannot|can't|stop)\b",
    re.IGNORECASE,
)
#: The agent planning its own next move: a modal with *I* or *we* as its subject.
_PLANNING = re.compile(
    r"\b(?:i|we)(?: also| still| probably| first| then)? (?:should|need to|must|have to|"
    r"want to|will|'ll|am going to|are going to|can|could|might)\b|\bi'll\b|\blet me\b",
    re.IGNORECASE,
)
#: A hedge: what follows is not settled.
_HEDGE = re.compile(
    r"\b(?:probably|maybe|might|perhaps|seems?|likely|i think|i guess|i wonder|suppose|"
    r"possibly|apparently)\b",
    re.IGNORECASE,
)
#: An instruction: an imperative verb opening the text or one of its clauses.
_IMPERATIVE = re.compile(
    r"(?:^|[,:;]\s+|\s[-\u2013\u2014]\s+)(?:[-*>#\u2022]+\s*)?(?:please\s+|also,?\s+|and\s+)?"
    r"(?:use|write|run|keep|make|add|put|avoid|remember|ask|call|send|set|store|check|contact|"
    r"include|exclude|skip|report|tell|leave|prefer|don't|do not|never|always|only|point|switch|"
    r"email|e-mail|upload|delete|remove|copy|move|post|push|deploy|target|stick|mention|"
    r"split|clean|drop|ship|route|stay|treat|limit|cap|pin|wait)\b",
    re.IGNORECASE,
)
DECISION = re.compile(
    r"\b(?:root cause|decided|decision|agreed|we agree|going with|go with|chose|chosen|"
    r"opt(?:ed)? for|settled on|went with|picked(?! up\b)|we will|we'll|we won't|will not|won't be|"
    r"the plan is|plan|rather than|instead of|approved|signed off)",
    re.IGNORECASE,
)
#: Comparison words: a decision when the user sets it; from the agent or a tool mostly what
#: code does or an alternative tried (*passes `key` instead of `**key`*).
_COMPARED = re.compile(r"\b(?:rather than|instead of)\b", re.IGNORECASE)
#: Code quoted in prose: its words (``drop=drop``, ``only_once``) are the code's, not the
#: speaker's.
CODE_SPAN = re.compile(r"`[^`\n]*`")
_FINDING = re.compile(
    r"\b(?:the (?:root )?(?:cause|problem|issue|bug|culprit|reason) (?:is|was|lies)|turns out|"
    r"confirmed|this means|which means|is caused by|because)\b",
    re.IGNORECASE,
)
#: ``name: value`` or ``name = value`` (a setting, a field, a header of a table row), also as
#: a JSON object's field (``{"name": value``): one fact weighs the same in any notation.
_KEYED = re.compile(r"^\s*[-+*>#|•\s]*(?:\{\s*)?\"?[A-Za-z_][\w .\-]{0,40}\"?\s*(?:=|:|\|)\s*\S")
#: Capitalized words, two or more, also with a middle initial (``Gaspard H. Fojeos``).
_NAME_WORDS = r"[A-Z][a-z]+(?:(?:[ -]|\s[A-Z]\.\s)[A-Z][a-z]+)+"
#: A person's name: two capitalized words, not the text's first (``Maren Lindqvist``).
PERSON = re.compile(r"(?<=[\s(\"'])" + _NAME_WORDS + r"\b")
#: The same at the text's start, after a list, diff or comment mark (``Dario Buvoek owns it``).
_PERSON_OPENING = re.compile(r"^[\s\-+*>#/•]*(" + _NAME_WORDS + r")\b")
#: A middle initial: what follows it may open the next sentence (*Plan B. Then ...*).
_INITIAL = re.compile(r"\s[A-Z]\.\s")
#: Capitalised words that open a sentence without naming anyone.
_OPENER_WORDS = (
    "the this that these those we i you it its our your my their his her please note also and "
    "but so if when then there here what why how who which where use set run make keep do "
    "never always only see check add remove ask tell send let all any each every no not one "
    "new old next last first today tomorrow monday tuesday wednesday thursday friday saturday "
    "sunday january february march april may june july august september october november "
    "december ok okay yes hi hello thanks update fyi heads todo fixme warning error info "
    "important summary result status done for from with after before since until per via "
    "on in at by to of"
)
_OPENERS = frozenset(_OPENER_WORDS.split())


#: Words a name inside a text does not open with: prepositions and weekdays (*On Mon*, *In
#: Progress*, *To Do*). Months and the like are first names too (*June Carter*, *May Chen*).
_NOT_FIRST_NAMES = frozenset(
    ["on", "in", "at", "by", "to", "of", "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri"]
)


def _without_openers(name: str) -> str | None:
    """``name`` without the prepositions and weekdays it opens with (``_NOT_FIRST_NAMES``),
    ``None`` when less than two words are left."""
    words = re.split(r"[ -]", name)
    drop = 0
    while drop < len(words) and words[drop].lower() in _NOT_FIRST_NAMES:
        drop += 1
    if len(words) - drop < 2:
        return None
    return name[sum(len(w) + 1 for w in words[:drop]) :]


def persons(text: str) -> list[str]:
    """The people ``text`` names (``PERSON``), also one that opens it (*Dario Buvoek owns it
    now*), each without the common words before it (*The Release*, *Please Note*, *On Mon*
    and *In Progress* name nobody).

    >>> persons("Dario Buvoek owns it; ask Ann Lee"), persons("The Release is out")
    (['Dario Buvoek', 'Ann Lee'], [])
    >>> persons("> On Mon, Supon Rafilok wrote:"), persons("Status: In Progress")
    (['Supon Rafilok'], [])
    """
    found: list[str] = []
    for m in PERSON.finditer(text):
        name = _without_openers(m.group())
        if name is not None and _INITIAL.search(name):
            name = _before_a_sentence(name)
        if name is not None and name not in found:
            found.append(name)
    opening = _PERSON_OPENING.match(text)
    if opening is not None:
        words = opening.group(1).replace("-", " ").split()
        if not any(w.lower() in _OPENERS for w in words) and opening.group(1) not in found:
            found.insert(0, opening.group(1))
    return found


def _before_a_sentence(name: str) -> str | None:
    """``name`` (holding an initial) up to the initial when the word after it opens a sentence
    (*Plan B. Then*), ``None`` when less than two words are left."""
    head, tail = _INITIAL.split(name, maxsplit=1)
    if tail.split()[0].lower() not in _OPENERS:
        return name
    return head if " " in head or "-" in head else None


#: Shapes worth less than the strong ones: names with digits or underscores, source files (the
#: files section tracks those). Backticked code is worth nothing here: reasoning about code is
#: the agent's work in progress.
_WEAK_KINDS = frozenset({"file", "identifier"})


def specificity(
    references: Sequence[tuple[str, str]],
    text: str,
    seen_in: int = 1,
    rare: Collection[str] = frozenset(),
) -> float:
    """How exact ``text`` is, in [0, 1]: its references (``reference_kinds``: strong shapes
    and paths count most, code names and source files little), a keyed shape, a person's name;
    divided by ``seen_in``, the number of messages that hold the same line (numbers aside): a
    line every test run prints (``Platform: linux``) is no rare fact. A code name in ``rare``
    (one the conversation names in no other message) counts as a strong shape: a flag, a
    table, a fixture named once is a fact a reader cannot rebuild, while a name the agent
    keeps using is the code at hand, which the conversation shows anyway.

    >>> specificity([("OPS-1", "ticket"), ("2.1.0", "version")], "Ticket OPS-1 ships in 2.1.0")
    0.8
    >>> specificity([], "we will see")
    0.0
    """
    strong = sum(
        1
        for v, k in references
        if k in STRONG_KINDS
        or k == "path"
        or setting_file(v, k)
        or (k == "identifier" and v in rare)
    )
    weak = sum(
        1
        for v, k in references
        if k in _WEAK_KINDS and not setting_file(v, k) and not (k == "identifier" and v in rare)
    )
    found = 0.6 * min(strong, 1) + 0.2 * min(max(strong - 1, 0), 2) + 0.15 * min(weak, 2)
    if _KEYED.match(text):
        found += 0.25
    if persons(text):
        found += 0.4  # a person's name is as rare a value as one reference, near enough
    return min(1.0, found) / max(1, seen_in)


def modality(text: str, origin: str = "user") -> float:
    """How much ``text`` binds, in [0, 1]: a rule, a prohibition or a preference (must, never,
    only, prefer, ...), an instruction (an imperative opening a clause) or a decision counts 1;
    advice (should, make sure, keep, ...) 0.6 when the user gives it (from the agent or a tool
    it is mostly expectation: *this should work*), never when someone plans their own move
    (*I should*, *we need to*); a finding (the cause is, turns out) 0.3 (not enough alone). A
    hedge (probably, seems) halves it: what follows is not settled; so does the agent or a
    tool planning its own move around a rule word (*I need to make sure I don't break it*):
    that is work in progress, not a rule someone set. Words inside a code span are the code's
    (``drop=drop`` is no instruction), and a comparison (*instead of*, *rather than*) settles
    a choice only when the user makes it: from the agent or a tool it mostly says what code
    does (*passed as `method` instead of as a dimension*).

    >>> modality("Never push to main."), modality("It turns out it was cold."), modality("ok")
    (1.0, 0.3, 0.0)
    >>> modality("I should check the admin code."), modality("When you are done, keep it short.")
    (0.0, 1.0)
    >>> modality("I need to make sure I don't break it.", "assistant")
    0.5
    """
    text = CODE_SPAN.sub("code", text)
    decided = DECISION.search(text if origin == "user" else _COMPARED.sub(" ", text))
    if _STRONG.search(text) or _IMPERATIVE.search(text) or decided:
        found = 1.0
    elif origin == "user" and _WEAK.search(text) and not _PLANNING.search(text):
        found = 0.6
    elif _FINDING.search(text):
        found = 0.3
    else:
        return 0.0
    planning = origin != "user" and _PLANNING.search(text) and not decided
    return found / 2 if _HEDGE.search(text) or planning else found


def is_rule(text: str) -> bool:
    """Whether ``text`` reads as a rule, an instruction, advice or a decision: what a tool
    printed in such words is quoted, never stated (``Fact.render``)."""
    return bool(
        _STRONG.search(text)
        or _IMPERATIVE.search(text)
        or DECISION.search(text)
        or _WEAK.search(text)
    )


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
    "CODE_SPAN",
    "DECISION",
    "PERSON",
    "SIGNALS",
    "WEIGHTS",
    "Signal",
    "combine",
    "is_rule",
    "modality",
    "persons",
    "specificity",
    "without",
]
