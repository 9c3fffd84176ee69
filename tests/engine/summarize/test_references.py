"""Exact references: a rate (a unit per a unit of time) is one quantity, never a path or a name;
a date written with its month's name is one date."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abridged.engine.summarize.anchors import anchors, slots
from abridged.engine.summarize.references import harvest_references, reference_kinds

units = st.text(alphabet=string.ascii_letters, min_size=1, max_size=8)
per = st.sampled_from(["s", "sec", "second", "min", "minute", "h", "hour", "day", "week", "month"])
amounts = st.integers(min_value=1, max_value=10**6).map(lambda n: f"{n:,}")


@given(amount=amounts, unit=units, time=per)
def test_a_rate_is_one_quantity(amount: str, unit: str, time: str) -> None:
    rate = f"{amount} {unit}/{time}"
    assert reference_kinds(f"the limit is {rate} for now") == [(rate, "quantity")]
    # a unit is no thing's name: two limits of two things share it and nothing else
    assert anchors(f"the limit is {rate}") == frozenset()


@pytest.mark.parametrize(
    ("text", "handle"),
    [
        ("@papax.dega is on call this week.", "@papax.dega"),
        ("on call this week: @papax.dega.", "@papax.dega"),
        ("ask @lena_k-ops, not the channel", "@lena_k-ops"),
        ("@acme/data-plumbing owns it", "@acme/data-plumbing"),
    ],
)
def test_a_handle_is_whole_with_its_dots_and_without_a_full_stop(text: str, handle: str) -> None:
    assert (handle, "handle") in reference_kinds(text)
    assert harvest_references(text)[0] == handle


def test_a_code_span_holding_one_value_is_that_value_and_a_code_name_stays_code() -> None:
    text = (
        "`VENDOR_CUTOFF` is `14 May 2027`, owner `ana@corp.example`, see `pool_max: 40` in "
        "`lib/app/settings.py` under `src/app`"
    )
    assert reference_kinds(text) == [
        ("VENDOR_CUTOFF", "code"),
        ("14 May 2027", "date"),
        ("ana@corp.example", "email"),
        ("pool_max: 40", "code"),
        ("lib/app/settings.py", "code"),
        ("src/app", "code"),
    ]


@pytest.mark.parametrize(
    "url",
    ["redis://kv-3.corp.internal:6379/2", "postgresql+psycopg://app@db-1/main", "amqps://mq:5671"],
)
def test_a_url_of_any_scheme_is_one_url(url: str) -> None:
    assert reference_kinds(f"It is reachable at {url}.") == [(url, "url")]


def test_a_date_with_slashes_or_dots_is_a_date_and_a_version_stays_a_version() -> None:
    text = "freeze 05.10.2055, cutover 2045/04/01 11:46, pin v1.2.3 and 1.10.2024.5"
    assert reference_kinds(text) == [
        ("05.10.2055", "date"),
        ("2045/04/01 11:46", "date"),
        ("v1.2.3", "version"),
        ("1.10.2024.5", "version"),
    ]
    # a path that holds a date is a path
    assert reference_kinds("see logs/2045/04/01/app.log") == [("logs/2045/04/01/app.log", "file")]


@pytest.mark.parametrize(
    "version", ["3.2.0rc2", "1.8.4b1", "0.9.1.dev7", "5.0.2.post1", "v4.4.0a3"]
)
def test_a_pre_or_post_release_is_one_version(version: str) -> None:
    assert reference_kinds(f"the agent runs on {version} until Friday") == [(version, "version")]


def test_a_path_is_still_a_path() -> None:
    assert reference_kinds("see 3 src/main and kv/infra/db") == [
        ("src/main", "path"),
        ("kv/infra/db", "path"),
    ]


MONTHS = ["Jan", "February", "Mar", "Apr", "May", "June", "Jul", "Aug", "Sept.", "Oct", "Nov"]


@given(
    day=st.integers(min_value=1, max_value=28),
    month=st.sampled_from(MONTHS),
    year=st.integers(min_value=1990, max_value=2099),
    clock=st.sampled_from(["", " 08:55", " 17:10", ", 9:30 pm", " at 23:05"]),
    day_first=st.booleans(),
)
def test_a_written_date_is_one_date_with_its_time(
    day: int, month: str, year: int, clock: str, day_first: bool
) -> None:
    date = f"{day} {month} {year}" if day_first else f"{month} {day}, {year}"
    written = date + clock
    # one value, so a deadline that moves is one value replaced (not a time of day beside a
    # date, nor a person called May)
    assert reference_kinds(f"The review is booked for {written} UTC.") == [(written, "date")]
    assert slots(f"The review is booked for {written}.") == {"date": frozenset({written})}
    # the exact reference keeps the zone that follows a time
    zoned = written + " UTC" if clock else written
    assert harvest_references(f"The review is booked for {written} UTC.") == [zoned]


def test_a_month_without_a_day_and_a_year_is_no_date() -> None:
    assert reference_kinds("the May 2029 budget, and Mayfield 12") == []


def test_a_version_a_host_and_a_file_keep_their_shapes() -> None:
    assert reference_kinds("v1.2.3 on db-2.eu.internal, see test_models.py") == [
        ("v1.2.3", "version"),
        ("db-2.eu.internal", "host"),
        ("test_models.py", "file"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("No deploys during 18:45-21:40 UTC; ok", [("18:45-21:40 UTC", "time")]),
        ("the window is 9:00 - 17:30 on Fridays", [("9:00 - 17:30", "time")]),
        ("The nightly job runs on 16 10 * * 1.", [("16 10 * * 1", "schedule")]),
        ('NIGHTLY="*/5 * * * *"', [("*/5 * * * *", "schedule")]),
        ("0 3 1,15 * * cleanup.sh", [("0 3 1,15 * *", "schedule")]),
        # five numbers without a star are no schedule
        ("3 * 4 = 12 and 1 2 3 4 5", []),
    ],
)
def test_a_window_of_the_day_and_a_schedule_are_one_value(
    text: str, expected: list[tuple[str, str]]
) -> None:
    # (a window was two times, ``18:45-21`` and ``21:40 UTC``, and a schedule nothing, so a
    # moved window or schedule replaced nothing, and two windows read as one corrected)
    assert reference_kinds(text)[: len(expected) or None] == expected


def test_two_windows_of_two_things_both_hold_and_a_moved_one_is_replaced() -> None:
    from abridged.core.model import Message
    from abridged.engine.summarize.ledger import build_ledger

    said = [
        "No deploys during 18:45-21:40 UTC; that is the blackout window.",
        "The backup window is 02:00-03:30 UTC.",
        "Updated the blackout window: 18:45-21:40 UTC → 08:55-09:10 UTC.",
    ]
    ledger = build_ledger([Message.user(text) for text in said])
    assert "18:45-21:40 UTC" in ledger.replaced_values
    assert "02:00-03:30 UTC" not in ledger.replaced_values
    assert ledger.superseded_users == {0}  # the first said is replaced, the backup's stands


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("The SoC starts throttling at 62.0 °C.", "62.0 °C", "quantity"),
        ("The pallet weighs 366.1 kg.", "366.1 kg", "quantity"),
        ("The rail sits at 2114 mV.", "2114 mV", "quantity"),
        ("Order 4298 pcs.", "4298 pcs", "quantity"),
        ("The daily allowance is 11 514 SEK.", "11 514 SEK", "quantity"),
        ("Total EUR 1.250,00 incl. VAT", "EUR 1.250,00", "quantity"),
        ("Calibration data sits at flash offset 0x002AFC00.", "0x002AFC00", "hex"),
        ("Build Version 1.24 (53008) is in review.", "Version 1.24 (53008)", "version"),
        ("Parcel CN408487704YN left the depot.", "CN408487704YN", "ticket"),
        ("We buy from Prabiath GmbH now.", "Prabiath GmbH", "name"),
        ("The supplier is Mauhoheild s.r.o. in Brno.", "Mauhoheild s.r.o.", "name"),
        ("It ships as com.jaudu.smusvau.", "com.jaudu.smusvau", "name"),
        ("Contracts are due 6/20/2091.", "6/20/2091", "date"),
        (
            r"Scans go to \\eidird-fs\bogreonard\crinaeng now.",
            r"\\eidird-fs\bogreonard\crinaeng",
            "path",
        ),
    ],
)
def test_amounts_units_offsets_parcels_companies_and_shares_are_values(
    text: str, value: str, kind: str
) -> None:
    """Notations of hardware, purchasing, travel and office work: a temperature, a weight, a
    voltage, a count of pieces, an amount grouped by spaces or dots with its currency, a
    hexadecimal offset, an app's version with its build, a parcel's number, a company by its
    legal form, a reverse-domain id, a US date, a Windows share."""
    assert (value, kind) in reference_kinds(text)


def test_a_repr_address_and_a_short_hex_constant_are_no_values() -> None:
    """An object's address in a repr (12 hex digits) is noise of the run, and ``0x10`` is a
    constant of code: neither is read as a value."""
    assert reference_kinds("<function f at 0x7f8b8c0e1d30>") == []
    assert not [k for _v, k in reference_kinds("flags = 0x10") if k == "hex"]


def test_a_bare_dollar_and_digit_is_a_field_not_an_amount() -> None:
    """``$1`` is a shell's argument, an awk field, a debugger's value history; a dollar amount
    is grouped or has cents."""
    for text in ("$1 = 42", "awk '{print $1}' rows.txt", "echo $10"):
        assert not [v for v, k in reference_kinds(text) if k == "quantity"], text
    assert ("$31,406", "quantity") in reference_kinds("The budget is $31,406.")
    assert ("$5.00", "quantity") in reference_kinds("A fee of $5.00 applies.")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The noise gate opens at -29.5 dBFS.", "-29.5 dBFS"),
        ("Keep the samples at -18 °C.", "-18 °C"),
        ("Transmit power is 3 dBm.", "3 dBm"),
        ("The course is capped at 267 students.", "267 students"),
        ("We recruit 48 participants.", "48 participants"),
    ],
)
def test_signed_levels_and_counts_of_people_are_quantities(text: str, value: str) -> None:
    """A level below zero keeps its sign (a correction from -18 to 18 changes it), decibels
    are a unit, and so are people counted (students, participants, seats)."""
    assert (value, "quantity") in reference_kinds(text)


def test_a_ranges_dash_is_no_sign() -> None:
    assert ("20 ms", "quantity") in reference_kinds("Latency runs 10-20 ms.")
    assert not [v for v, _k in reference_kinds("Latency runs 10-20 ms.") if v.startswith("-")]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Across the run we have 72'685 tickets to sell.", "72'685"),
        ("The fee is CHF 20'708.00 for the run.", "CHF 20'708.00"),
        ("Budget: 1'250'000 CHF", "1'250'000 CHF"),
    ],
)
def test_thousands_grouped_by_apostrophes_are_one_quantity(text: str, value: str) -> None:
    assert (value, "quantity") in reference_kinds(text)
    # an apostrophe between digits that group no thousands is no quantity's
    assert reference_kinds("He is 5'10 tall, it's 9'9") == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The winch's safe working load comes to 3.09 kN.", "3.09 kN"),
        ("The stage floor is rated 7.5 kN/m².", "7.5 kN/m²"),
        ("The boiler runs at 350 kPa.", "350 kPa"),
        ("Tyres go to 40 psi.", "40 psi"),
        ("The impact absorbs 12 kJ.", "12 kJ"),
    ],
)
def test_force_pressure_and_energy_are_quantities(text: str, value: str) -> None:
    assert (value, "quantity") in reference_kinds(text)
    # a lone capital after a number is no newton (*Step 3 N*)
    assert reference_kinds("Step 3 N is next") == []
