"""Supersession by owner and shape, on random wordings from small grammars written here (not the
benchmark's templates): one setting of one owner (a service) restated in any notation with a new
value of the same shape replaces the old value; the same setting of two owners stays two facts.
Also the structures that name an owner: a record's owner field, a row's cells, a YAML section."""

from __future__ import annotations

import json
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from abridged.core.model import Message, ToolCall
from abridged.engine.summarize.ledger import extract_facts, structured, with_sections
from abridged.engine.summarize.references import reference_kinds
from abridged.engine.summarize.signals import persons
from tests.engine.summarize.corrections import current, summary_of

PLACEMENTS = ["user", "tool", "assistant"]

_SYLLABLE = st.sampled_from(
    [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]  # made-up words: never English
)
#: A made-up owner (a service) and a made-up attribute of two words.
_OWNER = st.lists(_SYLLABLE, min_size=3, max_size=3).map("".join)
_WORD = st.lists(_SYLLABLE, min_size=2, max_size=3).map("".join)


def _value(shape: str, n: int) -> str:
    """A value of ``shape``; ``n`` makes two of one shape differ."""
    return {
        "version": f"v{n % 17 + 1}.{n % 31}.{n % 97 + 3}",
        "date": f"20{n % 5 + 27}-{n % 12 + 1:02d}-{n % 27 + 1:02d}",
        "host": f"node-{n % 90 + 10}.zone{n % 7}.internal",
        "quantity": f"{n % 9000 + 11} MiB",
        "ticket": f"QX-{n % 90000 + 1000}",
    }[shape]


_SHAPES = st.sampled_from(["version", "date", "host", "quantity", "ticket"])


def _stated(owner: str, attr: tuple[str, str], value: str, style: int) -> str:
    """One fact in one of ten notations, the owner named in each."""
    a, b = attr
    return [
        f"For {owner}, the {a} {b} is {value}.",
        f"fyi {owner} {a} {b} = {value}",
        f"{owner.upper()}_{a.upper()}_{b.upper()}={value}",
        f"{owner}:\n  {a}_{b}: {value}",
        json.dumps({"service": owner, f"{a}{b.capitalize()}": value}),
        f"2027-03-01 10:00:00 INFO {owner} loaded {a}-{b}={value}",
        f"| {owner} | {a} {b} | {value} |",
        f"+    {owner}.{a}_{b}: {value}",
        f"# {owner}: {a} {b} is {value}",
        f"- {a} {b} of {owner} = {value}",
    ][style]


def _corrected(owner: str, attr: tuple[str, str], old: str, new: str, form: int) -> str:
    """A correction in one of several phrasings: some name the old value, some only the new."""
    a, b = attr
    return [
        f"{old} is dead, {owner} goes with {new} for the {a} {b}.",
        f"scrap {old}; {a} {b} for {owner} = {new}",
        f"Forget {old}. {owner} {a} {b}: {new}",
        f"the {a} {b} of {owner} moved from {old} to {new}",
        f"{owner}:\n  {a}_{b}: {new}",
        json.dumps({"service": owner, f"{a}_{b}": new}),
        f"-    {owner}.{a}_{b}: {old}\n+    {owner}.{a}_{b}: {new}",
        f"| {owner} | {a} {b} | {new} |",
    ][form]


#: One setting: its attribute (two words), the shape of its values, a number to draw them from.
_SETTING = st.tuples(
    st.tuples(_WORD, _WORD).filter(lambda t: t[0] != t[1]), _SHAPES, st.integers(1, 10**6)
)


@given(
    st.lists(_OWNER, min_size=1, max_size=1),
    _SETTING,
    st.integers(0, 9),
    st.integers(0, 7),
    st.sampled_from(PLACEMENTS),
)
@settings(deadline=None, max_examples=80)
def test_a_corrected_setting_of_one_owner_shows_only_the_new_value(
    owners: list[str],
    setting: tuple[tuple[str, str], str, int],
    style: int,
    form: int,
    placement: str,
) -> None:
    owner, (attr, shape, n) = owners[0], setting
    old, new = _value(shape, n), _value(shape, n + 1)
    if old in new or new in old:
        return
    correction = _corrected(owner, attr, old, new, form)
    text = summary_of(_stated(owner, attr, old, style), correction, placement)
    assert new in text
    # (the correction's own words may name the old value: quoted whole, they do not state it)
    assert old not in current(text.replace(correction, ""))


@given(
    st.lists(_OWNER, min_size=2, max_size=2, unique=True),
    _SETTING,
    st.integers(0, 9),
    st.integers(0, 9),
    st.sampled_from(PLACEMENTS),
)
@settings(deadline=None, max_examples=80)
def test_one_setting_of_two_owners_stays_two_facts(
    owners: list[str],
    setting: tuple[tuple[str, str], str, int],
    first_style: int,
    second_style: int,
    placement: str,
) -> None:
    attr, shape, n = setting
    one, two = _value(shape, n), _value(shape, n + 1)
    if one in two or any(
        o[:4] == w[:4] for o in owners for w in (owners[1 - owners.index(o)], *attr)
    ):
        return  # (words that abbreviate one another are one word to ``_has_word``)
    if {1, 2, 8} & {first_style, second_style}:
        # Known limit: an owner named only as a bare word of the key (*fyi broker port = 81*,
        # ``BROKER_PORT=81``) or as a comment's label (``# broker: port is 81``) is told from
        # another owner only when that one is named so too.
        return
    first = _stated(owners[0], attr, one, first_style)
    second = _stated(owners[1], attr, two, second_style)
    text = summary_of(first, second, placement)
    assert one in current(text)
    assert two in current(text)


# -- the structures that name an owner ----------------------------------------------------------


def test_a_record_keys_its_exact_field_by_its_owner_field() -> None:
    assert structured('{"service": "broker", "queue_name": "q_7"}') == ("broker queue_name", "q_7")
    # a field that says where the record came from qualifies nothing
    assert structured('{"source": "ci", "floor": "91%"}') == ("floor", "91%")


def test_a_table_row_keys_its_exact_cell_by_the_cells_before_it() -> None:
    assert structured("| mailer | base image | m:1.2 | per ops |") == ("mailer base image", "m:1.2")
    assert structured("| owner | Ann Lee | since May |") == ("owner", "Ann Lee")


def test_a_nested_yaml_line_carries_its_section() -> None:
    text = "resolver:\n  port: 80\n  tls:\n    cert: /a.pem\nmailer:\n  port: 81"
    assert with_sections(text).split("\n") == [
        "resolver:",
        "  resolver.port: 80",
        "  tls:",
        "    resolver.tls.cert: /a.pem",
        "mailer:",
        "  mailer.port: 81",
    ]
    # code blocks are no sections
    assert with_sections("try:\n  x: int = 1") == "try:\n  x: int = 1"


_RECORDS = {
    "ini": ("[{a}]\nport = 81\n\n[{b}]\nport = 82", "{a}.port = 81", "{b}.port = 82"),
    "toml": ("[services.{a}]\nport = 81\n[services.{b}]\nport = 82", "services.{a}.port = 81", ""),
    "json": ('{{\n  "name": "{a}",\n  "port": 81\n}}', '  "{a}.port": 81', ""),
    "describe": (
        "Name:   {a}\nPort:   81\n\nName:   {b}\nPort:   82",
        "{a}.Port:   81",
        "{b}.Port:   82",
    ),
    "psql": ("name       | {a}\nport       | 81", "{a}.port       | 81", ""),
    "lockfile": ('name = "{a}"\nversion = "8.5.26"', '{a}.version = "8.5.26"', ""),
    "titled env": ("# {a}\nPORT=81\n# {b}\nPORT=82", "{a}.PORT=81", "{b}.PORT=82"),
}
_NAME = st.from_regex(r"[a-z]{3,8}-[a-z]{3,8}", fullmatch=True)


@given(st.sampled_from(sorted(_RECORDS)), _NAME, _NAME)
@settings(max_examples=30)
def test_a_key_beside_its_records_name_carries_that_name(shape: str, a: str, b: str) -> None:
    # Read alone, ``port = 81`` says nothing of whose port it is: a table header, a JSON
    # ``"name"``, a ``Name:`` line, a ``name |`` row or a ``name =`` line says it.
    text, first, second = (part.format(a=a, b=b) for part in _RECORDS[shape])
    lines = with_sections(text).split("\n")
    assert first in lines
    assert not second or second in lines


def test_a_blank_line_ends_a_record_and_a_line_naming_it_is_kept() -> None:
    text = 'name = "vetchkit"\nversion = "1.0"\n\nversion = "2.0"'
    assert with_sections(text) == 'name = "vetchkit"\nvetchkit.version = "1.0"\n\nversion = "2.0"'


def test_a_title_comment_names_the_keys_under_it_until_a_blank_line() -> None:
    text = "# billing-api\nOWNER=Ann Lee\n\nOWNER=Bob Stone\n# note this\nretries = 3"
    assert with_sections(text).split("\n") == [
        "# billing-api",
        "billing-api.OWNER=Ann Lee",
        "",
        "OWNER=Bob Stone",
        "# note this",  # words, not a name: no title
        "retries = 3",
    ]
    call = ToolCall("c1", "bash", json.dumps({"command": "cat .env"}))
    observed = [Message.assistant("Reading.", tool_calls=[call]), Message.tool("c1", text)]
    facts = extract_facts(observed)
    assert not any(f.text == "# billing-api" for f in facts if f.listed)


def test_hosts_images_and_ports_are_exact_values() -> None:
    kinds = dict(reference_kinds("db-2.eu.internal runs ruko:9.19-ti and listens on port 8443"))
    assert kinds == {"db-2.eu.internal": "host", "ruko:9.19-ti": "image", "8443": "number"}
    assert "1234" not in dict(reference_kinds("we made 1234 changes"))


def test_a_person_opening_a_line_is_a_person() -> None:
    assert persons("Dario Buvoek owns the reviewer role now") == ["Dario Buvoek"]
    assert persons("The build is out") == []
    assert persons("- Please note: ask Ann Lee") == ["Ann Lee"]


@given(st.text(alphabet=string.ascii_lowercase + " .", max_size=60))
@settings(deadline=None, max_examples=60)
def test_lower_case_prose_names_no_person(text: str) -> None:
    assert persons(text) == []


@given(_NAME, st.sampled_from(["Dagster", "eu-west-4", "v5.6.10", "2027-12-16"]))
@settings(max_examples=20)
def test_a_member_of_a_pretty_printed_object_is_a_fact_of_its_record(name: str, value: str) -> None:
    # Each member of a pretty-printed object ends in a comma and names no record: read
    # alone, it is neither code nor a fact about nothing.
    assert structured(f'"engine": "{value}",') == ("engine", value)
    output = f'{{\n  "name": "{name}",\n  "engine": "{value}",\n  "tier": 4\n}}'
    facts = extract_facts(
        [
            Message.assistant("", tool_calls=[ToolCall("c1", "bash", '{"command": "cat s.json"}')]),
            Message.tool("c1", output, name="bash"),
        ]
    )
    assert any(name in f.text and value in f.text for f in facts if f.listed), facts


def test_a_git_config_subsection_names_its_keys() -> None:
    text = '[branch "release/7.2"]\n\tprotected = true\n[remote "origin"]\n\turl = git@h:a/b.git'
    assert with_sections(text).split("\n") == [
        '[branch "release/7.2"]',
        "\tbranch.release/7.2.protected = true",
        '[remote "origin"]',
        "\tremote.origin.url = git@h:a/b.git",
    ]


@given(st.lists(_OWNER, min_size=2, max_size=2, unique=True), st.sampled_from(PLACEMENTS))
@settings(deadline=None, max_examples=30)
def test_one_key_of_two_git_subsections_stays_two_facts(
    branches: list[str], placement: str
) -> None:
    first = f'[branch "release/{branches[0]}-52"]\n\tprotected = true\n\tforce-push = false'
    second = f'[branch "release/{branches[1]}-53"]\n\tprotected = false\n\tforce-push = true'
    text = current(summary_of(first, second, placement))
    # each branch's setting is stated with its branch: neither replaces the other
    assert f"release/{branches[0]}-52" in text
    assert f"release/{branches[1]}-53" in text
