"""Supersession by a shared name: two facts naming one thing, a value of one shape changed.

A correction often shares no key and no wording with what it corrects (``gakar-scratch tops out
at 477 GiB`` and, later, *the gakar-scratch quota is 1070*); what it shares is the *name* of the
thing it is about: an identifier with separators (``gakar-scratch``, ``ingest/migrations/``,
``checkout-api.p99_ms``) or a named release (``Moklo 6.4``). ``anchors`` finds those names;
``slots`` the values of each shape a text states (numbers, dates, names of people, identifiers);
``changes_value`` says whether a later text names one of the earlier text's things and states
another value of a shape the earlier one had exactly one of. A name shared by many facts (a
source file every traceback prints) anchors nothing: the caller passes only the rare ones.

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

from abridged.engine.summarize.references import DATE, RATE_UNIT

__all__ = ["anchors", "changes_value", "choices", "lookup_keys", "related", "slots"]

#: A name with separators: ``gakar-scratch``, ``ingest/migrations/``, ``checkout-api.p99_ms``.
_SEPARATED = re.compile(r"(?<![\w@#$%/.:-])[A-Za-z][A-Za-z0-9]*(?:[-_/.][A-Za-z0-9]+)+/?(?![\w-])")
#: A capitalised name and its release number: ``Moklo 6.4``, ``Fenezun 2.1``.
_RELEASE = re.compile(r"\b[A-Z][a-z]{2,}\s+v?\d+(?:\.\d+)+\b")
#: A bare number or one with a unit (``477``, ``1,250``, ``6500ms``, ``$18,800``, ``85.75%``).
_NUMBER = re.compile(
    r"(?<![\w.,:/#@-])\$?((?>\d[\d,.]*\d|\d))"
    r"(?=(?:[A-Za-z%]{0,4}|/[a-z]{1,4})(?:[^\w.:/-]|[.:,]?$|[.,:]\s))"
)
#: A version of three parts or more (``7.43.20``, ``v6.18.9``).
_VERSION = re.compile(r"(?<![\w.])v?\d+\.\d+\.\d+(?:[-+.][0-9A-Za-z]+)*")
#: A person named by a capitalised word past the first one, or by a handle.
_HANDLE = re.compile(r"(?<![\w.])@[a-z][a-z0-9_-]{2,}\b")
_CAPITALISED = re.compile(r"(?<=[a-z0-9,;)]\s)([A-Z][a-z]{2,})\b(?![-./]\w)")
#: Capitalised words that name no one, even mid-sentence.
_NOT_NAME_WORDS = (
    "The This That These Those When Where What Which While With Without From Into Onto Over "
    "Under After Before Since Until Also Then Use Used Using Set See Note Please Correction "
    "Update Decision Done Fix Fixed Added Merge Author Date Status Error Warning Info Debug "
    "True False None Null Yes Monday Tuesday Wednesday Thursday Friday Saturday Sunday "
    "January February March April May June July August September October November December "
    "Python Docker Kafka Redis Postgres Slack Safari Chrome Linux"
)
_NOT_NAMES = frozenset(_NOT_NAME_WORDS.split())
#: The shortest separated name that anchors (shorter ones are words like ``a/b`` or ``v1.2``).
MIN_ANCHOR = 5
#: What a decision picks: the object of *use*, *go with*, *switch to*, *run on*, ... and the
#: subject of *X won* (``kovelio``, ``highmem-brasisas``): a value, even as a plain word.
_CHOICE = re.compile(
    r"\b(?:use|using|go with|going with|went with|switch(?:ed|ing)? to|migrat(?:e|ed|ing) to|"
    r"settled on|decided on|opt(?:ed)? for|picked|chose|choose|adopt(?:ed)?|stick with|"
    r"stay(?:ing)? with|runs? on|running on|prefer)\s+(?:the\s+)?([A-Za-z][\w.@/+-]*\w)|"
    r"\b([A-Za-z][\w.@/+-]*\w)\s+(?:won|wins|it is)\b",
    re.IGNORECASE,
)
#: Words a decision verb may take that pick nothing (*use it*, *go with what we had*).
_NOT_CHOICES = frozenset(
    [
        "a",
        "an",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "them",
        "what",
        "which",
        "our",
        "your",
        "their",
        "his",
        "her",
        "my",
        "same",
        "one",
        "other",
        "another",
        "both",
        "either",
        "something",
        "anything",
        "nothing",
        "whatever",
        "default",
        "defaults",
        "new",
        "old",
        "existing",
        "current",
        "latest",
        "earlier",
        "previous",
        "first",
        "second",
        "last",
    ]
)


def anchors(text: str) -> frozenset[str]:
    """The names ``text`` states of things (lower case): separated identifiers and named
    releases; not a date, a number or a version alone.

    >>> sorted(anchors("The gakar-scratch quota of Moklo 6.4 is 1070, see ingest/migrations/"))
    ['gakar-scratch', 'ingest/migrations', 'moklo 6.4']
    >>> anchors("The rauskkrau throttle is 6579 req/min.")
    frozenset()
    """
    found = {
        m.group().rstrip("/").lower()
        for m in _SEPARATED.finditer(text)
        if not RATE_UNIT.fullmatch(m.group())  # (``req/min`` is a unit: any limit's)
    }
    found.update(" ".join(m.group().split()).lower() for m in _RELEASE.finditer(text))
    return frozenset(
        a for a in found if len(a) >= MIN_ANCHOR and any(c.isalpha() for c in a.split(" ")[0])
    )


def slots(text: str) -> dict[str, frozenset[str]]:
    """The values ``text`` states, by shape: ``number`` (digits, commas dropped), ``date``,
    ``person`` (a capitalised word past the first, a handle), each as written but for that.
    What lies inside a name (``anchors``) is not a value of it.

    >>> found = slots("Correction: the gakar-scratch quota is 1,070, not 477 (ask Dmitri).")
    >>> {shape: sorted(values) for shape, values in found.items()}
    {'number': ['1070', '477'], 'person': ['Dmitri']}
    """
    rest = text
    for m in [*_SEPARATED.finditer(text), *_RELEASE.finditer(text)]:
        rest = rest.replace(m.group(), " ")
    dates = frozenset(m.group() for m in DATE.finditer(rest))
    rest = DATE.sub(" ", rest)
    versions = frozenset(m.group() for m in _VERSION.finditer(rest))
    rest = _VERSION.sub(" ", rest)
    out: dict[str, frozenset[str]] = {}
    if versions:
        out["version"] = versions
    numbers = frozenset(m.group(1).replace(",", "") for m in _NUMBER.finditer(rest))
    if numbers:
        out["number"] = numbers
    if dates:
        out["date"] = dates
    people = {m.group().lower() for m in _HANDLE.finditer(rest)}
    people.update(w for w in _CAPITALISED.findall(rest) if w not in _NOT_NAMES)
    if people:
        out["person"] = frozenset(people)
    picked = choices(text)
    if picked:
        out["choice"] = picked
    return out


def choices(text: str) -> frozenset[str]:
    """What ``text`` says a decision picks (lower case): the object of *use*, *go with*,
    *switch to*, *run on*, ... and the subject of *X won*; a plain word or a name.

    >>> sorted(choices("after the benchmark we go with bustysjs for seavus"))
    ['bustysjs']
    >>> sorted(choices("Use it as is; thokinflow won."))
    ['thokinflow']
    """
    found = {(m.group(1) or m.group(2)).lower() for m in _CHOICE.finditer(text)}
    return frozenset(c for c in found if len(c) >= 3 and c not in _NOT_CHOICES)


def related(a: str, b: str) -> bool:
    """Whether two names (``anchors``) name one thing: equal, or one the other's first parts
    (``upload-consumer`` and ``upload-consumer-primary``)."""
    if a == b:
        return True
    short, long = (a, b) if len(a) < len(b) else (b, a)
    if long.startswith(short) and long[len(short)] in _SEPARATORS:
        return True
    return long.endswith("." + short)  # a section's setting (``budget.cap_usd``, ``CAP_USD``)


def lookup_keys(name: str) -> list[str]:
    """``name`` and its leading parts of two or more (``upload-consumer-primary``,
    ``upload-consumer``): what a name is found by, so that related names find each other."""
    parts = re.split(r"([-_/.])", name)
    keys = [name]
    for end in range(3, len(parts) - 1, 2):
        prefix = "".join(parts[:end])
        if len(prefix) >= MIN_ANCHOR:
            keys.append(prefix)
    dots = name.split(".")
    keys.extend(tail for i in range(1, len(dots)) if len(tail := ".".join(dots[i:])) >= MIN_ANCHOR)
    return keys


_SEPARATORS = frozenset("-_/.")


def changes_value(
    new_names: Collection[str],
    new_slots: Mapping[str, frozenset[str]],
    old_names: Collection[str],
    old_slots: Mapping[str, frozenset[str]],
    rare: Collection[str],
) -> bool:
    """Whether a later fact (``new_names``, ``new_slots``) states another value for what an
    earlier one said: the two name a thing in common (related ``anchors``, the new one's among
    ``rare``), and of some shape the old one holds exactly one value, the new one holds a value
    it does not. Two facts that each name a thing the other does not are about two things.

    >>> rare = {"gakar-scratch", "ingest-svc"}
    >>> old = anchors("gakar-scratch tops out at 477 GiB"), slots("tops out at 477 GiB")
    >>> changes_value({"gakar-scratch"}, slots("quota is 1070"), *old, rare)
    True
    >>> changes_value({"ingest-svc"}, slots("quota is 1070"), *old, rare)
    False
    """
    shared_new = {a for a in new_names if a in rare and any(related(a, b) for b in old_names)}
    if not shared_new:
        return False
    shared_old = {b for b in old_names if any(related(a, b) for a in shared_new)}
    # A name a decision picks is the value said of the shared thing, not a second thing.
    picked = {*new_slots.get("choice", ()), *old_slots.get("choice", ())}
    own_new = {a for a in new_names if a in rare and a not in shared_new and a not in picked}
    own_old = {b for b in old_names if b not in shared_old and b not in picked}
    if own_new and own_old:
        return False  # each names something the other does not: two things
    for shape, before in old_slots.items():
        after = new_slots.get(shape, frozenset())
        if len(before) == 1 and after - before:
            return True
    return False
