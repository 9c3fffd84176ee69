"""Targeted mutation testing: plant known faults in a copy of the source, one at a time, and
check that the tests catch each one.

Each mutant is a fault a plausible change could bring: an owner check dropped, a transaction
split, a decoding guard narrowed, a secret shape loosened, an escape skipped, an overflow veto
reordered. The source is copied to a temporary directory (with the tests, the examples and a
link to the shared data next to it), one mutant is applied, and the mutant's tests run there
with ``PYTHONPATH`` pointing at the copy; a mutant whose tests still pass *survived*: the
tests miss that fault. A baseline run of every test selection, unmutated, comes first (a
failing baseline would make every mutant look caught).

    .venv/bin/python scripts/mutants.py                 # all, table to stdout
    .venv/bin/python scripts/mutants.py --report docs/MUTATION.md --json
    .venv/bin/python scripts/mutants.py --only owner-ignored --only groq-key
    .venv/bin/python scripts/mutants.py --check         # each mutant still applies (fast)

Why not ``mutmut``: it mutates every operator of every line (thousands of mutants, hours on
two cores, most of them equivalent); these are the faults an earlier independent attack
found the tests blind to, plus the ones the design's invariants name. The list is kept next to
the code it mutates in spirit: ``tests/scripts/test_mutants.py`` checks that every mutant still
applies to the source, so a refactor cannot silently turn one into a no-op.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path("src") / "abridged"
COPIED = ("src", "tests", "examples", "bench", "pyproject.toml", "README.md")

STORE_TESTS = ("tests/store",)
REDACT_TESTS = ("tests/engine/summarize/test_redact.py",)
TRANSCRIPT_TESTS = (
    "tests/engine/summarize/test_transcript.py",
    "tests/engine/summarize/test_prompts.py",
)
OVERFLOW_TESTS = ("tests/providers/test_overflow.py",)


@dataclass(frozen=True, slots=True)
class Mutant:
    """One planted fault: ``find`` (exactly once in ``path``, under ``src/abridged``) becomes
    ``replace``; ``tests`` are the test files or folders that must catch it."""

    name: str
    path: str
    find: str
    replace: str
    tests: tuple[str, ...]
    fault: str


MUTANTS: tuple[Mutant, ...] = (
    # -- store: ownership, the single writer, transactions --------------------------------
    Mutant(
        "owner-ignored",
        "store/queries.py",
        'if owner is not None and row["owner"] != owner:',
        "if False:",
        STORE_TESTS,
        "every operation ignores the owner",
    ),
    Mutant(
        "get-message-owner",
        "store/messages.py",
        'operation="get_message") as conn:\n'
        "            await queries.read_conversation(conn, conversation_id, owner)",
        'operation="get_message") as conn:\n'
        "            await queries.read_conversation(conn, conversation_id, None)",
        STORE_TESTS,
        "get_message ignores the owner",
    ),
    Mutant(
        "find-message-owner",
        "store/messages.py",
        "            queries.read_conversation_sync(conn, conversation_id, owner)\n"
        "            return queries.message_by_id(conn, conversation_id, message_id)",
        "            queries.read_conversation_sync(conn, conversation_id, None)\n"
        "            return queries.message_by_id(conn, conversation_id, message_id)",
        STORE_TESTS,
        "find_message ignores the owner",
    ),
    Mutant(
        "stored-messages-owner",
        "store/messages.py",
        'operation="stored_messages") as conn:\n'
        "            await queries.read_conversation(conn, conversation_id, owner)",
        'operation="stored_messages") as conn:\n'
        "            await queries.read_conversation(conn, conversation_id, None)",
        STORE_TESTS,
        "stored_messages ignores the owner",
    ),
    Mutant(
        "history-owner",
        "store/messages.py",
        'operation="history") as conn:\n'
        "            conv = await queries.read_conversation(conn, conversation_id, owner)",
        'operation="history") as conn:\n'
        "            conv = await queries.read_conversation(conn, conversation_id, None)",
        STORE_TESTS,
        "history ignores the owner",
    ),
    Mutant(
        "cas-without-version",
        "store/queries.py",
        "        .where(conversations.c.version == expected_version)\n"
        "        .values(version=expected_version + 1",
        "        .values(version=expected_version + 1",
        STORE_TESTS,
        "the compare-and-swap does not compare the version",
    ),
    Mutant(
        "deliver-without-lock",
        "store/messages.py",
        "    reserve(conn, conversation_id, owner, 0, holder=holder)  # lock first: one at a time",
        "    queries.read_conversation_sync(conn, conversation_id, owner)",
        STORE_TESTS,
        "deliver reads the queued messages before taking the conversation's row lock",
    ),
    Mutant(
        "append-many-split",
        "store/messages.py",
        "        return await self._write_keyed(\n",
        "        if len(rows) > 1:\n"
        "            split: list[int | dict[str, Any]] = []\n"
        "            for one in rows:\n"
        "                split += await self._append_rows(conversation_id, owner, [one], holder)\n"
        "            return split\n"
        "        return await self._write_keyed(\n",
        STORE_TESTS,
        "append_many commits one transaction per message",
    ),
    Mutant(
        "lease-steal",
        "store/leases.py",
        "    now = now_ms()",
        "    now = now_ms() + 10**12",
        STORE_TESTS,
        "a live lease can be taken over",
    ),
    # -- store: decoding of damaged rows ----------------------------------------------------
    Mutant(
        "decode-errors-narrowed",
        "store/codec.py",
        "DECODE_ERRORS: tuple[type[Exception], ...] = (\n    ValueError,\n    TypeError,",
        "DECODE_ERRORS: tuple[type[Exception], ...] = (ValueError,)\n_UNUSED = (\n    TypeError,",
        STORE_TESTS,
        "the corrupt-row handler catches ValueError only",
    ),
    Mutant(
        "pruned-decode-narrowed",
        "store/codec.py",
        "        pruned = message_from_dict(data)\n    except DECODE_ERRORS:\n        return None",
        "        pruned = message_from_dict(data)\n    except ValueError:\n        return None",
        STORE_TESTS,
        "a damaged pruned form raising anything but ValueError kills the context",
    ),
    Mutant(
        "damaged-row-raises",
        "store/damaged.py",
        "        except CorruptRowError as exc:\n            errors.append(exc)",
        "        except ZeroDivisionError as exc:\n            errors.append(exc)",
        STORE_TESTS,
        "one damaged message row makes the whole context unreadable",
    ),
    Mutant(
        "dates-decoded-at-fetch",
        "store/codec.py",
        "type_coerce(c, String()).label(c.name) if isinstance(c.type, DateTime) else c",
        "c",
        STORE_TESTS,
        "timestamps are decoded while fetching: one bad date fails the whole query",
    ),
    Mutant(
        "status-unchecked",
        "store/codec.py",
        "        if status not in STATUSES:",
        "        if False:",
        STORE_TESTS,
        "an unknown delivery status is accepted",
    ),
    Mutant(
        "skip-corrupt-ignored",
        "store/messages.py",
        "                if skip_corrupt:\n                    continue\n                raise",
        "                raise",
        STORE_TESTS,
        "skip_corrupt does not skip",
    ),
    Mutant(
        "settings-not-object",
        "store/codec.py",
        '    if not isinstance(value, dict):\n        raise CorruptRowError(f"stored {what} is not',
        '    if False:\n        raise CorruptRowError(f"stored {what} is not',
        STORE_TESTS,
        "a stored JSON value that is not an object is accepted as one",
    ),
    Mutant(
        "conversation-row-unchecked",
        "store/base.py",
        "return await body(conn, codec.check_conversation(row))",
        "return await body(conn, row)",
        STORE_TESTS,
        "a damaged version column reaches the single writer",
    ),
    # -- store: the environment ---------------------------------------------------------------
    Mutant(
        "reads-wait-long",
        "store/connect.py",
        "SQLITE_READ_TIMEOUT_S = 2.0",
        "SQLITE_READ_TIMEOUT_S = 30.0",
        STORE_TESTS,
        "a read waits 30 s behind another process's lock",
    ),
    Mutant(
        "failed-commit-keeps-lock",
        "store/connect.py",
        '        if state.asyncio_safe and getattr(driver, "in_transaction", True):\n'
        "            dbapi_connection.rollback()",
        "        pass",
        STORE_TESTS,
        "a connection whose commit failed goes back to the pool still holding its transaction",
    ),
    Mutant(
        "disk-full-unclassified",
        "store/connect.py",
        "    13: StoreFullError,  # SQLITE_FULL",
        "    13: StoreEnvironmentError,  # SQLITE_FULL",
        STORE_TESTS,
        "a full disk is not told apart from other failures",
    ),
    Mutant(
        "driver-errors-leak",
        "store/connect.py",
        "    except DRIVER_ERRORS as exc:\n"
        "        raise environment_error(exc, operation, url) from exc",
        "    except ZeroDivisionError:\n        raise",
        STORE_TESTS,
        "driver exceptions escape the store's boundary untyped",
    ),
    Mutant(
        "url-query-password-shown",
        "store/connect.py",
        '_SECRET_QUERY = re.compile(r"pass|pwd|secret|token|key", re.IGNORECASE)',
        '_SECRET_QUERY = re.compile(r"(?!)")',
        STORE_TESTS,
        "Store.url shows a ?password= query parameter",
    ),
    Mutant(
        "cause-keeps-password",
        "store/connect.py",
        "    for secret in _secrets(url):\n",
        "    for secret in _secrets(None):\n",
        STORE_TESTS,
        "a driver message quoting the password keeps it",
    ),
    # -- redaction ----------------------------------------------------------------------------
    Mutant(
        "groq-key",
        "engine/summarize/redact.py",
        r'SecretPattern("groq-key", re.compile(r"\bgsk_[A-Za-z0-9]{20,}")),',
        r'SecretPattern("groq-key", re.compile(r"\bgsk-[A-Za-z0-9]{20,}")),',
        REDACT_TESTS,
        "Groq keys are not redacted",
    ),
    Mutant(
        "hf-any-case",
        "engine/summarize/redact.py",
        r're.compile(r"\bhf_(?=[A-Za-z0-9]*[A-Z])(?=[A-Za-z0-9]*[a-z])[A-Za-z0-9]{30,}"),',
        r're.compile(r"\bhf_[A-Za-z0-9]{30,}"),',
        REDACT_TESTS,
        "a long lowercase hf_ identifier in code is redacted as a token",
    ),
    Mutant(
        "npm-unbounded",
        "engine/summarize/redact.py",
        r'SecretPattern("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])")),',
        r'SecretPattern("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}")),',
        REDACT_TESTS,
        "an npm token's shape matches the start of a longer identifier",
    ),
    Mutant(
        "azure-any-hex",
        "engine/summarize/redact.py",
        r'r"(?P<secret>[0-9a-f]{32})(?![\w-])",',
        r'r"(?P<secret>[0-9a-f]{32})",',
        REDACT_TESTS,
        "the first 32 hex digits of a longer digest after a key name are redacted",
    ),
    Mutant(
        "placeholder-redacted-again",
        "engine/summarize/redact.py",
        "    if _NOT_A_VALUE.match(value) or PLACEHOLDER.search(value):",
        "    if _NOT_A_VALUE.match(value):",
        REDACT_TESTS,
        "redact is not idempotent",
    ),
    Mutant(
        "prose-after-colon",
        "engine/summarize/redact.py",
        '        if ":" in separator and not (',
        "        if False and not (",
        REDACT_TESTS,
        "'the token: about' in prose is redacted",
    ),
    Mutant(
        "code-reference",
        "engine/summarize/redact.py",
        '        if _CODE_REF.search(value):  # self.password, os.environ["X"], get_token()',
        "        if False:",
        REDACT_TESTS,
        "password = self.password is redacted",
    ),
    Mutant(
        "url-password-kept",
        "engine/summarize/redact.py",
        '        _keep_prefix("password"),',
        "        lambda m: m.group(0),",
        REDACT_TESTS,
        "passwords in URLs are kept",
    ),
    Mutant(
        "pem-needs-end",
        "engine/summarize/redact.py",
        r'            r"|(?:[ \t]*\r?\n[ \t]*(?:[A-Za-z0-9+/=]{16,}|[\w-]+:[^\n]*))*)",',
        r'            r")",',
        REDACT_TESTS,
        "a private key whose END line was cut off is kept",
    ),
    # -- transcripts and prompts: escaping, redaction -----------------------------------------
    Mutant(
        "fold-skipped",
        "engine/summarize/folding.py",
        "    if escaped.isascii() or not TAG_PATTERN.search(fold(escaped)):",
        "    if True:",
        TRANSCRIPT_TESTS,
        "tags in fullwidth or zero-width forms are not escaped",
    ),
    Mutant(
        "format-chars-kept",
        "engine/summarize/folding.py",
        '            if c not in _INVISIBLE and unicodedata.category(c) != "Cf"',
        "            if c not in _INVISIBLE",
        TRANSCRIPT_TESTS,
        "zero-width characters break a tag up unseen",
    ),
    Mutant(
        "transcript-unredacted",
        "engine/summarize/transcript.py",
        "                cached = self.redacted[text] = redact(text)",
        "                cached = self.redacted[text] = text",
        TRANSCRIPT_TESTS,
        "transcripts are not redacted",
    ),
    Mutant(
        "tool-arguments-raw",
        "engine/summarize/transcript.py",
        "    args = cache.prep(call.arguments, limit, options)",
        "    args = call.arguments",
        TRANSCRIPT_TESTS,
        "tool-call arguments are neither clipped, redacted nor escaped",
    ),
    Mutant(
        "attribute-unescaped",
        "engine/summarize/transcript.py",
        """    value = value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")""",
        "    value = value",
        TRANSCRIPT_TESTS,
        "a tool name can close its attribute and open a tag",
    ),
    Mutant(
        "file-ops-unescaped",
        "engine/summarize/prompts.py",
        'f"<file_operations>\\n{escape_tags(format_file_ops(file_ops))}\\n</file_operations>\\n\\n"',
        'f"<file_operations>\\n{format_file_ops(file_ops)}\\n</file_operations>\\n\\n"',
        TRANSCRIPT_TESTS,
        "the file-operations block is not escaped",
    ),
    Mutant(
        "fallback-reason-unredacted",
        "engine/summarize/llm.py",
        '        first = truncate_tokens(" ".join(redact(text).split()), 24)',
        '        first = truncate_tokens(" ".join(text.split()), 24)',
        ("tests/engine/summarize/test_llm.py",),
        "the start of a heading-less summary is quoted unredacted in fallback_reason",
    ),
    # -- overflow classification --------------------------------------------------------------
    Mutant(
        "rate-limit-status",
        "providers/overflow.py",
        "    if status == 429 or (status is not None and status < 400):",
        "    if status is not None and status < 400:",
        OVERFLOW_TESTS,
        "a 429 that mentions the context length is taken for an overflow",
    ),
    Mutant(
        "veto-beats-code",
        "providers/overflow.py",
        "    if not explicit and _NOT_OVERFLOW.search(text):",
        "    if _NOT_OVERFLOW.search(text):",
        OVERFLOW_TESTS,
        "an overflow body mentioning 'quota' is not an overflow despite its code",
    ),
    Mutant(
        "code-veto-ignored",
        "providers/overflow.py",
        "    if any(_NOT_OVERFLOW.search(c) for c in codes):",
        "    if False:",
        OVERFLOW_TESTS,
        "a rate_limit code with overflow-like words is taken for an overflow",
    ),
    Mutant(
        "http-413-ignored",
        "providers/overflow.py",
        '    if status == 413:\n        return _info("http-413"',
        '    if False:\n        return _info("http-413"',
        OVERFLOW_TESTS,
        "a proxy's bare 413 is not an overflow",
    ),
    Mutant(
        "server-errors-final",
        "providers/overflow.py",
        "(status in (408, 409, 429) or status >= 500)",
        "(status in (408, 409, 429))",
        OVERFLOW_TESTS,
        "5xx errors are not retryable",
    ),
    Mutant(
        "scrub-keeps-secret",
        "providers/overflow.py",
        '            text = text.replace(secret, "[redacted]")',
        "            pass",
        OVERFLOW_TESTS,
        "a known API key quoted in an error is kept",
    ),
)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one mutant's test run gave: ``killed`` (the tests failed), or survived."""

    name: str
    path: str
    fault: str
    killed: bool
    seconds: float
    detail: str


def apply(source: str, mutant: Mutant) -> str:
    """``source`` with the mutant's fault planted; ``ValueError`` unless ``find`` occurs exactly
    once (a refactor moved it: the mutant must be updated, not silently skipped).

    >>> apply("a = 1\\n", Mutant("m", "x.py", "a = 1", "a = 2", (), ""))
    'a = 2\\n'
    """
    count = source.count(mutant.find)
    if count != 1:
        raise ValueError(
            f"mutant {mutant.name}: the text to replace occurs {count} times in {mutant.path}"
        )
    return source.replace(mutant.find, mutant.replace)


def check(root: Path, mutants: Sequence[Mutant]) -> list[str]:
    """The problems with ``mutants`` against the source under ``root`` (empty: all apply)."""
    problems = []
    for mutant in mutants:
        path = root / PACKAGE / mutant.path
        if not path.exists():
            problems.append(f"mutant {mutant.name}: no file {mutant.path}")
            continue
        try:
            mutated = apply(path.read_text(encoding="utf-8"), mutant)
            compile(mutated, str(path), "exec")
        except (ValueError, SyntaxError) as exc:
            problems.append(str(exc))
    return problems


def _copy(root: Path, target: Path) -> Path:
    repo = target / "repo"
    repo.mkdir()
    for name in COPIED:
        src = root / name
        if src.is_dir():
            shutil.copytree(src, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copy2(src, repo / name)
    shared = root.parent / "shared"
    if shared.exists():
        (target / "shared").symlink_to(shared)
    return repo


def _pytest(repo: Path, tests: Sequence[str], timeout: float) -> tuple[bool, str]:
    """Run ``tests`` in the copy; ``(passed, last line)``; a timeout counts as a failure."""
    env = {**os.environ, "PYTHONPATH": str(repo / "src"), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    try:
        done = subprocess.run(
            command, check=False, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout:.0f} s"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return done.returncode == 0, lines[-1] if lines else done.stderr.strip()[-200:]


def _imports_copy(repo: Path) -> bool:
    env = {**os.environ, "PYTHONPATH": str(repo / "src")}
    code = "import abridged, sys; print(abridged.__file__)"
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, env=env, capture_output=True, text=True
    )
    return out.stdout.strip().startswith(str(repo))


def run(root: Path, mutants: Sequence[Mutant], timeout: float) -> list[Outcome]:
    """Baseline every test selection, then run each mutant; its outcome, in order."""
    problems = check(root, mutants)
    if problems:
        raise SystemExit("\n".join(problems))
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="abridged-mutants-") as tmp:
        repo = _copy(root, Path(tmp))
        if not _imports_copy(repo):
            raise SystemExit("the copy's package is not the one imported (PYTHONPATH ignored?)")
        for tests in sorted({m.tests for m in mutants}):
            passed, last = _pytest(repo, tests, timeout)
            if not passed:
                raise SystemExit(f"baseline fails, mutants would mean nothing: {tests}: {last}")
            print(f"baseline {' '.join(tests)}: {last}", file=sys.stderr)
        for mutant in mutants:
            path = repo / PACKAGE / mutant.path
            original = path.read_text(encoding="utf-8")
            path.write_text(apply(original, mutant), encoding="utf-8")
            started = time.monotonic()
            try:
                passed, last = _pytest(repo, mutant.tests, timeout)
            finally:
                path.write_text(original, encoding="utf-8")
            outcome = Outcome(
                mutant.name,
                mutant.path,
                mutant.fault,
                killed=not passed,
                seconds=time.monotonic() - started,
                detail=last,
            )
            print(
                f"{'killed  ' if outcome.killed else 'SURVIVED'} {mutant.name:28} "
                f"{outcome.seconds:6.1f} s  {last[:80]}",
                file=sys.stderr,
            )
            outcomes.append(outcome)
    return outcomes


def table(outcomes: Sequence[Outcome]) -> str:
    """The outcomes as a Markdown table, survivors first."""
    killed = sum(o.killed for o in outcomes)
    lines = [
        f"{killed} of {len(outcomes)} mutants killed.",
        "",
        "| mutant | file | fault planted | result | seconds |",
        "| --- | --- | --- | --- | ---: |",
    ]
    for o in sorted(outcomes, key=lambda o: o.killed):
        result = "killed" if o.killed else "**survived**"
        lines.append(f"| `{o.name}` | `{o.path}` | {o.fault} | {result} | {o.seconds:.1f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; exit status 1 when a mutant survived or does not apply."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", default=[], help="run this mutant (repeat)")
    parser.add_argument("--check", action="store_true", help="only check that every mutant applies")
    parser.add_argument("--list", action="store_true", help="list the mutants")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per test run")
    parser.add_argument("--report", type=Path, help="write the table to this Markdown file")
    parser.add_argument("--json", action="store_true", help="print a JSON summary last")
    args = parser.parse_args(argv)
    known = {m.name: m for m in MUTANTS}
    unknown = [n for n in args.only if n not in known]
    if unknown:
        parser.error(f"no such mutant: {', '.join(unknown)}")
    chosen = [known[n] for n in args.only] if args.only else list(MUTANTS)
    if args.list:
        for m in chosen:
            print(f"{m.name:28} {m.path:34} {m.fault}")
        return 0
    if args.check:
        problems = check(ROOT, chosen)
        print("\n".join(problems) or f"all {len(chosen)} mutants apply")
        return 1 if problems else 0
    outcomes = run(ROOT, chosen, args.timeout)
    text = table(outcomes)
    print(text)
    if args.report:
        command = "scripts/mutants.py" + "".join(f" --only {n}" for n in args.only)
        args.report.write_text(
            "# Mutation testing\n\n"
            f"`.venv/bin/python {command}` plants each fault below in a copy of the source and "
            "runs the tests named for it; a survivor is a fault the tests miss. See the script's "
            "docstring for why these faults.\n\n" + text + "\n",
            encoding="utf-8",
        )
    survivors = [o.name for o in outcomes if not o.killed]
    if args.json:
        summary = {"mutants": len(outcomes), "killed": len(outcomes) - len(survivors)}
        print(json.dumps({**summary, "survivors": survivors}))
    return 1 if survivors else 0


if __name__ == "__main__":
    raise SystemExit(main())
