"""Redaction against a catalogue of secret shapes with random values, folded forms (zero-width
characters, fullwidth letters) and near misses that must stay."""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from abridged.engine.summarize.redact import PLACEHOLDER, redact

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64URL = ALNUM + "_-"


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    """``n`` random characters with at least one digit and one letter when the alphabet has
    both (real keys do; a value of letters only could be a word)."""
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        digits = any(c.isdigit() for c in alphabet)
        letters = any(c.isalpha() for c in alphabet)
        if (not digits or any(c.isdigit() for c in value)) and (
            not letters or any(c.isalpha() for c in value)
        ):
            return value


def _fullwidth(text: str) -> str:
    """ASCII letters and digits as their fullwidth forms (NFKC folds them back)."""
    return "".join(chr(ord(c) + 0xFEE0) if c.isalnum() and c.isascii() else c for c in text)


def _zero_width(rng: random.Random, text: str) -> str:
    """``text`` with a zero-width space somewhere inside."""
    at = rng.randrange(4, len(text) - 1)
    return text[:at] + "\u200b" + text[at:]


# Each shape: a name and a function of a random generator giving (text, secret): the text as
# it could appear in a tool output or a message, and the secret in it that must not survive.
Shape = Callable[[random.Random], tuple[str, str]]


def _in(template: str, secret: str) -> tuple[str, str]:
    return template.format(secret), secret


def _openai_proj(r: random.Random) -> str:
    return "sk-" + "proj-" + _pick(r, B64URL, 40) + "T3Blbk" + "FJ" + _pick(r, B64URL, 40)


def _pem(r: random.Random) -> str:
    body = "\n".join(_pick(r, ALNUM + "+/", 64) for _ in range(4))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"


def _private_key(r: random.Random) -> tuple[str, str]:
    pem = _pem(r)
    return f"cat id_rsa\n{pem}\n", pem.split("\n")[1]


def _openai_broken(r: random.Random) -> tuple[str, str]:
    key = _openai_proj(r)
    return f"key {_zero_width(r, key)} here", key


def _openai_fullwidth(r: random.Random) -> tuple[str, str]:
    key = _fullwidth(_openai_proj(r))
    return f"key {key} here", key


SHAPES: dict[str, Shape] = {
    "openai-proj": lambda r: _in("OPENAI_API_KEY={}", _openai_proj(r)),
    "openai-legacy": lambda r: _in("old key {} here", "sk-" + _pick(r, ALNUM, 48)),
    "openai-svcacct": lambda r: _in("key {}", "sk-" + "svcacct-" + _pick(r, B64URL, 60)),
    "anthropic": lambda r: _in("x-api-key: {}", "sk-" + "ant-api03-" + _pick(r, B64URL, 93)),
    "anthropic-admin": lambda r: _in("{}", "sk-" + "ant-admin01-" + _pick(r, B64URL, 93)),
    "github-ghp": lambda r: _in("token {}", "gh" + "p_" + _pick(r, ALNUM, 36)),
    "github-gho": lambda r: _in("GH_TOKEN={}", "gh" + "o_" + _pick(r, ALNUM, 36)),
    "github-pat": lambda r: _in("pat {}", "github" + "_pat_" + _pick(r, ALNUM + "_", 82)),
    "aws-access-key": lambda r: _in(
        "aws id {}.", "AK" + "IA" + _pick(r, string.ascii_uppercase + "234567", 16)
    ),
    "aws-secret": lambda r: _in("aws_secret_access_key = {}", _pick(r, ALNUM + "+/", 40)),
    "slack-bot": lambda r: _in(
        "slack {}",
        "xo"
        + "xb-"
        + _pick(r, string.digits, 12)
        + "-"
        + _pick(r, string.digits, 13)
        + "-"
        + _pick(r, ALNUM, 24),
    ),
    "slack-app": lambda r: _in(
        "SLACK_APP_TOKEN={}",
        "xa"
        + "pp-1-A"
        + _pick(r, string.digits, 10)
        + "-"
        + _pick(r, string.digits, 13)
        + "-"
        + _pick(r, HEX, 64),
    ),
    "slack-webhook": lambda r: _in(
        "post to {}",
        "https://hooks.slack.com/services/T"
        + _pick(r, string.ascii_uppercase, 8)
        + "/B"
        + _pick(r, string.ascii_uppercase, 8)
        + "/"
        + _pick(r, ALNUM, 24),
    ),
    "google-api-key": lambda r: _in(
        "https://maps.googleapis.com/maps/api/js?key={}&v=3", "AI" + "za" + _pick(r, B64URL, 35)
    ),
    "google-oauth": lambda r: _in("oauth {}", "ya" + "29." + _pick(r, B64URL, 60)),
    "gcp-private-key-id": lambda r: _in('  "private_key_id": "{}",', _pick(r, HEX, 40)),
    "stripe-live": lambda r: _in("stripe {}", "sk" + "_live_" + _pick(r, ALNUM, 24)),
    "stripe-restricted": lambda r: _in("stripe {}", "rk" + "_live_" + _pick(r, ALNUM, 24)),
    "groq": lambda r: _in("GROQ_API_KEY={}", "gs" + "k_" + _pick(r, ALNUM, 52)),
    "huggingface": lambda r: _in(
        "login --token {}",
        "hf" + "_" + "Q" + _pick(r, string.ascii_lowercase, 1) + _pick(r, ALNUM, 32),
    ),
    "xai": lambda r: _in("xai key {}", "xa" + "i-" + _pick(r, ALNUM, 80)),
    "gitlab-pat": lambda r: _in(
        "git clone https://oauth2:{}@gitlab.com/g/p.git", "gl" + "pat-" + _pick(r, B64URL, 20)
    ),
    "gitlab-runner": lambda r: _in("register --token {}", "glrt-" + _pick(r, B64URL, 20)),
    "sendgrid": lambda r: _in(
        "sendgrid {}", "S" + "G." + _pick(r, B64URL, 22) + "." + _pick(r, B64URL, 43)
    ),
    "npm": lambda r: _in("//registry.npmjs.org/:_authToken={}", "np" + "m_" + _pick(r, ALNUM, 36)),
    "pypi": lambda r: _in("password = {}", "py" + "pi-AgEIcHlwaS5vcmc" + _pick(r, B64URL, 80)),
    "jwt": lambda r: _in(
        "cookie={};",
        "eyJ"
        + base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")[3:]
        + ".eyJ"
        + _pick(r, B64URL, 40)
        + "."
        + _pick(r, B64URL, 43),
    ),
    "bearer": lambda r: _in("curl -H 'Authorization: Bearer {}'", _pick(r, ALNUM, 32)),
    "basic-auth": lambda r: _in(
        "Authorization: Basic {}",
        base64.b64encode(f"user:{_pick(r, ALNUM, 12)}".encode()).decode(),
    ),
    "url-password": lambda r: _in(
        "DATABASE_URL=postgres://app:{}@db.internal:5432/app", _pick(r, ALNUM, 14)
    ),
    "password-assignment": lambda r: _in("password={}", _pick(r, ALNUM + "!#%", 14)),
    "private-key": _private_key,
    "azure-key": lambda r: _in("AZURE_OPENAI_API_KEY={}", _pick(r, HEX, 32)),
    "azure-storage": lambda r: _in(
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};EndpointSuffix=core",
        _pick(r, ALNUM + "+/", 86) + "==",
    ),
    "telegram-bot": lambda r: _in(
        "curl https://api.telegram.org/bot{}/getMe",
        _pick(r, string.digits, 10) + ":AA" + _pick(r, B64URL, 33),
    ),
    "discord-bot": lambda r: _in(
        "client.run('{}')",
        "M" + _pick(r, ALNUM, 25) + "." + _pick(r, B64URL, 6) + "." + _pick(r, B64URL, 38),
    ),
    "replicate": lambda r: _in("use {} for the predictions", "r8" + "_" + _pick(r, ALNUM, 37)),
    "twilio-api-key": lambda r: _in("twilio key {}", "S" + "K" + _pick(r, HEX, 32)),
    "mailchimp": lambda r: _in("mc {}", _pick(r, HEX, 32) + "-us" + str(r.randrange(1, 21))),
    "square": lambda r: _in("square {}", "sq0" + "csp-" + _pick(r, B64URL, 43)),
    "databricks": lambda r: _in("host and {}", "da" + "pi" + _pick(r, HEX, 32)),
    "digitalocean": lambda r: _in("DO {}", "do" + "p_v1_" + _pick(r, HEX, 64)),
    "shopify": lambda r: _in("shop {}", "shp" + "at_" + _pick(r, HEX, 32)),
    "perplexity": lambda r: _in("PPLX {}", "pp" + "lx-" + _pick(r, ALNUM, 48)),
    "openrouter": lambda r: _in("{}", "sk-" + "or-v1-" + _pick(r, HEX, 64)),
    "label-32-hex": lambda r: _in("api_key: {}", _pick(r, HEX, 32)),
    "label-40-chars": lambda r: _in("token={}", _pick(r, ALNUM, 40)),
    "label-40-quoted": lambda r: _in('"auth_token": "{}"', _pick(r, ALNUM, 40)),
    "openai-zero-width": _openai_broken,
    "openai-fullwidth": _openai_fullwidth,
}


def _survives(secret: str, out: str) -> bool:
    """Whether any 12-character piece of ``secret`` (or of its folded form) is still in ``out``,
    zero-width characters ignored."""
    plain = out.replace("\u200b", "")
    for form in {secret, secret.replace("\u200b", "")}:
        for start in range(0, max(1, len(form) - 11), 4):
            if form[start : start + 12] in plain:
                return True
    return False


def test_the_catalogue_has_at_least_38_shapes() -> None:
    assert len(SHAPES) >= 38


@pytest.mark.parametrize("name", sorted(SHAPES))
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32))
# found by a CI run: a password written between percent signs read as a Windows variable
@example(seed=990)
def test_each_shape_is_redacted_whatever_its_value(name: str, seed: int) -> None:
    text, secret = SHAPES[name](random.Random(seed))
    out = redact(text)
    assert not _survives(secret, out), (name, out)
    assert PLACEHOLDER.search(out)
    assert redact(out) == out


def test_how_many_shapes_are_missed() -> None:
    """The figure of the issue: shapes whose secret survives for some value of 20 seeds."""
    missed = sorted(
        name
        for name, shape in SHAPES.items()
        for seed in range(20)
        if _survives(shape(random.Random(seed))[1], redact(shape(random.Random(seed))[0]))
    )
    assert sorted(set(missed)) == []


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "git sha in prose": lambda r: f"Reverted {_pick(r, HEX, 40)} because it broke the build.",
    "short sha": lambda r: f"commit {_pick(r, HEX, 7)} (HEAD -> main)",
    "sha256sum line": lambda r: f"{_pick(r, HEX, 64)}  dist/abridged-1.2.0.tar.gz",
    "md5 line": lambda r: f"MD5 ({_pick(r, HEX, 32)}) = setup.py",
    "uuid": lambda r: "request " + "-".join(_pick(r, HEX, n) for n in (8, 4, 4, 4, 12)) + " failed",
    "docker digest": lambda r: f"image@sha256:{_pick(r, HEX, 64)}",
    "pip hash": lambda r: f"requests==2.32.3 --hash=sha256:{_pick(r, HEX, 64)}",
    "trace id": lambda r: f"trace_id={_pick(r, HEX, 32)} span {_pick(r, HEX, 16)}",
    "git log line": lambda r: f"{_pick(r, HEX, 40)} Merge pull request #{r.randrange(10, 9999)}",
    "clock time": lambda r: (
        f"at {r.randrange(0, 24):02d}:{r.randrange(0, 60):02d}:{r.randrange(0, 60):02d} UTC"
    ),
    "number with colon": lambda r: f"line {r.randrange(1000, 99999)}: expected ';'",
    "cache key": lambda r: f"cache_key = '{_pick(r, HEX, 32)}'",
    "word SKU": lambda r: f"SKU{r.randrange(10, 99)} is out of stock",
}


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_near_misses_stay(name: str, seed: int) -> None:
    text = NEAR_MISSES[name](random.Random(seed))
    assert redact(text) == text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200), st.integers(min_value=0, max_value=2**32))
def test_folding_keeps_the_original_text_where_nothing_matched(text: str, seed: int) -> None:
    """Text with fullwidth and zero-width characters and a folded secret inside: the secret
    goes, every character of the text around it stays as it was, and a second pass changes
    nothing."""
    rng = random.Random(seed)
    key = _openai_proj(rng)
    folded_key = _zero_width(rng, _fullwidth(key)) if rng.random() < 0.5 else _fullwidth(key)
    decorated = f"\uff21\u200b{text} \u00e9t\u00e9 "
    out = redact(f"{decorated}{folded_key} \uff11")
    assert not _survives(_fullwidth(key), out)
    assert out.endswith(" \uff11")
    once = redact(decorated)
    assert redact(once) == once
    if not PLACEHOLDER.search(once):
        assert once == decorated


def test_a_folded_secret_is_replaced_and_the_text_around_it_keeps_its_characters() -> None:
    key = _openai_proj(random.Random(7))
    text = f"caf\u00e9 \uff2b\uff25\uff39 {_fullwidth(key)} na\u00efve \u200b"
    out = redact(text)
    assert out == "caf\u00e9 \uff2b\uff25\uff39 [REDACTED:openai-key] na\u00efve \u200b"


def test_format_placeholders_stay_and_a_password_starting_with_percent_goes() -> None:
    for text in ("password=%s", "password=%(pw)s", "password=%DB_PASSWORD%", "token=%d"):
        assert redact(text) == text
    assert redact("password=%PP2TcAMW5Gpce") == "password=[REDACTED:secret]"


@pytest.mark.parametrize(
    "name",
    [
        "private_key_id",
        "AUTH_KEY",
        "appKey",
        "app_secret",
        "signing-key",
        "ENCRYPTION_KEY",
        "master_key",
        "session_key",
        "Password",
        "X-Auth-Token",
        "client_secret",
    ],
)
def test_each_secret_name_takes_its_value(name: str) -> None:
    value = _pick(random.Random(name), ALNUM, 24)
    assert redact(f"{name}={value}") == f"{name}=[REDACTED:secret]"
    assert redact(f'"{name}": "{value}"') == f'"{name}": "[REDACTED:secret]"'
