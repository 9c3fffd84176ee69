"""A catalogue of secret shapes by prefix or structure: detect-secrets' plugins plus abridged's own.

The regexes marked *detect-secrets* are adapted from the plugins of Yelp's detect-secrets 1.5.0
(https://github.com/Yelp/detect-secrets, ``detect_secrets/plugins/*.py``), by Yelp, Inc.,
licensed under the Apache License 2.0 (the full text ships beside this module, in
``LICENSE-detect-secrets.txt``). Changes: word boundaries added so a match never starts or
ends inside a longer word, and lengths widened where the providers' current keys are longer.
The others are abridged's own, from the providers' documented key formats.

Each entry is ``(kind, pattern, flags)``; ``redact`` compiles them and replaces the whole match
with ``[REDACTED:kind]`` (an entry with a group named ``prefix`` keeps that group). Shapes that
need a key's name before them (passwords, Azure keys, bare hex) live in ``redact`` itself.
"""

from __future__ import annotations

import re

_END = r"(?![\w-])"


def _starts(prefix: str) -> str:
    """``prefix`` at the start of a word: the literal first, so the regex engine can skip to
    it (``\\bprefix`` scans every position, some 70 times slower), the boundary checked after."""
    literal = re.escape(prefix)
    return literal + r"(?<!\w" + literal + ")"


CATALOGUE: tuple[tuple[str, str, int], ...] = (
    # -- detect-secrets ---------------------------------------------------------------------
    # discord.py (the first part is 24 to 26 characters today, the last up to 38)
    (
        "discord-token",
        r"(?<![\w.-])[MNO][A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,38}" + _END,
        0,
    ),
    # telegram_token.py: the bot id, a colon, 35 characters ("bot<token>" in API URLs)
    ("telegram-token", r"(?<!\d)\d{8,10}:[0-9A-Za-z_-]{35}" + _END, 0),
    # twilio.py: API key sids (SK...); account sids (AC...) are ids, not secrets
    ("twilio-key", _starts("SK") + r"[0-9a-fA-F]{32}\b", 0),
    # mailchimp.py
    ("mailchimp-key", r"\b[0-9a-f]{32}-us[0-9]{1,2}\b", 0),
    # square_oauth.py, plus access tokens (sq0atp-)
    ("square-token", _starts("sq0") + r"(?:csp|atp)-[0-9A-Za-z_-]{22,43}" + _END, 0),
    # gitlab_token.py
    (
        "gitlab-token",
        _starts("gl") + r"(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-[A-Za-z0-9_-]{20,}",
        0,
    ),
    ("gitlab-token", _starts("GR1348941") + r"[A-Za-z0-9_-]{20,50}" + _END, 0),
    # pypi_token.py (pypi.org and test.pypi.org)
    (
        "pypi-token",
        _starts("pypi-AgE") + r"(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}",
        0,
    ),
    # azure_storage_key.py (the name is kept)
    (
        "azure-storage-key",
        r"(?P<prefix>" + _starts("AccountKey=") + r")[A-Za-z0-9+/]{86,88}={0,2}",
        0,
    ),
    # artifactory.py (API keys are 73 characters; shorter "AKC..." words are left alone)
    ("artifactory-token", r"AKC(?<![\w-]AKC)[a-zA-Z0-9]{60,}" + _END, 0),
    # softlayer.py
    ("softlayer-key", r"(?P<prefix>\bapi\.softlayer\.com/soap/v3(?:\.1)?/)[a-z0-9]{64}\b", re.I),
    # aws.py: a 40-character secret quoted near an AWS key's name
    (
        "aws-secret-key",
        r"(?P<prefix>aws.{0,20}?(?:key|pwd|pw|password|pass|token).{0,20}?['\"])"
        r"[0-9a-zA-Z/+]{40}(?=['\"])",
        re.I,
    ),
    # -- abridged's own ---------------------------------------------------------------------
    ("replicate-token", _starts("r8_") + r"[A-Za-z0-9]{37}" + _END, 0),
    ("databricks-token", _starts("dapi") + r"[0-9a-f]{32}(?:-\d)?\b", 0),
    ("digitalocean-token", _starts("do") + r"[opr]_v1_[0-9a-f]{64}\b", 0),
    ("shopify-token", _starts("shp") + r"(?:at|ca|pa|ss)_[0-9a-fA-F]{32}\b", 0),
    ("perplexity-key", _starts("pplx-") + r"[A-Za-z0-9]{48}\b", 0),
    ("slack-token", _starts("xapp-") + r"\d-[A-Z0-9]+-\d+-[A-Za-z0-9]{20,}", 0),
    ("linear-key", _starts("lin_api_") + r"[A-Za-z0-9]{40}\b", 0),
    ("notion-token", _starts("ntn_") + r"[A-Za-z0-9]{40,}\b", 0),
    ("postman-key", _starts("PMAK-") + r"[0-9a-f]{24}-[0-9a-f]{34}\b", 0),
    ("doppler-token", _starts("dp.") + r"(?:st|ct|pt|sa|scim|audit)\.[A-Za-z0-9_.-]{40,}", 0),
)

__all__ = ["CATALOGUE"]
