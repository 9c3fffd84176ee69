"""The proxy (``abridged proxy``): an OpenAI- and Anthropic-compatible endpoint between an app
and its provider that changes only what the model sees.

Layers: ``config`` (upstream, window, database), ``identity`` (which conversation a request
belongs to), ``upstream`` (forwarding, streaming, reading the reply's usage), ``conversations``
(one store-backed ``ContextManager`` per conversation, forks on edits), ``app`` (the routes).
"""
