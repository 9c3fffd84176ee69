r"""Held-out canary generator, set Q: facts and wording written blind, for ``bench/retention.py``.

Lab note
========

Why
---
The retention benchmark plants facts ("canaries") into recorded agent sessions, compacts five
times, and checks which facts survive and whether a corrected value is still shown as current.
A summarizer tuned against one set of canaries can learn that set's words. This is the
seventeenth set, written without looking at the summarizer, at the default generator or at any
earlier set's templates or surfaces (but P's, the model I was given), so its facts, surfaces
and ways of correcting are nobody's tuning target. Run it with
``bench/retention.py --generator bench/heldout_canaries_q.py --seed S``.

What the set covers
-------------------
The brief gave no emphasis, so this is a mix rather than a stress test. The earlier sets, by
their lab notes, live in code, operations, configuration and (P) data and ML work. Long agent
sessions also run the work around a product: bringing up a board and its firmware, buying
parts and paying for them, booking travel, getting strings translated and a help centre
written, shipping an app build to a store, moving crates, and reading contracts. Set Q draws
its facts from those six or seven fields, in the proportions I would expect in an assistant
that does all of them for a small hardware company, and writes them on the surfaces that work
prints or pastes:

- Facts: a pallet weight limit, an article word budget, an approval limit in SEK, a rail
  voltage in mV (constraints); a supplier not to order from, a brand term never translated, a
  firmware image never flashed (prohibitions); a hotel, a typeface, a freight forwarder
  (preferences); a parcel tracking number, an app bundle id, a booking reference, a purchase
  order (identifiers); a connector, an offsite venue, a contract manufacturer (decisions); a
  clock in MHz, a daily allowance in SEK, a crate's weight in kg, a retention period in days
  (numbers); a quotes share, a help article, a firmware image, a cost workbook (paths); store
  and firmware builds written ``4.12 (41273)`` (versions); a signatory, a travel booker, an
  account manager, a string reviewer (owners); a quote's expiry, a store cutoff, a lease's
  notice date, a translation handoff (deadlines); a firmware power profile, a radio channel
  plan, a bootloader mode, a calibration offset (settings); a supplier portal, a telemetry
  broker, an EDI drop (endpoints).
- Coexisting pairs, two roles or two stages of one thing (none of the earlier sets' pairs):
  the throttling and the shutdown temperature, the term in the app and in the printed manual,
  the outbound and the return flight, the main and the second source of a part, the minimum
  order quantity and this order's quantity, the list and the negotiated price, the executed
  and the working copy of an agreement, the bootloader and the application firmware version,
  the approver and the goods receiver of a purchase, the visa deadline and the departure, the
  bootloader's and the application's flash offset. The second is said later, its key shares a
  head word with the first's, and its sentence holds a word that often announces a correction
  ("though", "instead", "then", "too", "after", "but", "also"). Where the pair has an order the
  values keep it (shutdown above throttling, the order above the minimum, the negotiated price
  below the list price, departure after the visa deadline, the application above the
  bootloader in flash).
- Corrections, 18 ways, six per register, none with a fixed marker word: the user reads the
  printed copy, relays a countersigned version, answers a question asked long before, loops
  the assistant into a colleague's message, owns up to last year's tab or to an autofilled
  field (those two name the old value); a tool prints an e-signature completion, an EDI order
  acknowledgement, a master-data sync, a scraper reading a supplier portal, a GDS schedule
  alteration with its ``UN``/``TK`` lines, a translation QA check (those two name the old
  value); the assistant goes by the executed agreement, by the signed PDF over the mail body,
  by a photo the user sent, readies a form, re-parses a sheet with the right locale, or
  compares two drafts of an agreement (those two name the old value). Six of the 18 ways name
  the old value beside the new one, twelve only the new one.

Evaluation seeds
----------------
Drawn before I started, and given to me with the brief: 7427979, 6534127, 3407733
(``EVALUATION_SEEDS``). I never ran the generator or the benchmark with them, and no test does:
the tests use 19, 523, 9091, 88, 2024, 43, 7007 and 300-329, and check that these differ from
the evaluation seeds. The ``__main__`` of this file refuses them (``generate`` itself does not:
the benchmark calls it with them). One accident, below under "What I read": a throwaway
mutation of my own test made ``generate(7427979, 8, 0)`` run once, unseen.

What I read
-----------
- ``bench/retention.py``, the interface only: the listing of its top-level names (``grep -n
  "^def \|^class \|^    def \|add_argument\|^# --\|^[A-Z_]* = \|^[A-Z_]*: "``, which also
  showed one-line constants such as ``WINDOW = 16_384``, ``CYCLES = 5``, ``TARGET = 0.95``,
  ``PLACEMENTS``, ``METHODS``, ``DEFAULT_DATA``, ``DEFAULT_CANARIES``, ``OUTPUT_TAGS``,
  ``REPLACED_MARK = "[superseded"`` and the ``_WAS`` patterns), its first 70 lines (the
  opening of its module docstring: usage, Canaries, Placements, Replay, Scoring and the first
  lines of Engine figures), lines 171-275 (``Canary``, ``canaries_from``, ``load_canaries``,
  ``CanarySource``, ``_generator``, ``Seeded``), lines 498-616 (``strip_replaced``,
  ``presents_as_current``, ``KeepIndex``, ``Score``, ``score_context``, up to the ``# -- token
  ruler`` heading), ``aggregate`` whole with ``_share`` and ``_over`` (lines 1016-1192) and
  ``main`` whole (lines 1892-2023).
- ``bench/heldout_canaries_p.py`` whole, the model for this module's shape, interface, lab
  note and ``__main__``. Its session machinery (rings, shares, ``_session``, ``_sound``,
  ``generate``, ``main``) and its date, version and key-spelling helpers are followed closely
  here; its templates, value forms, surfaces, ways and words are not reused.
- ``tests/bench/test_heldout_canaries_p.py`` whole. My test mirrors its structure and checks;
  its ``MARKERS`` list starts with P's words, followed by words of my own ways.
- ``tests/bench/support.py`` whole (its helpers, which my test uses, and ``EARLIER_SURFACES``);
  the first 40 lines of ``tests/conftest.py``; the ``[...]`` headers of ``pyproject.toml`` and
  its ruff sections (lines 93-106).
- The lab notes (module docstrings only, printed through ``ast``) of all the earlier sets, A
  to P, whole, to keep away from their value shapes, surfaces, correction wordings and
  coexisting pairs. What I kept away from: no tickets of any earlier shape (``ABCD-12345``,
  ``ABC#1234``, ``CHG``/``INC``), no ``svc_``/``acct_``/``cust:``/``case-`` ids, no doubled
  vowels, no ``q`` or ``w`` in made-up words, none of J's onset clusters and none of P's
  clusters but the plain consonants, no ISO-week, ordinal, Roman or dotted dates and no date
  with a time; dates fall in 2084-2092 (after every earlier set's years) in four styles no
  earlier note names (``2085/03/14``, ``Tue, 14 Mar 2085``, ``14-Mar-2085``, ``3/14/2085``);
  no hosts on ``.internal``/``.lan``/``.corp``/``.test``/``.net``/``svc.cluster.local``, no
  ``/srv``, ``/mnt``, ``/run``, ``/etc``, ``/opt``, ``gs://``, ``s3://`` or ``/ckpt`` paths
  (mine are Windows shares and drive paths, ``firmware/`` images and ``content/`` pages); no
  versions of an earlier shape (mine are a marketing version with a build number,
  ``4.12 (41273)``); no ``ms``/``MB``/``MiB``/``GiB``/``TiB``/``%``/``/hour``/``req/s``/
  ``steps``/``tokens`` numbers and no EUR, USD, CHF or scientific notation (mine are ``MHz``,
  ``mV``, ``kg``, ``°C``, ``days``, ``pcs``, ``words`` and ``SEK`` with a space as thousands
  separator); no person written as an earlier set writes one (mine carry a middle initial,
  ``Dervla K. Marsik``); no arrows, diffs, strike-through, "(was X)", "from X to Y", "X? no,
  Y", "instead of", "rather than", "back to", "scratch that", "make that", a CLI refusing the
  old value, a REPL reload, a merge conflict, a catalog search, a form receipt, a digest, a
  dataset card, "heard back" or "made the call" in a correction; and none of their pairs.
- ``ls bench tests/bench`` and ``wc -l`` of the four files I was allowed to read whole.
- The output of my own throwaway checks on test seeds (19, 523, 9091): sample canaries of
  seed 19, session 0; one correction text per way; how many attempts sessions needed (none
  redrawn, in those 30 sessions and in 3,600 sessions of seeds 1000-1199); the marker-word
  shares of the corrections (largest "this morning", 12%, two ways; "old" first reached six
  ways through "threshold" and "told", which I reworded; every other at or below 6%); the
  share of corrections naming the old value (50 of 150). The tests check my surface names
  against ``EARLIER_SURFACES`` and against sets K to P (imported only for their names, none of
  which I printed); none clashed. A throwaway script that broke my module in memory, one
  process per break (a way's flag, a pair's sentence, a surface's name and its key, a pair's
  order, a value form, a company's suffix, a test seed, a way leaving its subject out, a
  correction said before its fact, values found in the recorded sessions, the template names
  the tiny run is checked for), to see that the matching tests fail; each did. That script
  also found a real fault: an ordered second value (a version above ``9.97 (…)``) could run
  out of draws and raise. Now both values of a pair are drawn and then put in order, a first
  date is never in the last year (its later one could leave ``YEARS``), and a test covers
  both. The tiny retention run in the tests is checked for keys only; I ran it twice, once
  under the template-name break and once when all else passed, and saw only pytest's
  summary line each time.
- By accident: (1) the ``awk`` that printed the ruff sections of ``pyproject.toml`` also
  printed its ``[tool.mypy]`` section (lines 108-113: strict, ``mypy_path = "src"``,
  ``packages = ["abridged"]``), which told me that a bare ``mypy`` checks only the library, so
  I run it on my two files by name. (2) An evaluation seed ran once: one break in the
  throwaway script replaced ``main`` with a stand-in that did not refuse, and it called
  ``generate`` with the seed it was given. My test passes the evaluation seeds to ``main``,
  so the stand-in ran ``generate(7427979, 8, 0)`` (8 canaries, session 0; a count of 8 draws
  other values than the benchmark's 24) in a throwaway process. What it printed went to
  pytest's capture inside a piped subprocess, and the script showed me only pytest's summary
  line and the names of the failed tests. I saw none of it, and I changed the stand-in to
  call a test seed. Neither the benchmark nor any other evaluation seed ran.

What I did not read
-------------------
Nothing under ``src/abridged/`` (the summarizer and its ledger included), no body of an earlier
set's generator (but P's, as the brief allowed), not ``bench/canary_generator.py``, no canary
JSON file, not ``bench/RESULTS.md``, nothing under ``/work/shared/data/canaries/``, no text of
the recorded sessions (only substring counts, in the tests), no git history, diff or status,
no benchmark figure, and no output of the generator on an evaluation seed.

Scoring, as read
----------------
A canary is kept when every keep string is in the context sent after a compaction; here each
fact has one. A superseded canary whose correction was said before that call is not required;
it is stale when one of its keep strings is left after removing the correcting canary's whole
text, the new value's keep strings and the replaced-markers (``(was ...)`` parentheticals,
lines with ``[superseded``). So a correction that names only the new value cannot make the old
one stale by itself; one that names the old value is fair while it is quoted whole, and a
summary that rewrites it and keeps the old value outside those marks shows it as current. A
coexisting pair has no ``supersedes``: both values are required and neither can be stale. This
set writes neither replaced-marker. Placement (user, tool, assistant) is the benchmark's choice
per pass, so every text reads as a message, a pasted output or the assistant's words alike.

Design
------
- 54 templates over 12 kinds (constraint, prohibition, preference, identifier, decision,
  number, path, version, owner, deadline, setting, endpoint): 24 single facts, two per kind; 19
  corrections, every kind, seven kinds twice (constraint, identifier, number, path, owner,
  deadline, setting); 11 coexisting pairs over 10 kinds (two of them numbers). A correction
  keeps the fact's kind.
- A session of 24 holds 8 singles, 5 corrections (10 canaries) and 3 coexisting pairs (6
  canaries); other counts scale (at least one of each, ``6 <= count <= 70``). Templates,
  surfaces and correction ways each sit in a per-seed shuffled ring that consecutive sessions
  walk (the surfaces' ring takes the three registers in turn), so any 16 consecutive sessions
  plant every one of them. A correction comes 0.22-0.38 of the session after its fact, the
  second side of a pair 0.12-0.25 after the first.
- 37 fact surfaces. ``tool`` (13): a serial capture through ``picocom``, a flasher's output, an
  ERP header screen, a GDS booking display, a translation tool's segment, a store's build mail,
  a carrier's shipment events, a BOM export, an OCR scan of a scanned document, an
  ``openpyxl`` cell read, a ``pdftotext`` page, ``mosquitto_sub`` output, a page's front
  matter. ``user`` (12): a trip brief, a contract clause pasted, a supplier's quote pasted, the
  style guide, a forwarded text message, a purchase requisition, bring-up notes, the expense
  rules, shipping instructions, a short chat line, an answer given to translators, a paper
  form typed in. ``assistant`` (12): a draft itinerary, purchase order lines, a brief for
  translators, a bring-up plan, a draft reply to a supplier, a memo to file, a store listing
  draft, a booking summary, the key terms of an agreement, how it will fill a portal form, what
  it checks before booking, the gist of a thread. 18 write the fact's sentence (``says``), 19
  its key and value on one line (``fields``), the key spelled the surface's way (snake,
  dotted, kebab, upper, camel, as words or in title case). Names avoid ``EARLIER_SURFACES``
  (substring check, with and without dashes) and sets K to P.
- 18 correction ways, listed under "What the set covers". Each names the subject or its key.
  No marker word of the test's list is in more than a quarter of the corrections or of the
  ways.
- Values are drawn fresh per seed and session: made-up words of two or three syllables (my own
  onsets, vowels and codas, no doubled vowels, no ``q`` or ``w``, none holding a word that
  announces a correction), five to ten letters, inside the forms above and these: brand terms
  (``Torvenda``), companies with a legal suffix (``Marvello Oy``), flights ``KD 4817``,
  six-character booking references, purchase orders ``PO 45NNNNNNNN``, UPU-style tracking
  numbers ``RX481736205NL``, bundle ids ``com.word.word``, firmware symbols
  ``CONFIG_WORD_WORD``, flash offsets ``0x0003A100``, ``sftp://edi.word.eu:PORT/word/word``,
  ``mqtts://word.word.io:PORT/word/word`` and ``https://word.word.app/word/word`` endpoints. A
  correction's new value keeps the old one's shape (a date may be written in another style, a
  company keeps its legal suffix); deadlines only move later and versions only go up. The two
  values of a correction or a pair are drawn together and then put in order, so a draw near
  the end of a range never runs out. A session
  is redrawn until every keep string is in its own text and in no other canary's (but a
  correction of a way that names the value it corrects), no keep string holds another, and a
  correction names the old value exactly when its way says it does.

What the set cannot show
------------------------
It says whether a fact survived, not why it was lost. A look-alike pair is scored as two
required facts: the benchmark cannot tell a summary that merged them into one "corrected" value
from one that dropped a value for length. Each way has one register, so a way's figure mixes
the way with its voice; and a way is applied to any template, so some pairings read oddly (a
GDS schedule alteration of a rail voltage, a photo of a bootloader mode). A correction that
arrives as evidence is still planted where the benchmark places it, so a tool way can end up in
a user message. Numbers are unround and written one way each, so this set does not test
notation changes. All values are made up, so nothing here measures facts a model could recall
from training.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

EVALUATION_SEEDS = (7427979, 6534127, 3407733)

KINDS = (
    "constraint", "prohibition", "preference", "identifier", "decision", "number", "path",
    "version", "owner", "deadline", "setting", "endpoint",
)  # fmt: skip
REGISTERS = ("user", "tool", "assistant")
SHAPES = ("single", "correction", "coexist")
#: canaries per session at most: no template twice in a session
MAX_COUNT = 70
#: the years every drawn date falls in
YEARS = range(2084, 2093)


# -- templates -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Template:
    """One fact about one subject (two for a pair that both hold): its kind, the form of its
    value, the noun phrase and key naming each subject, and the sentence saying each side's fact
    (``{v}`` the value). ``order``: how the later value stands to the first one (``up``: larger
    or later, ``down``: smaller), for a correction or for the second side of a pair."""

    name: str
    kind: str
    shape: str
    form: str
    subjects: tuple[str, ...]
    keys: tuple[str, ...]
    says: tuple[str, ...]
    order: str = ""


def _single(  # noqa: PLR0917 (a row of the template table)
    name: str, kind: str, form: str, subject: str, key: str, says: str
) -> Template:
    return Template(name, kind, "single", form, (subject,), (key,), (says,))


def _later(  # noqa: PLR0917 (a row of the template table)
    name: str, kind: str, form: str, subject: str, key: str, says: str, order: str = ""
) -> Template:
    return Template(name, kind, "correction", form, (subject,), (key,), (says,), order)


def _pair(  # noqa: PLR0917 (a row of the template table)
    name: str,
    kind: str,
    form: str,
    subjects: tuple[str, str],
    keys: tuple[str, str],
    says: tuple[str, str],
    order: str = "",
) -> Template:
    return Template(name, kind, "coexist", form, subjects, keys, says, order)


SINGLES = (
    _single("pallet_limit", "constraint", "kg", "the pallet weight limit at the dock",
            "pallet_weight_limit",
            "No pallet may leave heavier than {v} gross; the dock scale rejects anything over."),
    _single("article_budget", "constraint", "words", "the length cap of a help article",
            "article_word_cap",
            "A help-centre article stays under {v}, since the translators bill per word."),
    _single("blocked_supplier", "prohibition", "company", "the supplier nobody orders from",
            "blocked_supplier",
            "Don't place orders with {v}; their last batch failed incoming inspection."),
    _single("untranslated_term", "prohibition", "term", "the brand term nobody translates",
            "untranslated_term",
            "Never translate {v}: it stays as written in every locale, headings included."),
    _single("plant_hotel", "preference", "term", "the hotel for visits to the plant",
            "plant_hotel", "When you visit the plant, stay at the {v}; it has our corporate rate."),
    _single("body_typeface", "preference", "term", "the typeface for body text",
            "body_typeface", "Set body text in {v} across the help centre and the manuals."),
    _single("sample_parcel", "identifier", "tracking", "the tracking number of the samples",
            "sample_tracking",
            "The engineering samples travel under tracking number {v}."),
    _single("bundle_id", "identifier", "bundle", "the app's bundle identifier", "bundle_id",
            "The app ships under the bundle identifier {v}."),
    _single("sensor_connector", "decision", "term", "the connector chosen for the sensor board",
            "sensor_connector",
            "We went with the {v} connector; the cheaper one failed the vibration test."),
    _single("offsite_venue", "decision", "term", "the venue booked for the offsite",
            "offsite_venue",
            "The offsite is at {v}; the other venue had no step-free access."),
    _single("radio_clock", "number", "mhz", "the radio's reference clock", "radio_ref_clock",
            "The radio's reference clock runs at {v}."),
    _single("daily_allowance", "number", "sek", "the daily allowance on this trip",
            "daily_allowance", "The daily allowance on this trip is {v}."),
    _single("quotes_share", "path", "unc", "the share where supplier quotes are kept",
            "quotes_share", "Supplier quotes are kept on {v}; file each one under its part."),
    _single("setup_article", "path", "mdx", "the source of the setup article",
            "setup_article_src", "The setup article is written in {v} in the docs repository."),
    _single("store_build", "version", "appver", "the build waiting in store review",
            "store_build", "The build waiting in store review is {v}."),
    _single("bench_firmware", "version", "appver", "the firmware on the bench units",
            "bench_firmware", "The bench units run firmware {v}."),
    _single("signatory", "owner", "person", "the person who signs for the company",
            "company_signatory",
            "Contracts are signed by {v}; nobody else holds signing authority."),
    _single("travel_booker", "owner", "person", "whoever books the team's travel",
            "travel_booker", "{v} books the team's travel; send every trip request there."),
    _single("quote_expiry", "deadline", "date", "the day the supplier's quote runs out",
            "quote_valid_until", "Their quote is valid until {v}."),
    _single("store_cutoff", "deadline", "date", "the cutoff for the store submission",
            "store_submission_cutoff",
            "The store submission has to be in by {v} to make the seasonal feature."),
    _single("power_profile", "setting", "cfgsym", "the power profile of the firmware build",
            "power_profile", "The firmware is built with {v} as its power profile."),
    _single("channel_plan", "setting", "term", "the radio's channel plan", "channel_plan",
            "The radio uses the {v} channel plan."),
    _single("order_portal", "endpoint", "portal", "the supplier's order portal",
            "order_portal_url", "Orders for that supplier are entered on {v}."),
    _single("telemetry_broker", "endpoint", "mqtts", "the telemetry broker",
            "telemetry_broker_url", "The units publish telemetry to {v}."),
)  # fmt: skip

CORRECTED = (
    _later("rail_ceiling", "constraint", "mv", "the ceiling on the 3V3 rail", "rail_3v3_max",
           "The 3V3 rail must stay below {v} under full load."),
    _later("approval_limit", "constraint", "sek", "the amount that needs a second approver",
           "second_approver_limit",
           "Any purchase above {v} needs a second approver."),
    _later("unflashed_image", "prohibition", "fwbin", "the image nobody flashes on field units",
           "field_blocked_image",
           "Do not flash {v} onto field units; it locks up the radio."),
    _later("forwarder", "preference", "company", "the freight forwarder for sea freight",
           "sea_forwarder",
           "For sea freight we prefer {v}; their customs desk answers the same day."),
    _later("booking_ref", "identifier", "pnr", "the booking reference of the trip",
           "booking_ref", "The trip is booked under reference {v}."),
    _later("enclosure_po", "identifier", "po", "the purchase order for the enclosures",
           "enclosure_po", "The enclosures are ordered on {v}."),
    _later("assembler", "decision", "company", "the contract manufacturer for the boards",
           "contract_manufacturer",
           "The boards are assembled by {v}; we signed with them after the audit."),
    _later("crate_weight", "number", "kg", "the gross weight of the sample crate",
           "crate_gross_weight", "The sample crate weighs {v} gross."),
    _later("contract_retention", "number", "days", "how long signed contracts are kept",
           "contract_retention",
           "Signed contracts are kept for {v} after the agreement ends."),
    _later("pilot_image", "path", "fwbin", "the image for the pilot units", "pilot_image",
           "The pilot units get {v}."),
    _later("cost_workbook", "path", "winpath", "the workbook tracking project costs",
           "cost_workbook", "Project costs are tracked in {v}."),
    _later("field_firmware", "version", "appver", "the firmware for the field rollout",
           "field_firmware", "The field rollout installs firmware {v}.", "up"),
    _later("account_manager", "owner", "person", "the supplier's account manager for us",
           "supplier_account_manager", "Our account manager at the supplier is {v}."),
    _later("string_reviewer", "owner", "person", "the reviewer of the German strings",
           "german_reviewer", "{v} reviews the German strings before they ship."),
    _later("lease_notice", "deadline", "date", "the last day to give notice on the lease",
           "lease_notice_by",
           "Notice on the lease must reach the landlord by {v}.", "up"),
    _later("string_handoff", "deadline", "date", "the handoff of strings to the translators",
           "string_handoff", "The strings go to the translators on {v}.", "up"),
    _later("bootloader_mode", "setting", "cfgsym", "the bootloader's recovery mode",
           "bootloader_mode", "The bootloader is built with {v} for recovery."),
    _later("calibration_offset", "setting", "hexaddr", "the flash offset of the calibration data",
           "calibration_offset", "Calibration data sits at flash offset {v}."),
    _later("invoice_drop", "endpoint", "sftp", "the drop for electronic invoices",
           "invoice_drop_url", "Electronic invoices are uploaded to {v}."),
)  # fmt: skip

PAIRS = (
    _pair("thermal_limits", "constraint", "degc",
          ("the throttling temperature", "the shutdown temperature"),
          ("temp_throttle", "temp_shutdown"),
          ("The SoC starts throttling at {v}.", "It shuts itself down at {v}, though."), "up"),
    _pair("feature_terms", "preference", "term",
          ("the feature's name in the app", "the feature's name in the printed manual"),
          ("term_app", "term_manual"),
          ("In the app the feature is called {v}.",
           "The printed manual calls it {v} instead.")),
    _pair("flights", "identifier", "flight", ("the outbound flight", "the return flight"),
          ("flight_outbound", "flight_return"),
          ("Outbound you are on {v}.", "The return leg is {v}, then.")),
    _pair("regulator_sources", "decision", "company",
          ("the main source of the regulators", "the second source of the regulators"),
          ("regulator_source_main", "regulator_source_second"),
          ("We buy the regulators from {v}.", "{v} is qualified as a second source too.")),
    _pair("order_quantities", "number", "pcs",
          ("the supplier's minimum order quantity", "the quantity on this order"),
          ("qty_minimum", "qty_ordered"),
          ("The supplier's minimum order is {v}.",
           "This order is for {v}, after we pooled the two projects."), "up"),
    _pair("batch_prices", "number", "sek",
          ("the list price of the batch", "the negotiated price of the batch"),
          ("price_list", "price_negotiated"),
          ("The supplier lists the batch at {v}.", "Our negotiated price is {v}, though."),
          "down"),
    _pair("agreement_copies", "path", "unc",
          ("the executed copy of the agreement", "the working copy of the agreement"),
          ("agreement_executed", "agreement_working"),
          ("The executed agreement is filed at {v}.", "Edits go into the copy at {v} instead.")),
    _pair("firmware_parts", "version", "appver",
          ("the bootloader version", "the application firmware version"),
          ("fw_version_boot", "fw_version_app"),
          ("The bootloader is at {v}.",
           "The application firmware on top is {v}, but that is a separate image.")),
    _pair("purchase_roles", "owner", "person",
          ("the approver of the purchase", "the goods receiver of the purchase"),
          ("purchase_approver", "purchase_receiver"),
          ("{v} approves the purchase.", "{v} then receives the goods at the dock.")),
    _pair("trip_dates", "deadline", "date", ("the visa application deadline", "the departure"),
          ("date_visa_apply", "date_departure"),
          ("The visa application has to be in by {v}.",
           "The flight leaves on {v}, after the visa deadline."), "up"),
    _pair("flash_layout", "setting", "hexaddr",
          ("the bootloader's flash offset", "the application's flash offset"),
          ("flash_offset_boot", "flash_offset_app"),
          ("The bootloader is linked at flash offset {v}.",
           "The application image starts at {v}, also in the internal flash."), "up"),
)  # fmt: skip

TEMPLATES: tuple[Template, ...] = (*SINGLES, *CORRECTED, *PAIRS)
TEMPLATE_BY_NAME = {t.name: t for t in TEMPLATES}


# -- values ----------------------------------------------------------------------------------------

_ONSETS = (
    "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "bl",
    "cr", "fl", "gr", "ph", "pr", "sm", "sn", "th", "sv",
)  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "i", "o", "ae", "ei", "au", "ia", "eo")
_CODAS = ("l", "n", "r", "s", "m", "th", "ng", "rn", "ld", "st", "ff", "rd")
#: no made-up word holds one of these (words that announce a correction, or read as English)
_BAD = ("new", "now", "old", "was", "use", "stal", "prev", "fin", "rev", "not", "upd", "chang",
        "fix", "corr", "late", "earl", "wrong", "typo", "edit", "set", "sex", "nig", "kill",
        "dead", "then", "but", "sorr", "act", "conf", "swap", "sour", "card", "still", "tak",
        "land", "rath", "inst", "ign", "retir", "drop", "favo", "appl", "today", "abov",
        "after", "befor", "ass", "tit", "cum", "fag", "cock", "dic", "cun", "rap", "porn",
        "naz", "slut", "anal", "pis", "hell", "damn", "god", "hold", "wait", "move",
        "also", "too", "read", "sign", "seat", "vers")  # fmt: skip
#: given names of the people in values; fillers use other ones
GIVEN = ("Aino", "Bogdan", "Catalina", "Dervla", "Esko", "Folasade", "Gaspard", "Hiroko",
         "Imre", "Jelena", "Kalani", "Lorcan", "Mirela", "Njeri", "Odile", "Petra", "Rosalind",
         "Sanjay", "Thandiwe", "Valter", "Yolanda", "Zdenek")  # fmt: skip
_INITIALS = "ABCDEFGHJKLMNPRSTV"
_FILLER_PEOPLE = ("Radka", "Ottilie", "Kwabena", "Siobhan", "Matthias", "Ayesha", "Lucien",
                  "Birte")  # fmt: skip
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
_SUFFIXES = ("AB", "Oy", "GmbH", "BV", "Ltd", "SpA", "s.r.o.", "KK", "ApS")
_LETTERS = "ABCDEFGHJKLMNPRSTUVXYZ"
_PNR_SIGNS = "ABCDEFGHJKLMNPRSTUVXYZ23456789"
#: the fixed words (four letters or more) of the value forms, for the tests' made-up word count
FORM_WORDS = frozenset(
    {"firmware", "content", "sftp", "mqtts", "https", "config", "xlsx", "days", "words", "gmbh",
     "edi"}
    | {m.lower() for m in _MONTHS}
)  # fmt: skip
#: a number's unit, by form
UNITS = {"kg": " kg", "words": " words", "mv": " mV", "mhz": " MHz", "days": " days",
         "pcs": " pcs", "degc": " °C", "sek": " SEK"}  # fmt: skip
#: forms whose values are ordered by ``magnitude``
ORDERED = (*UNITS, "hexaddr")
DATE_STYLES = ("slashed", "weekday", "dashed", "us")


def _syllable(rng: random.Random, first: bool) -> str:
    onset = "" if first and rng.random() < 0.15 else rng.choice(_ONSETS)
    return onset + rng.choice(_VOWELS)


def magnitude(form: str, value: str) -> float:
    """The number a value of an ordered form stands for."""
    if form == "hexaddr":
        return float(int(value, 16))
    return float(value.removesuffix(UNITS[form]).replace(" ", ""))


def version_key(value: str) -> tuple[int, int, int]:
    """``4.12 (41273)`` -> ``(4, 12, 41273)``."""
    found = re.fullmatch(r"(\d+)\.(\d+) \((\d+)\)", value)
    if not found:
        raise ValueError(value)
    return int(found[1]), int(found[2]), int(found[3])


def date_text(day: dt.date, style: str) -> str:
    mon = _MONTHS[day.month - 1][:3]
    if style == "slashed":
        return f"{day.year}/{day.month:02d}/{day.day:02d}"
    if style == "weekday":
        return f"{day.strftime('%a')}, {day.day:02d} {mon} {day.year}"
    if style == "dashed":
        return f"{day.day:02d}-{mon}-{day.year}"
    return f"{day.month}/{day.day}/{day.year}"


def date_style(value: str) -> str:
    if re.fullmatch(r"\d{4}/\d\d/\d\d", value):
        return "slashed"
    if re.fullmatch(r"[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4}", value):
        return "weekday"
    if re.fullmatch(r"\d\d-[A-Z][a-z]{2}-\d{4}", value):
        return "dashed"
    if re.fullmatch(r"\d{1,2}/\d{1,2}/\d{4}", value):
        return "us"
    raise ValueError(value)


def parse_date(value: str) -> dt.date:
    style = date_style(value)
    months = [m[:3] for m in _MONTHS]
    if style == "slashed":
        y, m, d = value.split("/")
        return dt.date(int(y), int(m), int(d))
    if style == "us":
        m, d, y = value.split("/")
        return dt.date(int(y), int(m), int(d))
    if style == "dashed":
        d, mon, y = value.split("-")
        return dt.date(int(y), months.index(mon) + 1, int(d))
    weekday, rest = value.split(", ")
    d, mon, y = rest.split()
    day = dt.date(int(y), months.index(mon) + 1, int(d))
    if day.strftime("%a") != weekday:
        raise ValueError(value)
    return day


class Draw:
    """Fresh values for one session: made-up words never repeat in it."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def word(self) -> str:
        rng = self.rng
        while True:
            n = rng.choice((2, 2, 3))
            w = "".join(_syllable(rng, i == 0) for i in range(n))
            if rng.random() < 0.6:
                w += rng.choice(_CODAS)
            if not 5 <= len(w) <= 10 or w in self.used:
                continue
            if re.search(r"aa|ee|ii|oo|uu|q|w|(.)\1\1", w) or any(b in w for b in _BAD):
                continue
            self.used.add(w)
            return w

    def person(self) -> str:
        rng = self.rng
        return f"{rng.choice(GIVEN)} {rng.choice(_INITIALS)}. {self.word().capitalize()}"

    def number(self, form: str) -> str:
        rng = self.rng
        unit = UNITS[form]
        if form == "kg":
            return f"{rng.randrange(1000, 10_000) / 10:.1f}{unit}"
        if form == "mhz":
            return f"{rng.randrange(10_000, 100_000) / 1000:.3f}{unit}"
        if form == "degc":
            return f"{rng.randrange(400, 1000) / 10:.1f}{unit}"
        if form == "mv":
            return f"{rng.randrange(1000, 5000)}{unit}"
        if form == "days":
            return f"{rng.randrange(100, 1000)}{unit}"
        if form == "sek":
            n = rng.randrange(10_000, 100_000)
            return f"{n // 1000} {n % 1000:03d}{unit}"
        return f"{rng.randrange(1000, 10_000)}{unit}"  # pcs, words

    def pnr(self) -> str:
        rng = self.rng
        while True:
            out = "".join(rng.choice(_PNR_SIGNS) for _ in range(6))
            digits = sum(c.isdigit() for c in out)
            if 1 <= digits <= 3:
                return out

    def value(self, form: str, suffix: str = "") -> str:
        rng, w = self.rng, self.word
        if form in UNITS:
            return self.number(form)
        if form == "date":
            # not in the last year: a later date of its pair stays inside ``YEARS``
            day = dt.date(rng.choice(YEARS[:-1]), 1, 1) + dt.timedelta(days=rng.randrange(300))
            return date_text(day, rng.choice(DATE_STYLES))
        if form == "appver":
            build = rng.randrange(10_000, 100_000)
            return f"{rng.randrange(1, 10)}.{rng.randrange(100):02d} ({build})"
        if form == "person":
            return self.person()
        if form == "company":
            return f"{w().capitalize()} {suffix or rng.choice(_SUFFIXES)}"
        if form == "pnr":
            return self.pnr()

        def letters(n: int) -> str:
            return "".join(rng.choice(_LETTERS) for _ in range(n))

        makers: dict[str, Callable[[], str]] = {
            "term": lambda: w().capitalize(),
            "flight": lambda: f"{letters(2)} {rng.randrange(1000, 10_000)}",
            "po": lambda: f"PO 45{rng.randrange(10**7, 10**8)}",
            "tracking": lambda: f"{letters(2)}{rng.randrange(10**8, 10**9)}{letters(2)}",
            "bundle": lambda: f"com.{w()}.{w()}",
            "cfgsym": lambda: f"CONFIG_{w().upper()}_{w().upper()}",
            "hexaddr": lambda: f"0x{rng.randrange(0x100, 0x3FFF) * 0x100:08X}",
            "unc": lambda: f"\\\\{w()}-fs\\{w()}\\{w()}",
            "winpath": lambda: f"{rng.choice('DEFGHKP')}:\\{w().capitalize()}\\{w()}_{w()}.xlsx",
            "fwbin": lambda: f"firmware/{w()}/{w()}_{w()}.bin",
            "mdx": lambda: f"content/{w()}/{w()}-{w()}.mdx",
            "sftp": lambda: f"sftp://edi.{w()}.eu:{rng.randrange(2000, 30_000)}/{w()}/{w()}",
            "mqtts": lambda: f"mqtts://{w()}.{w()}.io:{rng.randrange(8000, 9000)}/{w()}/{w()}",
            "portal": lambda: f"https://{w()}.{w()}.app/{w()}/{w()}",
        }
        return makers[form]()

    def two(self, form: str, order: str, restyle: bool) -> tuple[str, str]:
        """Two different values of ``form``, the second larger when ``order`` is ``up`` and
        smaller when it is ``down`` (the two are drawn, then put in order, so the draw never
        runs out near the end of a range); a later date may be written another way when
        ``restyle``; a company keeps its legal suffix."""
        rng = self.rng
        first = self.value(form)
        if form == "date":
            day = parse_date(first)
            step = rng.randrange(9, 160)
            day = day + dt.timedelta(days=step if order != "down" else -step)
            style = date_style(first)
            if restyle and rng.random() < 0.4:
                style = rng.choice([s for s in DATE_STYLES if s != style])
            return first, date_text(day, style)
        suffix = first.split(" ", 1)[1] if form == "company" else ""
        for _ in range(200):
            second = self.value(form, suffix)
            if second == first:
                continue
            if order and (form == "appver" or form in ORDERED):
                a = version_key(first) if form == "appver" else (magnitude(form, first),)
                b = version_key(second) if form == "appver" else (magnitude(form, second),)
                if a == b:
                    continue
                if (b > a) != (order == "up"):
                    first, second = second, first
            return first, second
        raise RuntimeError(f"no second {form} value for {first}")


# -- key spellings ---------------------------------------------------------------------------------


def spell(key: str, how: str) -> str:
    """``key`` (snake_case) as a surface writes it."""
    parts = key.split("_")
    if how == "dotted":
        return ".".join(parts)
    if how == "kebab":
        return "-".join(parts)
    if how == "upper":
        return key.upper()
    if how == "camel":
        return parts[0] + "".join(p.capitalize() for p in parts[1:])
    if how == "words":
        return " ".join(parts).capitalize()
    if how == "title":
        return " ".join(p.capitalize() for p in parts)
    return key


def key_spellings(key: str) -> tuple[str, ...]:
    hows = ("snake", "dotted", "kebab", "upper", "camel", "words", "title")
    return tuple(spell(key, h) for h in hows)


# -- fact surfaces ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fact:
    template: Template
    side: int
    value: str

    @property
    def key(self) -> str:
        return self.template.keys[self.side]

    @property
    def subject(self) -> str:
        return self.template.subjects[self.side]

    @property
    def sentence(self) -> str:
        return self.template.says[self.side].format(v=self.value)


@dataclass(frozen=True, slots=True)
class Surface:
    """A place a fact is written in: ``says`` (the fact's sentence) or ``fields`` (its key and
    value on one line)."""

    name: str
    register: str
    uses: str
    render: Callable[[random.Random, Fact], str]


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _hhmm(rng: random.Random) -> str:
    return f"{rng.randrange(6, 23):02d}:{rng.randrange(60):02d}"


def _picocom(r: random.Random, f: Fact) -> str:
    def t() -> str:
        return f"[{r.randrange(0, 3):5d}.{r.randrange(1000):03d}]"

    return (f"$ picocom -b 115200 /dev/ttyUSB{r.randrange(4)}\nTerminal ready\n"
            f"{t()} boot: reset cause POR\n{t()} cfg: {f.key}={f.value}\n"
            f"{t()} radio: idle, waiting for join")  # fmt: skip


def _flasher(r: random.Random, f: Fact) -> str:
    return (f"$ flashprog write --port /dev/ttyACM{r.randrange(4)} image.bin\n"
            f"Erasing {r.randrange(20, 90)} sectors... done\n"
            f"Writing {r.randrange(200, 900)} KiB... done\nImage note: {f.sentence}\n"
            "Hard resetting via RTS pin...")  # fmt: skip


def _erp(r: random.Random, f: Fact) -> str:
    label = spell(f.key, "title")
    return (f"[ERP] Document overview, header data\n  Doc type ........ NB standard\n"
            f"  {label} ..... {f.value}\n  Plant ........... {r.randrange(1000, 1999)}"
            )  # fmt: skip


def _gds(r: random.Random, f: Fact) -> str:
    return (f"> *R\nRMK {spell(f.key, 'upper')} {f.value}\nRMK CORP RATE APPLIES\n"
            f"TKTL {r.randrange(1, 28):02d}{r.choice(_MONTHS)[:3].upper()}")  # fmt: skip


def _tms(r: random.Random, f: Fact) -> str:
    return (f"Segment {r.randrange(10, 400)} | status: translated | match: fuzzy\n"
            f"Source: {f.sentence}\nPM comment: keep glossary terms as written.")  # fmt: skip


def _store_mail(r: random.Random, f: Fact) -> str:
    return ("From: App Store Connect\nSubject: A build has completed processing\n\n"
            f"{spell(f.key, 'words')}: {f.value}\nPlatform: iOS")  # fmt: skip


def _carrier(r: random.Random, f: Fact) -> str:
    d = r.randrange(1, 28)
    return (f"Shipment events\n  {d:02d} {r.choice(_MONTHS)[:3]} {_hhmm(r)}  Picked up\n"
            f"  {d + 1:02d} {r.choice(_MONTHS)[:3]} {_hhmm(r)}  Arrived at hub\n"
            f"  Shipper's note: {f.sentence}")  # fmt: skip


def _bom(r: random.Random, f: Fact) -> str:
    return ('"Ref","Qty","Footprint","Note"\n'
            f'"U{r.randrange(2, 30)}","1","QFN-32","{f.key}={f.value}"\n'
            f'"C{r.randrange(2, 90)}","4","0402","decoupling"')  # fmt: skip


def _ocr(r: random.Random, f: Fact) -> str:
    return (f"$ ocrscan scan_{r.randrange(100, 999)}.pdf --fields\n"
            f"field                     value                 conf\n"
            f"{f.key:<25} {f.value:<21} 0.9{r.randrange(10)}")  # fmt: skip


def _openpyxl(r: random.Random, f: Fact) -> str:
    row = r.randrange(4, 90)
    return (f">>> ws['B{row}'].value, ws['C{row}'].value\n"
            f"('{spell(f.key, 'words')}', '{f.value}')")  # fmt: skip


def _pdf_page(r: random.Random, f: Fact) -> str:
    n = r.randrange(3, 14)
    return (f"$ pdftotext -f {n} -l {n} agreement.pdf -\n"
            f"{n}.{r.randrange(1, 9)} {f.sentence}\n"
            f"{n}.{r.randrange(1, 9)} Each party bears its own costs.")  # fmt: skip


def _mosquitto(r: random.Random, f: Fact) -> str:
    return ("$ mosquitto_sub -t 'plant/+/meta' -v\n"
            f'plant/line{r.randrange(1, 9)}/meta {{"{spell(f.key, "camel")}": "{f.value}", '
            f'"seq": {r.randrange(100, 9999)}}}')  # fmt: skip


def _front_matter(r: random.Random, f: Fact) -> str:
    return (f"$ head -5 page_{r.randrange(10, 99)}.md\n---\ntitle: Getting started\n"
            f"{spell(f.key, 'kebab')}: {f.value}\n---")  # fmt: skip


def _trip_brief(r: random.Random, f: Fact) -> str:
    return (f"Trip brief, copied from my notes:\n- Purpose: supplier audit\n- {f.sentence}\n"
            "- Receipts to me when you're back")  # fmt: skip


def _clause(r: random.Random, f: Fact) -> str:
    return f'From the agreement, clause {r.randrange(2, 15)}.{r.randrange(1, 9)}:\n"{f.sentence}"'


def _quote_paste(r: random.Random, f: Fact) -> str:
    return (f"Pasting their quote:\nItem 1  enclosure, machined\n"
            f"{spell(f.key, 'title')}: {f.value}\nPayment terms: net thirty")  # fmt: skip


def _style_guide(r: random.Random, f: Fact) -> str:
    return f"From our style guide, section {r.randrange(2, 12)}: {f.sentence}"


def _forwarded_text(r: random.Random, f: Fact) -> str:
    return f'Forwarding a text from {r.choice(_FILLER_PEOPLE)}: "{f.sentence}"'


def _requisition(r: random.Random, f: Fact) -> str:
    return (f"Purchase requisition\nRequester: {r.choice(_FILLER_PEOPLE)}\n"
            f"{spell(f.key, 'words')}: {f.value}\nJustification: line stop risk")  # fmt: skip


def _bringup_notes(r: random.Random, f: Fact) -> str:
    return (f"bring-up notes, board {r.choice('BCDE')}{r.randrange(1, 4)}\n- 3V3 rail ok\n"
            f"- {f.key}: {f.value}\n- debugger attaches")  # fmt: skip


def _expense_rules(r: random.Random, f: Fact) -> str:
    return f"Copying the relevant bit of the expense rules: {f.sentence}"


def _shipping(r: random.Random, f: Fact) -> str:
    return f"Shipping instructions for this order: {f.sentence} Mark every box fragile."


def _short_msg(r: random.Random, f: Fact) -> str:
    return f"{f.sentence} thx"


def _translator_qa(r: random.Random, f: Fact) -> str:
    return f"The translators asked about it, and our answer was: {f.sentence}"


def _paper_form(r: random.Random, f: Fact) -> str:
    return (f"Typing in the paper form:\nNAME: {r.choice(_FILLER_PEOPLE)}\n"
            f"{spell(f.key, 'upper')}: {f.value}\nSIGNED: yes")  # fmt: skip


def _itinerary(r: random.Random, f: Fact) -> str:
    return (f"Draft itinerary:\n| Item | Detail |\n| --- | --- |\n"
            f"| {spell(f.key, 'title')} | {f.value} |\n| Ground transport | to arrange |"
            )  # fmt: skip


def _po_lines(r: random.Random, f: Fact) -> str:
    return (f"Order lines as I'll enter them:\n10  {f.key}  {f.value}\n"
            "20  freight  as quoted")  # fmt: skip


def _translator_brief(r: random.Random, f: Fact) -> str:
    return (f"Brief for the translators, draft:\n{f.sentence}\n"
            "Please flag anything that reads oddly in your locale.")  # fmt: skip


def _bringup_plan(r: random.Random, f: Fact) -> str:
    return (f"Bring-up plan:\n1. Power the board from the bench supply.\n2. {f.sentence}\n"
            "3. Attach the debugger and read the ID code.")  # fmt: skip


def _supplier_reply(r: random.Random, f: Fact) -> str:
    return (f"A reply to the supplier, for you to send:\n\nHi,\n\n{f.sentence}\n\n"
            "Best regards")  # fmt: skip


def _file_memo(r: random.Random, f: Fact) -> str:
    return f"Memo to file ({r.choice(_WEEKDAYS)}): {f.sentence}"


def _listing(r: random.Random, f: Fact) -> str:
    return (f"Store listing fields I'll fill in:\n  {spell(f.key, 'dotted')}: {f.value}\n"
            "  age.rating: 4+")  # fmt: skip


def _booking_summary(r: random.Random, f: Fact) -> str:
    return (f"Booking summary so far:\n* {spell(f.key, 'words')}: {f.value}\n"
            "* Seats: aisle where possible")  # fmt: skip


def _key_terms(r: random.Random, f: Fact) -> str:
    return (f"Key terms of the agreement, as I read them:\n  {spell(f.key, 'title')}: "
            f"{f.value}\n  Governing law: as in the master agreement")  # fmt: skip


def _form_fill(r: random.Random, f: Fact) -> str:
    return f"I'll fill the portal form with:\n  [{f.key}] {f.value}\n  [notes] left empty"


def _before_booking(r: random.Random, f: Fact) -> str:
    return f"One thing I keep in mind for the bookings: {f.sentence}"


def _thread_gist(r: random.Random, f: Fact) -> str:
    return f"Gist of the supplier thread: {f.sentence} The rest was pleasantries."


SURFACES: dict[str, Surface] = {
    s.name: s
    for s in (
        Surface("picocom-capture", "tool", "fields", _picocom),
        Surface("flasher-output", "tool", "says", _flasher),
        Surface("erp-screen", "tool", "fields", _erp),
        Surface("gds-display", "tool", "fields", _gds),
        Surface("tms-segment", "tool", "says", _tms),
        Surface("store-build-mail", "tool", "fields", _store_mail),
        Surface("carrier-events", "tool", "says", _carrier),
        Surface("bom-export", "tool", "fields", _bom),
        Surface("ocr-scan", "tool", "fields", _ocr),
        Surface("openpyxl-cell", "tool", "fields", _openpyxl),
        Surface("pdf-page", "tool", "says", _pdf_page),
        Surface("mosquitto-sub", "tool", "fields", _mosquitto),
        Surface("front-matter", "tool", "fields", _front_matter),
        Surface("trip-brief", "user", "says", _trip_brief),
        Surface("clause-paste", "user", "says", _clause),
        Surface("supplier-quote-paste", "user", "fields", _quote_paste),
        Surface("style-guide", "user", "says", _style_guide),
        Surface("forwarded-text", "user", "says", _forwarded_text),
        Surface("purchase-request", "user", "fields", _requisition),
        Surface("bring-up-notes", "user", "fields", _bringup_notes),
        Surface("expense-rules", "user", "says", _expense_rules),
        Surface("shipping-instructions", "user", "says", _shipping),
        Surface("short-msg", "user", "says", _short_msg),
        Surface("translator-qa", "user", "says", _translator_qa),
        Surface("paper-form", "user", "fields", _paper_form),
        Surface("itinerary-draft", "assistant", "fields", _itinerary),
        Surface("po-lines", "assistant", "fields", _po_lines),
        Surface("translator-brief", "assistant", "says", _translator_brief),
        Surface("bringup-plan", "assistant", "says", _bringup_plan),
        Surface("supplier-reply-draft", "assistant", "says", _supplier_reply),
        Surface("file-memo", "assistant", "says", _file_memo),
        Surface("listing-draft", "assistant", "fields", _listing),
        Surface("booking-summary", "assistant", "fields", _booking_summary),
        Surface("key-terms", "assistant", "fields", _key_terms),
        Surface("form-fill-plan", "assistant", "fields", _form_fill),
        Surface("before-booking", "assistant", "says", _before_booking),
        Surface("thread-gist", "assistant", "says", _thread_gist),
    )
}


# -- ways of correcting ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Way:
    """A way a later message gives a subject another value; ``names_old``: it names the value
    it corrects beside the new one."""

    name: str
    register: str
    names_old: bool
    render: Callable[[random.Random, Template, str, str], str]


def _cap(text: str) -> str:
    return text[0].upper() + text[1:]


def _w_printed(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"The printed copy in the binder on my desk has {new} for {t.subjects[0]}. "
            "Go by the paper.")  # fmt: skip


def _w_countersigned(r: random.Random, t: Template, old: str, new: str) -> str:
    return f"The countersigned version came back this morning. {_cap(t.subjects[0])}: {new}."


def _w_last_year(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"I read you {old} off last year's tab of the workbook. This year's tab has {new} "
            f"for {t.subjects[0]}.")  # fmt: skip


def _w_answer(r: random.Random, t: Template, old: str, new: str) -> str:
    return f"On the thing you asked me a while back, {t.subjects[0]}: it's {new}."


def _w_autofill(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"My browser autofilled {old} into that field from a saved entry. "
            f"{_cap(t.subjects[0])} is {new}.")  # fmt: skip


def _w_loop_in(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"Looping you in: {r.choice(_FILLER_PEOPLE)} wrote to the supplier this morning that "
            f"{t.subjects[0]} is {new} on our side.")  # fmt: skip


def _w_esign(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"Envelope {_hex(r, 12)} · Completed\n"
            f"Signed by: {r.choice(_FILLER_PEOPLE)} ({r.choice(_WEEKDAYS)} {_hhmm(r)})\n"
            f"Field values\n  {t.keys[0]}: {new}")  # fmt: skip


def _w_edi(r: random.Random, t: Template, old: str, new: str) -> str:
    n = r.randrange(1000, 9999)
    return (f"ST*855*{n}~\nBAK*00*AC*{r.randrange(100_000, 999_999)}~\n"
            f"REF*ZZ*{spell(t.keys[0], 'upper')}*{new}~\nSE*4*{n}~")  # fmt: skip


def _w_gds_alteration(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"*SC* SCHEDULE ALTERATION {spell(t.keys[0], 'upper')}\n  UN  {old}\n  TK  {new}\n"
            "ACCEPT BY TKTL")  # fmt: skip


def _w_mdm(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"mdm-sync {_hhmm(r)}:{r.randrange(60):02d} master record {t.keys[0]} = {new} "
            f"(origin: ERP, steward {r.choice(_FILLER_PEOPLE)})")  # fmt: skip


def _w_xliff(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"QA check, segment {r.randrange(10, 400)}: {t.keys[0]} reads '{old}' in the target "
            f"text and '{new}' in the master text; reviewer {r.choice(_FILLER_PEOPLE)} aligned "
            "the target.")  # fmt: skip


def _w_scrape(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"[scrape {_hhmm(r)}] supplier portal, account page\n"
            f"  {spell(t.keys[0], 'words')}: {new}\n  open orders: {r.randrange(2, 30)}"
            )  # fmt: skip


def _w_executed(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"I'd been reading the draft. The executed agreement is what binds us, and in it "
            f"{t.subjects[0]} reads {new}.")  # fmt: skip


def _w_locale(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"I parsed their sheet with an English locale and got {old}. With the Swedish one, "
            f"{t.subjects[0]} comes out as {new}.")  # fmt: skip


def _w_pdf_over_body(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"The mail body and the attached PDF disagree on {t.subjects[0]}. I'm going by the "
            f"signed PDF: {new}.")  # fmt: skip


def _w_photo(r: random.Random, t: Template, old: str, new: str) -> str:
    return f"In the photo you sent, the sheet shows {new} for {t.subjects[0]}."


def _w_compare(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"Comparing v2 and v3 of the agreement, the one difference is {t.subjects[0]}: "
            f"{old} in v2, {new} in v3, and v3 is the signed one.")  # fmt: skip


def _w_ready(r: random.Random, t: Template, old: str, new: str) -> str:
    return f"Ready to submit the form: {t.subjects[0]} {new}, everything else as we discussed."


CORRECTIONS: dict[str, Way] = {
    w.name: w
    for w in (
        Way("printed-copy", "user", False, _w_printed),
        Way("countersigned", "user", False, _w_countersigned),
        Way("last-years-tab", "user", True, _w_last_year),
        Way("answer-to-ask", "user", False, _w_answer),
        Way("autofilled", "user", True, _w_autofill),
        Way("loop-in", "user", False, _w_loop_in),
        Way("esign-completed", "tool", False, _w_esign),
        Way("edi-ack", "tool", False, _w_edi),
        Way("gds-alteration", "tool", True, _w_gds_alteration),
        Way("mdm-sync", "tool", False, _w_mdm),
        Way("xliff-qa", "tool", True, _w_xliff),
        Way("portal-scrape", "tool", False, _w_scrape),
        Way("executed-binds", "assistant", False, _w_executed),
        Way("locale-parse", "assistant", True, _w_locale),
        Way("pdf-over-body", "assistant", False, _w_pdf_over_body),
        Way("photo-read", "assistant", False, _w_photo),
        Way("draft-compare", "assistant", True, _w_compare),
        Way("ready-to-submit", "assistant", False, _w_ready),
    )
}

REGISTER_OF = {
    **{n: s.register for n, s in SURFACES.items()},
    **{n: w.register for n, w in CORRECTIONS.items()},
}


# -- sessions --------------------------------------------------------------------------------------


def shares(count: int) -> tuple[int, int, int]:
    """Singles, corrections and pairs in a session of ``count`` canaries (8, 5, 3 of 24)."""
    pairs = max(1, round(count * 3 / 24))
    corrections = max(1, round(count * 5 / 24))
    return count - 2 * pairs - 2 * corrections, corrections, pairs


def _ring(seed: int, name: str, items: Sequence[Any]) -> list[Any]:
    out = list(items)
    random.Random(f"heldout-q:ring:{name}:{seed}").shuffle(out)
    return out


def _surface_ring(seed: int) -> list[str]:
    """The surfaces in a per-seed order that takes the three registers in turn."""
    rows = [_ring(seed, f"surface-{r}", [n for n, s in SURFACES.items() if s.register == r])
            for r in REGISTERS]  # fmt: skip
    out: list[str] = []
    for i in range(max(len(x) for x in rows)):
        out += [x[i] for x in rows if i < len(x)]
    return out


def _take(ring: Sequence[Any], variant: int, n: int) -> list[Any]:
    return [ring[(variant * n + i) % len(ring)] for i in range(n)]


def _session(seed: int, count: int, variant: int, attempt: int) -> list[dict[str, Any]]:
    n_single, n_fix, n_pair = shares(count)
    singles = _take(_ring(seed, "single", SINGLES), variant, n_single)
    fixes = _take(_ring(seed, "correction", CORRECTED), variant, n_fix)
    pairs = _take(_ring(seed, "pair", PAIRS), variant, n_pair)
    surfaces = _take(_surface_ring(seed), variant, count - n_fix)
    ways = _take(_ring(seed, "way", list(CORRECTIONS)), variant, n_fix)
    rng = random.Random(f"heldout-q:values:{seed}:{count}:{variant}:{attempt}")
    draw = Draw(rng)
    facts: list[dict[str, Any]] = []

    def fact(t: Template, side: int, value: str, at: float) -> dict[str, Any]:
        style = surfaces[len(facts)]
        text = SURFACES[style].render(rng, Fact(t, side, value))
        c = {"kind": t.kind, "at": round(at, 4), "text": text, "keep": [value],
             "style": style, "template": t.name, "subject": t.subjects[side]}  # fmt: skip
        facts.append(c)
        return c

    for t in singles:
        fact(t, 0, draw.value(t.form), rng.uniform(0.03, 0.93))
    later: list[dict[str, Any]] = []
    for t, way in zip(fixes, ways, strict=True):
        old, new = draw.two(t.form, t.order, restyle=True)
        first = fact(t, 0, old, rng.uniform(0.03, 0.58))
        text = CORRECTIONS[way].render(rng, t, old, new)
        at = min(first["at"] + rng.uniform(0.22, 0.38), 0.97)
        later.append({"kind": t.kind, "at": round(at, 4), "text": text, "keep": [new],
                      "style": way, "template": t.name, "subject": t.subjects[0],
                      "supersedes": first})  # fmt: skip
    for t in pairs:
        one, two = draw.two(t.form, t.order, restyle=False)
        a = fact(t, 0, one, rng.uniform(0.03, 0.7))
        b = fact(t, 1, two, a["at"] + rng.uniform(0.12, 0.25))
        a["coexists"], b["coexists"] = b, a
    everything = sorted([*facts, *later], key=lambda c: c["at"])
    for i, c in enumerate(everything):
        c["id"] = f"q{variant:03d}-{i:02d}"
    out = []
    for c in everything:
        row = {"id": c["id"], **{k: v for k, v in c.items() if k != "id"}}
        for link in ("supersedes", "coexists"):
            if link in row:
                row[link] = row[link]["id"]
        out.append(row)
    return out


def _sound(canaries: Sequence[dict[str, Any]]) -> bool:
    """Every keep string in its own text and in no other canary's (but a correction that names
    the value it corrects), no keep string inside another, every canary inside the session."""
    keeps = [k for c in canaries for k in c["keep"]]
    if len(set(keeps)) != len(keeps):
        return False
    if any(a != b and a in b for a in keeps for b in keeps):
        return False
    by_id = {c["id"]: c for c in canaries}
    for c in canaries:
        if not all(k in c["text"] for k in c["keep"]):
            return False
        for other in canaries:
            if other is c or not any(k in other["text"] for k in c["keep"]):
                continue
            if other.get("supersedes") != c["id"] or not CORRECTIONS[other["style"]].names_old:
                return False
        if "supersedes" in c:
            old = by_id[c["supersedes"]]
            named = any(k in c["text"] for k in old["keep"])
            if named != CORRECTIONS[c["style"]].names_old:
                return False
    return all(0 < c["at"] < 1 for c in canaries)


def generate(seed: int, count: int = 24, variant: int = 0) -> dict[str, Any]:
    """``count`` canaries for session ``variant`` of a run seeded ``seed``, in the shape
    ``bench/retention.py`` reads (``{"canaries": [...]}``)."""
    if count < 6:
        raise ValueError(f"count must be at least 6, not {count}")
    if count > MAX_COUNT:
        raise ValueError(f"count must be at most {MAX_COUNT}, not {count}")
    for attempt in range(300):
        canaries = _session(seed, count, variant, attempt)
        if _sound(canaries):
            return {"generator": "heldout-q", "seed": seed, "variant": variant,
                    "canaries": canaries}  # fmt: skip
    raise RuntimeError(f"no sound draw for seed {seed}, session {variant}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Held-out canary set Q (written blind).")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--count", type=int, default=24)
    parser.add_argument("--variant", type=int, default=0)
    args = parser.parse_args(argv)
    if args.seed in EVALUATION_SEEDS:
        parser.error(f"--seed {args.seed} is an evaluation seed: run it only through the benchmark")
    json.dump(generate(args.seed, args.count, args.variant), sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
