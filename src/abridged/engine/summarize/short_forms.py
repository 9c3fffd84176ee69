"""Short forms of words that are no prefix of them (``db``, *database*): one name, two spellings.

A setting is often keyed by its short form and talked about in full (``db_primary_host``, *the
primary database host*; ``cfg_path``, *the config path*). The ledger already takes a prefix for
the word it shortens (``min``, *minimum*; ``repo``, *repository*); these are the shortenings
that are not a prefix, so that a later fact about the same setting, worded the other way, is
known as the same subject.

Only shortenings that mean one thing in code and configuration are here: ``srv`` (server or
service), ``ns`` (namespace or nanoseconds), ``ws`` and ``hr`` are left out, and so are short
forms that are as often a folder's name or a file's suffix in a path (``src``, ``tmp``, ``usr``,
``pkg``, ``img``, ``ts``): a path's words would name a setting it is not about.

>>> SHORT_FORMS["db"]
('database',)
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["SHORT_FORMS"]

#: Each short form and the words it stands for, lowercase.
SHORT_FORMS: Mapping[str, tuple[str, ...]] = {
    "db": ("database",),
    "cfg": ("config", "configuration"),
    "pw": ("password",),
    "pwd": ("password",),
    "passwd": ("password",),
    "msg": ("message",),
    "svc": ("service",),
    "ctx": ("context",),
    "dst": ("destination",),
    "qty": ("quantity",),
    "pct": ("percent", "percentage"),
    "pg": ("postgres", "postgresql"),
    "mgr": ("manager",),
    "acct": ("account",),
    "cnt": ("count",),
    "ms": ("millisecond",),
    "btn": ("button",),
    "txn": ("transaction",),
    "stg": ("staging",),
    "cb": ("callback",),
    "fn": ("function",),
    "idx": ("index",),
    "lvl": ("level",),
    "proj": ("project",),
    "tz": ("timezone",),
    "gw": ("gateway",),
    "dflt": ("default",),
    "rcpt": ("recipient",),
}
