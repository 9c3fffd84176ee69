"""Tests of provider usage normalisation: the context size is what the provider read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abridged.core.model import Usage
from abridged.errors import FormatError
from abridged.formats.usage import (
    usage_from_anthropic,
    usage_from_openai,
    usage_to_anthropic,
    usage_to_openai,
)


def test_openai_cached_tokens_are_inside_prompt_tokens() -> None:
    u = usage_from_openai(
        {
            "prompt_tokens": 6131,
            "completion_tokens": 88,
            "prompt_tokens_details": {"cached_tokens": 2036},
            "completion_tokens_details": {"reasoning_tokens": 10},
        }
    )
    assert u == Usage(input=4095, output=88, cache_read=2036, reasoning=10)
    assert u is not None and u.context_tokens == 6131


def test_openai_flat_and_responses_shapes() -> None:
    flat = usage_from_openai(
        {"prompt_tokens": 10, "completion_tokens": 2, "cached_tokens": 4, "reasoning_tokens": 1}
    )
    assert flat == Usage(input=6, output=2, cache_read=4, reasoning=1)
    responses = usage_from_openai(
        {
            "input_tokens": 50,
            "output_tokens": 5,
            "input_tokens_details": {"cached_tokens": 20},
            "output_tokens_details": {"reasoning_tokens": 3},
        }
    )
    assert responses == Usage(input=30, output=5, cache_read=20, reasoning=3)


def test_missing_or_garbage_usage() -> None:
    assert usage_from_openai(None) is None
    assert usage_from_openai({}) is None
    assert usage_from_anthropic(None) is None
    odd = usage_from_openai({"prompt_tokens": "x", "completion_tokens": -3, "cached_tokens": 9})
    assert odd == Usage()


def test_anthropic_parts_are_separate() -> None:
    u = usage_from_anthropic(
        {
            "input_tokens": 12,
            "output_tokens": 5,
            "cache_read_input_tokens": 900,
            "cache_creation_input_tokens": 40,
        }
    )
    assert u is not None and u.context_tokens == 952


@given(
    st.builds(
        Usage,
        st.integers(0, 10**7),
        st.integers(0, 10**6),
        st.integers(0, 10**7),
        st.integers(0, 10**6),
        st.integers(0, 10**5),
    )
)
def test_round_trips(u: Usage) -> None:
    assert usage_from_openai(usage_to_openai(u)) == u
    back = usage_from_anthropic(usage_to_anthropic(u))
    assert back is not None
    assert back.context_tokens == u.context_tokens
    assert (back.cache_read, back.cache_write, back.output) == (
        u.cache_read,
        u.cache_write,
        u.output,
    )


@pytest.mark.parametrize("reader", [usage_from_openai, usage_from_anthropic])
@pytest.mark.parametrize("report", [[1, 2], ["input_tokens"], "tokens", 12, 1.5, (("a", 1),)])
def test_a_usage_report_that_is_not_an_object_is_a_format_error(
    reader: Callable[[Any], Usage | None], report: object
) -> None:
    with pytest.raises(FormatError) as raised:
        reader(report)
    assert raised.value.expected == "usage: a JSON object"


def test_counts_out_of_range_are_zero() -> None:
    huge = usage_from_openai({"prompt_tokens": float("inf"), "completion_tokens": float("nan")})
    assert huge == Usage()
    assert usage_from_anthropic({"input_tokens": float("-inf"), "output_tokens": 3}) == Usage(
        output=3
    )
