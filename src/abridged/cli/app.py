"""The ``abridged`` command: its commands, each importing what it needs only when it runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    name="abridged",
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
    path: Annotated[Path, typer.Argument(help="Transcript file (format detected).")],
    format: Annotated[
        str | None,
        typer.Option("--format", "-f", help="Transcript format, when detection is not enough."),
    ] = None,
    window: Annotated[
        str | None,
        typer.Option(help="Context window, e.g. 16k (k = 1,024). Default: the model's."),
    ] = None,
    max_output: Annotated[
        str | None, typer.Option(help="Maximum output tokens, e.g. 4k. Default: the model's.")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Model whose limits to use. Default: the transcript's.")
    ] = None,
    session: Annotated[
        int | None, typer.Option(help="Only the N-th session of the file (1-based).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
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


def main() -> None:
    """Entry point of the console script."""
    app()
