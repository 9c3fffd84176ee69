"""Supersession by subject in the fact ledger: each rule that links a later fact to the slot of
an earlier one, tested both ways (the same slot is replaced; two things of one kind stay two),
and the properties that hold whatever the words: a later value for the same slot always
replaces the earlier one, unrelated facts never do."""

from __future__ import annotations

import json
import re
import string

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from abridged.core.model import Message, ToolCall
from abridged.core.protocols import SummaryRequest
from abridged.engine.summarize.extractive import ExtractiveSummarizer
from abridged.engine.summarize.ledger import (
    SUPERSEDED_MARK,
    Fact,
    MessageTexts,
    _old_value,
    build_ledger,
    extract_facts,
    passed_through,
    setting_file,
    strongly_corrects,
    superseded_in_line,
    value_form,
)
from tests.engine.summarize.corrections import current, summary_of

SUMMARIZER = ExtractiveSummarizer()
PLACEMENTS = ["user", "tool", "assistant"]


def _bash(call_id: str, command: str, output: str) -> list[Message]:
    return [
        Message.assistant(
            "Checking.", tool_calls=[ToolCall(call_id, "bash", json.dumps({"command": command}))]
        ),
        Message.tool(call_id, output, name="bash"),
    ]


def _stale(first: str, second: str, old: str, placement: str) -> bool:
    """Whether ``old`` is still presented as current once ``second`` corrected it (the
    correction's own text, which may name the old value, left out)."""
    return old in current(summary_of(first, second, placement).replace(second, ""))


# -- each rule, the same slot -----------------------------------------------------------------

#: (earlier, later, earlier value): later facts that take the earlier one's slot, each by one
#: rule of ``_replaces`` / ``_slot_of``.
SAME_SLOT = [
    # the later key's words are all in the earlier fact (the unit names it): fd / file handles
    (
        "ulimit_fd=20480 file handles",
        "Heads up: the file handle limit moved to 40960 file handles.",
        "20480 file handles",
    ),
    # an abbreviated key (max) and the words it abbreviates (maximum)
    (
        "max_body = 7340 MB",
        "Re-checked the maximum body size and it is actually 9120 MB.",
        "7340 MB",
    ),
    # a key's short form that is no prefix (db) and the word it stands for (database)
    (
        "db_primary_host: pg-velmora-03.internal",
        "The primary database host is now pg-tarquel-11.internal.",
        "pg-velmora-03.internal",
    ),
    (
        "The config path of the indexer is /etc/indexer/quorvat.yaml.",
        "indexer_cfg_path = /etc/indexer/brisolt.yaml",
        "/etc/indexer/quorvat.yaml",
    ),
    # a file with a directory that is no source code is a setting's value
    (
        "The scheduler writes its log to /var/log/sched/qarn.log.",
        "The scheduler log is no longer /var/log/sched/qarn.log; it is /var/log/sched/velt.log.",
        "/var/log/sched/qarn.log",
    ),
    # a value is its whole token (the version regex alone stops at -rc2)
    (
        "Deploy the gateway from the 4.12.301-rc2-umber image.",
        "Forget 4.12.301-rc2-umber, the gateway image tag is 4.13.002-rc1-ochre.",
        "4.12.301-rc2-umber",
    ),
    # a strongly worded correction takes the newest value of the same form
    (
        "Upstream fixed it in CVE-2031-48151 last week.",
        "Ignore the earlier advisory number; CVE-2031-90412 is the right one.",
        "CVE-2031-48151",
    ),
    # a private name (leading underscore) declared cancelled
    (
        "Name the new helper _merge_rows_fast.",
        "_merge_rows_fast is cancelled. Call the helper _merge_rows_batched.",
        "_merge_rows_fast",
    ),
    # a flag
    (
        "All integration runs need --strict-tz enabled.",
        "Use --lenient-tz instead of --strict-tz for the integration runs.",
        "--strict-tz",
    ),
    # a restated ``key: value`` whose value is a variant of the old one, a subject word shared
    (
        "Fixtures for the parser live in fixtures/parser_tidewater.",
        "parser_fixtures: fixtures/parser_marshland",
        "fixtures/parser_tidewater",
    ),
    # a class name in CamelCase is a value
    (
        "Collect the regression tests in SuiteHarborRetry.",
        "Re-checked the suite class and it is actually SuiteLanternRetry.",
        "SuiteHarborRetry",
    ),
    # a mapping written with an arrow
    (
        "| ui_theme | SolarGlow | per design |",
        "fyi the ui theme -> NightHarbor now",
        "SolarGlow",
    ),
    # a rate is one value with its unit (not a path): the key names the slot
    (
        "policy: the skindei burst limit is 396 req/min",
        "skindei_burst_limit = 7435 req/min",
        "396 req/min",
    ),
    # a dotted key's slot of a thing, stated in prose naming that thing
    (
        "services.kelvo.port = 48871",
        "The kelvo service listens on port 39325.",
        "48871",
    ),
    # a name that is the value, each in its own framing (an answer, a recap)
    (
        "Q: the dythhu residency rule? A (accepted, 40 votes): Dythhu data has to stay in "
        "me-gaxplable-9. It is on the team page too.",
        "Where things stand for dythhu: dythhu data has to stay in me-revkro-4.",
        "me-gaxplable-9",
    ),
    # a clause read as ``X is Y`` holds the value it changes: no key, the same words
    (
        "Nobody pushes to hotfix/mixtreiv.42 while husum is in freeze.",
        "hm no, sorry: nobody pushes to hotfix/buxkux.61 while husum is in freeze",
        "hotfix/mixtreiv.42",
    ),
    # one package of a requirements file, pinned again
    (
        "# requirements/base.txt\nmasural==9.11.579   # pinned: later versions drop the client",
        "# requirements/base.txt\nmasural==9.12.004   # pinned: the sync client is back",
        "9.11.579",
    ),
]


@given(st.sampled_from(SAME_SLOT), st.sampled_from(PLACEMENTS))
@settings(deadline=None, max_examples=40)
def test_a_later_fact_in_the_same_slot_replaces_the_earlier_one(
    case: tuple[str, str, str], placement: str
) -> None:
    first, second, old = case
    assert not _stale(first, second, old, placement)


def test_a_value_replaced_elsewhere_is_marked_where_an_older_fact_states_it() -> None:
    # The prose that set the value is not linked to the diff by its words; the diff's ``-``
    # line is, and its ``+`` line replaces it: the prose may not show the value as current.
    messages = [
        Message.user("Ship the gateway."),
        Message.assistant("Rollout uses build 8.20.115-teal on every node."),
        *_bash("c1", "git diff", "-gw_image = 8.20.115-teal\n+gw_image = 8.21.004-plum\n"),
    ]
    ledger = build_ledger(messages)
    rendered = " | ".join(f.render() for f in ledger.facts)
    assert "(was 8.20.115-teal)" in rendered
    assert "8.20.115-teal" not in current(rendered)
    assert "8.20.115-teal" in ledger.replaced_values


def test_a_value_stated_again_after_its_replacement_is_current_again() -> None:
    messages = [
        Message.user("Tune the uploader."),
        *_bash("c1", "cat a.ini", "upload_ticket = QX-40112\n"),
        *_bash("c2", "cat a.ini", "upload_ticket = QX-40988\n"),
        *_bash("c3", "cat a.ini", "upload_ticket = QX-40112\n"),
    ]
    ledger = build_ledger(messages)
    assert "QX-40112" not in ledger.replaced_values
    assert "QX-40988" in ledger.replaced_values
    rendered = [f.render() for f in ledger.facts]
    assert any("upload_ticket = QX-40112" in r for r in rendered)


# -- each rule, two slots ---------------------------------------------------------------------

#: Two facts of one kind that both hold, each next to the rule that might have merged them.
TWO_SLOTS = [
    # keys that each name what the other does not (an arrow is a correction word elsewhere)
    ("audit_log=/var/log/audit/pemo.log", "metrics logs -> /var/log/metrics/ruka.log"),
    # a weak correction word (*new*) does not make a same-form value a correction
    ("The login bug is tracked as OPS-4101.", "The new export crash is tracked as OPS-5202."),
    # *typo* names a bug as often as it corrects
    ("The retry storm is tracked as XUE-61124.", "docs typo = VW-98320"),
    # *rather* states a preference, not a correction
    ('status_channel_auth: "#auth-ops"', "For export, I'd rather see notes in #export-ops."),
    # a correction word about another value of a sentence with several values places nothing
    (
        "Triage note, 2027-03-09: agreed that the fix ships behind tz_strict_v2.",
        "Release plan as agreed: the branch cut is on 2027-04-14 and OPS-44 rides along"
        " instead of a 5.0.x patch.",
    ),
    # two files of one directory in a listing are no correction
    ("Config for billing: config/billing/main.yaml", "Config for search: config/search/main.yaml"),
    # a name that is the value and another name beside it: another thing's
    (
        'I\'ll commit this as "read credential reference of wolfram-exporter explicitly"; the '
        "value stays WOLFRAM_API_TOKEN_REF.",
        'I\'ll commit this as "read credential reference of juniper-collector explicitly"; the '
        "value stays JUNIPER_WEBHOOK_SECRET_REF.",
    ),
    # two limits of two things in one unit (the unit names nothing)
    ("The rauskkrau throttle is 6579 req/min.", "Dafyr is throttled at 2400 req/min."),
    ("scope\tlimit\nper user (vakamaz)\t251 req/min", "X-Mupasom-Org-Limit: 8463 req/min"),
    # a dotted key's slot of one thing, the same slot of another thing in prose
    ("services.kelvo.port = 48871", "The drami service listens on port 39325."),
    # a short form (db) names the same word, not the same thing: two hosts of two things
    (
        "db_replica_host: pg-velmora-03.internal",
        "The primary database host is pg-tarquel-11.internal.",
    ),
    # two packages one requirements file pins, each its own version
    (
        "# requirements/base.txt\nmasural==9.11.579   # pinned: later versions drop the client",
        "# requirements/base.txt\nfizafus==6.76.306   # pinned: the migrations need this one",
    ),
]


@given(st.sampled_from(TWO_SLOTS), st.sampled_from(PLACEMENTS))
@settings(deadline=None, max_examples=40)
def test_two_facts_of_one_kind_stay_two(pair: tuple[str, str], placement: str) -> None:
    first, second = pair
    text = summary_of(first, second, placement)
    assert "(was" not in text and SUPERSEDED_MARK not in text


#: (earlier, later, earlier value): corrections with no word that says so, linked by the
#: subject's abbreviated words, a revision's number, a contrast that names the subject again,
#: or a value the old reading of the line did not see.
WITHOUT_A_MARKER = [
    # a key of contractions (``sess``, ``tmo``) for the words of prose
    ("The session timeout for the admin panel is 1800 s.", "admin.sess_tmo = 900 s", "1800 s"),
    # a setting's history by revision number, newest first: the old value comes last
    (
        "The cache TTL is 600 s.",
        "$ settings history cache.ttl\nrev 12  ana  900 s\nrev 11  ben  600 s",
        "600 s",
    ),
    # revisions in prose: the new revision first, the old one named after it
    (
        "The escalation contact in the runbook is ana.ruiz@corp.example.",
        "Runbook rev 7 is out. The escalation contact there is ben.okafor@corp.example; rev 6 "
        "had ana.ruiz@corp.example.",
        "ana.ruiz@corp.example",
    ),
    # a revision that writes the date anew, in another notation
    (
        "FREEZE_DATE: Wed 16 Sep 2054",
        "Rev 4 of the release calendar is out: the freeze date there reads 05.10.2055; rev 3 "
        "had 16 Sep 2054.",
        "16 Sep 2054",
    ),
    # a sentence that opens on *Not X,*
    (
        "The on-call contact for search is @ana_ruiz.",
        "Use @ben_okafor for the search on-call. Not @ana_ruiz, that one moved teams.",
        "@ana_ruiz",
    ),
    # a contrast that names the subject on both sides: what follows the *but* holds
    (
        "The nightly job writes to bucket arch-81.",
        "The wiki says arch-81 for export_bucket, but the deployed config has export_bucket: "
        "arch-93.",
        "arch-81",
    ),
    # a command's option, then prose naming its words (the bare number ends a sentence)
    ("$ worker start --batch-size=64 --quiet", "The batch size for the worker is 128.", "64"),
    # a date in a code span is a date
    (
        "The vendor cutoff is 2027-03-01.",
        "I checked `settings.py`: `VENDOR_CUTOFF` is `14 May 2027` there.",
        "2027-03-01",
    ),
    # the same sentence again with another value in it
    (
        "The nightly backup job starts at 01:30 UTC.",
        "Per the ops calendar, the nightly backup job starts at 03:15 UTC.",
        "01:30 UTC",
    ),
    # a one-line record of a field's old and new value
    (
        "The export bucket is s3://exp-a1.",
        "2026-06-14T02:05:46Z event=setting.rotated key=export_bucket prev=s3://exp-a1 "
        "current=s3://exp-b2 actor=ops",
        "s3://exp-a1",
    ),
    # a URL of another scheme, under a key of contractions (``srv``)
    (
        "The cache server is reachable at redis://kv-3.corp.internal:6379/2.",
        "cache.srv.addr = redis://kv-8.corp.internal:6379/2",
        "redis://kv-3.corp.internal:6379/2",
    ),
    # where each was found, then the same subject worded two ways (a label before a sentence
    # of its own is no key; what follows *that* is what a sentence is about)
    (
        "Call summary: Our contact at the bank is Maren Solberg.",
        "Forwarding from Joao: he wrote that the bank's contact for us is Pieter Claes.",
        "Maren Solberg",
    ),
    # the one value of its form so far, its subject's words in another order
    (
        "For overnight shipping we prefer Kestrel Couriers Ltd; they answer within the hour.",
        "In the scan you sent, the sheet lists Finch Freight Ltd as the courier for overnight "
        "shipping.",
        "Kestrel Couriers Ltd",
    ),
    (
        "Site memo: The cold room on level 2 is kept at 4.5 °C.",
        "Facilities confirmed the level 2 cold room setpoint: 3.0 °C.",
        "4.5 °C",
    ),
]


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("case", WITHOUT_A_MARKER)
def test_a_correction_without_a_marker_word_replaces_the_earlier_value(
    case: tuple[str, str, str], placement: str
) -> None:
    first, second, old = case
    assert not _stale(first, second, old, placement)


@pytest.mark.parametrize("placement", ["user", "assistant"])
def test_a_value_read_out_after_a_sentence_naming_its_subject_replaces_it(placement: str) -> None:
    # Said apart, the second sentence holds the value and the first its subject: the one
    # value of its form so far is replaced. (Printed by a tool, the two sentences are one
    # line with two numbers, rack 12's and the new cap: not yet linked.)
    first = "Rack budget: The power draw of rack 12 must stay under 4200 W."
    second = (
        "The invoice and the quote disagree on the power cap for rack 12. "
        "I'm going by the signed quote: 5100 W."
    )
    assert not _stale(first, second, "4200 W", placement)


#: (earlier, later): the same shapes, and both facts hold.
STILL_TWO = [
    # a contrast whose second clause is about another thing
    (
        "The API is served at http://localhost:8000.",
        "The API is at http://localhost:8000, but the docs are at http://localhost:9000.",
    ),
    # two revisions of two documents, each naming its own value
    (
        "The runbook escalation contact is ana.ruiz@corp.example.",
        "Design doc rev 3 names ben.okafor@corp.example as reviewer; the runbook rev 2 names "
        "ana.ruiz@corp.example.",
    ),
    # a contraction of another word of the same slot's thing (idle, not session)
    ("The session timeout for the admin panel is 1800 s.", "admin.idle_tmo = 900 s"),
    # a command's option and prose about another setting
    ("$ worker start --batch-size=64 --quiet", "The page size for the API is 128."),
    # one sentence said of two things: the value opens it, or two of its values differ
    ("RQ-101 is blocked by the same flaky test.", "RQ-202 is blocked by the same flaky test."),
    (
        "The limit of queue_exports is 40 ms for the nightly run.",
        "The limit of queue_imports is 90 ms for the nightly run.",
    ),
    # one kind of thing, each with its own qualifier (*hot tier*, *cold tier*)
    ("The hot tier of the archive holds 79.2 TiB.", "The cold tier of the archive holds 96.5 TiB."),
    # a statement that says it adds to what holds
    (
        "Model build 4.48.2 serves the production traffic.",
        "Model build 6.23.1 serves the shadow traffic next to it, too.",
    ),
    # a negation shared is no subject shared (*do not load*, *will not backport*)
    (
        "Memory cap on the CI runners is 7.5 GiB, so do not load every fixture at once.",
        "We will not backport this to the 2.x line; note that in the release entry.",
    ),
    # a bare value whose subject only the command before it names
    ("ops/import-input-dir: /srv/in-a7", "$ jq -r '.import_output_dir' settings.json\n/srv/out-b9"),
]


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("pair", STILL_TWO)
def test_the_same_shapes_about_two_things_stay_two(pair: tuple[str, str], placement: str) -> None:
    first, second = pair
    text = summary_of(first, second, placement)
    assert "(was" not in text and SUPERSEDED_MARK not in text, text


# -- a line that shows its old value ---------------------------------------------------------

#: (earlier, later lines, earlier value): a correction over several lines, one of which names
#: the earlier value where no word beside it says it is old. Shown whole, the correction is
#: not stale; a summary that keeps only that line must show the value as replaced.
OLD_IN_LINE = [
    # a line that voids what it names, the void word far from the value
    (
        "The vendor cutover for telvik is booked for 2029-03-14 02:10 UTC.",
        "Board update:\nFacilities pulled the 2029-03-14 02:10 slot over a power test; that"
        " booking is cancelled.\nNext slot: 2029-03-21 02:40 UTC.",
        "2029-03-14 02:10",
    ),
    # a field history: the field, its old value, its new value
    (
        "Target release for the export fix: quorin-4.12.207",
        "Audit trail of BUG-5531\nField\tFrom\tTo\nTarget release\tquorin-4.12.207\t"
        "quorin-4.19.002\nAssignee\t(none)\tHalvorsen",
        "quorin-4.12.207",
    ),
]


@given(st.sampled_from(OLD_IN_LINE), st.sampled_from(PLACEMENTS))
@settings(deadline=None, max_examples=30)
def test_a_line_of_a_correction_shows_the_old_value_it_names_as_replaced(
    case: tuple[str, str, str], placement: str
) -> None:
    first, second, old = case
    text = summary_of(first, second, placement)
    kept = [line for line in current(text).split("\n") if old in line]
    assert kept == [], kept


#: (earlier, later, earlier value): lines naming an earlier value beside another of its form
#: that do not replace it.
BESIDE_IN_LINE = [
    # two tickets listed: both hold
    ("The crash is tracked as RQ-40711.", "Open for this sprint: RQ-40711 and RQ-40958."),
    # two earlier values of one form: which one the line drops is not said
    ("Pinned rivo-2.10.114 on staging.", "Pinned rivo-2.11.300 on prod."),
]


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("case", BESIDE_IN_LINE)
def test_a_line_naming_an_earlier_value_beside_another_keeps_both(
    case: tuple[str, str], placement: str
) -> None:
    first, second = case
    text = summary_of(first, second, placement)
    assert "(was" not in text and SUPERSEDED_MARK not in text


def test_values_of_one_message_are_never_earlier_than_each_other() -> None:
    line = "Fix Version/s app-1.2.3 app-1.4.0"
    assert superseded_in_line(line, ["app-1.2.3", "app-1.4.0"], set()) == []
    assert superseded_in_line(line, ["app-1.2.3", "app-1.4.0"], {"app-1.2.3"}) == ["app-1.2.3"]
    both = {"app-1.2.3", "app-1.4.0"}
    assert superseded_in_line(line, ["app-1.2.3", "app-1.4.0"], both) == []


def test_a_denied_void_word_voids_nothing() -> None:
    slot = "2029-03-14 02:10"
    assert superseded_in_line(f"the {slot} window is cancelled", [slot], {slot}) == [slot]
    assert superseded_in_line(f"the {slot} window is not cancelled", [slot], {slot}) == []
    assert superseded_in_line(f"{slot} was never withdrawn", [slot], {slot}) == []


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_a_replaced_value_named_twice_is_marked_both_times(placement: str) -> None:
    first = "From dana: the schema for fastas is services/fastas/core/byveath_schema.ts."
    second = (
        "$ git mv services/fastas/core/byveath_schema.ts pkg/fastas/steaty_schema.py\n"
        "$ git status --short\n"
        "R  services/fastas/core/byveath_schema.ts -> pkg/fastas/steaty_schema.py"
    )
    text = summary_of(first, second, placement)
    assert [line for line in current(text).split("\n") if "byveath" in line] == []


def test_a_replaced_short_number_is_not_marked_in_other_text() -> None:
    messages = [
        Message.user("Set the worker retries to 1 for now."),
        Message.assistant("Noted."),
        Message.user("Plan: 0 to add, 1 to change, 0 to destroy. Looks fine?"),
        Message.assistant("Yes."),
        Message.user("Correction: the worker retries are 3, not 1."),
        Message.assistant("Noted."),
    ]
    text = SUMMARIZER.build(SummaryRequest(messages=tuple(messages))).text
    assert "Plan: 0 to add, 1 to change" in text


# -- a diff's removed lines --------------------------------------------------------------------


@pytest.mark.parametrize("placement", ["tool", "assistant", "user"])
def test_a_value_a_diff_removes_is_no_longer_current(placement: str) -> None:
    first = "Code owner of services/vantor/: @ilse.marrow (per the CODEOWNERS file)."
    diff = (
        "diff --git a/CODEOWNERS b/CODEOWNERS\n@@ -3 +3 @@\n"
        "-/services/vantor/ @ilse.marrow\n+/services/vantor/ @jules.okafor"
    )
    text = summary_of(first, diff, placement)
    assert "@jules.okafor" in text
    assert [line for line in current(text).split("\n") if "@ilse.marrow" in line] == []


def test_a_setting_a_diff_removes_leaves_the_facts() -> None:
    text = summary_of(
        "WORKER_SHARDS=6122 is what the batch job reads.",
        "-WORKER_SHARDS=6122\n+QUEUE_PARTITIONS=6122",
        "tool",
    )
    facts = text.split("## Facts and decisions", 1)[1].split("\n## ", 1)[0]
    assert "QUEUE_PARTITIONS=6122" in facts
    assert "WORKER_SHARDS" not in current(facts)


def test_a_patch_to_source_code_replaces_no_value() -> None:
    # Removed code is not a setting that stopped holding: the names it held stay current.
    text = summary_of(
        "makemigrations failed: lazy reference to 'shop.category', but app 'shop' is missing.",
        "diff --git a/shop/models.py b/shop/models.py\n@@ -3 +3 @@\n"
        "-    owner_ref = fk('shop.category')\n+    owner_ref = fk('catalog.category')",
        "tool",
    )
    assert "(was" not in text


def test_a_list_with_dashes_keeps_its_values() -> None:
    text = summary_of(
        "Pinned hosts: db-7.kelvar.internal for writes.",
        "Hosts in rotation:\n- db-7.kelvar.internal\n- db-9.kelvar.internal\n+ more soon",
        "tool",
    )
    assert "(was" not in text


# -- the helpers ------------------------------------------------------------------------------


def test_value_forms_tell_slots_of_one_shape_apart() -> None:
    assert value_form("CVE-2031-48151") == value_form("CVE-2030-1")
    assert value_form("6527 MiB") != value_form("6527 ms")
    assert value_form("Ann Lee") == value_form("Bob Stone") == "person"
    assert value_form("some words") is None


def test_setting_files_are_not_source_files() -> None:
    assert setting_file("config/a/b.yaml", "file")
    assert not setting_file("src/pkg/mod.py", "file")
    assert not setting_file("b.yaml", "file")  # no directory: a file of the code at hand
    assert not setting_file("config/a", "path")


def test_strong_correction_words() -> None:
    assert strongly_corrects("Scratch that, it is 5.")
    assert strongly_corrects("Use 7 instead of 5.")
    assert not strongly_corrects("The new build is 5.")
    assert not strongly_corrects("I'd rather see it in #ops.")


# -- properties -------------------------------------------------------------------------------

_SECRET_WORD = re.compile(r"token|secret|passw|apikey|credential|auth", re.IGNORECASE)
#: Words of a setting's name; none that makes it a secret's (``aaaa_token``: its value is
#: redacted) or a word the summary drops.
_NAME = st.text(alphabet=string.ascii_lowercase, min_size=4, max_size=8).filter(
    lambda w: (
        w not in {"test", "tests", "note", "notes", "none", "true", "null"}
        and not _SECRET_WORD.search(w)
    )
)
_TICKET = st.tuples(
    st.text(alphabet=string.ascii_uppercase, min_size=2, max_size=4),
    st.integers(min_value=1000, max_value=99999),
).map(lambda t: f"{t[0]}-{t[1]}")


def _setting(key: str, value: str, style: int) -> str:
    return [
        f"{key}: {value}",
        f"{key} = {value}",
        json.dumps({key: value}),
        f"| {key} | {value} | per ops |",
        f"2027-01-02T03:04:05Z INFO [cfg] {key}={value}",
    ][style]


@given(
    st.lists(_NAME, min_size=2, max_size=2, unique=True),
    st.lists(_TICKET, min_size=2, max_size=2, unique=True),
    st.integers(0, 4),
    st.integers(0, 4),
    st.sampled_from(PLACEMENTS),
)
@settings(deadline=None, max_examples=60)
@example(["alpha", "gamma"], ["AB-1000", "AB-1001"], 0, 3, "tool")
def test_a_later_value_for_the_same_slot_always_supersedes(
    words: list[str],
    values: list[str],
    first_style: int,
    second_style: int,
    placement: str,
) -> None:
    old, new = values
    if old in new or new in old:
        return
    key = "_".join(words)
    text = summary_of(_setting(key, old, first_style), _setting(key, new, second_style), placement)
    assert old not in current(text)
    assert new in text


@given(
    st.lists(_NAME, min_size=4, max_size=4, unique=True),
    st.lists(_TICKET, min_size=2, max_size=2, unique=True),
    st.integers(0, 4),
    st.integers(0, 4),
    st.sampled_from(PLACEMENTS),
)
@settings(deadline=None, max_examples=60)
# a value that opens with a word that declares a drop (``OFF-1000``) declares nothing
@example(["aaaa", "aaab", "aaba", "aabb"], ["AA-1000", "OFF-1000"], 0, 0, "user")
def test_unrelated_facts_never_supersede_each_other(
    words: list[str],
    values: list[str],
    first_style: int,
    second_style: int,
    placement: str,
) -> None:
    one, two = values
    if one in two or two in one or any(w in v.lower() for w in words for v in values):
        return
    # A word that abbreviates one of the other key's (``max``, ``maximum``) names the same
    # thing by design.
    mine, theirs = words[:2], words[2:]
    assume(not any(a.startswith(b[:3]) or b.startswith(a[:3]) for a in mine for b in theirs))
    first = _setting(f"{words[0]}_{words[1]}", one, first_style)
    second = _setting(f"{words[2]}_{words[3]}", two, second_style)
    text = summary_of(first, second, placement)
    assert "(was" not in text and SUPERSEDED_MARK not in text
    assert one in text and two in text


def test_a_reference_holding_a_replaced_value_leaves_the_references() -> None:
    # ``Forget 6.13.845`` is harvested whole (a word and a version): it still names the value.
    messages = [
        Message.user("Pin the client."),
        Message.assistant("Pinned: client_pin = 6.13.845 for now."),
        Message.assistant("Forget 6.13.845 - the client pin is 7.01.220."),
        Message.user("ok"),
    ]
    text = SUMMARIZER.build(SummaryRequest(messages=tuple(messages))).text
    references = text.split("## Exact references", 1)[-1]
    assert "6.13.845" not in current(references)
    assert "7.01.220" in text


# -- what a code session names is no value a correction replaces ------------------------------
# Found reading summaries of the recorded sessions with no canary in them: 70 of 113 carried a
# ``(was X)`` inside a line of the agent's or the user's own words (*If `super_method` is
# `(was None)` (not found), we skip*; the user's task with *(was get_default_columns)*).


def _summary(messages: list[Message]) -> str:
    return SUMMARIZER.build(SummaryRequest(messages=tuple(messages))).text


def _handler_session(mentions: int) -> list[Message]:
    """``handler = FooHandler`` read, ``FooHandler`` named by ``mentions`` more messages, then
    ``handler = BarHandler`` read."""
    named = [
        Message.assistant("FooHandler is where the requests go, so I will read it first."),
        *_bash("c2", "grep -rn 'class FooHandler' src", "src/app/h.py:12:class FooHandler:\n"),
        Message.assistant("FooHandler has no retry; that explains the lost writes."),
    ][:mentions]
    return [
        Message.user("Find why writes get lost in the handler."),
        *_bash("c1", "cat app.ini", "handler = FooHandler\n"),
        *named,
        *_bash("c3", "cat app.ini", "handler = BarHandler\n"),
    ]


def test_a_thing_many_messages_name_is_not_shown_replaced_in_their_words() -> None:
    # The agent turns from one class to another: the class it leaves stays a class.
    messages = [
        Message.user("Inline admins are editable by a user with view permission only."),
        Message.assistant("They must be in `ModelAdmin` or `BaseModelAdmin`."),
        *_bash("c1", "grep -n 'class ModelAdmin' a.py", "538:class ModelAdmin(BaseModelAdmin):\n"),
        Message.assistant("`ModelAdmin` defines `has_change_permission` near line 602."),
        Message.assistant(
            "Actually the check lives in `InlineModelAdmin`, which calls `BaseModelAdmin`."
        ),
        Message.user("So is `ModelAdmin` fine as it is?"),
    ]
    assert not {"ModelAdmin", "BaseModelAdmin"} & build_ledger(messages).replaced_values
    text = _summary(messages)
    assert "(was" not in text, [line for line in text.split("\n") if "(was" in line]
    assert "So is `ModelAdmin` fine as it is?" in text


def test_a_value_named_once_beside_its_setting_is_shown_replaced() -> None:
    # the other way: a setting's value that nothing else names is one value, replaced
    messages = _handler_session(mentions=0)
    assert "FooHandler" in build_ledger(messages).replaced_values


def test_a_literal_is_never_marked_replaced_outside_its_own_fact() -> None:
    messages = [
        Message.user("Make the cache optional."),
        *_bash("c1", "cat cache.ini", "cache_backend = None\n"),
        Message.assistant("If `backend` is None the lookup is skipped, which is what we want."),
        *_bash("c2", "cat cache.ini", "cache_backend = redis-primary-7\n"),
    ]
    assert "None" not in build_ledger(messages).replaced_values
    assert "(was None)" not in _summary([*messages, Message.user("Is it None when unset?")])


def test_two_numbered_lines_of_a_listing_are_two_places() -> None:
    messages = [
        Message.user("Why can a view-only user edit inlines?"),
        *_bash("c1", "nl -ba options.py | sed -n 118p", "   118\t    checks_class = BaseChecks\n"),
        *_bash("c2", "nl -ba options.py | sed -n 572p", "   572\t    checks_class = AdminChecks\n"),
    ]
    facts = [f.render() for f in build_ledger(messages).facts]
    assert not any("(was" in f for f in facts), facts
    assert "BaseChecks" not in build_ledger(messages).replaced_values


def test_the_agent_thinking_aloud_gets_no_was_note() -> None:
    # *`obj` is None* after *`obj` is the parent instance*: two cases the agent weighs, keyed
    # alike; no value of the old one to show (a tool printing a setting again has one).
    old = Fact("`obj` is the parent instance", "obj", "assistant", "decision", 1.0, 0)
    new = Fact("`obj` is None at this point", "obj", "assistant", "decision", 1.0, 1)
    assert _old_value(new, old) is None
    printed_old = Fact("mode: the parent instance", "mode", "tool", "decision", 1.0, 0)
    printed_new = Fact("mode: eager", "mode", "tool", "decision", 1.0, 1)
    assert _old_value(printed_new, printed_old) == "the parent instance"


@pytest.mark.parametrize("field", ["setting", "key", "name", "option"])
def test_json_records_naming_two_settings_are_two_subjects(field: str) -> None:
    # Each record names its setting in a field (``"setting": "log_prefix"``): read as that
    # setting, not as one setting called *setting* that every later record replaced (the
    # user's earlier records were marked superseded).
    def record(name: str, value: str) -> Message:
        return Message.user(json.dumps({field: name, "value": value, "source": "ops"}))

    two = [record("log_prefix", "[TUFIR]"), Message.assistant("ok")]
    two += [record("scratch_dir", "/srv/scratch/ra-9946"), Message.assistant("ok")]
    assert build_ledger(two).superseded_users == frozenset()
    again = [*two, record("scratch_dir", "/srv/scratch/zed-1"), Message.assistant("ok")]
    assert build_ledger(again).superseded_users == frozenset({2})


# -- a message that names the earlier value beside the new one -----------------------------------

#: (earlier, later, earlier value): a later message naming the earlier value beside a new one of
#: its form, with no word that says it corrects; it ends on the new one, set over the old by its
#: layout.
ENDS_ON_NEW = [
    # two candidates, then a closing line naming the pick alone
    (
        "The nightly export keeps 14 GiB of scratch space.",
        "Sizing options:\n| size | source |\n|---|---|\n| 14 GiB | first estimate |\n"
        "| 22 GiB | measured on the replica |\n\nFinal: 22 GiB.",
        "14 GiB",
    ),
    # a field's history labels: previous_value, value
    (
        "The primary zone is eu-north-4b for the ledger database.",
        "zone_change {\n  previous_value: eu-north-4b\n  value: eu-south-2a\n  by: ops\n}",
        "eu-north-4b",
    ),
    # a field's history labels: Original, Updated
    (
        "The audit review is due 2027-09-11.",
        "AUD-311 history\n  Original: 2027-09-11\n  Updated: 2027-12-21",
        "2027-09-11",
    ),
    # one line, markup between: a strike-through, a word diff, two sides of one setting
    ("Keep the error budget at 6.89% a month.", "**Error budget:** ~~6.89%~~ 4.20%", "6.89%"),
    (
        "The scratch space is 14 GiB.",
        '$ git diff --word-diff\nscratch = [-"14 GiB"-]{+"22 GiB"+}',
        "14 GiB",
    ),
    (
        "Uploads are stored under /srv/kelp/drum-41.",
        'Before and after:\ndir = "/srv/kelp/drum-41"        |  dir = "/srv/vale/mosk-07"',
        "/srv/kelp/drum-41",
    ),
    # a field's history of arrows, newest first: the old value is the newer line's source
    (
        "The incident is tracked in PPRH-14581.",
        "Field history: the incident ticket\n"
        "2026-11-03 jonah  tracking.incident_ticket: PPRH-14581 -> KND-43196\n"
        "2026-04-10 femi  tracking.incident_ticket: (empty) -> PPRH-14581",
        "PPRH-14581",
    ),
    # a revert listed above the change it reverts (``git log``, newest first)
    (
        "/config/krynraux/sdk-version\n13.53.86-rc.4",
        '$ git log --oneline -3\n808128c Revert "krynraux: bump sdk to 13.53.86-rc.4"\n'
        "083cb0a krynraux: bump sdk to 13.53.86-rc.4\n76f7b21 krynraux: pin sdk 10.55.96-rc.3",
        "13.53.86-rc.4",
    ),
    # an arrow of another script (``⇒``) between the old value and the new
    (
        "The ingest endpoint accepts 10,796 req/min.",
        "Follow-up applied: ingest_rate_limit 10,796 req/min ⇒ 67,035 req/min so the backlog "
        "can drain.",
        "10,796 req/min",
    ),
    # the same, oldest first
    (
        "The incident is tracked in PPRH-14581.",
        "Field history: the incident ticket\n"
        "2026-04-10 femi  tracking.incident_ticket: (empty) -> PPRH-14581\n"
        "2026-11-03 jonah  tracking.incident_ticket: PPRH-14581 -> KND-43196",
        "PPRH-14581",
    ),
]


def test_values_a_field_passed_through_in_one_message_are_replaced() -> None:
    # No earlier message: the history alone says which value the field passed through.
    history = (
        "audit trail of scratch_size\n"
        "  2027-01-09 (empty) => 14 GiB\n  2027-02-11 14 GiB => 22 GiB\n"
    )
    ledger = build_ledger([Message.user("go"), Message.assistant(history)])
    assert "14 GiB" in ledger.replaced_values and "22 GiB" not in ledger.replaced_values
    # an arrow between code names (a lambda, a pointer) is code, never a history
    code = [
        Fact(line, None, "tool", "value", 1.0, 1, values=tuple(names))
        for line, names in [("f = a_1 => b_2", ["a_1", "b_2"]), ("g = b_2 => c_3", ["b_2", "c_3"])]
    ]
    assert passed_through(code) == []


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("case", ENDS_ON_NEW)
def test_a_message_naming_the_earlier_value_beside_a_new_one_replaces_it(
    case: tuple[str, str, str], placement: str
) -> None:
    first, second, old = case
    assert not _stale(first, second, old, placement)
    text = summary_of(first, second, placement)
    assert old in text  # shown, as replaced


#: (earlier, later, earlier value): later messages naming the earlier value beside another of
#: its form that both hold, or that end on the earlier one.
BESIDE_ACROSS_LINES = [
    # two things side by side in one line
    (
        "The API is served at http://localhost:8000.",
        "The API is at http://localhost:8000 and the docs at http://localhost:9000; open "
        "http://localhost:9000 for the reference.",
        "http://localhost:8000",
    ),
    (
        "Installed numpy 1.26.4 in the venv.",
        "numpy 1.26.4 works with pandas 2.2.1, and pandas 2.2.1 is the newest release.",
        "1.26.4",
    ),
    (
        "The worker memory limit is 512 MiB.",
        "The worker has 512 MiB; the node has 4096 MiB in total, and 4096 MiB is shared.",
        "512 MiB",
    ),
    (
        "The audit review is due 2027-09-11.",
        "The audit is due 2027-09-11 and the renewal is due 2027-12-21; the renewal on "
        "2027-12-21 needs sign-off.",
        "2027-09-11",
    ),
    # two things under their own keys, two keys of one file, a key within another
    (
        "Auth listens on http://localhost:8443.",
        "auth: http://localhost:8443\nbilling: http://localhost:9443",
        "http://localhost:8443",
    ),
    (
        "Uploads are stored under /srv/uploads.",
        '[storage]\npath = "/srv/uploads"\nlog_path = "/srv/logs"',
        "/srv/uploads",
    ),
    ("The client timeout is 30s.", "client.yaml:\n  timeout: 30s\n  read_timeout: 5s", "30s"),
    # two candidates, the message ends on the earlier one
    (
        "The nightly export keeps 14 GiB of scratch space.",
        "| size | source |\n|---|---|\n| 22 GiB | a guess |\n| 14 GiB | measured |\n"
        "We keep 14 GiB.",
        "14 GiB",
    ),
    # a list, an aside, a comparison, two arguments: the values stand side by side
    ("The crash is tracked as RQ-40711.", "Open: RQ-40711, RQ-40958", "RQ-40711"),
    (
        "The crash is tracked as RQ-40711.",
        "Tickets for auth and billing: RQ-40711 and RQ-40958",
        "RQ-40711",
    ),
    (
        "The proxy is at http://localhost:8443.",
        "The proxy is at http://localhost:8443 (http://localhost:9443 behind the balancer).",
        "http://localhost:8443",
    ),
    ("Installed numpy 1.26.4 in the venv.", "| metric | numpy 1.26.4 | numpy 2.0.1 |", "1.26.4"),
    (
        "Uploads are stored under /srv/uploads.",
        'cp -r "/srv/uploads" "/srv/backups"',
        "/srv/uploads",
    ),
    # a value inside another (4 GiB in 14 GiB) is not named
    (
        "The nightly export keeps 14 GiB of scratch space.",
        "Each worker gets 4 GiB and the coordinator 8 GiB; the coordinator needs 8 GiB.",
        "14 GiB",
    ),
]


#: (earlier, later, earlier value): a later message that goes back to the earlier value in a
#: statement of its own, then gives another of its form in a later one, with no word that
#: says it corrects; or a field's later line under the same name.
GIVEN_AFTER = [
    # a source weighed against another: the later one's value holds
    (
        "Pilot lot: KX-4411",
        "Your spreadsheet says KX-4411 for the pilot lot; the signed order says KX-9034.",
        "KX-4411",
    ),
    # the old value put down to where it was read, the new one read again
    (
        "Intake closes on 2031-05-14 for the autumn cohort.",
        "That 2031-05-14 came from last year's brochure. This year's page shows 2031-06-02 "
        "for when intake closes.",
        "2031-05-14",
    ),
    # an erratum: it appears as X; it is Y
    (
        "The handbook keeps records for 45 days.",
        "In the printed handbook the retention appears as 45 days. It is 60 days; the web "
        "copy is right.",
        "45 days",
    ),
    # the row below: the old value, then the row for the subject with the new one
    (
        "Handover room: Tarvel House, room 4.12",
        "The Tarvel House, room 4.12 I gave you is in the row below. The row for the handover "
        "room has Quenby House, room 2.07.",
        "Tarvel House",
    ),
    # a settings file that names a field twice: the later line is the one that holds
    (
        "The artifact cache is capped at 3866MB.",
        'artifact_cache_cap = "3866MB"\nretries = 4\nartifact_cache_cap = "1532MB"',
        "3866MB",
    ),
    # a report line keyed by the setting's name, then prose naming its words
    (
        "MAX_UPLOAD_SIZE 512 MiB",
        "Checked with the platform team: the max upload size is 2048 MiB from today.",
        "512 MiB",
    ),
]


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("case", GIVEN_AFTER)
def test_a_message_going_back_to_the_earlier_value_to_give_another_replaces_it(
    case: tuple[str, str, str], placement: str
) -> None:
    first, second, old = case
    assert not _stale(first, second, old, placement)


#: (earlier, later, earlier value): later messages that name the earlier value, then another
#: of its form in a later statement, where both hold.
STILL_BESIDE = [
    # a listing's lines name values side by side
    (
        "-rw-r--r--  1 root root  806 Nov 19 00:38 notes.txt",
        "-rw-r--r--  1 root root  806 Nov 19 00:38 notes.txt\n"
        "-rw-r--r--  1 root root  120 Nov 19 00:45 todo.txt",
        "00:38",
    ),
    # two people, two roles
    (
        "Ann Lee reviewed the patch.",
        "Ann Lee reviewed the patch yesterday. Bo Chen will merge the patch tomorrow.",
        "Ann Lee",
    ),
    # the new value added, or set beside the old
    (
        "Nightly dumps go to s3://kelp-07.",
        "We keep the dumps in s3://kelp-07. We also copy the dumps to s3://kelp-12.",
        "s3://kelp-07",
    ),
    (
        "The web tier runs 512 MiB pods.",
        "The web tier runs 512 MiB pods. The batch tier runs 2048 MiB pods.",
        "512 MiB",
    ),
    (
        "Badges are printed on PR-4410.",
        "Badges for staff are printed on PR-4410. Badges for visitors are printed on PR-7702, "
        "while staff keep theirs.",
        "PR-4410",
    ),
    # two sides of one thing, two options, two measures, said in statements of one frame or
    # with no word that the later one is what a source gives
    (
        "Office hours start at 09:00.",
        "Office hours start at 09:00. Office hours end at 17:00.",
        "09:00",
    ),
    (
        "We could store the dumps in s3://kelp-07.",
        "We could store the dumps in s3://kelp-07. Or we could store the dumps in s3://kelp-12.",
        "s3://kelp-07",
    ),
    (
        "The build took 12 minutes on main.",
        "The build took 12 minutes on main. The build took 4 minutes on the branch.",
        "12 minutes",
    ),
    (
        "The dashboard shows p95 at 120 ms.",
        "The dashboard shows p95 at 120 ms. It shows p99 at 480 ms.",
        "120 ms",
    ),
    (
        "The lockfile pins numpy 1.26.4.",
        "The lockfile pins numpy 1.26.4. The numpy 2.0.1 release breaks the ABI.",
        "1.26.4",
    ),
    # one key in two files, or two sections
    (
        "Staging uses db-staging-01.internal.",
        "==> deploy/staging.env <==\nDB_HOST=db-staging-01.internal\n"
        "==> deploy/prod.env <==\nDB_HOST=db-prod-02.internal",
        "db-staging-01.internal",
    ),
    # code names one setting twice in two places
    (
        "The timeout is 30s.",
        'def a():\n    timeout = "30s"\ndef b():\n    timeout = "90s"',
        "30s",
    ),
]


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("case", STILL_BESIDE)
def test_a_message_naming_the_earlier_value_before_one_that_also_holds_keeps_it(
    case: tuple[str, str, str], placement: str
) -> None:
    first, second, old = case
    text = summary_of(first, second, placement)
    assert f"(was {old}" not in text and SUPERSEDED_MARK not in text, text


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize("case", BESIDE_ACROSS_LINES)
def test_a_message_naming_the_earlier_value_beside_one_that_also_holds_keeps_it(
    case: tuple[str, str, str], placement: str
) -> None:
    first, second, old = case
    text = summary_of(first, second, placement)
    assert "(was" not in text and SUPERSEDED_MARK not in text, text
    if placement != "tool":  # (a short line a tool printed may rank below the summary's cut)
        assert old in current(text)


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ("curl -s http://localhost:8000/config", "upstream: http://localhost:8000\nlisten: "
         "http://localhost:9000\n"),
        ("jira view RQ-40711", "Key: RQ-40711\nStatus: Open\nBlocks: RQ-40958\n"),
    ],
)  # fmt: skip
def test_the_command_a_tool_ran_is_no_earlier_statement_of_its_values(
    command: str, output: str
) -> None:
    messages = [Message.user("Check the config."), *_bash("c1", command, output)]
    assert build_ledger(messages).replaced_values == frozenset()
    assert "(was" not in _summary(messages)


def test_code_named_beside_other_code_replaces_nothing() -> None:
    # an agent moving from one class, file or function to the next replaces none of them
    messages = [
        Message.user("Why are writes lost?"),
        Message.assistant("FooHandler queues the writes."),
        *_bash("c1", "grep -n Handler app.py", "12:class FooHandler:\n40:class BarHandler:\n"),
        Message.assistant("FooHandler hands off to BarHandler, and BarHandler drops retries."),
        Message.assistant("Reading app/io_queue.py next, after app/io_flush.py."),
    ]
    assert build_ledger(messages).replaced_values == frozenset()


def test_an_earlier_value_is_one_an_earlier_message_names_in_any_line() -> None:
    # The earlier message names the path only in a line of code (no fact is drawn from it): the
    # path is earlier all the same, and the later line replacing it in place is read so.
    code = 'def prepare():\n    os.makedirs("/srv/kelp/drum-41", exist_ok=True)\n'
    earlier = _bash("c1", "cat prepare.py", code)
    assert not any("/srv/kelp/drum-41" in f.values for f in extract_facts(earlier))
    second = 'dir = "/srv/kelp/drum-41"        |  dir = "/srv/vale/mosk-07"'
    messages = [Message.user("Move the uploads."), *earlier, Message.user(second)]
    assert "/srv/kelp/drum-41" in build_ledger(messages).replaced_values
    texts = MessageTexts(messages)
    assert (texts.first("/srv/kelp/drum-41"), texts.first("/srv/vale/mosk-07")) == (2, 3)
    assert texts.first("/srv/kelp/drum-4") is None  # a part of a value is not the value
    assert texts.first("cat prepare.py") is None  # a command is not a statement


def test_a_carried_dotted_key_is_replaced_by_prose_naming_its_slot() -> None:
    # A previous summary carried the setting without the description beside it: the prose that
    # names the key's last part (*primary zone*) is about it, however deep the key sits.
    entry = '- [tool: bash `cat api.yaml`] x-settings.placement.primary_zone.default: "eu-kelvo-4b"'
    later = Message.user("The zone the primary database must stay in: eu-drami-2a, from today.")
    ledger = build_ledger([later, Message.assistant("ok")], previous=[entry])
    assert "eu-kelvo-4b" in ledger.replaced_values
    # a key's one-word last part is its thing's: another thing's port stays its own
    entry = "- [tool: bash `cat services.ini`] services.kelvo.port: 48871-tcp"
    other = Message.user("The port for drami is 39325-tcp.")
    assert "48871-tcp" not in build_ledger([other], previous=[entry]).replaced_values
