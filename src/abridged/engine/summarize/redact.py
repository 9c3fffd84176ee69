"""Redact secrets (API keys, tokens, passwords in the usual shapes) from text, with a short hint.

Each secret becomes ``[REDACTED:<kind>]``, for example ``[REDACTED:openai-key]``, so a summary
still says that a key was there and of what kind. Recognised shapes:

- provider keys: OpenAI (``sk-...``, ``sk-proj-...``), Anthropic (``sk-ant-...``), GitHub
  (``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``, ``github_pat_``), AWS access key ids
  (``AKIA...``/``ASIA...``), Slack (``xox?-...`` tokens, ``hooks.slack.com`` webhooks), Google
  (``AIza...`` API keys, ``ya29.`` OAuth tokens), Stripe (``sk_live_``/``rk_live_``/``sk_test_``),
  Groq (``gsk_...``), Hugging Face (``hf_...``), xAI (``xai-...``), GitLab (``glpat-...``),
  SendGrid (``SG.<id>.<secret>``), npm (``npm_...``);
- Azure-style keys (32 hex digits) after a key's name (``AZURE_OPENAI_API_KEY=``, ``api-key:``,
  ``Ocp-Apim-Subscription-Key:``, ``key1``); 32 hex digits elsewhere are digests and ids;
- JSON web tokens (``eyJ...``.``eyJ...``.``...``);
- bearer tokens (``Bearer <token with a digit>``) and ``Authorization: Basic ...`` credentials;
- passwords in URLs (``scheme://user:password@host``: the user and host stay);
- assignments of secret-named keys (``password=...``, ``api_key: "..."``, ``"client_secret":
  "..."``, ``AWS_SECRET_ACCESS_KEY=...``): the key stays, the value goes. Unquoted values after a
  colon (prose and YAML) are taken only when they look like secrets (a digit or a symbol, or 16+
  characters), so ``the token: about 4 characters`` is left alone; values that are references
  (``$VAR``, ``${VAR}``, ``os.environ[...]``, calls, ``None``/``null``) are left alone too;
- PEM private keys (``-----BEGIN ... PRIVATE KEY-----`` to the matching END, or to the end of the
  base64 body when the END was cut off);
- the shapes of ``secret_catalogue``: detect-secrets' plugins (Discord, Telegram, Twilio,
  Mailchimp, Square, GitLab, PyPI, Azure storage, Artifactory, SoftLayer, AWS secret keys) and
  more (Replicate, Databricks, DigitalOcean, Shopify, Perplexity, Slack app, Linear, Notion,
  Postman, Doppler).

**Folded forms.** A secret written with fullwidth letters or broken up by zero-width characters
is found the way the tag escaper finds a tag (``folding.fold``: NFKC, invisible characters
dropped); only the secret is replaced, the text around it keeps its original characters.

Not redacted on purpose (each has a test): hex digests and git commit ids, UUIDs, file paths,
e-mail addresses, URLs without a password, ``max_tokens=4096`` and other keys that merely
contain a secret word. ``redact`` is idempotent: a placeholder is never redacted again.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from abridged.engine.summarize.folding import fold, fold_with_origin
from abridged.engine.summarize.secret_catalogue import CATALOGUE

#: The shape of every placeholder.
PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


def placeholder(kind: str) -> str:
    """The text that replaces a secret of ``kind``: ``[REDACTED:kind]``."""
    return f"[REDACTED:{kind}]"


@dataclass(frozen=True, slots=True)
class SecretPattern:
    """One secret shape: a name, a regex, and what replaces a match (default: the placeholder of
    ``kind`` for the whole match; a ``replace`` function may keep parts such as a key name)."""

    kind: str
    regex: re.Pattern[str]
    replace: Callable[[re.Match[str]], str] | None = None


def _keep_prefix(kind: str) -> Callable[[re.Match[str]], str]:
    """Keep group ``prefix``, replace group ``secret``; leave the match alone when it is not a
    secret-looking value."""

    def sub(m: re.Match[str]) -> str:
        return m.group("prefix") + placeholder(kind)

    return sub


#: A value that stands for another (a type, a template, a variable): not a secret. A Windows
#: variable (``%APPDATA%``) is written in capitals; ``%fHLHIgsSJ85g%`` is a password.
_NOT_A_VALUE = re.compile(
    r"""^(?:none|null|nil|true|false|undefined|required|optional|string|str|int|\*+|x+|\.+|
    <[^>]*>|\$\{?[A-Za-z_][\w]*\}?|%(?:\(\w+\))?[sdifr]|(?-i:%[A-Z_][A-Z0-9_]*%)|\{\{.*\}\}|
    \[REDACTED:[a-z0-9-]+\])$""",
    re.IGNORECASE | re.VERBOSE,
)
_CODE_REF = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+$|[(\[]")


def _assignment(m: re.Match[str]) -> str:
    value = m.group("value")
    quoted = bool(m.group("quote"))
    separator = m.group("sep")
    if _NOT_A_VALUE.match(value) or PLACEHOLDER.search(value):
        return m.group(0)
    if not quoted:
        if _CODE_REF.search(value):  # self.password, os.environ["X"], get_token()
            return m.group(0)
        if ":" in separator and not (
            re.search(r"[\d\W_]", value) or len(value) >= 16
        ):  # "the token: about" is prose
            return m.group(0)
        if len(value) < 3:
            return m.group(0)
    return m.group("prefix") + placeholder("secret")


_SECRET_KEY_WORDS = (
    r"password|passwd|passphrase|secret|secret[_-]?key|token|auth[_-]?token|access[_-]?token|"
    r"refresh[_-]?token|api[_-]?key|apikey|access[_-]?key|private[_-]?key(?:[_-]?id)?|"
    r"client[_-]?secret|credentials?|(?:auth|app|signing|encryption|master|session)[_-]?key"
)

#: A secret-named key, optionally closing its quote: ``password``, ``"api_key"``, ``DB_TOKEN``.
_SECRET_KEY = (
    # The lookahead on the words' first letters lets the engine drop a start position fast
    # (twice as fast as trying every word at every character).
    r"(?<![\w-])[\w.-]*?(?=[acemprst])(?:" + _SECRET_KEY_WORDS + r")(?![\w-])['\"]?"
)
#: Words that make a name ending in ``key`` an Azure-style key's name (``AZURE_OPENAI_API_KEY``,
#: ``Ocp-Apim-Subscription-Key``, ``api-key``); ``cache_key`` or ``primary_key`` are not.
_AZURE_KEY_WORDS = r"api|subscription|access|account|azure|openai|cognitive|speech|translator"
#: What joins a key to its value: ``=``, ``:``, ``:=`` or ``=>``, spaces either side.
_ASSIGN = r"\s*(?::|=|:=|=>)\s*"

PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern(
        "private-key",
        re.compile(
            r"-----BEGIN (?P<label>[A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----"
            r"(?:.*?-----END (?P=label)PRIVATE KEY( BLOCK)?-----"
            r"|(?:[ \t]*\r?\n[ \t]*(?:[A-Za-z0-9+/=]{16,}|[\w-]+:[^\n]*))*)",
            re.DOTALL,
        ),
    ),
    SecretPattern(
        "anthropic-key", re.compile(r"\bsk-ant-(?:api|admin|oat|ort)?\d*-?[A-Za-z0-9_-]{20,}")
    ),
    SecretPattern("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    SecretPattern("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    SecretPattern(
        "github-token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    ),
    SecretPattern("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AIDA)[0-9A-Z]{16}\b")),
    SecretPattern("slack-token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}")),
    SecretPattern(
        "slack-webhook",
        re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9_/-]{20,}"),
    ),
    SecretPattern("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    SecretPattern("groq-key", re.compile(r"\bgsk_[A-Za-z0-9]{20,}")),
    # Mixed case required: ``hf_`` followed by a long lowercase identifier is code, not a token.
    SecretPattern(
        "huggingface-token",
        re.compile(r"\bhf_(?=[A-Za-z0-9]*[A-Z])(?=[A-Za-z0-9]*[a-z])[A-Za-z0-9]{30,}"),
    ),
    SecretPattern("xai-key", re.compile(r"\bxai-[A-Za-z0-9]{40,}")),
    SecretPattern("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    SecretPattern("sendgrid-key", re.compile(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}")),
    SecretPattern("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])")),
    SecretPattern("google-oauth-token", re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}")),
    SecretPattern(
        "jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{8,}")
    ),
    *(
        SecretPattern(
            kind,
            re.compile(pattern, flags),
            _keep_prefix(kind) if "(?P<prefix>" in pattern else None,
        )
        for kind, pattern, flags in CATALOGUE
    ),
    SecretPattern(
        "password",
        re.compile(
            r"(?P<prefix>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@'\"<>]*:)"
            r"(?!\[REDACTED:)(?P<secret>[^\s@/'\"<>]+)(?=@[\w.-])"
        ),
        _keep_prefix("password"),
    ),
    SecretPattern(
        "bearer-token",
        re.compile(
            r"(?P<prefix>\b[Bb]earer\s+)(?=[A-Za-z0-9._~+/-]*\d)(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)"
        ),
        _keep_prefix("bearer-token"),
    ),
    SecretPattern(
        "basic-auth",
        re.compile(
            r"(?P<prefix>\bAuthorization['\"]?\s*[:=]\s*['\"]?Basic\s+)"
            r"(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=])",
            re.IGNORECASE,
        ),
        _keep_prefix("basic-auth"),
    ),
    # 32 hex digits are an Azure key only after a key's name: alone they are digests and ids.
    SecretPattern(
        "azure-key",
        re.compile(
            r"(?P<prefix>(?<![\w-])(?:[\w.-]*?(?=[acost])(?:" + _AZURE_KEY_WORDS + r")[\w.-]*?key"
            r"|key[12])"
            r"['\"]?" + _ASSIGN + r"['\"]?)"
            r"(?P<secret>[0-9a-f]{32})(?![\w-])",
            re.IGNORECASE,
        ),
        _keep_prefix("azure-key"),
    ),
    SecretPattern(
        "secret",
        re.compile(
            r"(?P<prefix>" + _SECRET_KEY + r"(?P<sep>" + _ASSIGN + r")(?P<quote>['\"])?)"
            # A "value" that is itself a secret-named key of another assignment
            # ("credentials = db_password: 'x'") is skipped so that the real one is found. Only
            # such a key is skipped: anything else before a stray "=" or ":" is still a value
            # ("SECRET=wJalr/K7 =", base64 padding "token=YWJj==").
            r"(?!" + _SECRET_KEY + _ASSIGN + r")"
            r"(?P<value>(?(quote)[^'\"\n]+|[^\s'\",;&)}\]]++(?<!:)))",
            re.IGNORECASE,
        ),
        _assignment,
    ),
)


def redact(text: str, *, patterns: Sequence[SecretPattern] = PATTERNS) -> str:
    """``text`` with every secret of ``patterns`` replaced by its placeholder (idempotent), also
    when it is written in fullwidth or compatibility forms or broken up by invisible
    characters (found in ``fold(text)``; the characters around it are kept as they were).

    >>> redact("export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx")
    'export OPENAI_API_KEY=[REDACTED:openai-key]'
    >>> redact("postgres://app:hunter2@db:5432/app")
    'postgres://app:[REDACTED:password]@db:5432/app'
    >>> redact("caf\u00e9 key sk-proj-abcdefghij\u200bklmnopqrstuvwx")
    'caf\u00e9 key [REDACTED:openai-key]'
    """
    if patterns is PATTERNS and len(text) <= CACHED_CHARS:
        return _redact_default(text)
    return _redact(text, patterns)


#: Texts up to this long are remembered by ``redact`` and ``references.reference_kinds``: the
#: ledger reads the verbatim tail again at every compaction, and two of three lines it reads
#: it has read before (a replay of the recorded sessions: 74,240 calls, 24,633 texts).
CACHED_CHARS = 4_096


@functools.lru_cache(maxsize=16_384)
def _redact_default(text: str) -> str:
    return _redact(text, PATTERNS)


def _redact(text: str, patterns: Sequence[SecretPattern]) -> str:
    if not text:
        return text
    if not text.isascii():
        # Folded first: a secret broken by a zero-width space must be found whole, not only
        # its head.
        folded = fold(text)
        if folded != text:
            redacted, sources = _redact_tracked(folded, patterns)
            if redacted != folded:
                text = _splice(text, fold_with_origin(text)[1], redacted, sources)
    return _redact_plain(text, patterns)


def _redact_plain(text: str, patterns: Sequence[SecretPattern]) -> str:
    for pattern in patterns:
        if pattern.replace is None:
            text = pattern.regex.sub(placeholder(pattern.kind), text)
        else:
            text = pattern.regex.sub(pattern.replace, text)
    return text


def _redact_tracked(text: str, patterns: Sequence[SecretPattern]) -> tuple[str, list[int]]:
    """``_redact_plain(text)`` and, for each character of the result, the index in ``text`` it
    was copied from (-1 for the characters of a placeholder)."""
    sources = list(range(len(text)))
    for pattern in patterns:
        pieces: list[str] = []
        mapped: list[int] = []
        last = 0
        for m in pattern.regex.finditer(text):
            new = placeholder(pattern.kind) if pattern.replace is None else pattern.replace(m)
            old = m.group(0)
            if new == old:
                continue
            pieces.append(text[last : m.start()])
            mapped.extend(sources[last : m.start()])
            # What a replacement keeps of the match's start (a key's name) is a copy of it.
            kept = 0
            while kept < min(len(new), len(old)) and new[kept] == old[kept]:
                kept += 1
            pieces.append(new)
            mapped.extend(sources[m.start() : m.start() + kept])
            mapped.extend([-1] * (len(new) - kept))
            last = m.end()
        if not pieces:
            continue
        pieces.append(text[last:])
        mapped.extend(sources[last:])
        text, sources = "".join(pieces), mapped
    return text, sources


def _splice(original: str, origin: list[int], redacted: str, sources: list[int]) -> str:
    """``redacted`` (of the folded text) with each run of copied characters given back as the
    original characters it came from, invisible ones between them included."""
    out: list[str] = []
    n = len(origin)
    i = 0
    while i < len(redacted):
        if sources[i] < 0:
            out.append(redacted[i])
            i += 1
            continue
        j = i
        while j + 1 < len(redacted) and sources[j + 1] == sources[j] + 1:
            j += 1
        first, last = sources[i], sources[j]
        # A folded run starting or ending inside one original character's expansion (a
        # ligature) does not own that character: it went with the secret.
        lo = 0 if first == 0 else origin[first] + (origin[first] == origin[first - 1])
        if last == n - 1:
            hi = len(original)
        else:
            hi = origin[last] + 1 - (origin[last] == origin[last + 1])
        out.append(original[lo:hi])
        i = j + 1
    return "".join(out)


def find_secrets(text: str, *, patterns: Sequence[SecretPattern] = PATTERNS) -> list[str]:
    """The kinds of secret ``redact`` would replace in ``text``, in pattern order (for reports)."""
    kinds: list[str] = []
    text = fold(text)
    for pattern in patterns:
        for m in pattern.regex.finditer(text):
            if pattern.replace is None or pattern.replace(m) != m.group(0):
                kinds.append(pattern.kind)
        text = _redact_plain(text, (pattern,))
    return kinds
