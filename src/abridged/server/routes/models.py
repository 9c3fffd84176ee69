"""The models a conversation may use (``GET /v1/models``): what the page's model selector lists."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from abridged.server.auth import require_tenant
from abridged.server.schemas import ModelsOut
from abridged.server.service import Service, service_of

router = APIRouter(prefix="/v1/models", tags=["conversations"])

Tenant = Annotated[str, Depends(require_tenant)]
Svc = Annotated[Service, Depends(service_of)]


@router.get("", response_model=ModelsOut)
async def list_models(tenant: Tenant, svc: Svc) -> ModelsOut:
    """The service's models (``abridged serve --model``, the first the default); with none
    listed, ``any`` is true and a conversation may name any model the service can call."""
    models = list(svc.config.models)
    return ModelsOut(models=models, default=svc.config.default_model, any=not models)
