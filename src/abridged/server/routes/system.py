"""Health, readiness and metrics (no API key needed: they say nothing about any tenant)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse, Response
from sqlalchemy import text

from abridged.server.metrics import CONTENT_TYPE
from abridged.server.service import Service, service_of
from abridged.store.connect import transaction

router = APIRouter(tags=["system"])

Svc = Annotated[Service, Depends(service_of)]


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process answers."""
    return {"status": "ok"}


@router.get("/readyz")
async def readyz(svc: Svc) -> Any:
    """The database answers and its schema is the one this abridged knows (else 503)."""
    try:
        await svc.store.open()
        async with transaction(svc.store.engine, "read") as conn:
            await conn.execute(text("SELECT 1"))
    except Exception as exc:
        return JSONResponse(
            {"status": "unavailable", "detail": f"{type(exc).__name__}: {exc}"[:300]},
            status_code=503,
        )
    return {"status": "ready", "database": svc.store.dialect}


@router.get("/metrics")
async def metrics(svc: Svc) -> Response:
    """Prometheus text format."""
    svc.metrics.observe_store(svc.store.cas_conflicts)
    return Response(svc.metrics.render(), media_type=CONTENT_TYPE)
