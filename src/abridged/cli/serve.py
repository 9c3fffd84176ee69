"""``abridged serve`` (the HTTP service and its page, under uvicorn) and ``abridged keys`` (the
service's API keys)."""

from __future__ import annotations

import asyncio
import ipaddress
import os
import tempfile
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from abridged.cli.common import BAD_USAGE, CliError, check_database, fail, stdout, store_url
from abridged.errors import AbridgedError, SettingError

if TYPE_CHECKING:
    from abridged.store.keys import ApiKey

LOOPBACK_NAMES = ("localhost",)


def _loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def _prepare(url: str | None) -> str:
    """Create or check the schema once, before any worker starts; the database's safe URL."""
    from abridged.store import Store  # noqa: PLC0415

    store = Store(url)
    try:
        await store.open()
        return store.url
    finally:
        await store.close()


def run_serve(
    *,
    host: str,
    port: int,
    db: str | None,
    workers: int,
    models: Sequence[str],
    window: int | None,
    max_output: int | None,
    tools: str | None,
    no_auth: bool,
    lease_ttl: float,
    log_level: str = "info",
    event_batch_ms: float = 16.0,
) -> int:
    """Start the service; returns the exit status when it stops."""
    try:
        import uvicorn  # noqa: PLC0415

        from abridged.server.config import ServiceConfig, load_tools  # noqa: PLC0415
    except ImportError:
        return fail(CliError("the service needs its extra: pip install 'abridged[server]'"))
    if workers < 1:
        return fail(CliError("--workers: at least 1", BAD_USAGE))
    if no_auth and not _loopback(host):
        return fail(
            CliError(
                f"--no-auth serves every request as one tenant: only on a loopback address, "
                f"not {host} (make keys with: abridged keys create --tenant NAME)",
                BAD_USAGE,
            )
        )
    url = store_url(db)
    console = Console(stderr=True)
    try:
        check_database(url)
        config = ServiceConfig(
            db=url,
            models=tuple(models),
            context_window=window,
            max_output_tokens=max_output,
            tools=tools,
            open_access=no_auth,
            lease_ttl=lease_ttl,
            log_level=log_level,
            event_batch_ms=event_batch_ms,
        )
        load_tools(config.tools)
        where = asyncio.run(_prepare(url))
    except AbridgedError as exc:
        return fail(CliError(str(exc)))
    if not models:
        console.print(
            "[yellow]No --model: every new conversation must name its model (the page asks "
            "for one). Try `abridged demo` for a model that needs no key.[/]"
        )
    if workers > 1 and where.startswith("sqlite"):
        console.print(
            "[yellow]Several workers on SQLite take turns for every write: use a "
            "postgresql:// database for real concurrency.[/]"
        )
    os.environ.update(config.to_env())
    metrics_dir: tempfile.TemporaryDirectory[str] | None = None
    if workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        metrics_dir = tempfile.TemporaryDirectory(prefix="abridged-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir.name
    auth = "no API key needed (--no-auth)" if no_auth else "API keys required"
    console.print(
        f"abridged serve: http://{host}:{port}/ ({workers} worker(s), {where}, {auth})",
        highlight=False,
    )
    try:
        from abridged.server.protocol import HeaderLimitedProtocol  # noqa: PLC0415

        uvicorn.run(
            "abridged.server.app:app_from_environment",
            factory=True,
            http=HeaderLimitedProtocol,  # headers over the limits: 431 before they are all read
            host=host,
            port=port,
            workers=workers,
            log_level="warning",
            timeout_graceful_shutdown=30,
        )
    finally:
        if metrics_dir is not None:
            metrics_dir.cleanup()
    return 0


def run_keys_create(db: str | None, tenant: str, label: str | None) -> int:
    """Make a key and print it (once: only its hash is stored)."""
    from abridged.store import Store  # noqa: PLC0415

    async def make() -> tuple[str, str]:
        store = Store(store_url(db))
        try:
            key, record = await store.create_api_key(tenant, label=label)
            return key, record.id
        finally:
            await store.close()

    try:
        check_database(store_url(db))
        key, key_id = asyncio.run(make())
    except AbridgedError as exc:
        return fail(CliError(str(exc)))
    console = Console(stderr=True)
    console.print(
        f"API key {key_id} for tenant {tenant!r} (shown once; only its hash is stored):",
        highlight=False,
    )
    print(key)
    return 0


def run_keys_list(db: str | None, tenant: str | None) -> int:
    """Print the keys (never the keys themselves)."""
    from abridged.store import Store  # noqa: PLC0415

    async def read() -> list[ApiKey]:
        store = Store(store_url(db))
        try:
            return list(await store.list_api_keys(tenant))
        finally:
            await store.close()

    try:
        check_database(store_url(db))
        keys = asyncio.run(read())
    except AbridgedError as exc:
        return fail(CliError(str(exc)))
    table = Table("id", "tenant", "label", "created", "revoked")
    for k in keys:
        table.add_row(
            k.id,
            k.tenant,
            k.label or "",
            f"{k.created_at:%Y-%m-%d %H:%M}",
            f"{k.revoked_at:%Y-%m-%d %H:%M}" if k.revoked_at else "",
        )
    stdout().print(table)
    return 0


def run_keys_revoke(db: str | None, key_id: str) -> int:
    """Revoke a key by its id."""
    from abridged.store import Store  # noqa: PLC0415

    async def revoke() -> None:
        store = Store(store_url(db))
        try:
            await store.revoke_api_key(key_id)
        finally:
            await store.close()

    try:
        check_database(store_url(db))
        asyncio.run(revoke())
    except AbridgedError as exc:
        return fail(CliError(str(exc)))
    Console(stderr=True).print(f"revoked {key_id}", highlight=False)
    return 0


def run_proxy(
    *,
    upstream: str,
    host: str,
    port: int,
    db: str | None,
    workers: int,
    window: int | None,
    max_output: int | None,
    lease_ttl: float,
    max_body_bytes: int = 32 << 20,
    log_level: str = "info",
) -> int:
    """Start the proxy; returns the exit status when it stops."""
    try:
        import uvicorn  # noqa: PLC0415

        from abridged.providers.streaming import safe_url  # noqa: PLC0415
        from abridged.server.proxy.config import ProxyConfig  # noqa: PLC0415
    except ImportError:
        return fail(CliError("the proxy needs the server extra: pip install 'abridged[server]'"))
    if workers < 1:
        return fail(CliError("--workers: at least 1", BAD_USAGE))
    url = store_url(db)
    try:
        check_database(url)
        config = ProxyConfig(
            upstream=upstream,
            db=url,
            context_window=window,
            max_output_tokens=max_output,
            lease_ttl=lease_ttl,
            max_body_bytes=max_body_bytes,
            log_level=log_level,
        )
        where = asyncio.run(_prepare(url))
    except AbridgedError as exc:
        return fail(CliError(str(exc), BAD_USAGE if isinstance(exc, SettingError) else 1))
    os.environ.update(config.to_env())
    Console(stderr=True).print(
        f"abridged proxy: http://{host}:{port}/v1 -> {safe_url(config.upstream)}/v1 "
        f"({workers} worker(s), "
        f"{where})",
        highlight=False,
    )
    uvicorn.run(
        "abridged.server.proxy.app:proxy_app_from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
        timeout_graceful_shutdown=30,
    )
    return 0
