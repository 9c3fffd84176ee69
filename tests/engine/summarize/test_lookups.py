"""Tests of ``lookups``: a value a command printed for one named setting reads as that setting,
in the ledger too, and any other output is left as it is."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abridged.core.model import Message
from abridged.engine.summarize.ledger import build_ledger, extract_facts
from abridged.engine.summarize.lookups import looked_up_name, rewrite_lookups
from tests.engine.summarize.corrections import bash


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("npm pkg get config.queueAdapter", "config.queueAdapter"),
        ("doppler secrets get NO_RESTART_ARCHIVE --plain", "NO_RESTART_ARCHIVE"),
        ("salt 'minion-4' pillar.get app:beta_cut", "app:beta_cut"),
        (
            'op item get "who reviews the migrations" --fields label=value',
            "who reviews the migrations",
        ),
        ("consul kv get -detailed config/db/pool", "config/db/pool"),
        ("aws ssm get-parameter --name=/prod/db/pool", "/prod/db/pool"),
        ("aws ssm get-parameter --name /prod/db/pool --output text", "/prod/db/pool"),
        ('echo "$LOG_LEVEL"', "LOG_LEVEL"),
        ("echo ${LOG_LEVEL}", "LOG_LEVEL"),
        ("printenv LOG_LEVEL", "LOG_LEVEL"),
        # a JSON or YAML query of one path
        ("jq -r '.production.desk_model' season.json", "production.desk_model"),
        ("yq .spec.replicas deploy.yaml", "spec.replicas"),
        ("jq --arg v .x -r '.a.b' f.json", "a.b"),
    ],
)
def test_a_command_that_reads_one_setting_names_it(command: str, name: str) -> None:
    assert looked_up_name(command) == name


@pytest.mark.parametrize(
    "command",
    [
        "ls -la src/",
        "echo done",
        'echo "Hello World"',
        "kubectl get pods",
        "gcloud secrets versions access latest",
        "npm pkg get config.queueAdapter | jq .",
        "git log -1 --format=%H",
        "cat 'unbalanced",
        # a filter that reads more than one path, or the whole document
        "jq '.items[] | .name' pods.json",
        "jq . season.json",
        "jq -c . .prettierrc.json",
    ],
)
def test_other_commands_read_no_named_setting(command: str) -> None:
    assert looked_up_name(command) is None


@pytest.mark.parametrize(
    ("text", "command", "expected"),
    [
        ('$ npm pkg get config.queueAdapter\n"kafka"', None, 'config.queueAdapter: "kafka"'),
        ("kiqoge-83", "doppler secrets get NO_RESTART --plain", "NO_RESTART: kiqoge-83"),
        # under the header saying whose value it is (``salt`` prints the minion's name)
        (
            "$ salt 'm-4' pillar.get app:beta_cut\nm-4:\n    2032-301",
            None,
            "    app.beta_cut: 2032-301",
        ),
        # a record printed one field to a line: the value named by the key above it
        ("Key    config/db/pool\nFlags  0\nValue  40", None, "config.db.pool: 40"),
        ("  key = wire_format\nvalue = msgpack\n note = settled", None, "wire_format: msgpack"),
        ('  "Name": "/prod/db/pool",\n  "Value": "40",', None, "prod.db.pool: 40"),
        # a text-protocol observation's closing tag is no line of the output
        ("<output>\n$ printenv REGION\neu-west-3\n</output>", None, "REGION: eu-west-3"),
    ],
)
def test_a_lone_value_reads_as_the_setting_it_was_read_for(
    text: str, command: str | None, expected: str
) -> None:
    assert expected in rewrite_lookups(text, command=command).split("\n")


@pytest.mark.parametrize(
    ("text", "command"),
    [
        # more than one line printed: a listing, not one value
        ("a\nb\nc", "doppler secrets get NAMES --plain"),
        ("NAME   READY\nweb-1  1/1", "kubectl get pod web-1"),
        # already keyed
        ("REGION=eu-west-3", "printenv REGION"),
        ("region: eu-west-3", "consul kv get config/region"),
        # a command that reads nothing named
        ("42", "wc -l notes.txt"),
        # a value too far below its record's name
        ("Key  config/a\n1\n2\n3\n4\nValue  9", None),
    ],
)
def test_other_output_is_left_as_it_is(text: str, command: str | None) -> None:
    assert rewrite_lookups(text, command=command) == text


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_only_lines_are_rewritten_never_added_or_dropped(text: str) -> None:
    assert rewrite_lookups(text).count("\n") == text.count("\n")
    assert rewrite_lookups(text, command="printenv X").count("\n") == text.count("\n")


def test_a_looked_up_value_is_a_fact_of_its_setting_and_a_later_one_replaces_it() -> None:
    # (``kiqoge-83`` alone was no fact the ledger could key: a later value did not replace it)
    messages = [
        Message.user("Which archive must we leave alone?"),
        *bash("c1", "doppler secrets get NO_RESTART_ARCHIVE --plain", "kiqoge-83\n"),
        *bash("c2", "doppler secrets get NO_RESTART_ARCHIVE --plain", "lavodu-17\n"),
    ]
    facts = [f for f in extract_facts(messages) if f.listed]
    assert any(f.key == "no_restart_archive" and "kiqoge-83" in f.values for f in facts)
    ledger = build_ledger(messages)
    assert "kiqoge-83" in ledger.replaced_values
    assert any("lavodu-17" in line for line in ledger.lines())


@pytest.mark.parametrize(
    ("text", "rows"),
    [
        # a day and a time, no one named, a count after the rows
        (
            "JOURNAL rehearsal_room\n  22/12 18:47  Studio G, Tarn House\n"
            "  22/12 19:05  Studio M, Jiel House\n  2 entries",
            ["rehearsal_room: Studio G, Tarn House", "rehearsal_room: Studio M, Jiel House"],
        ),
        # newest first, the current row marked: the marked one goes last
        (
            "audit: history (export_bucket)\n  16:28  Cosima    s3://exp-b2  [current]\n"
            "  15:12  Benedek   s3://exp-a1",
            ["export_bucket: s3://exp-a1", "export_bucket: s3://exp-b2"],
        ),
    ],
)
def test_a_fields_history_reads_as_its_values_oldest_first(text: str, rows: list[str]) -> None:
    lines = rewrite_lookups(text).split("\n")
    assert [
        line for line in lines if ": " in line and not line.startswith(("JOURNAL", "audit"))
    ] == rows


@pytest.mark.parametrize(
    "text",
    [
        # stamped lines under no field's name, one stamped row only
        "build log\n  10:12  compile\n  10:13  link",
        "history (export_bucket)\n  15:12  s3://exp-a1\nno more rows",
        # a heading that is no history's, a schedule under it
        "Running nightly_export\n  10:12  started\n  10:14  finished",
        "Schedule for team_offsite:\n  09:00  Breakfast, Hall B\n  10:30  Keynote, Room 4.12",
        # newest first with no mark of the one that holds: which one holds is not said
        "history (export_bucket)\n  16:28  Cosima  s3://exp-b2\n  15:12  Benedek  s3://exp-a1",
    ],
)
def test_stamped_lines_without_a_fields_name_are_left_as_they_are(text: str) -> None:
    assert rewrite_lookups(text) == text


def test_a_fields_history_replaces_the_value_said_before_it() -> None:
    history = "field history (panel_room)\n  09:12  Ann  Room 4.12\n  10:40  Bo   Room 7.03\n"
    messages = [
        Message.user("Book the panel interviews. The panel room is Room 4.12."),
        Message.assistant("Checking the booking system."),
        *bash("c1", "eln show 1575 --history panel_room", history),
    ]
    ledger = build_ledger(messages)
    assert "Room 4.12" in ledger.replaced_values
    assert any("Room 7.03" in line for line in ledger.lines())


def test_a_value_printed_after_a_prompt_in_output_is_kept_as_its_setting() -> None:
    output = "Deploy notes\n$ salt 'web-3' pillar.get app:beta_cut\nweb-3:\n    2032-301\n"
    facts = [f for f in extract_facts(bash("c1", "cat deploy.log", output)) if f.listed]
    assert any("2032-301" in f.text and f.key and "beta_cut" in f.key for f in facts)


@pytest.mark.parametrize(
    "line", ["PREFERRED_LOG_LIBRARY=structlog", "rollout_strategy=canary", "LOG_LEVEL=debug"]
)
def test_an_env_style_setting_of_a_plain_word_is_a_fact(line: str) -> None:
    # (``x=word`` with no space around the sign is how env files, shells and logs set values;
    # it was read as code assigning a variable, so no fact and no replacement)
    messages = bash("c1", "cat .env", f"# deploy settings\n{line}\n")
    facts = [f for f in extract_facts(messages) if f.listed]
    assert any(line in f.text for f in facts)


def test_a_code_assignment_of_a_variable_is_still_no_fact() -> None:
    messages = bash("c1", "cat app.py", "def f(root):\n    level = root\n    return level\n")
    assert not [f for f in extract_facts(messages) if f.listed and "level" in f.text]


@pytest.mark.parametrize("role", ["user", "assistant"])
def test_a_terminal_pasted_into_a_message_names_its_value_too(role: str) -> None:
    pasted = (
        "Checked the flag:\n"
        "$ aws ssm get-parameter --name /billing/forbidden_flag --output text\n"
        "--skip-ledger-lock"
    )
    said = Message.user(pasted) if role == "user" else Message.assistant(pasted)
    facts = [f for f in extract_facts([said]) if f.listed]
    assert any(f.key == "billing.forbidden_flag" and "--skip-ledger-lock" in f.text for f in facts)


def test_a_naming_option_counts_only_after_a_reading_word() -> None:
    # ``docker run --name web`` names the container it starts, not a setting it reads
    assert looked_up_name("docker run --name web nginx") is None
    assert looked_up_name("gcloud secrets versions access latest --secret=db-pass") == "db-pass"
