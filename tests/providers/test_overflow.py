"""Tests for abridged.providers.overflow: overflow vs every other error, sizes, silent truncation,
SDK exceptions into abridged errors, and keys scrubbed from messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from abridged.errors import ContextOverflowError, ProviderError
from abridged.providers.overflow import (
    OverflowInfo,
    detect_silent_truncation,
    error_from_exception,
    is_context_overflow,
    scrub,
)

# One real error body per provider (wording and shape as the providers send them; numbers from
# public bug reports). (status, body, expected sizes: tokens, limit, input_tokens, output_tokens)
OVERFLOWS: dict[str, tuple[int | None, Any, dict[str, int | None]]] = {
    "openai": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 128000 tokens. However, your "
                "messages resulted in 204308 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
        {"tokens": 204308, "limit": 128000, "input_tokens": 204308},
    ),
    "openai-with-functions-and-completion": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 8192 tokens. However, you "
                "requested 8213 tokens (6683 in the messages, 730 in the functions, and 800 in "
                "the completion). Please reduce the length of the messages, functions, or "
                "completion.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
        {"tokens": 8213, "limit": 8192, "input_tokens": 7413, "output_tokens": 800},
    ),
    "openai-responses": (
        400,
        {
            "error": {
                "message": "Your input exceeds the context window of this model. Please adjust "
                "your input and try again.",
                "type": "invalid_request_error",
                "param": "input",
                "code": "context_length_exceeded",
            }
        },
        {"tokens": None, "limit": None},
    ),
    "azure-openai": (
        400,
        {
            "error": {
                "message": "Input tokens exceed the configured limit of 272000 tokens. Your "
                "messages resulted in 509178 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
        {"tokens": 509178, "limit": 272000},
    ),
    "azure-openai-gpt4-32k": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 32768 tokens. However, you "
                "requested 35969 tokens (9969 in the messages, 26000 in the completion). Please "
                "reduce the length of the messages or completion.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
        {"tokens": 35969, "limit": 32768, "input_tokens": 9969, "output_tokens": 26000},
    ),
    "anthropic": (
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 209353 tokens > 199999 maximum",
            },
            "request_id": "req_011CWAgPbMohjStFaYrkLZCm",
        },
        {"tokens": 209353, "limit": 199999, "input_tokens": 209353},
    ),
    "anthropic-input-plus-max-tokens": (
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "input length and `max_tokens` exceed context limit: 199759 + 8192 > "
                "200000, decrease input length or `max_tokens` and try again",
            },
        },
        {"tokens": 207951, "limit": 200000, "input_tokens": 199759, "output_tokens": 8192},
    ),
    "anthropic-413": (
        413,
        {
            "type": "error",
            "error": {
                "type": "request_too_large",
                "message": "Request exceeds the maximum allowed number of bytes.",
            },
        },
        {"tokens": None, "limit": None},
    ),
    "gemini": (
        400,
        [
            {
                "error": {
                    "code": 400,
                    "message": "The input token count (1200293) exceeds the maximum number of "
                    "tokens allowed (1048576).",
                    "errors": [
                        {
                            "message": "The input token count (1200293) exceeds the maximum "
                            "number of tokens allowed (1048576).",
                            "domain": "global",
                            "reason": "badRequest",
                        }
                    ],
                    "status": "INVALID_ARGUMENT",
                }
            }
        ],
        {"tokens": 1200293, "limit": 1048576},
    ),
    "bedrock": (
        400,
        {
            "message": "The model returned the following errors: Input is too long for requested "
            "model."
        },
        {"tokens": None, "limit": None},
    ),
    "vllm": (
        400,
        {
            "object": "error",
            "message": "This model's maximum context length is 131072 tokens. However, you "
            "requested 156632 tokens (152536 in the messages, 4096 in the completion). Please "
            "reduce the length of the messages or completion.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
        {"tokens": 156632, "limit": 131072, "input_tokens": 152536, "output_tokens": 4096},
    ),
    "vllm-input-tokens": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 32768 tokens. However, your "
                "request has 40000 input tokens. Please reduce the length of the input "
                "messages. (parameter=input_tokens, value=40000)",
                "type": "BadRequestError",
                "param": "input_tokens",
                "code": 400,
            }
        },
        {"tokens": 40000, "limit": 32768, "input_tokens": 40000},
    ),
    "ollama": (
        400,
        {"error": "prompt too long; exceeded max context length by 4096 tokens"},
        {"tokens": None, "limit": None},
    ),
    "ollama-input-length": (
        400,
        {"error": "the input length exceeds the context length"},
        {"tokens": None, "limit": None},
    ),
    "openrouter": (
        400,
        {
            "error": {
                "message": "This endpoint's maximum context length is 131072 tokens. However, you "
                "requested about 138956 tokens (7884 of text input, 131072 in the output). "
                'Please reduce the length of either one, or use the "middle-out" transform to '
                "compress your prompt automatically.",
                "code": 400,
                "metadata": {"provider_name": None},
            }
        },
        {"tokens": 138956, "limit": 131072, "input_tokens": 7884, "output_tokens": 131072},
    ),
    "mistral": (
        400,
        {
            "object": "error",
            "message": "Prompt contains 40101 tokens and 0 draft tokens, too large for model "
            "with 32768 maximum context length",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        },
        {"tokens": 40101, "limit": 32768},
    ),
    "groq": (
        400,
        {
            "error": {
                "message": "Please reduce the length of the messages or completion.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
        {"tokens": None, "limit": None},
    ),
    "deepseek": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 65536 tokens. However, you "
                "requested 66343 tokens (62247 in the messages, 4096 in the completion). Please "
                "reduce the length of the messages or completion.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_request_error",
            }
        },
        {"tokens": 66343, "limit": 65536, "input_tokens": 62247, "output_tokens": 4096},
    ),
    "proxy-413": (
        413,
        "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n"
        "<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>"
        "\r\n</body>\r\n</html>\r\n",
        {"tokens": None, "limit": None},
    ),
    "xai": (
        400,
        {
            "code": "Client specified an invalid argument",
            "error": "This model's maximum prompt length is 131072 but the request contains "
            "537812 tokens.",
        },
        {"tokens": 537812, "limit": 131072},
    ),
    "llama.cpp": (
        400,
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 4500,
                "n_ctx": 4096,
            }
        },
        {"tokens": 4500, "limit": 4096},
    ),
    "tgi": (
        422,
        {
            "error": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= "
            "65537. Given: 79993 `inputs` tokens and 1024 `max_new_tokens`",
            "error_type": "validation",
        },
        {"tokens": 81017, "limit": 65537, "input_tokens": 79993, "output_tokens": 1024},
    ),
}

# Errors that must NOT be read as an overflow: compacting would not help, or would make it worse.
NEAR_MISSES: dict[str, tuple[int | None, Any]] = {
    "openai-rate-limit-tpm": (
        429,
        {
            "error": {
                "message": "Request too large for gpt-4o in organization org-abc on tokens per "
                "min (TPM): Limit 30000, Requested 61337. The input or output tokens must be "
                "reduced in order to run successfully.",
                "type": "tokens",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        },
    ),
    "groq-413-tokens-per-minute": (
        413,
        {
            "error": {
                "message": "Request too large for model `llama-3.1-8b-instant` in organization "
                "`org_01abc` service tier `on_demand` on tokens per minute (TPM): Limit 6000, "
                "Requested 12328, please reduce your message size and try again.",
                "type": "tokens",
                "code": "rate_limit_exceeded",
            }
        },
    ),
    "bedrock-throttle": (429, {"message": "Too many tokens, please wait before trying again."}),
    "bedrock-throttle-no-status": (
        None,
        "ThrottlingException: Too many tokens, please wait before trying again.",
    ),
    "openai-max-tokens-too-large": (
        400,
        {
            "error": {
                "message": "max_tokens is too large: 200000. This model supports at most 16384 "
                "completion tokens, whereas you provided 200000.",
                "type": "invalid_request_error",
                "param": "max_tokens",
                "code": "invalid_value",
            }
        },
    ),
    "anthropic-max-tokens-too-large": (
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "max_tokens: 10000 > 4096, which is the maximum allowed number of "
                "output tokens for claude-3-5-sonnet-20240620",
            },
        },
    ),
    "content-policy": (
        400,
        {
            "error": {
                "message": "Invalid prompt: your prompt was flagged as potentially violating our "
                "usage policy. Please try again with a different prompt.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_prompt",
            }
        },
    ),
    "openai-invalid-api-key": (
        401,
        {
            "error": {
                "message": "Incorrect API key provided: sk-proj-****1234. You can find your API "
                "key at https://platform.openai.com/account/api-keys.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        },
    ),
    "anthropic-invalid-api-key": (
        401,
        {
            "type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"},
        },
    ),
    "bad-tool-schema": (
        400,
        {
            "error": {
                "message": "Invalid schema for function 'search': In context=('properties', "
                "'query'), array schema missing items.",
                "type": "invalid_request_error",
                "param": "tools[0].function.parameters",
                "code": "invalid_function_parameters",
            }
        },
    ),
    "openai-pairing": (
        400,
        {
            "error": {
                "message": "Invalid parameter: messages with role 'tool' must be a response to a "
                "preceeding message with 'tool_calls'.",
                "type": "invalid_request_error",
                "param": "messages.[3].role",
                "code": None,
            }
        },
    ),
    "anthropic-pairing": (
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` "
                "blocks: toolu_01. Each `tool_result` block must have a corresponding `tool_use` "
                "block in the previous message.",
            },
        },
    ),
    "anthropic-too-many-cache-breakpoints": (
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "A maximum of 4 blocks with cache_control may be provided. Found 5.",
            },
        },
    ),
    "anthropic-thinking-budget": (
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "`max_tokens` must be greater than `thinking.budget_tokens`.",
            },
        },
    ),
    "anthropic-overloaded": (
        529,
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ),
    "openai-quota": (
        429,
        {
            "error": {
                "message": "You exceeded your current quota, please check your plan and billing "
                "details.",
                "type": "insufficient_quota",
                "param": None,
                "code": "insufficient_quota",
            }
        },
    ),
    "gemini-resource-exhausted": (
        429,
        {
            "error": {
                "code": 429,
                "message": "Resource has been exhausted (e.g. check quota).",
                "status": "RESOURCE_EXHAUSTED",
            }
        },
    ),
    "ollama-context-deadline": (500, {"error": "context deadline exceeded"}),
    "context-in-unrelated-text": (
        400,
        {
            "error": {
                "message": "Cached content is too small. total_token_count=1000, "
                "min_total_token_count=4096 (context caching needs a larger context)",
                "status": "INVALID_ARGUMENT",
            }
        },
    ),
    "overflow-wording-under-429": (
        429,
        {"error": {"message": "prompt is too long: 300000 tokens > 200000 maximum"}},
    ),
    "plain-500": (500, {"error": {"message": "The server had an error while processing."}}),
    # overflow words, but a rate limit: only the guards keep these out
    "proxy-rate-limit-mentioning-context-window": (
        400,
        {
            "error": {
                "message": "Rate limit reached: this request exceeds the context window "
                "quota of your key for this minute"
            }
        },
    ),
    "per-minute-limit-with-configured-limit-wording": (
        400,
        {
            "error": {
                "message": "Input tokens exceed the configured limit of 30000 tokens per minute.",
                "code": "rate_limit_exceeded",
            }
        },
    ),
}


@pytest.mark.parametrize("provider", sorted(OVERFLOWS))
def test_each_providers_overflow_is_recognised_with_its_sizes(provider: str) -> None:
    status, body, sizes = OVERFLOWS[provider]
    info = is_context_overflow((status, body))
    assert isinstance(info, OverflowInfo), provider
    assert info.status == status
    for key, expected in sizes.items():
        assert getattr(info, key) == expected, (provider, key)
    assert info.message


@pytest.mark.parametrize("provider", sorted(OVERFLOWS))
def test_the_body_as_raw_json_text_reads_the_same(provider: str) -> None:
    status, body, sizes = OVERFLOWS[provider]
    text = body if isinstance(body, str) else json.dumps(body)
    info = is_context_overflow((status, text.encode()))
    assert info is not None
    assert info.tokens == sizes.get("tokens")
    assert info.limit == sizes.get("limit")


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_near_misses_are_not_overflows(case: str) -> None:
    status, body = NEAR_MISSES[case]
    assert is_context_overflow((status, body)) is None


def test_a_message_string_alone_is_read() -> None:
    info = is_context_overflow("prompt is too long: 213462 tokens > 200000 maximum")
    assert info is not None and (info.tokens, info.limit) == (213462, 200000)
    assert is_context_overflow("the model refused") is None
    assert is_context_overflow(None) is None
    assert is_context_overflow({"status": 400}) is None


def test_413_counts_only_without_a_rate_limit_and_400_without_words_does_not() -> None:
    assert is_context_overflow((413, "")) is not None
    assert is_context_overflow((413, None)) is not None
    assert is_context_overflow((400, "")) is None
    assert is_context_overflow((400, {"error": {"message": "Bad Request"}})) is None


# -- silent truncation ---------------------------------------------------------------------------


def test_reported_input_above_the_window_is_flagged() -> None:
    found = detect_silent_truncation(40_000, 39_000, 32_768)
    assert found is not None and found.reason == "above_window"
    assert found.reported == 40_000 and found.window == 32_768


def test_reported_input_far_below_what_was_sent_is_flagged() -> None:
    # Ollama with num_ctx=2048 keeps the last 2,048 tokens of a 9,000-token prompt
    found = detect_silent_truncation(2_048, 9_000, None)
    assert found is not None and found.reason == "far_below_sent"


def test_estimator_error_and_small_prompts_are_not_truncation() -> None:
    assert detect_silent_truncation(7_000, 9_000, 32_768) is None  # estimate 30 % high
    assert detect_silent_truncation(100, 600, 32_768) is None  # too small to judge
    assert detect_silent_truncation(None, 9_000, 32_768) is None
    assert detect_silent_truncation(0, 9_000, 32_768) is None
    assert detect_silent_truncation(32_768, 33_000, 32_768) is None  # at the window exactly


def test_truncation_tolerance_is_validated_and_used() -> None:
    assert detect_silent_truncation(5_000, 9_000, None, tolerance=0.3) is not None
    assert detect_silent_truncation(5_000, 9_000, None, tolerance=0.5) is None
    with pytest.raises(ValueError, match="tolerance"):
        detect_silent_truncation(5_000, 9_000, None, tolerance=1.5)


# -- SDK exceptions ------------------------------------------------------------------------------

KEY = "sk-test-SECRETSECRETSECRET-0123456789"


def _openai_error(status: int, body: Any, cls: str = "APIStatusError") -> BaseException:
    import httpx2
    import openai

    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx2.Response(status, request=request, json=body)
    error_cls = getattr(openai, cls)
    return error_cls(f"Error code: {status} - {body}", response=response, body=body)  # type: ignore[no-any-return]


def _anthropic_error(status: int, body: Any, cls: str = "APIStatusError") -> BaseException:
    import anthropic
    import httpx2

    request = httpx2.Request("POST", "http://127.0.0.1/v1/messages")
    response = httpx2.Response(status, request=request, json=body)
    error_cls = getattr(anthropic, cls)
    return error_cls(f"{body}", response=response, body=body)  # type: ignore[no-any-return]


def test_openai_overflow_exception_becomes_context_overflow_error() -> None:
    _, body, _ = OVERFLOWS["openai"]
    error = _openai_error(400, body["error"], "BadRequestError")  # the SDK keeps body["error"]
    mapped = error_from_exception(error, provider="openai", model="gpt-4.1", secrets=[KEY])
    assert isinstance(mapped, ContextOverflowError)
    assert (mapped.tokens, mapped.limit) == (204308, 128000)
    assert mapped.context["provider"] == "openai"
    assert mapped.context["status"] == 400


def test_anthropic_overflow_exception_becomes_context_overflow_error() -> None:
    _, body, _ = OVERFLOWS["anthropic"]
    mapped = error_from_exception(
        _anthropic_error(400, body, "BadRequestError"), provider="anthropic", secrets=[KEY]
    )
    assert isinstance(mapped, ContextOverflowError)
    assert (mapped.tokens, mapped.limit) == (209353, 199999)


def test_a_413_status_error_becomes_context_overflow_error() -> None:
    mapped = error_from_exception(_openai_error(413, {"error": "too big"}), provider="proxy")
    assert isinstance(mapped, ContextOverflowError)
    assert mapped.context["rule"] == "http-413"


def test_other_400_becomes_provider_error_with_status_and_code() -> None:
    _, body = NEAR_MISSES["bad-tool-schema"]
    mapped = error_from_exception(
        _openai_error(400, body["error"], "BadRequestError"), provider="openai", model="m"
    )
    assert type(mapped) is ProviderError
    assert mapped.context["status"] == 400
    assert mapped.context["code"] == "invalid_function_parameters"
    assert mapped.context["retryable"] is False
    assert "Invalid schema for function" in str(mapped)


def test_rate_limit_is_a_retryable_provider_error() -> None:
    _, body = NEAR_MISSES["openai-rate-limit-tpm"]
    mapped = error_from_exception(_openai_error(429, body["error"], "RateLimitError"), provider="x")
    assert type(mapped) is ProviderError
    assert mapped.context["retryable"] is True


def test_timeout_becomes_a_clear_provider_error() -> None:
    import httpx2
    import openai

    error = openai.APITimeoutError(request=httpx2.Request("POST", "http://127.0.0.1/v1"))
    mapped = error_from_exception(error, provider="openai", model="gpt-4.1", timeout=30)
    assert type(mapped) is ProviderError
    assert "timed out after 30 s" in str(mapped)
    assert mapped.context["timeout"] is True


def test_errors_that_are_not_from_an_sdk_are_returned_unchanged() -> None:
    bug = KeyError("oops")
    assert error_from_exception(bug, provider="openai") is bug
    own = ProviderError("already mapped")
    assert error_from_exception(own, provider="openai") is own


def test_an_anthropic_error_event_inside_a_stream_gets_its_status_from_the_type() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    mapped = error_from_exception(_anthropic_error(200, body), provider="anthropic")
    assert type(mapped) is ProviderError
    assert mapped.context["status"] == 529
    assert mapped.context["retryable"] is True


def test_the_key_never_reaches_the_error_message() -> None:
    body = {
        "error": {
            "message": f"Incorrect API key provided: {KEY}. You can find your API key at ...",
            "code": "invalid_api_key",
        }
    }
    mapped = error_from_exception(
        _openai_error(401, body["error"], "AuthenticationError"), provider="openai", secrets=[KEY]
    )
    assert KEY not in str(mapped) and KEY not in repr(mapped)
    assert "[redacted]" in str(mapped)
    assert mapped.__cause__ is None


def test_scrub_removes_given_secrets_and_key_shapes() -> None:
    assert scrub("token abc123secret here", ["abc123secret"]) == "token [redacted] here"
    assert "sk-ant-api03" not in scrub("bad key sk-ant-api03-AAAAAAAAAAAA")
    assert "supersecrettoken" not in scrub("Authorization: Bearer supersecrettoken")
    assert scrub("nothing secret", ["", None]) == "nothing secret"


@pytest.mark.parametrize("word", ["quota", "overloaded", "rate limit", "tokens per minute"])
def test_an_explicit_overflow_code_wins_over_words_in_the_body(word: str) -> None:
    # the message can quote the prompt back, or name a tool, with any word in it
    body = {
        "error": {
            "message": f"This request exceeds the context window (the {word} tool said: ...).",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
    info = is_context_overflow((400, body))
    assert info is not None
    # the same words without the code are still a near miss
    body["error"]["code"] = None
    assert is_context_overflow((400, body)) is None
    # and a code that says rate limit or quota still vetoes
    body["error"]["code"] = "context_length_exceeded"
    body["error"]["type"] = "insufficient_quota"
    assert is_context_overflow((400, body)) is None


def test_a_rate_limit_code_wins_over_overflow_words_in_the_message() -> None:
    """A quota or rate-limit code says what the error is, whatever its message looks like
    (here Gemini's overflow wording under a per-minute token limit)."""
    message = "The input token count (9000) exceeds the maximum number of tokens allowed (8192)."
    limited = {"error": {"code": "rate_limit_tokens", "message": message}}
    assert is_context_overflow((400, limited)) is None
    plain = {"error": {"code": "invalid_argument", "message": message}}
    info = is_context_overflow((400, plain))
    assert info is not None and info.tokens == 9000 and info.limit == 8192


# -- held-out wordings ---------------------------------------------------------------------------

_HELD_OUT = json.loads(
    (Path(__file__).parent / "data" / "overflow_heldout.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", sorted(_HELD_OUT["overflow"]))
def test_held_out_overflow_wordings_are_recognised(case: str) -> None:
    status, body = _HELD_OUT["overflow"][case]
    info = is_context_overflow((status, body))
    assert info is not None, case


@pytest.mark.parametrize("case", sorted(_HELD_OUT["near_miss"]))
def test_held_out_near_misses_are_not_overflows(case: str) -> None:
    status, body = _HELD_OUT["near_miss"][case]
    assert is_context_overflow((status, body)) is None, case


def test_a_200_is_never_an_overflow_whatever_it_says() -> None:
    said = {"error": {"message": "prompt is too long: 9000 tokens > 8192 maximum"}}
    assert is_context_overflow((400, said)) is not None
    assert is_context_overflow((200, said)) is None
    assert is_context_overflow((204, said)) is None


def test_signal_sizes_are_read_from_a_comparison() -> None:
    info = is_context_overflow(
        (400, {"error": {"message": "The prompt is too long: 131000 tokens > 65536 tokens."}})
    )
    assert info is not None and (info.tokens, info.limit) == (131000, 65536)
