"""The web page and the API's browsable docs: static files shipped in ``abridged/server/page``
(no CDN, no build step; the vendored libraries' licences are in ``page/licenses``)."""

from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter, HTTPException
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response

router = APIRouter(include_in_schema=False)

_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
_SECURITY = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
    "style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _read(name: str) -> bytes:
    return files("abridged.server").joinpath("page", name).read_bytes()


@router.get("/")
async def index() -> HTMLResponse:
    """The page."""
    return HTMLResponse(_read("index.html"), headers=_SECURITY)


@router.get("/page/{name}")
async def asset(name: str) -> Response:
    """The page's script and style sheet."""
    suffix = name[name.rfind(".") :] if "." in name else ""
    if suffix not in _TYPES or "/" in name or name.startswith("."):
        raise HTTPException(404, "no such file")
    try:
        body = _read(name)
    except (FileNotFoundError, OSError) as exc:
        raise HTTPException(404, "no such file") from exc
    return Response(body, media_type=_TYPES[suffix], headers=_SECURITY)


@router.get("/docs")
async def docs() -> HTMLResponse:
    """The API's browsable documentation (Swagger UI), from the vendored files."""
    return get_swagger_ui_html(
        openapi_url="/openapi.json",
        title="abridged API",
        swagger_js_url="/page/swagger-ui-bundle.js",
        swagger_css_url="/page/swagger-ui.css",
        swagger_favicon_url="data:,",
    )
