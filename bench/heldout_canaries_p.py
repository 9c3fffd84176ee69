r"""Held-out canary generator, set P: facts and wording written blind, for ``bench/retention.py``.

Lab note
========

Why
---
The retention benchmark plants facts ("canaries") into recorded agent sessions, compacts five
times, and checks which facts survive and whether a corrected value is still shown as current.
A summarizer tuned against one set of canaries can learn that set's words. This is the
sixteenth set, written without looking at the summarizer or at any earlier set's templates or
surfaces, so its facts, surfaces and ways of correcting are nobody's tuning target. Run it with
``bench/retention.py --generator bench/heldout_canaries_p.py --seed S``.

Emphasis
--------
The earlier sets I could see (by their lab notes) live mostly in the code editor and in
operations. Long agent sessions are also data and research work and customer support: a
notebook, a warehouse, an experiment tracker, a job scheduler, a paper's deadlines, a support
case. This set stresses three things of that work.

(1) Facts of data, ML and support work, in their own notation and on their own surfaces:
hyperparameters in scientific notation (``4.713e-05``), warmup and token budgets with
comma-grouped counts (``61,238 steps``, ``41,207 tokens``), a scan ceiling in ``TiB``, an
AUROC bar, a refund ceiling in ``CHF``, dataset snapshots (``word_word:snap4216``), three-part
warehouse tables, feature columns, checkpoints, notebooks, parquet extracts, ``gs://``
prefixes, a customer's account reference and support case, a dataset's steward, the analyst
who signs off, a camera-ready date. The tool surfaces are the ones that work prints: ``mlflow
runs describe``, a W&B run summary, dbt's log, ``bq show``, a SnowSQL grid, a pandas frame, a
resolved Hydra config, ``scontrol show job``, a support case thread, ``gsutil stat`` metadata,
``spark-submit``, R's console, papermill's cell log.

(2) Corrections that arrive as evidence or in passing, not as an announcement. The new value
comes from a tool (a catalog search that finds only the new value, a form receipt, a job
picked up again with its effective parameter, a bot's daily digest, a notebook tidier that
rewrote cells, a case's activity log), from a third person (someone "made the call", "heard
back from", a customer's clarification), from the user's own check ("looked it up in the
registry myself"), as one clause in a message about something else (a rerun request with the
value in its middle), or from the assistant's own checking (the dataset card, the source
tables, an amended plan step, a footnote under a table, the row above, two values in one
thread of which it takes the later). Six of the 18 ways name the old value beside the new one;
twelve name only the new one. Every register corrects: six ways each for user, tool and
assistant.

(3) Coexisting pairs that are two stages or two audiences of one thing: the peak and the final
learning rate of one schedule, the best and the newest checkpoint, the training and the
evaluation snapshot, the baseline AUROC and the one needed to ship, the abstract and the
full-paper deadline, the model version serving traffic and the one in shadow, the hot and the
archive tier, a customer's technical and billing contact, the batch and the live inference
endpoint, a daily token quota and a per-request cap, the palette for slides and for the paper.
The second is said later, its key shares a head word with the first's, and its sentence holds
a word that usually announces a correction ("though", "instead", "then", "too", "after").
Where the pair has a natural order the values keep it (the final rate below the peak, the bar
above the baseline, the per-request cap below the daily quota, the paper after the abstract,
the shadow version above the live one).

Evaluation seeds
----------------
Drawn before I started, and given to me with the brief: 1334075, 2506116, 3223300
(``EVALUATION_SEEDS``). I never ran the generator or the benchmark with them, and no test does:
the tests use 13, 271, 8080, 77, 3141, 97 and 6011, and check that these differ from the
evaluation seeds. The ``__main__`` of this file refuses them (``generate`` itself does not:
the benchmark calls it with them).

What I read
-----------
- ``bench/retention.py``, the interface only: the listing of its top-level names (``grep -n
  "^def \|^class \|^    def \|add_argument\|^# --"``), its first 70 lines (the opening of its
  module docstring: usage, Canaries, Placements, Replay, Scoring, and the first line of the
  engine figures), lines 171-275 (``Canary``, ``canaries_from``, ``load_canaries``,
  ``CanarySource``, ``_generator``, ``Seeded``), lines 495-620 (the tail of
  ``own_text_marks``, ``strip_replaced``, ``presents_as_current``, ``KeepIndex``, ``Score``,
  ``score_context``, the ``# -- token ruler`` heading and the first docstring line of
  ``Ruler``), ``aggregate`` whole (lines 1016-1190, with the first lines of ``_share`` and
  ``_over``) and ``main`` whole (lines 1892-2023).
- ``bench/heldout_canaries_o.py``: its lab note (module docstring) and ``generate``, printed
  through ``ast``; nothing else of it.
- ``tests/bench/test_heldout_canaries_o.py`` whole. My test mirrors its structure and checks
  (but its compound and partial-correction tests: this set has one keep string per fact), its
  ``MARKERS`` list starts with O's words, followed by words of my own ways.
- The lab notes (module docstrings only, printed through ``ast``) of all the earlier sets, A to
  N, whole, to keep away from their value shapes, surfaces, correction wordings and coexisting
  pairs. What I kept away from: no ``ABCD-12345``/``ABC#1234``/``ZUV-48213``/``CHG``/``INC``
  tickets, no ``svc_``/``acct_`` ids, no doubled vowels, no ``q`` or ``w``, none of J's onset
  clusters, no ISO-week, ordinal or Roman dates and no year before 2074, no ``lts/`` or
  ``handle/`` branches, no ``.internal``/``.lan``/``.corp``/``.test``/``svc.cluster.local``
  hosts, no ``/srv``, ``/mnt``, ``/run`` or ``/etc`` paths, no three-part version of N's or
  O's shape (mine carry a PEP 440 local label, ``4.28.1+word``), no ``ms``/``MB``/``MiB``/
  ``GiB``/``%``/``/hour``/``req/s`` numbers; no arrows, diffs, strike-through, "(was X)",
  "from X to Y", "X? no, Y", "instead of", "rather than", "back to", "scratch that", "make
  that", a CLI refusing the old value, a REPL reload or a merge conflict in a correction; and
  none of their pairs (two services, tenants or teams, primary/replica, beta/GA, pilot/GA,
  connect/read timeouts, two memory limits, input/output or read/write places,
  staging/production, two tickets, two owners of two things, O's default/slow timeouts,
  bisect commits, target/cherry-pick branches, lowest/first excluded versions, warn/off dates,
  option/alias, author/reviewer, two lint configs, retryable/fatal codes, client/probe URLs).
- ``tests/bench/support.py`` whole (its helpers, which my test uses, and
  ``EARLIER_SURFACES``); the first 40 lines of ``tests/conftest.py``; the ``[...]`` headers and
  the ruff sections of ``pyproject.toml``.
- ``ls bench tests/bench`` (file names only) and ``ls -la`` of
  ``/work/shared/data/swebench-gemini3/``. The recorded sessions only by substring counts, in
  one throwaway check after the first draft (none of 1,440 keep strings of 60 test sessions
  is there; one of 1,417 made-up words of six letters or more is, ``tronik``; my value shapes
  by regex count 0, except ``case-`` + word (21, none of them my values), ``.ipynb`` (11) and
  four-digit runs that read as my years (105)) and in the tests. I read no session text.
- The output of my own throwaway checks on test seeds (3, 11, 404, 58, 2718 for the first
  draft, then 13, 271, 8080): sample canaries of seed 3, session 0; one correction text per
  way; how many attempts a session needed (none redrawn in 30 sessions); the largest
  marker-word shares (``from `` at 22%, which I lowered by rewording two ways; the rest at or
  below 11%); the share of corrections naming the old value (49 of 150). And the names of my
  own surfaces and ways that contained a name of ``EARLIER_SURFACES`` (``proposed-overrides``
  holds ``sed``, ``notebook-lint`` holds ``lint``), which I renamed; the tests import sets K to
  O only to compare their surface names with mine, and I printed none of theirs. A throwaway
  script that broke my module in memory (a way's flag, a pair's sentence, a surface name, a
  test seed, a pair's order, a marker) to see that the matching tests fail. The tiny retention
  run in the tests is checked for keys only; I ran it once all else passed.
- By accident: ``grep -rn "noqa: PLR0917" bench tests src`` (to see how the repository
  silences that lint rule for table-row helpers) printed five signature lines of other files:
  ``_findings`` in ``bench/tokens.py``, set H's ``_fix``, set M's ``_one`` and ``_fix`` and set
  O's ``_t``. M's two take ``name, kind, form, subject, key, says``, as my ``_one`` and ``_fix``
  do; I had written mine before I saw theirs. ``grep -rln noqa bench`` listed file names.
  Nothing else of those files.

What I did not read
-------------------
Nothing under ``src/abridged/`` (the summarizer and its ledger included), no body of an earlier
set's generator (but O's ``generate``), not ``bench/canary_generator.py``, no canary JSON file,
not ``bench/RESULTS.md``, nothing under ``/work/shared/data/canaries/``, no git history, diff
or status, and no benchmark figure.

Scoring, as read
----------------
A canary is kept when every keep string is in the context; here each fact has one. An old value
is stale when its keep string is left after removing the correcting canary's whole text, the new
value's keep string and the replaced-markers (``(was ...)``, lines with ``[superseded``). So a
correction that names only the new value cannot make the old one stale by itself; one that
names the old value is fair while it is quoted whole, and a summary that rewrites it and keeps
the old value outside those marks shows it as current. A coexisting pair has no
``supersedes``: both values are required and neither can be stale. This set writes neither
replaced-marker. Placement (user, tool, assistant) is the benchmark's choice per pass, so every
text reads as a message, a pasted output or an assistant's words alike.

Design
------
- 53 templates over the 12 kinds O names (constraint, prohibition, preference, identifier,
  decision, number, path, version, owner, deadline, setting, endpoint): 24 single facts, two
  per kind; 18 corrections, every kind, six kinds twice (constraint, identifier, number, path,
  deadline, setting); 11 coexisting pairs over 10 kinds (two of them numbers), listed under
  Emphasis (3). A correction keeps the fact's kind.
- A session of 24 holds 8 singles, 5 corrections (10 canaries) and 3 coexisting pairs (6
  canaries); other counts scale (at least one of each, ``6 <= count <= 70``). Templates,
  surfaces and correction ways each sit in a per-seed shuffled ring that consecutive sessions
  walk (the surfaces' ring takes the three registers in turn), so any 16 consecutive sessions
  plant every one of them. A correction comes 0.22-0.38 of the session after its fact, the
  second side of a pair 0.12-0.25 after the first.
- 35 fact surfaces: 13 ``tool`` (listed under Emphasis (1)), 11 ``user`` (a notebook's markdown
  cell, a support macro, a lab-book entry, a data request form, the customer's words pasted, a
  referee's point, a sticky note, a margin comment on an analysis plan, night-shift notes, a
  data-dictionary row, a scope note) and 11 ``assistant`` (an ablation plan, a drafted SQL
  query, a drafted reply to a customer, a methods paragraph, launch overrides, what it carries
  into the next step, the arguments of its next call, a triage note, a sizing note, a settled
  thread, a working premise). 20 write the fact's sentence (``says``), 15 its key and value on
  one line or under a grid header (``fields``), the key spelled the surface's way (snake,
  dotted, kebab, upper, camel or as words). Names avoid ``EARLIER_SURFACES`` (substring check,
  with and without dashes) and sets K to O.
- 18 correction ways, six per register, listed under Emphasis (2). Each names the subject or
  its key. No marker word of the test's list is in more than a quarter of the corrections or
  of the ways.
- Values are drawn fresh per seed and session: made-up words of two or three syllables (my own
  onsets, vowels and codas, no doubled vowels, no ``q`` or ``w``, none holding a word that
  announces a correction), five to ten letters, inside the forms of Emphasis (1): kebab and
  snake pairs, W&B-like run names ``word-word-NNN``, experiments ``word/word-NN``, warehouse
  tables ``word-NNN.word.word_word``, columns ``word_word_cd``, snapshots, ``cust:wordNN``
  accounts, ``case-word-NNNN`` cases, models ``word-word-NNb``, ``gs://`` prefixes,
  ``/ckpt/.../step_NNNNN.pt`` checkpoints, ``notebooks/NN_word_word.ipynb``,
  ``data/word/word_word.parquet``, ``https://word.word.net:PORT/vN/word`` endpoints, people (a
  given name and a made-up surname), versions ``N.NN.NN+word``, dates in 2074-2082 in four
  styles (``2077-03-14``, ``14 Mar 2077``, ``March 14, 2077``, ``14.03.2077``), and numbers
  always with their unit or notation as above. A correction's new value keeps the old one's
  shape (a date may be written in another style); deadlines only move later and versions only
  go up. A session is redrawn until every keep string is in its own text and in no other
  canary's (but a correction of a way that names the value it corrects), no keep string holds
  another, and a correction names the old value exactly when its way says it does.

What the set cannot show
------------------------
It says whether a fact survived, not why it was lost. A look-alike pair is scored as two
required facts: the benchmark cannot tell a summary that merged them into one "corrected"
value from one that dropped a value for length. Each way has one register, so a way's figure
mixes the way with its voice; and a way is applied to any template, so some pairings read
oddly (a dataset card giving an analyst's name, a customer wording a learning rate). A
correction that arrives as evidence is still planted where the benchmark places it, so a tool
way can end up in a user message. The numbers are unround and written one way each, so this
set does not test notation changes. All values are made up, so nothing here measures facts a
model could recall from training.
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

EVALUATION_SEEDS = (1334075, 2506116, 3223300)

KINDS = (
    "constraint", "prohibition", "preference", "identifier", "decision", "number", "path",
    "version", "owner", "deadline", "setting", "endpoint",
)  # fmt: skip
REGISTERS = ("user", "tool", "assistant")
SHAPES = ("single", "correction", "coexist")
#: canaries per session at most: no template twice in a session
MAX_COUNT = 70
#: the years every drawn date falls in
YEARS = range(2074, 2083)


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


def _one(  # noqa: PLR0917 (a row of the template table)
    name: str, kind: str, form: str, subject: str, key: str, says: str
) -> Template:
    return Template(name, kind, "single", form, (subject,), (key,), (says,))


def _fix(  # noqa: PLR0917 (a row of the template table)
    name: str, kind: str, form: str, subject: str, key: str, says: str, order: str = ""
) -> Template:
    return Template(name, kind, "correction", form, (subject,), (key,), (says,), order)


def _both(  # noqa: PLR0917 (a row of the template table)
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
    _one("scan_ceiling", "constraint", "tib", "the scanned-data ceiling per ad-hoc query",
         "max_scan_per_query",
         "Every ad-hoc query has to stay under {v} scanned, or the warehouse bill explodes."),
    _one("eval_filter", "constraint", "column", "the column every eval query filters on",
         "required_filter_column",
         "Any eval query has to filter on {v}, otherwise test rows leak into training."),
    _one("board_table", "prohibition", "bqtable", "the table nobody writes to",
         "readonly_table",
         "Do not write to {v} from the notebook, not even a temp column; it feeds the board deck."),
    _one("no_direct_mail", "prohibition", "person", "the contact nobody emails directly",
         "no_direct_contact",
         "Nobody emails {v} directly; anything for that account goes through their CSM."),
    _one("chart_theme", "preference", "snake2", "the theme for every chart", "plot_theme",
         "Charts get the {v} theme so the team can read them next to each other."),
    _one("scratch_notebook", "preference", "notebook", "the notebook for scratch work",
         "scratch_notebook", "Keep scratch cells in {v}, away from the report notebook."),
    _one("baseline_run", "identifier", "run", "the baseline run", "baseline_run",
         "The baseline everyone compares against is run {v}."),
    _one("account_ref", "identifier", "cust", "the customer's account reference",
         "account_ref",
         "The customer in this ticket is {v}; look them up by that, not by their email."),
    _one("imputation", "decision", "word2", "the imputation method", "imputation_method",
         "We settled on {v} imputation for the missing sensor readings."),
    _one("pilot_model", "decision", "model", "the model the pilot ships with", "pilot_model",
         "The pilot ships with {v}; the bigger one was not worth the latency."),
    _one("ticket_tokens", "number", "tokens", "the token budget per ticket summary",
         "ticket_token_budget", "Each ticket summary may use at most {v}."),
    _one("ingest_rate", "number", "msgs", "the ingest rate the consumer sustained",
         "sustained_ingest_rate",
         "Under the replay load the consumer sustained {v} before lag started to grow."),
    _one("clean_extract", "path", "parquet", "the cleaned extract", "clean_extract",
         "The cleaned extract is at {v}; the raw dump beside it is not deduplicated."),
    _one("export_prefix", "path", "gspath", "the nightly export prefix", "export_prefix",
         "Nightly exports land under {v}."),
    _one("tokenizer_pin", "version", "version", "the pinned tokenizer library",
         "tokenizer_pin",
         "The tokenizer library is pinned at {v}; later builds change the byte fallback."),
    _one("event_schema", "version", "version", "the event schema producers emit",
         "event_schema", "Producers emit event schema {v}."),
    _one("churn_steward", "owner", "person", "the steward of the churn dataset",
         "churn_steward", "{v} is the steward of the churn dataset; access requests go there."),
    _one("ingest_pager", "owner", "person", "whoever carries the ingestion pager",
         "ingest_pager", "{v} carries the ingestion pager this week."),
    _one("data_freeze", "deadline", "date", "the data freeze", "data_freeze",
         "The data freeze is {v}; nothing enters the training mix after that."),
    _one("renewal", "deadline", "date", "the customer's contract renewal", "renewal_date",
         "Their contract renews on {v}, so the fix has to be out before then."),
    _one("learning_rate", "setting", "lr", "the learning rate", "learning_rate",
         "Train with a learning rate of {v}."),
    _one("batch_sampler", "setting", "snake2", "the batch sampler", "batch_sampler",
         "The data loader draws batches with the {v} sampler."),
    _one("feature_store", "endpoint", "url", "the feature store endpoint", "feature_store_url",
         "Features are served from {v}."),
    _one("ticket_hook", "endpoint", "url", "the receiver for ticket events", "ticket_hook_url",
         "Ticket events are posted to {v}."),
)  # fmt: skip

CORRECTED = (
    _fix("scratch_quota", "constraint", "tib", "the team's scratch quota", "scratch_quota",
         "Scratch usage has to stay below {v} for the whole team."),
    _fix("segment_floor", "constraint", "samples", "the smallest segment we report",
         "min_segment_size", "Drop any segment with fewer than {v}."),
    _fix("quarantined", "prohibition", "snapshot", "the snapshot nobody trains on",
         "quarantined_snapshot", "Do not train on {v}; it carries the mislabeled batch."),
    _fix("heatmap_colours", "preference", "snake2", "the colour map for heatmaps",
         "heatmap_cmap", "Heatmaps go in the {v} colour map, please."),
    _fix("experiment", "identifier", "exp", "the experiment name for runs",
         "experiment_name", "Log every run under the experiment {v}."),
    _fix("support_case", "identifier", "case", "the support case this work is for", "case_ref",
         "This work is for support case {v}."),
    _fix("split_strategy", "decision", "word2", "the split strategy", "split_strategy",
         "Folds are split by {v}, so no user lands in two folds."),
    _fix("warmup", "number", "steps", "the warmup length", "warmup_length",
         "Warm the optimizer up over {v}."),
    _fix("refund_ceiling", "number", "chf", "the refund ceiling an agent approves alone",
         "refund_ceiling", "Support agents may approve refunds up to {v} without escalating."),
    _fix("resume_from", "path", "ckpt", "the checkpoint to resume from", "resume_checkpoint",
         "The job resumes from {v}."),
    _fix("report_notebook", "path", "notebook", "the report notebook", "report_notebook",
         "The numbers for the deck come out of {v}."),
    _fix("driver_build", "version", "version", "the driver build the GPU nodes run",
         "gpu_driver_build", "The GPU nodes run driver build {v}.", "up"),
    _fix("signoff", "owner", "person", "the analyst who signs off the figures",
         "signoff_analyst", "{v} signs off the figures before they go out."),
    _fix("camera_ready", "deadline", "date", "the camera-ready deadline", "camera_ready",
         "Camera-ready copy is due {v}.", "up"),
    _fix("quarter_close", "deadline", "date", "the quarter close", "quarter_close",
         "The quarter closes on {v}; the churn numbers must be final by then.", "up"),
    _fix("weight_decay", "setting", "lr", "the weight decay", "weight_decay",
         "Weight decay is {v} for every layer but the embeddings."),
    _fix("tokenizer_variant", "setting", "snake2", "the tokenizer variant", "tokenizer_variant",
         "Tokenize with the {v} variant."),
    _fix("annotation_server", "endpoint", "url", "the annotation server", "annotation_url",
         "Labelers work against {v}."),
)  # fmt: skip

PAIRS = (
    _both("lr_schedule", "setting", "lr", ("the peak learning rate", "the final learning rate"),
          ("lr_peak", "lr_final"),
          ("The schedule peaks at a learning rate of {v}.",
           "By the last step the learning rate has decayed to {v}, though."), "down"),
    _both("checkpoints", "path", "ckpt", ("the best checkpoint", "the newest checkpoint"),
          ("checkpoint_best", "checkpoint_newest"),
          ("The best validation score sits at checkpoint {v}.",
           "The newest checkpoint on disk is {v}, though.")),
    _both("snapshots", "identifier", "snapshot",
          ("the training snapshot", "the evaluation snapshot"),
          ("snapshot_train", "snapshot_eval"),
          ("Training reads {v}.", "Evaluation then reads {v} instead.")),
    _both("auroc_bar", "number", "score", ("the baseline AUROC", "the AUROC needed to ship"),
          ("auroc_baseline", "auroc_ship"),
          ("The baseline scores {v} on the held-out set.",
           "To ship, though, the model has to reach {v}."), "up"),
    _both("paper_dates", "deadline", "date", ("the abstract deadline", "the full-paper deadline"),
          ("deadline_abstract", "deadline_paper"),
          ("Abstracts are due {v}.", "The full paper is due {v}, after that."), "up"),
    _both("model_versions", "version", "version",
          ("the model version serving traffic", "the model version in shadow"),
          ("model_version_live", "model_version_shadow"),
          ("Production traffic is served by model version {v}.",
           "Model version {v} runs in shadow next to it, too."), "up"),
    _both("storage_tiers", "number", "tib", ("the hot tier size", "the archive tier size"),
          ("tier_size_hot", "tier_size_archive"),
          ("The hot tier holds {v}.", "The archive tier holds {v}, though."), "up"),
    _both("contacts", "owner", "person",
          ("the customer's technical contact", "the customer's billing contact"),
          ("contact_technical", "contact_billing"),
          ("Their technical contact is {v}.", "For invoices the contact is {v} instead.")),
    _both("inference_urls", "endpoint", "url",
          ("the inference endpoint for batch scoring", "the inference endpoint for live calls"),
          ("inference_url_batch", "inference_url_live"),
          ("Batch scoring calls {v}.", "Live requests go to {v} instead.")),
    _both("token_limits", "constraint", "tokens",
          ("the team's daily token quota", "the token cap per request"),
          ("token_quota_daily", "token_cap_request"),
          ("The team's daily quota is {v}.", "A single request is capped at {v}, too."), "down"),
    _both("palettes", "preference", "snake2",
          ("the palette for slides", "the palette for the paper"),
          ("palette_slides", "palette_paper"),
          ("Slides use the {v} palette.", "The paper's figures take {v}, though.")),
)  # fmt: skip

TEMPLATES: tuple[Template, ...] = (*SINGLES, *CORRECTED, *PAIRS)
TEMPLATE_BY_NAME = {t.name: t for t in TEMPLATES}


# -- values ----------------------------------------------------------------------------------------

_ONSETS = (
    "b", "br", "d", "dr", "f", "fr", "g", "gl", "h", "j", "k", "kl", "l", "m", "n", "p", "pl",
    "r", "s", "sk", "sp", "st", "t", "tr", "v", "y", "z", "ch", "sh",
)  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "i", "o", "u", "y", "ai", "ou")
_CODAS = ("n", "r", "l", "s", "m", "k", "t", "nd", "rk", "lt", "sk", "x")
#: no made-up word holds one of these (words that announce a correction, or read as English)
_BAD = ("new", "now", "old", "was", "use", "stal", "prev", "fin", "rev", "not", "upd", "chang",
        "fix", "corr", "late", "earl", "wrong", "typo", "edit", "set", "sex", "nig", "kill",
        "dead", "shit", "fuk", "then", "but")  # fmt: skip
#: given names of the people in values; fillers use other ones
GIVEN = ("Anouk", "Bertil", "Chioma", "Dagny", "Emeka", "Fenna", "Gunnar", "Halima", "Ilse",
         "Joost", "Kaito", "Liesl", "Marisol", "Nnamdi", "Orla", "Pilar", "Rasmus", "Sigrun",
         "Teodor", "Ulla", "Vesna", "Yusuf")  # fmt: skip
_FILLER_PEOPLE = ("Maren", "Idris", "Colette", "Bashir", "Tove", "Ezinne", "Hamid", "Greet")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
_COLUMN_ENDS = ("ts", "amt", "cd", "flg", "key")
#: the fixed words (four letters or more) of the value forms, for the tests' made-up word count
FORM_WORDS = frozenset(
    {"cust", "case", "snap", "step", "ckpt", "notebooks", "ipynb", "data", "parquet", "https",
     "steps", "tokens", "samples", "auroc"}
    | {m.lower() for m in _MONTHS}
)  # fmt: skip
#: a number's unit, by form
UNITS = {"steps": " steps", "tokens": " tokens", "samples": " samples", "tib": " TiB",
         "msgs": " msg/s", "score": " AUROC"}  # fmt: skip
DATE_STYLES = ("iso", "day-month", "month-day", "dotted")


def _syllable(rng: random.Random, first: bool) -> str:
    onset = "" if first and rng.random() < 0.15 else rng.choice(_ONSETS)
    return onset + rng.choice(_VOWELS)


def magnitude(form: str, value: str) -> float:
    """The number a value of a numeric form stands for."""
    if form == "lr":
        return float(value)
    if form == "chf":
        return float(value.removeprefix("CHF ").replace(",", ""))
    return float(value.removesuffix(UNITS[form]).replace(",", ""))


def version_key(value: str) -> tuple[int, int, int]:
    """``3.17.4+word`` -> ``(3, 17, 4)``."""
    found = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)\+[a-z]+", value)
    if not found:
        raise ValueError(value)
    return int(found[1]), int(found[2]), int(found[3])


def date_text(day: dt.date, style: str) -> str:
    if style == "iso":
        return day.isoformat()
    if style == "day-month":
        return f"{day.day:02d} {_MONTHS[day.month - 1][:3]} {day.year}"
    if style == "month-day":
        return f"{_MONTHS[day.month - 1]} {day.day}, {day.year}"
    return f"{day.day:02d}.{day.month:02d}.{day.year}"


def date_style(value: str) -> str:
    if re.fullmatch(r"\d{4}-\d\d-\d\d", value):
        return "iso"
    if re.fullmatch(r"\d\d [A-Z][a-z]{2} \d{4}", value):
        return "day-month"
    if re.fullmatch(r"[A-Z][a-z]+ \d{1,2}, \d{4}", value):
        return "month-day"
    if re.fullmatch(r"\d\d\.\d\d\.\d{4}", value):
        return "dotted"
    raise ValueError(value)


def parse_date(value: str) -> dt.date:
    style = date_style(value)
    if style == "iso":
        return dt.date.fromisoformat(value)
    if style == "dotted":
        d, m, y = value.split(".")
        return dt.date(int(y), int(m), int(d))
    if style == "day-month":
        d, mon, y = value.split()
        return dt.date(int(y), [m[:3] for m in _MONTHS].index(mon) + 1, int(d))
    mon, d, y = value.replace(",", "").split()
    return dt.date(int(y), _MONTHS.index(mon) + 1, int(d))


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
            if re.search(r"aa|ee|ii|oo|uu|yy|q|w|(.)\1\1", w) or any(b in w for b in _BAD):
                continue
            self.used.add(w)
            return w

    def person(self) -> str:
        return f"{self.rng.choice(GIVEN)} {self.word().capitalize()}"

    def number(self, form: str) -> str:
        rng = self.rng
        if form in ("steps", "tokens"):
            return f"{rng.randrange(10_000, 100_000):,}{UNITS[form]}"
        if form in ("samples", "msgs"):
            return f"{rng.randrange(1_000, 10_000):,}{UNITS[form]}"
        if form == "tib":
            return f"{rng.randrange(1_000, 10_000) / 100:.2f}{UNITS[form]}"
        if form == "score":
            return f"0.{rng.randrange(10_000, 100_000)}{UNITS[form]}"
        if form == "chf":
            return f"CHF {rng.randrange(1_000, 10_000):,}.{rng.randrange(100):02d}"
        assert form == "lr"
        return f"{rng.randrange(1_000, 10_000) / 1000:.3f}e-0{rng.randrange(3, 7)}"

    def value(self, form: str) -> str:
        rng, w = self.rng, self.word
        if form in (*UNITS, "chf", "lr"):
            return self.number(form)
        if form == "date":
            day = dt.date(rng.choice(YEARS), 1, 1) + dt.timedelta(days=rng.randrange(300))
            return date_text(day, rng.choice(DATE_STYLES))
        if form == "version":
            return f"{rng.randrange(1, 10)}.{rng.randrange(50)}.{rng.randrange(30)}+{w()}"
        if form == "person":
            return self.person()
        makers: dict[str, Callable[[], str]] = {
            "word2": lambda: f"{w()}-{w()}",
            "snake2": lambda: f"{w()}_{w()}",
            "run": lambda: f"{w()}-{w()}-{rng.randrange(100, 1000)}",
            "exp": lambda: f"{w()}/{w()}-{rng.randrange(10, 100)}",
            "bqtable": lambda: f"{w()}-{rng.randrange(100, 1000)}.{w()}.{w()}_{w()}",
            "column": lambda: f"{w()}_{w()}_{rng.choice(_COLUMN_ENDS)}",
            "snapshot": lambda: f"{w()}_{w()}:snap{rng.randrange(1000, 10_000)}",
            "cust": lambda: f"cust:{w()}{rng.randrange(10, 100)}",
            "case": lambda: f"case-{w()}-{rng.randrange(1000, 10_000)}",
            "model": lambda: f"{w()}-{w()}-{rng.randrange(2, 100)}b",
            "gspath": lambda: f"gs://{w()}-{w()}/{w()}/{w()}",
            "ckpt": lambda: f"/ckpt/{w()}/{w()}/step_{rng.randrange(10_000, 100_000)}.pt",
            "notebook": lambda: f"notebooks/{rng.randrange(10, 100)}_{w()}_{w()}.ipynb",
            "parquet": lambda: f"data/{w()}/{w()}_{w()}.parquet",
            "url": lambda: (
                f"https://{w()}.{w()}.net:{rng.randrange(2000, 60_000)}"
                f"/v{rng.randrange(2, 10)}/{w()}"
            ),
        }
        return makers[form]()

    def later(self, form: str, first: str, order: str, restyle: bool) -> str:
        """A second value of ``form`` other than ``first``, larger when ``order`` is ``up`` and
        smaller when it is ``down``; a date may be written another way when ``restyle``."""
        rng = self.rng
        if form == "date":
            day = parse_date(first)
            step = rng.randrange(9, 160)
            day = day + dt.timedelta(days=step if order != "down" else -step)
            style = date_style(first)
            if restyle and rng.random() < 0.4:
                style = rng.choice([s for s in DATE_STYLES if s != style])
            return date_text(day, style)
        for _ in range(200):
            value = self.value(form)
            if value == first:
                continue
            if form == "version" and order:
                a, b = version_key(first), version_key(value)
                if (b > a) != (order == "up") or a == b:
                    continue
            elif order and (form in UNITS or form in ("chf", "lr")):
                a2, b2 = magnitude(form, first), magnitude(form, value)
                if (b2 > a2) != (order == "up") or a2 == b2:
                    continue
            return value
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
    return key


def key_spellings(key: str) -> tuple[str, ...]:
    return tuple(spell(key, h) for h in ("snake", "dotted", "kebab", "upper", "camel", "words"))


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


def _clock(rng: random.Random) -> str:
    return f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}"


def _alnum(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("abcdefghjkmnpstxyz23456789") for _ in range(n))


def _mlflow(r: random.Random, f: Fact) -> str:
    rid = _alnum(r, 12)
    return (f"$ mlflow runs describe --run-id {rid}\nrun_id: {rid}\nstatus: FINISHED\n"
            f"params:\n  {f.key}: {f.value}\n  optimizer: adamw")  # fmt: skip


def _wandb(r: random.Random, f: Fact) -> str:
    return (f"wandb: Run summary:\nwandb:        epoch {r.randrange(3, 40)}\n"
            f"wandb: {f.key} {f.value}\nwandb:   train_loss 0.{r.randrange(100, 999)}\n"
            "wandb: Synced 5 W&B file(s), 2 media file(s)")  # fmt: skip


def _dbt(r: random.Random, f: Fact) -> str:
    t = _clock(r)
    return (f"{t}  Running with dbt=1.7.4\n{t}  Found {r.randrange(20, 90)} models, "
            f"{r.randrange(90, 300)} data tests\n{t}  [model note] {f.sentence}\n"
            f"{t}  Done. PASS={r.randrange(20, 90)} WARN=0 ERROR=0 SKIP=0")  # fmt: skip


def _bq(r: random.Random, f: Fact) -> str:
    return ("$ bq show --format=pretty analytics:reporting.daily_rollup\n"
            "+-----------------+--------------------------------------------+\n"
            "|  Last modified  |                   Labels                   |\n"
            "+-----------------+--------------------------------------------+\n"
            f"| {r.randrange(10, 28)} Feb 10:12:44 | {f.key}:{f.value} |\n"
            "+-----------------+--------------------------------------------+")  # fmt: skip


def _snowsql(r: random.Random, f: Fact) -> str:
    k = spell(f.key, "upper")
    return (f"> SELECT {k}, SET_BY FROM OPS.SETTINGS_CURRENT;\n| {k} | SET_BY |\n"
            f"| {f.value} | ETL_BOT |\n1 Row(s) produced. "
            f"Time Elapsed: 0.{r.randrange(100, 999)}s")  # fmt: skip


def _pandas(r: random.Random, f: Fact) -> str:
    i = r.randrange(3, 60)
    return (f">>> params[params.name == '{f.key}']\n      name        value\n"
            f"{i}    {f.key}    {f.value}")  # fmt: skip


def _hydra(r: random.Random, f: Fact) -> str:
    return ("$ python run.py --cfg job --resolve\ntask.seed_policy: fixed\n"
            f"task.{spell(f.key, 'dotted')}: {f.value}\ntask.device: cuda")  # fmt: skip


def _slurm(r: random.Random, f: Fact) -> str:
    job = r.randrange(100_000, 999_999)
    return (f"$ scontrol show job {job}\nJobId={job} JobName=nightly_eval\n"
            f"   JobState=PENDING Reason=Priority\n   Comment=\"{f.sentence}\"\n"
            "   Partition=gpu NumNodes=1")  # fmt: skip


def _case_thread(r: random.Random, f: Fact) -> str:
    who = r.choice(_FILLER_PEOPLE)
    return (f"Case thread, internal note by {who} (agents only):\n{f.sentence}\n"
            "-- end of note --")  # fmt: skip


def _object_meta(r: random.Random, f: Fact) -> str:
    return ("$ gsutil stat gs://shared-artifacts/manifest.json\n"
            "    Content-Type:           application/json\n    Metadata:\n"
            f"        {spell(f.key, 'kebab')}: {f.value}\n"
            f"    Generation:             {r.randrange(10**15, 10**16)}")  # fmt: skip


def _spark(r: random.Random, f: Fact) -> str:
    return (f"$ spark-submit --master yarn --conf spark.app.{spell(f.key, 'camel')}={f.value} "
            f"aggregate.py\nINFO SparkContext: Submitted application: nightly-aggregate\n"
            "INFO Client: Application report for "
            f"application_{r.randrange(10**9, 10**10)}")  # fmt: skip


def _rscript(r: random.Random, f: Fact) -> str:
    return f"> message(notes[[{r.randrange(2, 9)}]])\n{f.sentence}\n>"


def _papermill(r: random.Random, f: Fact) -> str:
    n = r.randrange(3, 30)
    return (f"Executing notebook with kernel: python3\nExecuting Cell {n}{'-' * 30}\n"
            f"{f.sentence}\nEnding Cell {n}{'-' * 30}")  # fmt: skip


def _nb_markdown(r: random.Random, f: Fact) -> str:
    return f"(from the markdown cell at the top of the notebook)\n### Ground rules\n{f.sentence}"


def _macro(r: random.Random, f: Fact) -> str:
    return (f"Our internal macro for this account says:\n> {f.sentence}\n"
            "> Tag the case tier2 when you use it.")  # fmt: skip


def _lab_entry(r: random.Random, f: Fact) -> str:
    return f"Lab book, entry {r.randrange(100, 400)} ({r.choice(_WEEKDAYS)}): {f.sentence}"


def _intake(r: random.Random, f: Fact) -> str:
    return (f"Data request form\nRequested by: {r.choice(_FILLER_PEOPLE)}\n"
            f"{spell(f.key, 'words')}: {f.value}\nNeeded for: the quarterly review")  # fmt: skip


def _customer_words(r: random.Random, f: Fact) -> str:
    return f'Pasting what the customer wrote, as is:\n"{f.sentence}"'


def _referee(r: random.Random, f: Fact) -> str:
    return (
        f"From the reviews, reviewer {r.randrange(1, 4)}, point {r.randrange(2, 9)}: {f.sentence}"
    )


def _sticky(r: random.Random, f: Fact) -> str:
    return f"(on a sticky note by my screen) {f.sentence}"


def _margin(r: random.Random, f: Fact) -> str:
    return f'A comment in the margin of the analysis plan says: "{f.sentence}"'


def _shift(r: random.Random, f: Fact) -> str:
    return f"night shift notes\n- queue depth normal\n- {f.key}: {f.value}\n- no pages overnight"


def _dictionary(r: random.Random, f: Fact) -> str:
    return (
        f"| field | value | notes |\n| --- | --- | --- |\n| {f.key} | {f.value} | per the steward |"
    )


def _scope(r: random.Random, f: Fact) -> str:
    return f"Scope, so we agree before you start: {f.sentence} Anything beyond that can wait."


def _ablation(r: random.Random, f: Fact) -> str:
    return (f"Plan for the ablation:\n1. Freeze the encoder and keep the data order fixed.\n"
            f"2. {f.sentence}\n3. Compare against the baseline curves.")  # fmt: skip


def _query_draft(r: random.Random, f: Fact) -> str:
    return (f"Here is the query I'm about to run:\n```sql\n-- {f.key}: {f.value}\n"
            "SELECT count(*) FROM events_enriched WHERE ds >= current_date - 7\n```")  # fmt: skip


def _customer_draft(r: random.Random, f: Fact) -> str:
    return (f"Draft reply for the customer, for you to check:\n\nHello,\n\n{f.sentence}\n\n"
            "Kind regards,\nSupport team")  # fmt: skip


def _methods(r: random.Random, f: Fact) -> str:
    return (f'Suggested text for the methods section: "{f.sentence} All other settings '
            'follow the baseline configuration."')  # fmt: skip


def _overrides(r: random.Random, f: Fact) -> str:
    return f"I'd launch it with these overrides:\n  +{f.key}={f.value}\n  +trainer.devices=4"


def _carry(r: random.Random, f: Fact) -> str:
    return f"Carrying into the next step:\n- {spell(f.key, 'words')}: {f.value}\n- Blockers: none"


def _call_args(r: random.Random, f: Fact) -> str:
    return f'Next call:\nexport_report(\n    {f.key}="{f.value}",\n    dry_run=False,\n)'


def _triage(r: random.Random, f: Fact) -> str:
    return f"Triage: not a regression on our side. {f.sentence}"


def _sizing(r: random.Random, f: Fact) -> str:
    return f"Rough sizing before I start. {f.sentence} The rest fits around that."


def _threads(r: random.Random, f: Fact) -> str:
    return f"Of the open threads, this one is settled: {f.sentence}"


def _premise(r: random.Random, f: Fact) -> str:
    return f"Working premise while I dig in: {f.sentence}"


SURFACES: dict[str, Surface] = {
    s.name: s
    for s in (
        Surface("mlflow-params", "tool", "fields", _mlflow),
        Surface("wandb-summary", "tool", "fields", _wandb),
        Surface("dbt-output", "tool", "says", _dbt),
        Surface("bq-show", "tool", "fields", _bq),
        Surface("snowsql-grid", "tool", "fields", _snowsql),
        Surface("pandas-frame", "tool", "fields", _pandas),
        Surface("hydra-cfg", "tool", "fields", _hydra),
        Surface("slurm-job", "tool", "says", _slurm),
        Surface("case-thread", "tool", "says", _case_thread),
        Surface("object-metadata", "tool", "fields", _object_meta),
        Surface("spark-submit", "tool", "fields", _spark),
        Surface("rscript-out", "tool", "says", _rscript),
        Surface("papermill-cell", "tool", "says", _papermill),
        Surface("nb-markdown", "user", "says", _nb_markdown),
        Surface("support-macro", "user", "says", _macro),
        Surface("lab-entry", "user", "says", _lab_entry),
        Surface("request-intake", "user", "fields", _intake),
        Surface("customer-words", "user", "says", _customer_words),
        Surface("referee-report", "user", "says", _referee),
        Surface("sticky", "user", "says", _sticky),
        Surface("margin-note", "user", "says", _margin),
        Surface("shift-notes", "user", "fields", _shift),
        Surface("data-dictionary", "user", "fields", _dictionary),
        Surface("scope-note", "user", "says", _scope),
        Surface("ablation-plan", "assistant", "says", _ablation),
        Surface("query-draft", "assistant", "fields", _query_draft),
        Surface("customer-draft", "assistant", "says", _customer_draft),
        Surface("methods-para", "assistant", "says", _methods),
        Surface("launch-overrides", "assistant", "fields", _overrides),
        Surface("carry-forward", "assistant", "fields", _carry),
        Surface("call-args", "assistant", "fields", _call_args),
        Surface("triage-note", "assistant", "says", _triage),
        Surface("sizing-note", "assistant", "says", _sizing),
        Surface("open-threads", "assistant", "says", _threads),
        Surface("working-premise", "assistant", "says", _premise),
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


def _w_buried(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"Could you rerun the cohort notebook top to bottom once you're through? And "
            f"{t.subjects[0]} is {new}, {r.choice(_FILLER_PEOPLE)} sent it over. No rush on "
            "the rerun.")  # fmt: skip


def _w_decided(r: random.Random, t: Template, old: str, new: str) -> str:
    return f"{r.choice(_FILLER_PEOPLE)} made the call on {t.subjects[0]}: {new}. Go with that."


def _w_two_projects(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"I had two projects' notes open and read you {old} from the other one. For this "
            f"project {t.subjects[0]} is {new}.")  # fmt: skip


def _w_customer(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"The customer wrote back about {t.subjects[0]}: {old} is what their sandbox "
            f"account has; for this ticket they mean {new}.")  # fmt: skip


def _w_heard(r: random.Random, t: Template, old: str, new: str) -> str:
    return f"Heard back from {r.choice(_FILLER_PEOPLE)}. {_cap(t.subjects[0])}: {new}."


def _w_looked_up(r: random.Random, t: Template, old: str, new: str) -> str:
    return f"Looked it up in the registry myself: {t.subjects[0]} is listed as {new}."


def _w_catalog(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"$ catalog search '{old}'\n0 results\n$ catalog search '{new}'\n"
            f"1 result: {t.keys[0]} ({t.subjects[0]})")  # fmt: skip


def _w_receipt(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"Form receipt #{r.randrange(1000, 9999)}\nfield: {t.keys[0]}\n"
            f"submitted value: {new}\nsubmitted by: {r.choice(_FILLER_PEOPLE)}")  # fmt: skip


def _w_resumed(r: random.Random, t: Template, old: str, new: str) -> str:
    h, m, s = r.randrange(24), r.randrange(60), r.randrange(50)
    return (f"[{h:02d}:{m:02d}:{s:02d}] job {r.randrange(10_000, 99_999)} picked up again by "
            f"worker gpu-{r.randrange(2, 40)}\n[{h:02d}:{m:02d}:{s + r.randrange(1, 10):02d}] "
            f"effective {t.keys[0]}={new}")  # fmt: skip


def _w_digest(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"Daily digest ({r.choice(_WEEKDAYS)})\n- 3 scheduled jobs succeeded\n"
            f"- {_cap(t.subjects[0])}: {new}\n- no open alerts")  # fmt: skip


def _w_lint(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"$ nbtidy --apply\n  {t.keys[0]}: {r.randrange(2, 6)} cells held {old}; "
            f"written as {new} to match the registry")  # fmt: skip


def _w_activity(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"Case activity | {r.choice(_FILLER_PEOPLE)} | field '{t.keys[0]}' = {new}\n"
            "Status: pending customer")  # fmt: skip


def _w_card(r: random.Random, t: Template, old: str, new: str) -> str:
    return f"The dataset card itself gives {t.subjects[0]} as {new}, so that is what I'll carry."


def _w_source(r: random.Random, t: Template, old: str, new: str) -> str:
    return f"Went back to the source tables for {t.subjects[0]}; they give {new}."


def _w_amend(r: random.Random, t: Template, old: str, new: str) -> str:
    return f"Amending step {r.randrange(2, 6)} of my plan: {t.subjects[0]} is {new}."


def _w_row_above(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"Checking against the notebook: the {old} in my summary belongs to the row above. "
            f"{_cap(t.subjects[0])} is {new}.")  # fmt: skip


def _w_footnote(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"¹ {_cap(t.subjects[0])}: {new}, per {r.choice(_FILLER_PEOPLE)}'s reply; the table "
            "above predates it.")  # fmt: skip


def _w_two_values(r: random.Random, t: Template, old: str, new: str) -> str:
    return (f"This thread has two values for {t.subjects[0]}, {old} and {new}; "
            f"{r.choice(_FILLER_PEOPLE)}'s message came second, so I'm taking {new}.")  # fmt: skip


CORRECTIONS: dict[str, Way] = {
    w.name: w
    for w in (
        Way("buried-ask", "user", False, _w_buried),
        Way("someone-decided", "user", False, _w_decided),
        Way("two-projects", "user", True, _w_two_projects),
        Way("customer-clarified", "user", True, _w_customer),
        Way("heard-back", "user", False, _w_heard),
        Way("looked-it-up", "user", False, _w_looked_up),
        Way("catalog-search", "tool", True, _w_catalog),
        Way("form-receipt", "tool", False, _w_receipt),
        Way("job-picked-up", "tool", False, _w_resumed),
        Way("digest-bot", "tool", False, _w_digest),
        Way("notebook-tidy", "tool", True, _w_lint),
        Way("case-activity", "tool", False, _w_activity),
        Way("card-says", "assistant", False, _w_card),
        Way("source-tables", "assistant", False, _w_source),
        Way("plan-amended", "assistant", False, _w_amend),
        Way("row-above", "assistant", True, _w_row_above),
        Way("footnote", "assistant", False, _w_footnote),
        Way("two-in-thread", "assistant", True, _w_two_values),
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
    random.Random(f"heldout-p:ring:{name}:{seed}").shuffle(out)
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
    rng = random.Random(f"heldout-p:values:{seed}:{count}:{variant}:{attempt}")
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
        old = draw.value(t.form)
        first = fact(t, 0, old, rng.uniform(0.03, 0.58))
        new = draw.later(t.form, old, t.order, restyle=True)
        text = CORRECTIONS[way].render(rng, t, old, new)
        at = min(first["at"] + rng.uniform(0.22, 0.38), 0.97)
        later.append({"kind": t.kind, "at": round(at, 4), "text": text, "keep": [new],
                      "style": way, "template": t.name, "subject": t.subjects[0],
                      "supersedes": first})  # fmt: skip
    for t in pairs:
        one = draw.value(t.form)
        two = draw.later(t.form, one, t.order, restyle=False)
        a = fact(t, 0, one, rng.uniform(0.03, 0.7))
        b = fact(t, 1, two, a["at"] + rng.uniform(0.12, 0.25))
        a["coexists"], b["coexists"] = b, a
    everything = sorted([*facts, *later], key=lambda c: c["at"])
    for i, c in enumerate(everything):
        c["id"] = f"p{variant:03d}-{i:02d}"
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
    the value it corrects), no keep string inside another, two sides of a pair at least a tenth
    of the session apart."""
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
        if "coexists" in c and not 0 < c["at"] < 1:
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
            return {"generator": "heldout-p", "seed": seed, "variant": variant,
                    "canaries": canaries}  # fmt: skip
    raise RuntimeError(f"no sound draw for seed {seed}, session {variant}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Held-out canary set P (written blind).")
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
