"""The HTTP service (``abridged serve``): conversations over HTTP, its web page, many workers.

``create_app(ServiceConfig(...))`` builds the FastAPI application; ``abridged serve`` runs it
under uvicorn. Layers: ``config`` (what the service runs with), ``auth`` (API keys to tenants),
``schemas`` (the JSON of the API), ``runner`` (turns under the turn lease, conversations kept
open per worker), ``events`` (what a turn streams, as server-sent events), ``metrics``
(Prometheus), ``routes/`` (the endpoints) and ``page/`` (the web page, static files).
"""
