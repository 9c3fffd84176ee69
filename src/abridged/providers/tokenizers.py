"""Exact token counts from a real tokenizer when its encoding is on the machine, else the estimate.

Never downloads anything. Backends, tried in order:

- ``toktok`` (package ``toktok-rs``, extra ``exact``): the encodings ``o200k_base``,
  ``cl100k_base``, ``o200k_harmony`` and ``qwen3.5`` are embedded in the package.
- ``tiktoken``, only when it is installed *and* the encoding file is already in its cache
  directory (``TIKTOKEN_CACHE_DIR``, else ``DATA_GYM_CACHE_DIR``, else ``<tmp>/data-gym-cache``,
  under tiktoken's own cache name, the SHA-1 of the file's URL). tiktoken ships no encodings and
  would otherwise fetch them over the network.

When neither can count the encoding, ``load_tokenizer`` returns ``None`` and ``text_counter``
returns the estimator (``abridged.core.tokens.estimate_text_tokens``) behind the same interface,
silently; ``source`` always says which one counts: ``"o200k_base (toktok)"``,
``"o200k_base (tiktoken)"`` or ``"estimate"``.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from abridged.core.protocols import Tokenizer
from abridged.core.tokens import ESTIMATE_SOURCE, estimate_text_tokens

DEFAULT_ENCODING = "o200k_base"
BACKENDS: tuple[str, ...] = ("toktok", "tiktoken")

# Where tiktoken fetches each encoding from; its cache file is named by the SHA-1 of this URL.
_TIKTOKEN_URLS: Mapping[str, str] = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "p50k_base": "https://openaipublic.blob.core.windows.net/encodings/p50k_base.tiktoken",
    "r50k_base": "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken",
}


class ToktokTokenizer:
    """Exact counts with ``toktok`` (encodings embedded in the package)."""

    def __init__(self, encoding: str, module: Any) -> None:
        self.encoding = encoding
        self._toktok = module

    @property
    def source(self) -> str:
        return f"{self.encoding} (toktok)"

    def count(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        return [int(n) for n in self._toktok.batch_count(list(texts), self.encoding)]


class TiktokenTokenizer:
    """Exact counts with ``tiktoken``, from an encoding already in its cache."""

    def __init__(self, encoding: str, enc: Any) -> None:
        self.encoding = encoding
        self._enc = enc

    @property
    def source(self) -> str:
        return f"{self.encoding} (tiktoken)"

    def count(self, texts: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self._enc.encode_ordinary_batch(list(texts))]


class EstimateTokenizer:
    """The estimator behind the ``Tokenizer`` interface (what is used when nothing exact is)."""

    @property
    def source(self) -> str:
        return ESTIMATE_SOURCE

    def count(self, texts: Sequence[str]) -> list[int]:
        return [estimate_text_tokens(t) for t in texts]


def tiktoken_cache_file(encoding: str, env: Mapping[str, str] | None = None) -> Path | None:
    """Where tiktoken would find ``encoding`` without a download, or ``None`` for an encoding
    abridged does not know the URL of."""
    url = _TIKTOKEN_URLS.get(encoding)
    if url is None:
        return None
    env = os.environ if env is None else env
    cache_dir = env.get("TIKTOKEN_CACHE_DIR") or env.get("DATA_GYM_CACHE_DIR")
    base = Path(cache_dir) if cache_dir else Path(tempfile.gettempdir()) / "data-gym-cache"
    return base / hashlib.sha1(url.encode()).hexdigest()


def _load_toktok(encoding: str) -> Tokenizer | None:
    try:
        module = importlib.import_module("toktok")
        module.batch_count(["probe"], encoding)  # raises for an encoding it does not embed
    except Exception:  # not installed, or no such encoding
        return None
    return ToktokTokenizer(encoding, module)


def _load_tiktoken(encoding: str, env: Mapping[str, str] | None) -> Tokenizer | None:
    cache_file = tiktoken_cache_file(encoding, env)
    if cache_file is None or not cache_file.is_file():
        return None  # tiktoken would download it: never at run time
    try:
        module = importlib.import_module("tiktoken")
    except ImportError:
        return None
    previous = os.environ.get("TIKTOKEN_CACHE_DIR")
    try:
        # Point tiktoken at the directory we checked (it reads the variable at load time).
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_file.parent)
        enc = module.get_encoding(encoding)
        enc.encode_ordinary("probe")
    except Exception:  # corrupt or hash-mismatched cache: tiktoken would re-fetch; we do not
        return None
    finally:
        if previous is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = previous
    return TiktokenTokenizer(encoding, enc)


def load_tokenizer(
    encoding: str = DEFAULT_ENCODING,
    *,
    backends: Sequence[str] = BACKENDS,
    env: Mapping[str, str] | None = None,
) -> Tokenizer | None:
    """An exact tokenizer for ``encoding`` from the first backend that has it offline, or
    ``None``. ``backends`` chooses which to try (``()`` tries none); ``env`` replaces the
    environment when looking for tiktoken's cache."""
    for backend in backends:
        tokenizer: Tokenizer | None = None
        if backend == "toktok":
            tokenizer = _load_toktok(encoding)
        elif backend == "tiktoken":
            tokenizer = _load_tiktoken(encoding, env)
        else:
            raise ValueError(f"unknown tokenizer backend {backend!r}: expected one of {BACKENDS}")
        if tokenizer is not None:
            return tokenizer
    return None


def text_counter(
    encoding: str = DEFAULT_ENCODING,
    *,
    backends: Sequence[str] = BACKENDS,
    env: Mapping[str, str] | None = None,
) -> Tokenizer:
    """The exact tokenizer when available (see ``load_tokenizer``), else the estimator; its
    ``source`` says which.

    >>> text_counter(backends=()).source
    'estimate'
    """
    return load_tokenizer(encoding, backends=backends, env=env) or EstimateTokenizer()
