"""Text as a reader sees it: NFKC, invisible characters dropped, with a map back to the original.

Shared by the tag escaper (``transcript.escape_tags``) and the redactor (``redact.redact``), so
that a tag or a secret written with fullwidth letters or broken up by a zero-width space is
found by both, the same way.
"""

from __future__ import annotations

import unicodedata

# Characters a reader does not see (zero-width, joiners, bidi controls, variation selectors,
# fillers): dropped before matching, so ``<\u200b/conversation>`` is still a tag.
_INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0") | frozenset(
    map(chr, [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)])
)


class _Fold(dict[int, str]):
    """``str.translate`` table folding each character as a reader sees it: NFKC (fullwidth
    ``＜`` and letters become ASCII) with invisible characters dropped; filled on demand."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        folded = "".join(
            c
            for c in unicodedata.normalize("NFKC", char)
            if c not in _INVISIBLE and unicodedata.category(c) != "Cf"
        )
        self[code] = folded
        return folded


_FOLD = _Fold()


def fold(text: str) -> str:
    """``text`` as a reader (or a model) sees it: NFKC, character by character, with zero-width
    and other invisible formatting characters dropped.

    >>> fold("\uff33\uff2b-\u200bproj")
    'SK-proj'
    """
    return text if text.isascii() else text.translate(_FOLD)


def fold_with_origin(text: str) -> tuple[str, list[int]]:
    """``fold(text)`` and, for each of its characters, the index in ``text`` of the character
    it came from (a character folding to several gives each of them its index; a dropped one
    gives none)."""
    if text.isascii():
        return text, list(range(len(text)))
    pieces: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        folded = _FOLD[ord(char)]
        pieces.append(folded)
        origin.extend([index] * len(folded))
    return "".join(pieces), origin


__all__ = ["fold", "fold_with_origin"]
