"""File-operation tracking: which files a conversation read and modified, from its tool calls.

``extract_file_ops`` walks the tool calls of some messages and returns a ``FileOps`` (read,
modified); merging it with the previous compaction's (``FileOps.merge``) makes it cumulative, and
a file read then modified counts as modified only.

Each tool call goes through a chain of *extractors*: functions ``(call) -> FileOps | None``; the
first that returns a ``FileOps`` decides for that call (``None`` means "not mine"). The default
chain (``DEFAULT_EXTRACTORS``) recognises:

- read tools (``read_file``, ``read``, ``Read``, ``view``, ``open``, ``cat``...): the path
  argument is read;
- edit tools (``write_file``, ``edit``, ``Edit``, ``str_replace``, ``create_file``...): the path
  is modified; ``str_replace_based_edit_tool`` / ``str_replace_editor`` by their ``command``
  (``view`` reads; ``create``, ``str_replace``, ``insert``, ``undo_edit`` modify);
- ``apply_patch`` (the V4A ``*** Update File:`` / ``*** Add File:`` / ``*** Delete File:`` /
  ``*** Move to:`` lines, and unified diffs' ``+++ b/path``);
- shell tools (``bash``, ``shell``, ``run_command``..., and mini-swe-agent's text protocol, whose
  ``ToolCall`` is ``bash`` with ``{"command": ...}``): see ``shell_file_ops``.

To recognise your own tools, pass your extractors first: ``extract_file_ops(messages,
extractors=(my_extractor, *DEFAULT_EXTRACTORS))``. Nothing is registered globally.

A call whose own result is an error does not count, except for shell commands (a chain such as
``sed -i ... && pytest`` fails when the tests fail, yet the file was modified).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from abridged.core.model import Message, ToolCall, ToolResult
from abridged.core.protocols import FileOps

FileOpsExtractor: TypeAlias = Callable[[ToolCall], FileOps | None]
"""Returns the file operations of one tool call, or ``None`` when it does not know the tool."""

EMPTY = FileOps()

READ_TOOLS = frozenset(
    {
        "read",
        "read_file",
        "readfile",
        "read_many_files",
        "view",
        "view_file",
        "open",
        "open_file",
        "cat",
        "get_file",
        "read_text_file",
    }
)
WRITE_TOOLS = frozenset(
    {
        "write",
        "write_file",
        "writefile",
        "create",
        "create_file",
        "edit",
        "edit_file",
        "multiedit",
        "multi_edit",
        "str_replace",
        "replace",
        "replace_in_file",
        "insert",
        "delete_file",
        "remove_file",
        "notebookedit",
        "notebook_edit",
        "append_file",
        "search_replace",
    }
)
EDITOR_TOOLS = frozenset({"str_replace_based_edit_tool", "str_replace_editor", "text_editor"})
PATCH_TOOLS = frozenset({"apply_patch", "patch", "apply_diff"})
SHELL_TOOLS = frozenset(
    {
        "bash",
        "sh",
        "shell",
        "zsh",
        "terminal",
        "run",
        "exec",
        "execute",
        "run_command",
        "run_shell_command",
        "execute_command",
        "execute_bash",
        "local_shell",
        "container.exec",
        "run_terminal_cmd",
    }
)
_PATH_KEYS = (
    "path",
    "file_path",
    "filepath",
    "file",
    "filename",
    "target_file",
    "absolute_path",
    "notebook_path",
    "relative_workspace_path",
    "uri",
)
_PATHS_KEYS = ("paths", "file_paths", "files")
_COMMAND_KEYS = ("command", "cmd", "script", "commands", "input", "code")


def normalize_path(path: str) -> str:
    """A path as tracked: surrounding quotes and whitespace stripped, ``./`` and duplicate
    slashes folded (``posixpath.normpath``); ``file://`` URIs become paths. No file system access.

    >>> normalize_path("./src//a.py"), normalize_path("file:///tmp/x")
    ('src/a.py', '/tmp/x')
    """
    path = path.strip().strip("'\"`")
    if path.startswith("file://"):
        path = path[len("file://") :]
    if not path:
        return ""
    return posixpath.normpath(path)


def _ops(read: Iterable[str] = (), modified: Iterable[str] = ()) -> FileOps:
    mod = {p for p in (normalize_path(x) for x in modified) if _plausible(p)}
    rd = {p for p in (normalize_path(x) for x in read) if _plausible(p)} - mod
    return FileOps(read=frozenset(rd), modified=frozenset(mod))


_NOT_FILES = frozenset({"", ".", "..", "/", "-", "/dev/null", "/dev/stdout", "/dev/stderr"})


def _plausible(path: str) -> bool:
    if path in _NOT_FILES or path.startswith(("/dev/", "/proc/")) or "\n" in path:
        return False
    return not re.search(r"[*?$`|<>]|^\{|^-|&&", path)


def _arguments(call: ToolCall) -> Any:
    parsed = call.parsed_arguments()
    if parsed is None and call.arguments.strip() not in ("", "null"):
        return call.arguments  # a raw string (a custom tool's free-form input)
    return parsed


def _paths_in(args: Any) -> list[str]:
    if isinstance(args, str):
        return [args]
    if not isinstance(args, Mapping):
        return []
    out: list[str] = []
    for key in _PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str):
            out.append(value)
            break
    for key in _PATHS_KEYS:
        value = args.get(key)
        if isinstance(value, list):
            out.extend(v for v in value if isinstance(v, str))
    return out


def _tool_key(name: str) -> str:
    return name.strip().lower().rsplit("__", 1)[-1].replace("-", "_")  # mcp__server__tool


def read_write_tool_ops(call: ToolCall) -> FileOps | None:
    """Read tools, edit/write tools and the ``str_replace_based_edit_tool`` family."""
    key = _tool_key(call.name)
    args = _arguments(call)
    if key in EDITOR_TOOLS:
        command = args.get("command") if isinstance(args, Mapping) else None
        paths = _paths_in(args)
        if command == "view":
            return _ops(read=paths)
        return _ops(modified=paths)
    if key in READ_TOOLS:
        return _ops(read=_paths_in(args))
    if key in WRITE_TOOLS:
        return _ops(modified=_paths_in(args))
    return None


_V4A = re.compile(r"^\*\*\* (?:Update|Add|Delete) File:\s*(.+?)\s*$", re.MULTILINE)
_V4A_MOVE = re.compile(r"^\*\*\* Move to:\s*(.+?)\s*$", re.MULTILINE)
_DIFF_NEW = re.compile(r"^\+\+\+ (?:[ab]/)?(.+?)(?:\t.*)?\s*$", re.MULTILINE)
_DIFF_OLD = re.compile(r"^--- (?:[ab]/)?(.+?)(?:\t.*)?\s*$", re.MULTILINE)


def patch_paths(text: str) -> list[str]:
    """The files a patch touches: V4A ``*** Update/Add/Delete File:`` and ``*** Move to:`` lines,
    and unified-diff ``+++``/``---`` headers (``/dev/null`` left out).

    >>> patch_paths("*** Begin Patch\\n*** Update File: src/a.py\\n@@\\n-x\\n+y\\n*** End Patch")
    ['src/a.py']
    """
    paths = _V4A.findall(text) + _V4A_MOVE.findall(text)
    if not paths:
        paths = _DIFF_NEW.findall(text) + _DIFF_OLD.findall(text)
    out: list[str] = []
    for p in paths:
        if p != "/dev/null" and p not in out:
            out.append(p)
    return out


def patch_tool_ops(call: ToolCall) -> FileOps | None:
    """``apply_patch``-style tools: every file named in the patch is modified."""
    if _tool_key(call.name) not in PATCH_TOOLS:
        return None
    args = _arguments(call)
    texts: list[str] = []
    if isinstance(args, str):
        texts.append(args)
    elif isinstance(args, Mapping):
        texts.extend(v for v in args.values() if isinstance(v, str))
    return _ops(modified=[p for t in texts for p in patch_paths(t)])


def _command_of(args: Any) -> str | None:
    if isinstance(args, str):
        return args
    if not isinstance(args, Mapping):
        return None
    for key in _COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            # An argv list: ["bash", "-lc", "cat x"] runs its last item as a script.
            if len(value) >= 3 and value[1] in ("-c", "-lc") and value[0].endswith("sh"):
                return str(value[-1])
            return shlex.join(value)
    return None


def shell_command(call: ToolCall) -> str | None:
    """The shell command of a shell-tool call (``bash``, ``shell``, ...), else ``None``."""
    if _tool_key(call.name) not in SHELL_TOOLS:
        return None
    return _command_of(_arguments(call))


def shell_tool_ops(call: ToolCall) -> FileOps | None:
    """Shell tools: the files their command reads and modifies (see ``shell_file_ops``)."""
    command = shell_command(call)
    if command is None:
        return None
    return shell_file_ops(command)


DEFAULT_EXTRACTORS: tuple[FileOpsExtractor, ...] = (
    read_write_tool_ops,
    patch_tool_ops,
    shell_tool_ops,
)

# -- shell commands -------------------------------------------------------------------------------

_READ_COMMANDS = frozenset(
    {"cat", "head", "tail", "less", "more", "nl", "bat", "batcat", "wc", "view", "tac", "od", "xxd"}
)
_GREP = frozenset({"grep", "egrep", "fgrep", "rg", "ag"})
_OPTION_WITH_VALUE = {
    "head": {"-n", "-c", "--lines", "--bytes"},
    "tail": {"-n", "-c", "--lines", "--bytes"},
    "nl": {"-b", "-w", "-s", "-v", "-i"},
    "grep": {"-e", "-f", "-m", "-A", "-B", "-C", "--include", "--exclude", "--color"},
    "rg": {"-e", "-g", "-t", "-T", "-m", "-A", "-B", "-C", "--glob", "--type"},
    "sed": {"-e", "-f", "-l"},
    "cp": {"-t", "-S"},
    "mv": {"-t", "-S"},
    "tee": set(),
}
_HEREDOC = re.compile(r"(?<!<)<<(-?)[ \t]*(['\"]?)([A-Za-z_][\w.-]*)\2")
_PY_OPEN = re.compile(
    r"""\bopen\(\s*(?:r|f)?(['"])([^'"\n]+)\1\s*(?:,\s*(?:mode\s*=\s*)?(['"])([rwaxbt+]+)\3)?"""
)
_PY_WRITE_TEXT = re.compile(r"""Path\(\s*(['"])([^'"\n]+)\1\s*\)\.write_(?:text|bytes)\(""")
_PY_READ_TEXT = re.compile(r"""Path\(\s*(['"])([^'"\n]+)\1\s*\)\.read_(?:text|bytes)\(""")
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "\n", "(", ")", ";;", "|&"})
_REDIRECT_OUT = frozenset({">", ">>", ">|", "&>", "&>>"})
_WRAPPERS = frozenset({"sudo", "time", "nohup", "env", "command", "exec", "xargs", "timeout"})


def _split_heredocs(command: str) -> tuple[str, list[str]]:
    """The command with heredoc bodies removed, and those bodies in order."""
    lines = command.split("\n")
    out: list[str] = []
    bodies: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        for m in _HEREDOC.finditer(line):
            strip_tabs, word = m.group(1) == "-", m.group(3)
            body: list[str] = []
            while i < len(lines):
                candidate = lines[i].lstrip("\t") if strip_tabs else lines[i]
                i += 1
                if candidate.strip() == word:
                    break
                body.append(lines[i - 1])
            bodies.append("\n".join(body))
    return "\n".join(out), bodies


def _tokens(command: str) -> list[str]:
    """Shell words and operators; a new line is an operator (it separates commands)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: fall back to plain splitting
        return command.replace("\n", " ; ").split()


def simple_command_words(command: str) -> list[str] | None:
    """The words of ``command`` when it is one simple command (no pipeline, list, subshell or
    redirection); ``None`` otherwise, as what such a line prints is what its last part made.

    >>> simple_command_words("npm pkg get 'config.x'"), simple_command_words("a | b")
    (['npm', 'pkg', 'get', 'config.x'], None)
    """
    tokens = _tokens(command.strip())
    if not tokens or any(set(token) <= _OPERATOR_CHARS for token in tokens):
        return None
    return tokens


_OPERATOR_CHARS = frozenset(";&|()<>\n")


def _simple_commands(tokens: Sequence[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS or set(token) <= set("\n;&|()"):
            out.append([])
        else:
            out[-1].append(token)
    return [c for c in out if c]


def _strip_wrappers(words: list[str]) -> list[str]:
    while words:
        head = words[0]
        if re.match(r"^[A-Za-z_]\w*=", head):  # VAR=value cmd
            words = words[1:]
        elif head in _WRAPPERS:
            words = words[1:]
            while words and words[0].startswith("-"):
                words = words[1:]
            if head == "timeout" and words and re.match(r"^\d", words[0]):
                words = words[1:]
        else:
            break
    return words


def _operands(words: Sequence[str], name: str) -> list[str]:
    """Non-option arguments (an option that takes a value consumes it)."""
    with_value = _OPTION_WITH_VALUE.get(name, set())
    out: list[str] = []
    skip = False
    end_of_options = False
    for word in words:
        if skip:
            skip = False
            continue
        if not end_of_options and word == "--":
            end_of_options = True
            continue
        if not end_of_options and word.startswith("-") and word != "-":
            if word in with_value:
                skip = True
            continue
        out.append(word)
    return out


def _python_file_ops(code: str, read: list[str], modified: list[str]) -> None:
    for m in _PY_OPEN.finditer(code):
        mode = m.group(4) or "r"
        (modified if any(c in mode for c in "wax+") else read).append(m.group(2))
    modified.extend(m.group(2) for m in _PY_WRITE_TEXT.finditer(code))
    read.extend(m.group(2) for m in _PY_READ_TEXT.finditer(code))


_FD_REDIRECTS = frozenset({">", ">>", ">&", "<", "<&", ">|"})


def _one_command(words: list[str], bodies: list[str], read: list[str], modified: list[str]) -> None:
    """Record what one simple command reads and modifies; ``bodies`` are the heredoc bodies not
    yet consumed (a ``<<`` takes the next one)."""
    rest: list[str] = []
    stdin_body: str | None = None
    i = 0
    while i < len(words):
        word = words[i]
        following = words[i + 1] if i + 1 < len(words) else None
        if re.fullmatch(r"\d", word) and following in _FD_REDIRECTS:
            i += 1  # the file descriptor of "2> file" / "2>&1"
        elif word in (">&", "<&"):
            i += 2  # a descriptor duplication, not a file
        elif word in _REDIRECT_OUT:
            if following is not None and not following.startswith("&"):
                modified.append(following)
            i += 2
        elif word == "<":
            if following is not None:
                read.append(following)
            i += 2
        elif word in ("<<", "<<-"):
            if bodies:
                stdin_body = bodies.pop(0)
            i += 2
        elif word == "<<<":
            i += 2
        else:
            rest.append(word)
            i += 1
    words = _strip_wrappers(rest)
    if not words:
        return
    name = posixpath.basename(words[0])
    args = words[1:]
    if name in _READ_COMMANDS:
        read.extend(_operands(args, name))
    elif name in _GREP:
        _grep(name, args, read)
    elif name in ("sed", "perl"):
        in_place = any(
            a == "--in-place" or a.startswith("--in-place=") or re.match(r"^-[a-zA-Z]*i", a)
            for a in args
        )
        ops = _operands(args, "sed")
        has_script_option = any(a in ("-e", "-f") for a in args)
        files = ops if has_script_option else ops[1:]
        (modified if in_place else read).extend(files)
    elif name == "tee":
        modified.extend(_operands(args, "tee"))
    elif name in ("mv", "cp", "install", "rsync"):
        _copy_or_move(name, args, read, modified)
    elif name in ("rm", "unlink", "touch", "truncate", "shred"):
        modified.extend(_operands(args, name))
    elif (name == "git" and args[:1] == ["apply"]) or name == "patch":
        ops = _operands(args[1:] if name == "git" else args, name)
        if stdin_body is not None:
            modified.extend(patch_paths(stdin_body))
        read.extend(o for o in ops if o.endswith((".patch", ".diff")))
    elif name == "git" and args[:1] in (["checkout"], ["restore"]) and "--" in args:
        modified.extend(args[args.index("--") + 1 :])
    elif name.startswith("python"):
        if "-c" in args and args.index("-c") + 1 < len(args):
            _python_file_ops(args[args.index("-c") + 1], read, modified)
        if stdin_body is not None:
            _python_file_ops(stdin_body, read, modified)


def _grep(name: str, args: list[str], read: list[str]) -> None:
    recursive = name in ("rg", "ag") or any(
        (a.startswith("-") and not a.startswith("--") and ("r" in a or "R" in a))
        or a in ("--recursive", "--dereference-recursive")
        for a in args
    )
    ops = _operands(args, "rg" if name == "rg" else "grep")
    has_pattern_option = any(a in ("-e", "-f") or a.startswith("--regexp") for a in args)
    files = ops if has_pattern_option else ops[1:]
    # A recursive search names directories; only operands that look like files count.
    read.extend(f for f in files if not recursive or posixpath.splitext(f)[1])


def _copy_or_move(name: str, args: list[str], read: list[str], modified: list[str]) -> None:
    ops = _operands(args, name)
    sources = modified if name == "mv" else read
    if any(a == "-t" for a in args):
        sources.extend(ops)
    elif len(ops) >= 2:
        sources.extend(ops[:-1])
        if not ops[-1].endswith("/"):
            modified.append(ops[-1])


def shell_file_ops(command: str) -> FileOps:
    """The files a shell command reads and modifies, by the shape of its commands.

    Read: ``cat``, ``head``, ``tail``, ``less``, ``nl``, ``wc``, ``grep``/``rg`` file operands,
    ``sed`` without ``-i``, input redirections ``< file``, python ``open(path)``. Modified: output
    redirections ``>``/``>>`` (``cat <<EOF > file`` included), ``sed -i``/``perl -pi``, ``tee``,
    the target of ``mv``/``cp`` (and the sources of ``mv``), ``rm``, ``touch``, ``git apply``
    or ``patch`` of a heredoc patch (the files it names), ``git checkout -- files``, python
    heredocs or ``-c`` code that ``open(path, "w")``. Chains (``&&``, ``||``, ``;``, pipes, new
    lines) and heredoc bodies are handled; ``/dev/null`` and globs are not files.

    >>> ops = shell_file_ops("cat a.py && sed -i 's/x/y/' b.py > /dev/null")
    >>> sorted(ops.read), sorted(ops.modified)
    (['a.py'], ['b.py'])
    """
    stripped, bodies = _split_heredocs(command.replace("\\\n", " "))
    read: list[str] = []
    modified: list[str] = []
    for words in _simple_commands(_tokens(stripped)):
        _one_command(words, bodies, read, modified)
    return _ops(read=read, modified=modified)


# -- messages -------------------------------------------------------------------------------------


def file_ops_of_call(
    call: ToolCall, extractors: Sequence[FileOpsExtractor] = DEFAULT_EXTRACTORS
) -> FileOps:
    """The file operations of one call: the first extractor that knows the tool decides."""
    for extractor in extractors:
        ops = extractor(call)
        if ops is not None:
            return ops
    return EMPTY


_SCRIPT_WRITE = re.compile(
    r"(?<!<)<<-?[ \t]*(['\"]?)(?P<word>[A-Za-z_][\w.-]*)\1[^\n]*?>[ \t]*(?P<path>[^\s;&|]+\.py)\b"
    r"[^\n]*\n(?P<body>.*?)\n[ \t]*(?P=word)[ \t]*(?:\n|$)",
    re.DOTALL,
)
_SCRIPT_RUN = re.compile(r"(?:^|[\s;&|(])python[\d.]*\s+(?:-\S+\s+)*(?P<path>[^\s;&|<>]+\.py)\b")
_GIT_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)
_GIT_STATUS_FILE = re.compile(r"^[ MADRCU?]{2} (?:.+ -> )?(\S+)$", re.MULTILINE)


def script_file_ops(command: str, scripts: dict[str, str]) -> FileOps:
    """Python scripts across calls: ``cat <<EOF > fix.py`` records the script in ``scripts``
    (updated in place); a later ``python fix.py`` counts what the script's code opens."""
    for m in _SCRIPT_WRITE.finditer(command):
        scripts[normalize_path(m.group("path"))] = m.group("body")
    read: list[str] = []
    modified: list[str] = []
    for m in _SCRIPT_RUN.finditer(command):
        body = scripts.get(normalize_path(m.group("path")))
        if body is not None:
            _python_file_ops(body, read, modified)
    return _ops(read=read, modified=modified)


def result_file_ops(command: str, output: str) -> FileOps:
    """Files a shell command's output shows as modified: ``git diff`` headers (``diff --git
    a/x b/x``) and ``git status --short`` lines."""
    modified: list[str] = []
    if re.search(r"\bgit\b[^\n]*\bdiff\b", command):
        for a, b in _GIT_DIFF_FILE.findall(output):
            modified.extend((a, b) if a != b else (b,))
    if re.search(r"\bgit\b[^\n]*\bstatus\b[^\n]*(?:-s\b|--short|--porcelain)", command):
        modified.extend(_GIT_STATUS_FILE.findall(output))
    return _ops(modified=modified)


def extract_file_ops(
    messages: Sequence[Message],
    *,
    extractors: Sequence[FileOpsExtractor] = DEFAULT_EXTRACTORS,
    previous: FileOps = EMPTY,
    follow_scripts: bool = True,
    read_results: bool = True,
) -> FileOps:
    """The files read and modified by the tool calls in ``messages``, merged into ``previous``
    (cumulative: a file read earlier and modified now is modified).

    Each call goes through ``extractors`` (the first that knows the tool decides). For shell
    calls, two cross-call inferences are added: with ``follow_scripts``, a python script written
    by a heredoc and later run counts what it opens (``script_file_ops``); with
    ``read_results``, ``git diff`` / ``git status --short`` output names modified files
    (``result_file_ops``).

    A call whose result is an error is skipped, except a shell command (see the module
    docstring). Calls without a result in ``messages`` count (their result may come later).
    """
    results: dict[str, ToolResult] = {}
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolResult):
                results[part.call_id] = part
    scripts: dict[str, str] = {}
    # Gathered in place, then made a FileOps once: merging one call at a time would copy the
    # sets on every call (quadratic in the number of files). Modified wins over read, whatever
    # the order, as with ``FileOps.merge``.
    read: set[str] = set(previous.read)
    modified: set[str] = set(previous.modified)
    merged = False
    for message in messages:
        for call in message.tool_calls:
            result = results.get(call.id)
            command = shell_command(call)
            if result is not None and result.is_error and command is None:
                continue
            found = [file_ops_of_call(call, extractors)]
            if command is not None:
                if follow_scripts:
                    found.append(script_file_ops(command, scripts))
                if read_results and result is not None:
                    found.append(result_file_ops(command, result.text))
            for ops in found:
                read |= ops.read
                modified |= ops.modified
            merged = True
    if not merged:
        return previous
    return FileOps(read=frozenset(read - modified), modified=frozenset(modified))


def format_file_ops(ops: FileOps) -> str:
    """Two lines, ``Modified: ...`` and ``Read: ...`` (sorted; ``none`` when empty)."""
    modified = ", ".join(sorted(ops.modified)) or "none"
    read = ", ".join(sorted(ops.read)) or "none"
    return f"Modified: {modified}\nRead: {read}"


_FILE_LINE = re.compile(r"^\s*[-*]?\s*(Modified|Read)\s*:\s*(.*)$", re.IGNORECASE | re.MULTILINE)


def parse_file_ops(text: str) -> FileOps:
    """The inverse of ``format_file_ops`` (lines ``Modified: a, b`` and ``Read: c``); a trailing
    ``(+N more)`` note is ignored."""
    read: list[str] = []
    modified: list[str] = []
    for m in _FILE_LINE.finditer(text):
        items = re.sub(r"\s*\(\+\d+ more\)\s*$", "", m.group(2))
        names = [x.strip() for x in items.split(", ") if x.strip() and x.strip() != "none"]
        (modified if m.group(1).lower() == "modified" else read).extend(names)
    return _ops(read=read, modified=modified)


def json_arguments(call: ToolCall) -> Mapping[str, Any]:
    """The call's arguments as a mapping (``{}`` when they are not a JSON object)."""
    parsed = call.parsed_arguments()
    return parsed if isinstance(parsed, Mapping) else {}


__all__ = [
    "DEFAULT_EXTRACTORS",
    "FileOpsExtractor",
    "extract_file_ops",
    "file_ops_of_call",
    "format_file_ops",
    "json_arguments",
    "normalize_path",
    "parse_file_ops",
    "patch_paths",
    "patch_tool_ops",
    "read_write_tool_ops",
    "result_file_ops",
    "script_file_ops",
    "shell_command",
    "shell_file_ops",
    "shell_tool_ops",
]
