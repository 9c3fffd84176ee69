"""Test helpers: a local HTTP server that speaks the OpenAI and Anthropic wire formats.

``ProviderServer`` runs on loopback and answers the official SDKs with scripted ``Reply``s,
counting tokens with a real tokenizer (o200k through ``toktok``), enforcing a context window with
each provider's real errors, rejecting unpaired tool results, simulating the prompt cache and
recording every request (``RecordedRequest``). See ``abridged.testing.provider_server``.
"""

from __future__ import annotations

from abridged.testing.provider_server import ProviderServer, RecordedRequest, Reply

__all__ = ["ProviderServer", "RecordedRequest", "Reply"]
