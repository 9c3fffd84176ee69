"""Replay an uploaded transcript (``abridged replay`` over HTTP): the report as data and HTML."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import JSONResponse

from abridged.errors import FormatError
from abridged.runtime.replay.schema import ReplayReport
from abridged.server.auth import require_tenant

router = APIRouter(prefix="/v1", tags=["replay"])

Tenant = Annotated[str, Depends(require_tenant)]


@router.post(
    "/replay",
    response_model=ReplayReport,  # published in /openapi.json: the shape ``replay --json`` prints
    responses={200: {"content": {"text/html": {"schema": {"type": "string"}}}}},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/octet-stream": {"schema": {"type": "string"}}},
        }
    },
)
async def replay_transcript(
    request: Request,
    tenant: Tenant,
    window: Annotated[str, Query(pattern=r"^\d+[kKmM]?$", description="e.g. 16k")] = "16k",
    format: Annotated[str | None, Query(max_length=40)] = None,
    session: Annotated[int | None, Query(ge=1)] = None,
    output: Annotated[Literal["json", "html"], Query()] = "json",
) -> Any:
    """Replay the transcript in the request body (any format ``abridged replay`` reads) with
    the extractive summarizer in a throwaway store; nothing is kept."""
    from abridged.core.budget import parse_token_size  # noqa: PLC0415
    from abridged.formats.transcripts import FORMATS, load_transcripts  # noqa: PLC0415
    from abridged.runtime.replay import ReplayOptions, replay_transcripts  # noqa: PLC0415
    from abridged.runtime.replay.report import render_report  # noqa: PLC0415

    if format is not None and format not in FORMATS:
        raise HTTPException(422, f"format {format!r}: expected one of {', '.join(FORMATS)}")
    body = await request.body()
    if not body.strip():
        raise HTTPException(422, "the request body is empty: send the transcript file")
    with tempfile.TemporaryDirectory(prefix="abridged-upload-") as folder:
        path = Path(folder) / "transcript"
        path.write_bytes(body)
        try:
            transcripts = load_transcripts(path, format)
        except FormatError as exc:
            # the server's temporary file is nobody's business: the client sent "the upload"
            detail = exc.describe().replace(str(path), "the uploaded transcript")
            raise HTTPException(422, detail) from exc
        if session is not None:
            if session > len(transcripts):
                raise HTTPException(
                    422, f"session {session}: the file has {len(transcripts)} session(s)"
                )
            transcripts = [transcripts[session - 1]]
        if not transcripts:
            raise HTTPException(422, "the file holds no session")
        # CPU-bound (the extractive summarizer): its own loop in a thread, never the service's
        options = ReplayOptions(window=parse_token_size(window, name="window"))
        report = await asyncio.to_thread(
            asyncio.run,
            replay_transcripts(transcripts, options, settings=_shown_settings(window)),
        )
    if output == "html":
        from fastapi.responses import HTMLResponse  # noqa: PLC0415

        return HTMLResponse(render_report(report))
    return JSONResponse(report.to_json())  # built by the model itself: not validated again


def _shown_settings(window: str) -> dict[str, Any]:
    """The settings the report shows, as ``abridged replay --window`` shows its defaults."""
    return {
        "summary_window": None,
        "summary_temperature": None,
        "window": window,
        "max_output": None,
        "trigger": None,
        "target": None,
        "keep_recent": None,
        "summary_max": None,
        "prune": True,
        "compaction": True,
    }
