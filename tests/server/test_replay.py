"""``POST /v1/replay``: the runtime's replay over HTTP, in the very shape ``abridged replay
--json`` prints (one schema, ``abridged.runtime.replay.schema``), and the same figures."""

from __future__ import annotations

import json

from abridged.runtime.replay.schema import ReplayReport
from tests.cli.conftest import EXAMPLE, run_cli
from tests.server.conftest import RunningService

FIGURES = ("calls", "prunes", "compactions", "max_context_tokens", "overflows", "input_tokens")


def test_the_api_replays_in_the_clis_shape_with_its_figures(service: RunningService) -> None:
    body = EXAMPLE.read_bytes()
    with service.client() as client:
        answer = client.post("/v1/replay?window=16k", content=body, timeout=120)
        page = client.post("/v1/replay?window=16k&output=html", content=body, timeout=120)
    assert answer.status_code == 200, answer.text
    api = answer.json()
    ReplayReport.model_validate(api)  # the schema, not a look-alike
    out = run_cli("replay", EXAMPLE, "--window", "16k", "--json")
    assert out.returncode == 0, out.stderr
    cli = json.loads(out.stdout)
    assert api.keys() == cli.keys()
    assert api["sessions"][0].keys() == cli["sessions"][0].keys()
    assert api["steps"][0].keys() == cli["steps"][0].keys()
    assert api["totals"].keys() == cli["totals"].keys()
    assert {k: api["totals"][k] for k in FIGURES} == {k: cli["totals"][k] for k in FIGURES}
    assert api["settings"] == cli["settings"]
    assert page.status_code == 200 and page.text.startswith("<!DOCTYPE html>")
    assert page.text.count("<svg") == 1


def test_an_unreadable_upload_is_422_without_the_servers_paths(service: RunningService) -> None:
    # Found by an independent attack: the error named the server's temporary file
    # (/tmp/abridged-upload-.../transcript).
    with service.client() as client:
        for body in (b"\xff\xfe\x00junk", b'[{"role": 5}]'):
            answer = client.post("/v1/replay?window=16k", content=body, timeout=120)
            assert answer.status_code == 422, answer.text
            assert "abridged-upload" not in answer.text and "/tmp" not in answer.text, answer.text
            assert "the uploaded transcript" in answer.json()["detail"]


def test_the_replay_schema_is_published(service: RunningService) -> None:
    with service.client() as client:
        schema = client.get("/openapi.json").json()
    answers = schema["paths"]["/v1/replay"]["post"]["responses"]["200"]["content"]
    assert answers["application/json"]["schema"] == {"$ref": "#/components/schemas/ReplayReport"}
    assert "text/html" in answers
    published = schema["components"]["schemas"]["ReplayReport"]
    assert set(published["properties"]) == set(ReplayReport.model_fields)
