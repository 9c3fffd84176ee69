"""Embeddings for session search: an offline hashing embedder (the protocol is in the core)."""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections.abc import Sequence

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Words too common to tell summaries apart (English; other languages keep all their words).
_STOP_WORDS = (
    "a an and are as at be but by for from has have i in is it its of on or so that the their "
    "then this to was we were what when which while with you your"
)
_STOP = frozenset(_STOP_WORDS.split())
_WEIGHT = {"w": 1.0, "b": 0.7, "c": 0.15}


def _tokens(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


class HashingEmbedder:
    """Feature hashing of words, word pairs and character trigrams into a fixed-size vector.

    Needs no model, no download and no dependency; deterministic across processes and machines
    (blake2b, not Python's salted ``hash``), so stored vectors stay comparable. It captures shared
    vocabulary (identifiers, paths, topics, word stems), not synonyms: a semantic embedder can be
    plugged in through the ``Embedder`` protocol.
    """

    def __init__(self, dimensions: int = 512) -> None:
        if dimensions < 8:
            raise ValueError(f"dimensions must be >= 8, got {dimensions}")
        self._dimension = dimensions
        self._name = f"hashing-v1-{dimensions}"

    @property
    def name(self) -> str:
        """``hashing-v1-<dimensions>``."""
        return self._name

    @property
    def dimension(self) -> int:
        """The length of every vector."""
        return self._dimension

    def _features(self, text: str) -> dict[str, float]:
        words = [w for w in _tokens(text) if w not in _STOP]
        counts: dict[str, float] = {}
        for w in words:
            counts["w:" + w] = counts.get("w:" + w, 0.0) + 1.0
            if len(w) >= 4:  # shared stems: "migrate" ~ "migration"
                padded = f"#{w}#"
                for i in range(len(padded) - 2):
                    key = "c:" + padded[i : i + 3]
                    counts[key] = counts.get(key, 0.0) + 1.0
        for a, b in itertools.pairwise(words):
            counts[f"b:{a} {b}"] = counts.get(f"b:{a} {b}", 0.0) + 1.0
        return {k: _WEIGHT[k[0]] * (1.0 + math.log(n)) for k, n in counts.items()}

    def embed_one(self, text: str) -> list[float]:
        """The unit-length vector of one text (all zeros for a text without words)."""
        vector = [0.0] * self._dimension
        for feature, value in self._features(text).items():
            digest = hashlib.blake2b(
                feature.encode("utf-8", "surrogatepass"), digest_size=8
            ).digest()
            index = int.from_bytes(digest[:4], "little") % self._dimension
            vector[index] += value if digest[4] & 1 else -value
        norm = math.sqrt(sum(v * v for v in vector))
        return [v / norm for v in vector] if norm else vector

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text."""
        return [self.embed_one(t) for t in texts]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0 when either vector is zero or their sizes differ."""
    if len(a) != len(b):
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0
