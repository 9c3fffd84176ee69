"""Tests of file-operation tracking: tool shapes, shell commands, cumulative merging, extension."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abridged.core.model import Message, Text, ToolCall, ToolResult
from abridged.core.protocols import FileOps
from abridged.engine.summarize.fileops import (
    DEFAULT_EXTRACTORS,
    extract_file_ops,
    file_ops_of_call,
    format_file_ops,
    normalize_path,
    parse_file_ops,
    patch_paths,
    shell_file_ops,
)


def _call(name: str, **arguments: object) -> ToolCall:
    return ToolCall("c1", name, json.dumps(arguments))


def _ops(call: ToolCall) -> tuple[list[str], list[str]]:
    ops = file_ops_of_call(call)
    return sorted(ops.read), sorted(ops.modified)


@pytest.mark.parametrize(
    ("call", "read", "modified"),
    [
        (_call("read_file", path="src/a.py"), ["src/a.py"], []),
        (_call("Read", file_path="/repo/b.py"), ["/repo/b.py"], []),
        (_call("view", path="./docs/x.md"), ["docs/x.md"], []),
        (_call("open", file="c.txt"), ["c.txt"], []),
        (_call("read_many_files", paths=["a.py", "b.py"]), ["a.py", "b.py"], []),
        (_call("write_file", path="out.json", content="{}"), [], ["out.json"]),
        (_call("Edit", file_path="src/a.py", old_string="x", new_string="y"), [], ["src/a.py"]),
        (_call("edit", path="d.py"), [], ["d.py"]),
        (_call("str_replace_based_edit_tool", command="view", path="e.py"), ["e.py"], []),
        (
            _call("str_replace_based_edit_tool", command="create", path="f.py", file_text="x"),
            [],
            ["f.py"],
        ),
        (
            _call(
                "str_replace_based_edit_tool",
                command="str_replace",
                path="g.py",
                old_str="a",
                new_str="b",
            ),
            [],
            ["g.py"],
        ),
        (
            _call("str_replace_editor", command="insert", path="h.py", insert_line=3, new_str="x"),
            [],
            ["h.py"],
        ),
        (_call("mcp__fs__read_file", path="m.py"), ["m.py"], []),
        (
            _call(
                "apply_patch",
                input="*** Begin Patch\n*** Update File: src/p.py\n@@\n-a\n+b\n"
                "*** Add File: src/new.py\n+x\n*** Delete File: old.py\n*** End Patch",
            ),
            [],
            ["old.py", "src/new.py", "src/p.py"],
        ),
        (
            ToolCall(
                "c1", "apply_patch", "*** Begin Patch\n*** Update File: raw.py\n*** End Patch"
            ),
            [],
            ["raw.py"],
        ),
        (_call("bash", command="cat setup.cfg"), ["setup.cfg"], []),
        (_call("shell", command=["bash", "-lc", "sed -i 's/a/b/' z.py"]), [], ["z.py"]),
        (_call("search", query="foo"), [], []),
    ],
)
def test_tool_shapes(call: ToolCall, read: list[str], modified: list[str]) -> None:
    assert _ops(call) == (read, modified)


@pytest.mark.parametrize(
    ("command", "read", "modified"),
    [
        ("cat a.py", ["a.py"], []),
        ("head -n 50 a.py && tail -20 b.py", ["a.py", "b.py"], []),
        ("less README.md", ["README.md"], []),
        ("nl -ba src/x.py | sed -n '10,20p'", ["src/x.py"], []),
        ("sed -n '1,40p' src/y.py", ["src/y.py"], []),
        ("grep -n 'def main' app/cli.py", ["app/cli.py"], []),
        ("grep -rn 'TODO' src/", [], []),
        ("grep -e foo -e bar notes.txt", ["notes.txt"], []),
        ("sed -i 's/old/new/g' lib/z.py", [], ["lib/z.py"]),
        ("sed -i.bak -e 's/a/b/' one.py two.py", [], ["one.py", "two.py"]),
        ("perl -pi -e 's/a/b/' p.pl", [], ["p.pl"]),
        ("echo hi > out.txt", [], ["out.txt"]),
        ("echo more >> log.txt 2>&1", [], ["log.txt"]),
        ("python run.py 2> errors.log", [], ["errors.log"]),
        ("ls > /dev/null 2>&1", [], []),
        ("sort < input.txt", ["input.txt"], []),
        ("echo x | tee -a a.txt b.txt", [], ["a.txt", "b.txt"]),
        ("mv old.py new.py", [], ["new.py", "old.py"]),
        ("cp template.py copy.py", ["template.py"], ["copy.py"]),
        ("cp a.py b.py dest/", ["a.py", "b.py"], []),
        ("rm -f tmp1.py tmp2.py", [], ["tmp1.py", "tmp2.py"]),
        ("touch new_file.py", [], ["new_file.py"]),
        ("git checkout -- src/reset.py", [], ["src/reset.py"]),
        ("cat <<'EOF' > newfile.py\nimport os\nprint('x > y.txt')\nEOF", [], ["newfile.py"]),
        ("cat > conf.ini <<EOF\n[a]\nb = 1\nEOF\ncat conf.ini", [], ["conf.ini"]),
        (
            "git apply <<'EOF'\ndiff --git a/s/m.py b/s/m.py\n"
            "--- a/s/m.py\n+++ b/s/m.py\n@@\n-x\n+y\nEOF",
            [],
            ["s/m.py"],
        ),
        ("git apply fix.patch", ["fix.patch"], []),
        (
            "python3 - <<'EOF'\nwith open('cfg.py') as f:\n    s = f.read()\n"
            "with open('cfg.py', 'w') as f:\n    f.write(s)\nopen('notes.md')\nEOF",
            ["notes.md"],
            ["cfg.py"],
        ),
        ("python -c \"open('w.txt', 'w').write('x')\"", [], ["w.txt"]),
        ("cd /testbed && sudo cat /etc/hosts", ["/etc/hosts"], []),
        ("FOO=1 cat env.txt; wc -l counts.txt", ["counts.txt", "env.txt"], []),
        ("cat a.py \\\n  b.py", ["a.py", "b.py"], []),
        ("find . -name '*.py' | xargs grep foo", [], []),
        ("pytest tests/ -x", [], []),
        ("echo 'unbalanced", [], []),
    ],
)
def test_shell_commands(command: str, read: list[str], modified: list[str]) -> None:
    ops = shell_file_ops(command)
    assert (sorted(ops.read), sorted(ops.modified)) == (read, modified)


def test_read_then_modified_counts_as_modified() -> None:
    messages = [
        Message.assistant(tool_calls=[ToolCall("c1", "read_file", '{"path": "a.py"}')]),
        Message.tool("c1", "x = 1", name="read_file"),
        Message.assistant(tool_calls=[ToolCall("c2", "edit", '{"path": "a.py"}')]),
        Message.tool("c2", "ok", name="edit"),
        Message.assistant(tool_calls=[ToolCall("c3", "read_file", '{"path": "a.py"}')]),
        Message.tool("c3", "x = 2", name="read_file"),
    ]
    ops = extract_file_ops(messages)
    assert ops == FileOps(read=frozenset(), modified=frozenset({"a.py"}))


def test_tracking_is_cumulative_across_compactions() -> None:
    first = [
        Message.assistant(
            tool_calls=[
                _call("read_file", path="a.py"),
                ToolCall("c2", "read_file", '{"path": "b.py"}'),
            ]
        )
    ]
    second = [
        Message.assistant(tool_calls=[ToolCall("c3", "bash", '{"command": "sed -i s/x/y/ a.py"}')])
    ]
    third = [Message.assistant(tool_calls=[ToolCall("c4", "bash", '{"command": "cat c.py"}')])]
    ops = FileOps()
    for batch in (first, second, third):
        ops = extract_file_ops(batch, previous=ops)
    assert ops == FileOps(read=frozenset({"b.py", "c.py"}), modified=frozenset({"a.py"}))


def test_a_failed_edit_does_not_count_but_a_failed_shell_chain_does() -> None:
    messages = [
        Message.assistant(tool_calls=[ToolCall("c1", "edit", '{"path": "a.py"}')]),
        Message.tool("c1", "old_string not found", name="edit", is_error=True),
        Message.assistant(
            tool_calls=[ToolCall("c2", "bash", '{"command": "sed -i s/x/y/ b.py && pytest"}')]
        ),
        Message.tool("c2", "1 failed", name="bash", is_error=True),
    ]
    assert extract_file_ops(messages) == FileOps(modified=frozenset({"b.py"}))


def test_text_protocol_bash_calls_are_read() -> None:
    meta = {"text_protocol": True}
    command = "cat <<'EOF' > fix.py\nprint(1)\nEOF"
    said = f"THOUGHT: write it.\n\n```bash\n{command}\n```"
    messages = [
        Message(
            "assistant",
            (Text(said), ToolCall("t1", "bash", json.dumps({"command": command}))),
            meta=meta,
        ),
        Message(
            "tool", (ToolResult("t1", "bash", (Text("<returncode>0</returncode>"),)),), meta=meta
        ),
    ]
    assert extract_file_ops(messages).modified == frozenset({"fix.py"})


def test_a_script_written_then_run_counts_what_it_opens() -> None:
    write = "cat <<'EOF' > update.py\nwith open('lib/core.py', 'w') as f:\n    f.write('x')\nEOF"
    messages = [
        Message.assistant(tool_calls=[ToolCall("c1", "bash", json.dumps({"command": write}))]),
        Message.tool("c1", "", name="bash"),
        Message.assistant(
            tool_calls=[ToolCall("c2", "bash", json.dumps({"command": "python update.py"}))]
        ),
        Message.tool("c2", "", name="bash"),
    ]
    assert extract_file_ops(messages).modified == frozenset({"update.py", "lib/core.py"})
    assert extract_file_ops(messages, follow_scripts=False).modified == frozenset({"update.py"})


def test_git_diff_output_names_modified_files() -> None:
    diff = "diff --git a/pkg/mod.py b/pkg/mod.py\nindex 1..2\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n"
    messages = [
        Message.assistant(tool_calls=[ToolCall("c1", "bash", '{"command": "git diff"}')]),
        Message.tool("c1", diff, name="bash"),
        Message.assistant(tool_calls=[ToolCall("c2", "bash", '{"command": "git status --short"}')]),
        Message.tool("c2", " M pkg/other.py\n?? new.txt\n", name="bash"),
    ]
    assert extract_file_ops(messages).modified == frozenset(
        {"pkg/mod.py", "pkg/other.py", "new.txt"}
    )
    assert extract_file_ops(messages, read_results=False) == FileOps()


def test_user_extractors_come_first_and_nothing_is_global() -> None:
    def notebook(call: ToolCall) -> FileOps | None:
        if call.name != "run_cell":
            return None
        return FileOps(modified=frozenset({json.loads(call.arguments)["notebook"]}))

    def no_reads(call: ToolCall) -> FileOps | None:
        return FileOps() if call.name == "read_file" else None

    messages = [
        Message.assistant(
            tool_calls=[
                ToolCall("c1", "run_cell", '{"notebook": "analysis.ipynb"}'),
                ToolCall("c2", "read_file", '{"path": "a.py"}'),
            ]
        )
    ]
    custom = extract_file_ops(messages, extractors=(notebook, no_reads, *DEFAULT_EXTRACTORS))
    assert custom == FileOps(modified=frozenset({"analysis.ipynb"}))
    # The defaults are untouched by the call above.
    assert extract_file_ops(messages) == FileOps(read=frozenset({"a.py"}))


def test_patch_paths_read_unified_diffs_too() -> None:
    diff = "--- a/x.py\n+++ b/x.py\n@@\n--- /dev/null\n+++ b/new.py\n"
    assert patch_paths(diff) == ["x.py", "new.py"]


def test_paths_are_normalised() -> None:
    assert normalize_path(" './a//b/../c.py' ") == "a/c.py"
    assert normalize_path("file:///etc/x") == "/etc/x"
    assert shell_file_ops("cat ./a.py a.py").read == frozenset({"a.py"})


def test_format_and_parse_round_trip() -> None:
    ops = FileOps(read=frozenset({"r1.py", "r 2.md"}), modified=frozenset({"m.py"}))
    text = format_file_ops(ops)
    assert text == "Modified: m.py\nRead: r 2.md, r1.py"
    assert parse_file_ops(text) == ops
    assert parse_file_ops("Modified: none\nRead: a.py, b.py (+3 more)") == FileOps(
        read=frozenset({"a.py", "b.py"})
    )


paths = st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6}){0,2}\.py", fullmatch=True)


@given(
    st.lists(st.tuples(st.sampled_from(["read", "modify"]), paths), max_size=12), st.integers(0, 12)
)
def test_merging_in_any_split_gives_the_same_cumulative_result(
    operations: list[tuple[str, str]], split: int
) -> None:
    calls = [
        ToolCall(f"c{i}", "read_file" if op == "read" else "write_file", json.dumps({"path": p}))
        for i, (op, p) in enumerate(operations)
    ]
    messages = [Message.assistant(tool_calls=[c]) for c in calls]
    whole = extract_file_ops(messages)
    parts = extract_file_ops(messages[split:], previous=extract_file_ops(messages[:split]))
    assert whole == parts
    assert not whole.read & whole.modified
    assert whole.modified == {p for op, p in operations if op == "modify"}
