"""What every route works with: the store, the config, the open conversations, the turn
runner, the metrics and the tenant resolver of one service process."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from abridged.server.auth import TenantResolver
from abridged.server.config import ServiceConfig
from abridged.server.metrics import ServiceMetrics
from abridged.server.runner import ConversationPool, TurnRunner
from abridged.store import Store

__all__ = ["Service", "service_of"]


@dataclass(frozen=True, slots=True)
class Service:
    """The parts of one service process (made at startup, closed at shutdown)."""

    config: ServiceConfig
    store: Store
    pool: ConversationPool
    runner: TurnRunner
    metrics: ServiceMetrics
    tenants: TenantResolver


async def service_of(request: Request) -> Service:
    """FastAPI dependency: the service of the application handling ``request`` (a coroutine:
    FastAPI runs a plain function dependency in its thread pool, a thread hop per request)."""
    service: Service = request.app.state.service
    return service
