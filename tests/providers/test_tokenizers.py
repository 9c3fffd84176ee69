"""Tests of exact token counting (toktok, tiktoken from a local cache) and its silent fallback."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from abridged.core.model import Message
from abridged.core.protocols import Tokenizer
from abridged.core.tokens import MESSAGE_OVERHEAD, TokenCounter, estimate_text_tokens
from abridged.providers.tokenizers import (
    EstimateTokenizer,
    load_tokenizer,
    text_counter,
    tiktoken_cache_file,
)

# o200k_base counts of known strings.
KNOWN = {
    "hello world": 2,
    "The quick brown fox jumps over the lazy dog.": 10,
    "你好，世界": 3,
    '{"key": [1, 2, 3]}': 12,
    "": 0,
}


def test_toktok_gives_o200k_exact_counts() -> None:
    pytest.importorskip("toktok")
    tokenizer = load_tokenizer("o200k_base", backends=("toktok",))
    assert tokenizer is not None
    assert isinstance(tokenizer, Tokenizer)
    assert tokenizer.source == "o200k_base (toktok)"
    assert tokenizer.count(list(KNOWN)) == list(KNOWN.values())
    assert tokenizer.count([]) == []
    counter = text_counter()
    assert counter.source == "o200k_base (toktok)"


def test_other_embedded_encodings() -> None:
    pytest.importorskip("toktok")
    tokenizer = load_tokenizer("cl100k_base", backends=("toktok",))
    assert tokenizer is not None
    assert tokenizer.source == "cl100k_base (toktok)"
    assert tokenizer.count(["hello world"]) == [2]


def test_fallback_to_the_estimate_says_so() -> None:
    # No backend allowed: as on a machine without toktok nor a tiktoken cache.
    assert load_tokenizer(backends=()) is None
    counter = text_counter(backends=())
    assert isinstance(counter, EstimateTokenizer)
    assert counter.source == "estimate"
    texts = list(KNOWN)
    assert counter.count(texts) == [estimate_text_tokens(t) for t in texts]


def test_unknown_encoding_falls_back() -> None:
    assert load_tokenizer("no_such_encoding", backends=("toktok",)) is None
    assert text_counter("no_such_encoding").source == "estimate"


def test_tiktoken_is_used_only_from_an_existing_cache(tmp_path: Path) -> None:
    env = {"TIKTOKEN_CACHE_DIR": str(tmp_path)}
    expected = hashlib.sha1(
        b"https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    ).hexdigest()
    assert tiktoken_cache_file("o200k_base", env) == tmp_path / expected
    assert tiktoken_cache_file("unknown_encoding", env) is None
    # The cache is empty: tiktoken would download, so it is not used (whether installed or not).
    assert load_tokenizer("o200k_base", backends=("tiktoken",), env=env) is None
    assert text_counter("o200k_base", backends=("tiktoken",), env=env).source == "estimate"
    # A corrupt cache file is not trusted either.
    (tmp_path / expected).write_text("not an encoding")
    assert load_tokenizer("o200k_base", backends=("tiktoken",), env=env) is None


def test_default_cache_dir_is_the_data_gym_cache(tmp_path: Path) -> None:
    path = tiktoken_cache_file("cl100k_base", {})
    assert path is not None
    assert path.parent.name == "data-gym-cache"
    other = tiktoken_cache_file("cl100k_base", {"DATA_GYM_CACHE_DIR": str(tmp_path)})
    assert other is not None
    assert other.parent == tmp_path


def test_unknown_backend_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown tokenizer backend"):
        load_tokenizer(backends=("sentencepiece",))


def test_token_counter_counts_exactly_with_a_tokenizer() -> None:
    pytest.importorskip("toktok")
    tokenizer = load_tokenizer("o200k_base", backends=("toktok",))
    assert tokenizer is not None
    counter = TokenCounter(tokenizer=tokenizer)
    assert counter.source == "o200k_base (toktok)"
    message = Message.user("The quick brown fox jumps over the lazy dog.")
    assert counter.message_tokens(message) == 10 + MESSAGE_OVERHEAD
    assert TokenCounter().source == "estimate"
    assert TokenCounter(tokenizer=text_counter(backends=())).source == "estimate"
