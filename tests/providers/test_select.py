"""Tests for abridged.providers.select: model strings pick the adapter, keys come from the right
environment variable only, and never show in reprs or errors."""

from __future__ import annotations

import sys

import pytest

from abridged.core.protocols import ChatModel
from abridged.errors import ProviderError, SettingError
from abridged.providers.anthropic import AnthropicChatModel
from abridged.providers.openai import OpenAIChatModel
from abridged.providers.select import chat_model_from_string

OPENAI_KEY = "sk-openai-SECRETSECRETSECRET-0001"
OTHER_KEY = "other-SECRETSECRETSECRET-0002"

_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "OPENAI_API_VERSION",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "MISTRAL_API_KEY",
    "OLLAMA_BASE_URL",
    "ABRIDGED_BASE_URL",
    "ABRIDGED_API_KEY",
    "OPENROUTER_BASE_URL",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)


def _key(model: ChatModel) -> str:
    client = model._client
    return str(client.api_key)


def test_openai_prefix_reads_openai_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    model = chat_model_from_string("openai/gpt-4.1", temperature=0)
    assert isinstance(model, OpenAIChatModel)
    assert (model.name, model.api, model.provider) == ("gpt-4.1", "chat", "openai")
    assert _key(model) == OPENAI_KEY
    assert model.defaults == {"temperature": 0}
    assert OPENAI_KEY not in repr(model)


def test_openai_responses_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    model = chat_model_from_string("openai-responses/gpt-5")
    assert isinstance(model, OpenAIChatModel) and model.api == "responses"


def test_anthropic_prefix_and_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", OTHER_KEY)
    model = chat_model_from_string("anthropic/claude-sonnet-4-5", thinking="high", cache=False)
    assert isinstance(model, AnthropicChatModel)
    assert (model.name, model.thinking, model.cache) == ("claude-sonnet-4-5", "high", False)
    assert _key(model) == OTHER_KEY
    assert OTHER_KEY not in repr(model)


def test_base_url_hash_model_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    model = chat_model_from_string("http://localhost:8000/v1#Qwen/Qwen3-8B")
    assert isinstance(model, OpenAIChatModel)
    assert model.name == "Qwen/Qwen3-8B"
    assert model.base_url == "http://localhost:8000/v1"
    assert model.provider == "openai-compatible"
    assert _key(model) != OPENAI_KEY  # the OpenAI key never goes to another host
    monkeypatch.setenv("ABRIDGED_API_KEY", OTHER_KEY)
    assert _key(chat_model_from_string("http://localhost:8000/v1#m")) == OTHER_KEY


def test_plain_name_with_base_url_argument_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    model = chat_model_from_string("my-model", base_url="http://127.0.0.1:9/v1")
    assert isinstance(model, OpenAIChatModel) and model.base_url == "http://127.0.0.1:9/v1"
    monkeypatch.setenv("ABRIDGED_BASE_URL", "http://10.0.0.2:8000/v1")
    model = chat_model_from_string("my-model")
    assert isinstance(model, OpenAIChatModel) and model.base_url == "http://10.0.0.2:8000/v1"


def test_compatible_providers_use_their_own_key_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("OPENROUTER_API_KEY", OTHER_KEY)
    model = chat_model_from_string("openrouter/anthropic/claude-3.5-sonnet")
    assert isinstance(model, OpenAIChatModel)
    assert model.name == "anthropic/claude-3.5-sonnet"
    assert model.base_url == "https://openrouter.ai/api/v1"
    assert model.provider == "openrouter"
    assert _key(model) == OTHER_KEY
    groq = chat_model_from_string("groq/llama-3.3-70b-versatile")  # GROQ_API_KEY not set
    assert _key(groq) not in (OPENAI_KEY, OTHER_KEY)
    assert groq.base_url == "https://api.groq.com/openai/v1"


def test_ollama_default_and_override(monkeypatch: pytest.MonkeyPatch) -> None:
    model = chat_model_from_string("ollama/llama3.1")
    assert model.base_url == "http://localhost:11434/v1"
    assert model.max_tokens_param == "max_tokens"
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://gpu-box:11434/v1")
    assert chat_model_from_string("ollama/llama3.1").base_url == "http://gpu-box:11434/v1"


def test_azure_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SettingError, match="AZURE_OPENAI_ENDPOINT"):
        chat_model_from_string("azure/my-deployment")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", OTHER_KEY)
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    model = chat_model_from_string("azure/my-deployment")
    assert isinstance(model, OpenAIChatModel)
    assert model.provider == "azure-openai" and model.name == "my-deployment"
    assert type(model._client).__name__ == "AsyncAzureOpenAI"
    assert OTHER_KEY not in repr(model)


def test_bare_names_of_known_families(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", OTHER_KEY)
    assert isinstance(chat_model_from_string("gpt-4.1-mini"), OpenAIChatModel)
    assert isinstance(chat_model_from_string("o3"), OpenAIChatModel)
    assert isinstance(chat_model_from_string("claude-3-5-haiku-latest"), AnthropicChatModel)


@pytest.mark.parametrize("spec", ["", "   ", "mystery-model", "http://localhost:8000/v1", "x/"])
def test_unknown_forms_raise_setting_error_naming_the_forms(spec: str) -> None:
    with pytest.raises(SettingError) as caught:
        chat_model_from_string(spec)
    assert "model" in str(caught.value)


def test_missing_key_errors_name_the_variable_not_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        chat_model_from_string("openai/gpt-4.1")
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY"):
        chat_model_from_string("anthropic/claude-sonnet-4-5")


def test_explicit_key_wins_and_stays_out_of_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    model = chat_model_from_string("openai/gpt-4.1", api_key=OTHER_KEY)
    assert _key(model) == OTHER_KEY
    assert OTHER_KEY not in repr(model) and OTHER_KEY not in str(model)


def test_litellm_prefix_without_litellm_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "litellm", None)
    with pytest.raises(ProviderError, match=r"pip install 'abridged\[litellm\]'"):
        chat_model_from_string("litellm/gemini/gemini-2.5-pro")


async def test_http_client_aiohttp_reaches_the_openai_and_anthropic_sdks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import anthropic
    import openai

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    compatible = chat_model_from_string("http://127.0.0.1:9/v1#m", http_client="aiohttp")
    claude = chat_model_from_string("anthropic/claude-sonnet-4-5", http_client="aiohttp")
    default = chat_model_from_string("http://127.0.0.1:9/v1#m")
    assert isinstance(compatible._client._client, openai.DefaultAioHttpClient)
    assert isinstance(claude._client._client, anthropic.DefaultAioHttpClient)
    assert not isinstance(default._client._client, openai.DefaultAioHttpClient)
    for model in (compatible, claude, default):
        await model.aclose()
