"""Shared by the commands: error messages, limits and budget settings from options, the store."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from abridged.core.budget import BudgetSettings, parse_token_size
from abridged.core.windows import LimitsOverride, ModelLimits, resolve_limits
from abridged.errors import AbridgedError, FormatError, SettingError
from abridged.providers.registry import load_registry

if TYPE_CHECKING:
    from abridged.core.protocols import ChatModel, Summarizer
    from abridged.engine.compaction_settings import CompactionSettings
    from abridged.formats.transcripts import Transcript

#: Exit codes of every command.
OK, BAD_INPUT, BAD_USAGE = 0, 1, 2


class CliError(AbridgedError):
    """A problem to report in one line, with the exit code to leave with."""

    def __init__(self, message: str, code: int = BAD_INPUT) -> None:
        super().__init__(message)
        self.code = code


def stderr() -> Console:
    """The console for progress, notices and errors."""
    return Console(stderr=True)


#: Columns of output piped to a file or another program (a terminal's own width otherwise):
#: wide enough that paths and table rows are never wrapped.
PIPED_WIDTH = 240


def stdout() -> Console:
    """The console for a command's results: the terminal's width (or ``COLUMNS``), else
    ``PIPED_WIDTH`` columns when piped (rich would wrap at 80 and break paths)."""
    console = Console()
    if console.is_terminal or os.environ.get("COLUMNS"):
        return console
    return Console(width=PIPED_WIDTH)


#: Other names of the input formats, so that one set of names works everywhere: the output
#: names of ``compact --format`` (``openai``, ``anthropic``) name the same files on input ...
INPUT_FORMAT_ALIASES = {"openai": "openai-chat", "anthropic": "anthropic-messages"}
#: ... and the input names name the same output.
OUTPUT_FORMAT_ALIASES = {"openai-chat": "openai", "anthropic-messages": "anthropic"}


def fail(error: CliError) -> int:
    """Print ``error`` on stderr; returns its exit code."""
    stderr().print(f"[red]error:[/] {escape(error.message)}", highlight=False, soft_wrap=True)
    return error.code


def load(path: Path, format: str | None, session: int | None = None) -> list[Transcript]:
    """The transcripts of ``path`` (the ``session``-th only when given), or ``CliError``."""
    from abridged.formats.transcripts import (  # noqa: PLC0415
        FORMATS,
        load_session,
        load_transcripts,
    )

    if format is not None:
        format = INPUT_FORMAT_ALIASES.get(format, format)
        if format not in FORMATS:
            raise CliError(
                f"--input-format {format!r}: expected one of {', '.join(FORMATS)}", BAD_USAGE
            )
    if not path.exists():
        raise CliError(f"cannot read {path}: no such file")
    if path.is_dir():
        raise CliError(f"cannot read {path}: it is a directory")
    try:
        if session is not None:
            # only that session is read (a mini-swe-agent file is not even parsed before it)
            chosen = load_session(path, session, format) if session >= 1 else None
            if chosen is None:
                count = len(load_transcripts(path, format))
                raise CliError(
                    f"--session {session}: the file holds {count} session"
                    + ("s" if count != 1 else ""),
                    BAD_USAGE,
                )
            if not chosen.messages:
                raise CliError(f"{path}: session {session} ({chosen.id}) holds no message")
            return [chosen]
        transcripts = load_transcripts(path, format)
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except FormatError as exc:
        raise CliError(exc.describe()) from exc
    except CliError:
        raise
    except AbridgedError as exc:
        raise CliError(f"{path}: {exc}") from exc
    if not transcripts:
        raise CliError(f"{path}: no session in the file")
    return transcripts


def size(value: str | None, name: str) -> int | None:
    """A token size option (``16k`` = 16,384), or ``CliError`` (exit 2)."""
    if value is None:
        return None
    try:
        return parse_token_size(value, name=name)
    except SettingError as exc:
        raise CliError(f"--{name.replace('_', '-')} {value!r}: {exc.valid}", BAD_USAGE) from exc


def limits_for(model: str, window: str | None, max_output: str | None) -> ModelLimits:
    """The model's limits, with ``--window`` / ``--max-output`` overriding the registry's."""
    context_window = size(window, "window")
    output = size(max_output, "max_output")
    override = None
    if context_window is not None or output is not None:
        try:
            override = LimitsOverride(context_window=context_window, max_output=output)
        except SettingError as exc:
            raise setting_error(exc) from exc
    try:
        return resolve_limits(model, override=override, registry=load_registry())
    except SettingError as exc:
        raise setting_error(exc) from exc


@dataclass(frozen=True, slots=True)
class Knobs:
    """The budget and compaction options shared by ``replay`` and ``compact``."""

    trigger: float | None = None
    target: float | None = None
    keep_recent: str | None = None
    summary_max: str | None = None
    safety_margin: str | None = None
    prune: bool = True
    compaction: bool = True
    pin_task: bool = True

    def budget(self) -> BudgetSettings:
        """The ``BudgetSettings`` these options ask for (``CliError`` exit 2 when invalid)."""
        values: dict[str, Any] = {"enabled": self.compaction}
        if self.trigger is not None:
            values["trigger_ratio"] = self.trigger
        if self.target is not None:
            values["target_ratio"] = self.target
        for name in ("keep_recent", "summary_max", "safety_margin"):
            value = size(getattr(self, name), name)
            if value is not None:
                key = name if name == "safety_margin" else f"{name}_tokens"
                values[key] = value
        try:
            return BudgetSettings(**values)
        except SettingError as exc:
            raise CliError(_option_error(exc), BAD_USAGE) from exc

    def compaction_settings(self) -> CompactionSettings:
        """The ``CompactionSettings`` these options ask for."""
        from abridged.engine.compaction_settings import CompactionSettings  # noqa: PLC0415

        return CompactionSettings(prune_enabled=self.prune, pin_first_task=self.pin_task)


_OPTION_OF = {
    "trigger_ratio": "--trigger",
    "target_ratio": "--target",
    "keep_recent_tokens": "--keep-recent",
    "summary_max_tokens": "--summary-max",
    "safety_margin": "--safety-margin",
    "context_window": "--window",
    "max_output": "--max-output",
}


def _option_error(exc: SettingError) -> str:
    option = _OPTION_OF.get(exc.name, exc.name)
    return f"{option} {exc.value!r} is invalid: expected {exc.valid}"


def setting_error(exc: SettingError) -> CliError:
    """A ``SettingError`` from the engine as a usage error naming the option."""
    return CliError(_option_error(exc), BAD_USAGE)


def store_url(db: str | None) -> str | None:
    """The database the store commands use: ``--db``, else ``ABRIDGED_DB``, else the default."""
    return db if db else os.environ.get("ABRIDGED_DB") or None


def sqlite_path(url: str | None) -> Path | None:
    """The SQLite file ``url`` (or the default) names, ``None`` for another database."""
    from abridged.store.connect import default_path  # noqa: PLC0415

    if url is None:
        return default_path()
    if "://" not in url:
        return Path(url).expanduser()
    if url.startswith("sqlite"):
        rest = url.split("://", 1)[1]
        return Path(rest[1:]) if rest.startswith("/") else Path(rest)
    return None


def check_database(url: str | None, *, create_folder: bool = False) -> None:
    """``CliError`` (exit 1) when the SQLite file ``url`` names cannot be opened for writing: a
    directory, a folder that does not exist (created only with ``create_folder``: ``db
    upgrade``), or a place where no file can be made (``/proc/x.db``). Checked before the store
    opens it, so that the user gets one line, never a driver's traceback. ``None`` (the default
    file, whose folder is the user's data directory) and other databases are left alone."""
    if not url:
        return
    path = sqlite_path(url)
    if path is None:
        return
    where = f"cannot use the database {path}"
    if path.is_dir():
        raise CliError(f"{where}: it is a directory")
    folder = path.parent
    if not folder.exists() and create_folder:
        return
    if not folder.is_dir():
        what = "is not a directory" if folder.exists() else "does not exist (create it first)"
        raise CliError(f"{where}: {folder} {what}")
    try:
        if path.exists():
            with path.open("r+b"):
                pass
        else:
            with path.open("xb"):
                pass
            path.unlink()
    except OSError as exc:
        raise CliError(f"{where}: {exc.strerror or exc}") from exc


def plural(count: int, word: str) -> str:
    """``1 session``, ``3 sessions``."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def join(items: Sequence[str]) -> str:
    """``a, b and c``."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def make_summarizer(
    spec: str, base_url: str | None = None
) -> tuple[Summarizer | ChatModel | None, str]:
    """The summarizer ``--summarizer`` names: ``extractive`` (``None``: the engine's default) or
    a model string (``chat_model_from_string``); and its name for reports."""
    if spec.strip().lower() == "extractive":
        return None, "extractive"
    from abridged.providers.select import chat_model_from_string  # noqa: PLC0415

    try:
        model = chat_model_from_string(spec, base_url=base_url)
    except SettingError as exc:
        message = f"--summarizer {spec!r}: expected extractive or {exc.valid}"
        raise CliError(message, BAD_USAGE) from exc
    except AbridgedError as exc:
        raise CliError(f"--summarizer {spec!r}: {exc}", BAD_USAGE) from exc
    return model, f"llm:{model.name}"
