"""Pick the adapter for a model string: ``chat_model_from_string("anthropic/claude-sonnet-4-5")``.

Forms of ``spec`` (the prefix before the first ``/`` chooses the adapter):

==============================================  =================================================
``openai/gpt-4.1``                              OpenAI Chat Completions (``OPENAI_API_KEY``)
``openai-responses/gpt-5``                      OpenAI Responses API (``OPENAI_API_KEY``)
``anthropic/claude-sonnet-4-5``                 Anthropic Messages (``ANTHROPIC_API_KEY``)
``azure/<deployment>``                          Azure OpenAI (``AZURE_OPENAI_ENDPOINT``,
                                                ``AZURE_OPENAI_API_KEY``, ``OPENAI_API_VERSION``)
``openrouter/<vendor>/<model>``                 OpenRouter (``OPENROUTER_API_KEY``)
``groq/...``, ``deepseek/...``, ``mistral/...``  their OpenAI-compatible endpoints
                                                (``GROQ_API_KEY``, ``DEEPSEEK_API_KEY``,
                                                ``MISTRAL_API_KEY``)
``ollama/llama3.1``                             Ollama at ``OLLAMA_BASE_URL`` or
                                                ``http://localhost:11434/v1`` (no key)
``litellm/<any LiteLLM model>``                 LiteLLM (optional extra; its own env variables)
``http://localhost:8000/v1#my-model``           any OpenAI-compatible server: base URL, ``#``,
                                                model name (key: ``ABRIDGED_API_KEY`` if set)
``my-model`` with ``base_url=...``              the same, base URL given apart
``my-model`` with ``ABRIDGED_BASE_URL`` set     the same, base URL from the environment
                                                (key: ``ABRIDGED_API_KEY``)
``gpt-4.1``, ``o3``, ``claude-...``             bare names of OpenAI and Anthropic models
==============================================  =================================================

A compatible provider's key is read from its own variable only: the OpenAI key is never sent to
another host. ``api_key`` overrides the environment; other keyword arguments go to the adapter
(``thinking="high"``, ``cache=False``, ``api="responses"``, ``temperature=0``...;
``http_client="aiohttp"``: the OpenAI and Anthropic adapters over their SDK's aiohttp client,
LiteLLM unchanged). Keys are read here and handed to the SDK only: never logged, never in
``repr`` or error messages.
"""

from __future__ import annotations

import os
from typing import Any

from abridged.core.protocols import ChatModel
from abridged.errors import SettingError

__all__ = ["COMPATIBLE_PROVIDERS", "chat_model_from_string"]

COMPATIBLE_PROVIDERS: dict[str, tuple[str, str | None]] = {
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "groq": ("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "deepseek": ("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
    "mistral": ("https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    "ollama": ("http://localhost:11434/v1", None),
}
"""OpenAI-compatible providers by prefix: default base URL and the key's environment variable.
``<PREFIX>_BASE_URL`` (``OLLAMA_BASE_URL``...) overrides the base URL."""

_FORMS = (
    '"openai/<model>", "openai-responses/<model>", "anthropic/<model>", "azure/<deployment>", '
    '"litellm/<model>", "' + '/<model>", "'.join(COMPATIBLE_PROVIDERS) + '/<model>", '
    '"http(s)://host/v1#<model>", or a model name with base_url= or ABRIDGED_BASE_URL'
)


def _openai(model: str, **kwargs: Any) -> ChatModel:
    from abridged.providers.openai import OpenAIChatModel  # noqa: PLC0415 - imports the SDK

    return OpenAIChatModel(model, **kwargs)


def _anthropic(model: str, **kwargs: Any) -> ChatModel:
    from abridged.providers.anthropic import AnthropicChatModel  # noqa: PLC0415

    return AnthropicChatModel(model, **kwargs)


def _litellm(model: str, **kwargs: Any) -> ChatModel:
    from abridged.providers.litellm import LiteLLMChatModel  # noqa: PLC0415

    if kwargs.get("http_client") == "aiohttp":  # LiteLLM keeps its own HTTP client
        del kwargs["http_client"]
    return LiteLLMChatModel(model, **kwargs)


def _generic_key(key: dict[str, Any]) -> dict[str, Any]:
    if key:
        return key
    env_key = os.environ.get("ABRIDGED_API_KEY")
    return {"api_key": env_key} if env_key else {}


def chat_model_from_string(
    spec: str,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    **options: Any,
) -> ChatModel:
    """The ``ChatModel`` named by ``spec`` (see the module docstring for the forms).

    Raises ``SettingError`` for a string no form matches, ``ProviderError`` when the SDK of the
    chosen adapter is not installed or a required key is missing.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise SettingError("model", spec, _FORMS)
    spec = spec.strip()
    key: dict[str, Any] = {} if api_key is None else {"api_key": api_key}
    if spec.startswith(("http://", "https://")):
        url, sep, model = spec.partition("#")
        if not sep or not model:
            raise SettingError("model", spec, 'a base URL and a model name: "http://host/v1#model"')
        return _openai(model, base_url=url, **_generic_key(key), **options)
    prefix, sep, rest = spec.partition("/")
    prefix = prefix.lower()
    if sep and rest:
        if prefix == "openai":
            return _openai(rest, base_url=base_url, **key, **options)
        if prefix == "openai-responses":
            options.setdefault("api", "responses")
            return _openai(rest, base_url=base_url, **key, **options)
        if prefix == "anthropic":
            return _anthropic(rest, base_url=base_url, **key, **options)
        if prefix == "litellm":
            return _litellm(rest, base_url=base_url, **key, **options)
        if prefix == "azure":
            endpoint = options.pop("azure_endpoint", None) or os.environ.get(
                "AZURE_OPENAI_ENDPOINT"
            )
            if not endpoint:
                raise SettingError(
                    "azure_endpoint", None, "an Azure endpoint (or AZURE_OPENAI_ENDPOINT)"
                )
            options.setdefault("api_version", os.environ.get("OPENAI_API_VERSION"))
            return _openai(rest, azure_endpoint=endpoint, **key, **options)
        if prefix in COMPATIBLE_PROVIDERS:
            default_url, variable = COMPATIBLE_PROVIDERS[prefix]
            url = base_url or os.environ.get(f"{prefix.upper()}_BASE_URL") or default_url
            if api_key is None and variable is not None:
                env_key = os.environ.get(variable)
                if env_key:
                    key = {"api_key": env_key}
            options.setdefault("provider", prefix)
            return _openai(rest, base_url=url, **key, **options)
    generic = base_url or os.environ.get("ABRIDGED_BASE_URL")
    if generic:
        return _openai(spec, base_url=generic, **_generic_key(key), **options)
    lowered = spec.lower()
    if lowered.startswith("claude"):
        return _anthropic(spec, **key, **options)
    if lowered.startswith(("gpt-", "chatgpt-", "o1", "o3", "o4", "codex-")):
        return _openai(spec, **key, **options)
    raise SettingError("model", spec, _FORMS)
