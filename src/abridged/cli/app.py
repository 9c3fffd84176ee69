"""The ``abridged`` command: its commands, each importing what it needs only when it runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

# Options and arguments that several commands share, each declared once. Where a command's help
# says something else on purpose (analyze's --format, --window and --model; chat's --model and
# --window; replay's and compact's --summarizer; each --output), it keeps its own declaration.
FormatOption = Annotated[
    str | None,
    typer.Option(
        "--input-format",
        "--format",
        "-f",
        help="Input transcript format, when detection is not enough (e.g. claude-code, codex; "
        "--format is the same, for older scripts).",
    ),
]
WindowOption = Annotated[
    str | None,
    typer.Option(help="Context window, e.g. 32k (k = 1,024). Default: the model's."),
]
MaxOutputOption = Annotated[
    str | None, typer.Option(help="Maximum output tokens, e.g. 4k. Default: the model's.")
]
ModelOption = Annotated[
    str | None,
    typer.Option(help="Model whose limits and prices to use. Default: the transcript's."),
]
SessionOption = Annotated[
    int | None, typer.Option(help="Only the N-th session of the file (1-based).")
]
TriggerOption = Annotated[
    float | None,
    typer.Option(
        help="Compact at this share of the input budget (default 0.85).", show_default=False
    ),
]
TargetOption = Annotated[
    float | None,
    typer.Option(help="Compact down to this share of the input budget (default 0.45)."),
]
KeepRecentOption = Annotated[
    str | None,
    typer.Option(help="Tokens kept verbatim after a cut, e.g. 4k (default: 25% of the budget)."),
]
SummaryMaxOption = Annotated[
    str | None, typer.Option(help="Ceiling on a summary, e.g. 2k (default: 20% of the budget).")
]
SafetyOption = Annotated[
    str | None, typer.Option(help="Tokens held back for estimation error (default 2% of window).")
]
PruneOption = Annotated[
    bool, typer.Option("--prune/--no-prune", help="Prune old tool outputs before summarizing.")
]
CompactionOption = Annotated[
    bool,
    typer.Option(
        "--compaction/--no-compaction",
        help="Automatic compaction (off: only the emergency path when a context overflows).",
    ),
]
PinOption = Annotated[
    bool,
    typer.Option("--pin-task/--no-pin-task", help="Keep the first task verbatim in every context."),
]
DbOption = Annotated[
    str | None,
    typer.Option(
        "--db", help="Database: a SQLite path or a postgresql:// URL (default: ABRIDGED_DB)."
    ),
]
SummarizerUrlOption = Annotated[
    str | None, typer.Option(help="Base URL of an OpenAI-compatible summarizer model.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
OwnerOption = Annotated[str | None, typer.Option(help="Only this owner's conversations.")]
TranscriptArgument = Annotated[Path, typer.Argument(help="Transcript file (format detected).")]
IdArgument = Annotated[str, typer.Argument(metavar="ID", help="A conversation or session id.")]


# Help is click's plain text: typer's rich formatter (``typer.rich_utils``) imports rich's
# Markdown (with markdown_it) and traceback modules whatever the markup mode, which made
# ``abridged --help`` 1.6x as slow as an empty typer app (bench/startup.py measures the ratio).
PLAIN_HELP = None

app = typer.Typer(
    name="abridged",
    rich_markup_mode=PLAIN_HELP,
    help="Keep long LLM conversations and agent sessions inside the model's context window.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Keep long LLM conversations and agent sessions inside the model's context window."""


@app.command()
def analyze(
    path: TranscriptArgument,
    format: FormatOption = None,
    window: Annotated[
        str | None,
        typer.Option(help="Context window, e.g. 16k (k = 1,024). Default: the model's."),
    ] = None,
    max_output: MaxOutputOption = None,
    model: Annotated[
        str | None, typer.Option(help="Model whose limits to use. Default: the transcript's.")
    ] = None,
    session: SessionOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show where a transcript's tokens go and when it would need compaction."""
    from abridged.cli.analyze import run_analyze  # noqa: PLC0415 - keep start-up fast

    raise typer.Exit(
        run_analyze(
            path,
            format=format,
            window=window,
            max_output=max_output,
            model=model,
            session=session,
            as_json=as_json,
        )
    )


def _knobs(
    trigger: float | None,
    target: float | None,
    keep_recent: str | None,
    summary_max: str | None,
    safety_margin: str | None,
    prune: bool,
    compaction: bool,
    pin_task: bool,
) -> Any:
    from abridged.cli.common import Knobs  # noqa: PLC0415

    return Knobs(
        trigger=trigger,
        target=target,
        keep_recent=keep_recent,
        summary_max=summary_max,
        safety_margin=safety_margin,
        prune=prune,
        compaction=compaction,
        pin_task=pin_task,
    )


@app.command()
def replay(
    path: Annotated[Path, typer.Argument(help="Recorded session (format detected).")],
    format: FormatOption = None,
    window: WindowOption = None,
    max_output: MaxOutputOption = None,
    model: ModelOption = None,
    summarizer: Annotated[
        str,
        typer.Option(help='"extractive" (offline, default) or a model string to summarize with.'),
    ] = "extractive",
    base_url: SummarizerUrlOption = None,
    summary_window: Annotated[
        str | None,
        typer.Option(
            help="The summarizer model's own context window (e.g. 8k), when smaller than the "
            "conversation's: its requests are sized to it, a quarter kept free for the "
            "estimator's error.",
        ),
    ] = None,
    summary_temperature: Annotated[
        float | None,
        typer.Option(help="Temperature of every summary call (default: the model's)."),
    ] = None,
    db: Annotated[
        str | None,
        typer.Option("--db", help="Keep the replay in this database (default: a temporary file)."),
    ] = None,
    session: SessionOption = None,
    trigger: TriggerOption = None,
    target: TargetOption = None,
    keep_recent: KeepRecentOption = None,
    summary_max: SummaryMaxOption = None,
    safety_margin: SafetyOption = None,
    prune: PruneOption = True,
    compaction: CompactionOption = True,
    pin_task: PinOption = True,
    report: Annotated[
        Path | None, typer.Option(help="Write a self-contained HTML report to this file.")
    ] = None,
    timeline: Annotated[
        bool | None,
        typer.Option(
            "--timeline/--no-timeline",
            help="Per-call timeline (default: when the file holds one session).",
            show_default=False,
        ),
    ] = None,
    progress: Annotated[
        bool,
        typer.Option(
            "--progress",
            help="A line per finished session on stderr when it is not a terminal "
            "(a terminal shows a progress bar anyway).",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Replay a recorded session call by call through abridged (engine and store)."""
    from abridged.cli.replay import run_replay  # noqa: PLC0415 - keep start-up fast

    raise typer.Exit(
        run_replay(
            path,
            format=format,
            session=session,
            db=db,
            knobs=_knobs(
                trigger,
                target,
                keep_recent,
                summary_max,
                safety_margin,
                prune,
                compaction,
                pin_task,
            ),
            summarizer=summarizer,
            base_url=base_url,
            window=window,
            max_output=max_output,
            model=model,
            report=report,
            as_json=as_json,
            timeline=timeline,
            progress_lines=progress,
            summary_window=summary_window,
            summary_temperature=summary_temperature,
        )
    )


@app.command()
def compact(
    path: TranscriptArgument,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the compacted context here (default: stdout)."),
    ] = None,
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="same (the input's format), openai, anthropic or abridged.",
        ),
    ] = "same",
    input_format: Annotated[
        str | None,
        typer.Option("--input-format", help="Input format, when detection is not enough."),
    ] = None,
    session: SessionOption = None,
    window: WindowOption = None,
    max_output: MaxOutputOption = None,
    model: ModelOption = None,
    summarizer: Annotated[
        str, typer.Option(help='"extractive" (offline, default) or a model string.')
    ] = "extractive",
    base_url: SummarizerUrlOption = None,
    focus: Annotated[str | None, typer.Option(help="What the summary should focus on.")] = None,
    trigger: TriggerOption = None,
    target: TargetOption = None,
    keep_recent: KeepRecentOption = None,
    summary_max: SummaryMaxOption = None,
    safety_margin: SafetyOption = None,
    prune: PruneOption = True,
    pin_task: PinOption = True,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the breakdown as one JSON object.")
    ] = False,
) -> None:
    """Compact a transcript once and write the context abridged would send next."""
    from abridged.cli.compact import run_compact  # noqa: PLC0415 - keep start-up fast

    raise typer.Exit(
        run_compact(
            path,
            input_format=input_format,
            session=session,
            output=output,
            output_format=output_format,
            knobs=_knobs(
                trigger, target, keep_recent, summary_max, safety_margin, prune, True, pin_task
            ),
            summarizer=summarizer,
            base_url=base_url,
            window=window,
            max_output=max_output,
            model=model,
            focus=focus,
            as_json=as_json,
        )
    )


@app.command()
def chat(
    model: Annotated[
        str | None,
        typer.Option(
            help="Model string, e.g. openai/gpt-4.1-mini, anthropic/claude-sonnet-4-5 or "
            "http://localhost:8000/v1#my-model. Default: ABRIDGED_MODEL.",
            show_default=False,
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(help="Base URL of an OpenAI-compatible server (or ABRIDGED_BASE_URL)."),
    ] = None,
    db: DbOption = None,
    resume: Annotated[
        str | None, typer.Option(help="Resume a conversation, or a session, by id.")
    ] = None,
    system: Annotated[str | None, typer.Option(help="The system prompt.")] = None,
    window: Annotated[
        str | None,
        typer.Option(help="Context window, e.g. 32k (default: probed, else the registry's)."),
    ] = None,
    max_output: MaxOutputOption = None,
    summarizer: Annotated[
        str | None,
        typer.Option(
            help='"extractive", or a model string (default: the chat model, reusing its cache).'
        ),
    ] = None,
    tools: Annotated[
        str | None,
        typer.Option(help='Tools the model may call: "package.module:attribute".'),
    ] = None,
) -> None:
    """Chat with a model; the context stays inside its window, everything is stored."""
    from abridged.cli.chat import run_chat  # noqa: PLC0415 - keep start-up fast

    raise typer.Exit(
        run_chat(
            model=model,
            base_url=base_url,
            db=db,
            resume=resume,
            system=system,
            window=window,
            max_output=max_output,
            summarizer=summarizer,
            tools=tools,
        )
    )


sessions_app = typer.Typer(
    rich_markup_mode=PLAIN_HELP,
    help="What the store holds: conversations, sessions, summaries, token and cache totals.",
    no_args_is_help=True,
)
app.add_typer(sessions_app, name="sessions")


@sessions_app.command("list")
def sessions_list(
    db: DbOption = None,
    owner: OwnerOption = None,
    limit: Annotated[int | None, typer.Option(help="At most N conversations.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Conversations, newest first, with sessions, messages, token totals and latest summary."""
    from abridged.cli.sessions import run_list  # noqa: PLC0415

    raise typer.Exit(run_list(db=db, owner=owner, as_json=as_json, limit=limit))


@sessions_app.command("show")
def sessions_show(
    ident: IdArgument,
    db: DbOption = None,
    owner: OwnerOption = None,
    summaries: Annotated[
        bool, typer.Option("--summaries/--no-summaries", help="Print the sessions' summaries.")
    ] = True,
    as_json: JsonOption = False,
) -> None:
    """One conversation: its sessions, compactions and summaries."""
    from abridged.cli.sessions import run_show  # noqa: PLC0415

    raise typer.Exit(run_show(ident, db=db, owner=owner, as_json=as_json, summaries=summaries))


@sessions_app.command("search")
def sessions_search(
    query: Annotated[str, typer.Argument(help="Words to look for in the sessions' summaries.")],
    db: DbOption = None,
    owner: OwnerOption = None,
    conversation: Annotated[
        str | None, typer.Option(help="Only this conversation's sessions.")
    ] = None,
    limit: Annotated[int, typer.Option(help="At most N hits.")] = 10,
    as_json: JsonOption = False,
) -> None:
    """Sessions whose final summary matches QUERY, best first."""
    from abridged.cli.sessions import run_search  # noqa: PLC0415

    raise typer.Exit(
        run_search(
            query, db=db, owner=owner, conversation=conversation, limit=limit, as_json=as_json
        )
    )


@sessions_app.command("export")
def sessions_export(
    ident: IdArgument,
    db: DbOption = None,
    owner: OwnerOption = None,
    session: Annotated[
        str | None, typer.Option(help="This session's lineage (default: the current one).")
    ] = None,
    context: Annotated[
        bool, typer.Option("--context", help="Only the current context (summary + messages).")
    ] = False,
    output_format: Annotated[
        str, typer.Option("--format", help="abridged, openai or anthropic.")
    ] = "abridged",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here (default: stdout).")
    ] = None,
) -> None:
    """Export a conversation's messages (summarized ones included) as JSON."""
    from abridged.cli.sessions import run_export  # noqa: PLC0415

    raise typer.Exit(
        run_export(
            ident,
            db=db,
            owner=owner,
            session=session,
            context=context,
            output_format=output_format,
            output=output,
        )
    )


db_app = typer.Typer(
    help="The database: schema upgrades.", no_args_is_help=True, rich_markup_mode=PLAIN_HELP
)
app.add_typer(db_app, name="db")


@db_app.command("upgrade")
def db_upgrade(db: DbOption = None) -> None:
    """Create the schema, or migrate it to the newest revision this abridged knows."""
    from abridged.cli.db import run_upgrade  # noqa: PLC0415

    raise typer.Exit(run_upgrade(db))


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.", min=1, max=65535)] = 8000,
    db: DbOption = None,
    workers: Annotated[
        int, typer.Option(help="Worker processes (several: use PostgreSQL).", min=1)
    ] = 1,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            help="A model conversations may use (repeatable; the first is the default), e.g. "
            "openai/gpt-4.1-mini. Keys come from the server's environment.",
        ),
    ] = None,
    window: Annotated[
        int | None, typer.Option(help="Context window override in tokens (>= 1024).")
    ] = None,
    max_output: Annotated[int | None, typer.Option(help="Maximum output tokens override.")] = None,
    tools: Annotated[
        str | None,
        typer.Option(help='Tools the conversations may call: "package.module:attribute".'),
    ] = None,
    no_auth: Annotated[
        bool,
        typer.Option(
            "--no-auth", help="No API keys: every request is tenant 'local' (loopback only)."
        ),
    ] = False,
    lease_ttl: Annotated[
        float, typer.Option(help="Seconds a turn lease lasts unless renewed.", min=1)
    ] = 30.0,
    event_batch_ms: Annotated[
        float,
        typer.Option(
            help="A turn's events go to the client in one write per this many ms at most "
            "(0: each at once).",
            min=0,
            max=1000,
        ),
    ] = 16.0,
    log_level: Annotated[
        str, typer.Option(help="Log level of the JSON-lines log on stderr (debug..error).")
    ] = "info",
) -> None:
    """Run the HTTP service and its web page (conversations, streaming, context meter,
    compaction, tenants; several workers on PostgreSQL)."""
    from abridged.cli.serve import run_serve  # noqa: PLC0415

    raise typer.Exit(
        run_serve(
            host=host,
            port=port,
            db=db,
            workers=workers,
            models=model or [],
            window=window,
            max_output=max_output,
            tools=tools,
            no_auth=no_auth,
            lease_ttl=lease_ttl,
            event_batch_ms=event_batch_ms,
            log_level=log_level,
        )
    )


@app.command()
def proxy(
    upstream: Annotated[
        str,
        typer.Option(
            help="The provider's base URL, e.g. https://api.openai.com or "
            "https://api.anthropic.com (a trailing /v1 is ignored)."
        ),
    ],
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.", min=1, max=65535)] = 8100,
    db: DbOption = None,
    workers: Annotated[
        int, typer.Option(help="Worker processes (several: use PostgreSQL).", min=1)
    ] = 1,
    window: Annotated[
        int | None, typer.Option(help="Context window override in tokens (>= 1024).")
    ] = None,
    max_output: Annotated[int | None, typer.Option(help="Maximum output tokens override.")] = None,
    lease_ttl: Annotated[
        float, typer.Option(help="Seconds a conversation's lease lasts unless renewed.", min=1)
    ] = 30.0,
    max_body_bytes: Annotated[
        int,
        typer.Option(help="Largest request body in bytes; a larger one gets 413.", min=1024),
    ] = 32 << 20,
    log_level: Annotated[
        str,
        typer.Option(
            help="Log level of the JSON-lines log on stderr (debug, info, warning, error); "
            "info logs one line per request."
        ),
    ] = "info",
) -> None:
    """An OpenAI- and Anthropic-compatible proxy: apps keep their whole history, the provider
    sees the context abridged would send (point the app's base URL here)."""
    from abridged.cli.serve import run_proxy  # noqa: PLC0415

    raise typer.Exit(
        run_proxy(
            upstream=upstream,
            host=host,
            port=port,
            db=db,
            workers=workers,
            window=window,
            max_output=max_output,
            lease_ttl=lease_ttl,
            max_body_bytes=max_body_bytes,
            log_level=log_level,
        )
    )


@app.command()
def demo(
    port: Annotated[
        int, typer.Option(help="Port of the demo provider on 127.0.0.1.", min=1, max=65535)
    ] = 8300,
    window: Annotated[
        str, typer.Option(help="The demo model's context window, e.g. 16k (>= 1k).")
    ] = "16k",
    max_output: Annotated[
        str, typer.Option(help="The demo model's output ceiling, e.g. 4k.")
    ] = "4k",
    latency: Annotated[
        float, typer.Option(help="Seconds before each reply (0 to 10).", min=0, max=10)
    ] = 0.2,
) -> None:
    """Run a local provider with a scripted agent model (no key, no network) and print the
    commands that try serve, proxy and chat against it."""
    from abridged.cli.demo import run_demo  # noqa: PLC0415

    raise typer.Exit(run_demo(port=port, window=window, max_output=max_output, latency=latency))


keys_app = typer.Typer(
    help="API keys of the HTTP service.", no_args_is_help=True, rich_markup_mode=PLAIN_HELP
)
app.add_typer(keys_app, name="keys")


@keys_app.command("create")
def keys_create(
    tenant: Annotated[str, typer.Option(help="The tenant the key acts for.")],
    label: Annotated[str | None, typer.Option(help="A note to recognise the key by.")] = None,
    db: DbOption = None,
) -> None:
    """Make an API key and print it once (only its hash is stored)."""
    from abridged.cli.serve import run_keys_create  # noqa: PLC0415

    raise typer.Exit(run_keys_create(db, tenant, label))


@keys_app.command("list")
def keys_list(
    tenant: Annotated[str | None, typer.Option(help="Only this tenant's keys.")] = None,
    db: DbOption = None,
) -> None:
    """List the keys (ids, tenants, dates; never the keys)."""
    from abridged.cli.serve import run_keys_list  # noqa: PLC0415

    raise typer.Exit(run_keys_list(db, tenant))


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (from keys list).")],
    db: DbOption = None,
) -> None:
    """Revoke a key: requests with it get 401 (within 10 s on running workers)."""
    from abridged.cli.serve import run_keys_revoke  # noqa: PLC0415

    raise typer.Exit(run_keys_revoke(db, key_id))


def main() -> None:
    """Entry point of the console script."""
    app()
