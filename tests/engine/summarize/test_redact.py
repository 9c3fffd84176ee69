"""Tests of secret redaction: each shape, what must not be touched, idempotence."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abridged.engine.summarize.redact import PLACEHOLDER, find_secrets, placeholder, redact

# Built at run time so that no secret-shaped literal sits in the repository.
OPENAI = "sk-" + "proj-" + "Xy7" * 12
OPENAI_LEGACY = "sk-" + "T3BlbkFJ" * 5
ANTHROPIC = "sk-" + "ant-api03-" + "Ab9_" * 20
GITHUB = "gh" + "p_" + "a1B2c3D4e5" * 4
GITHUB_PAT = "github" + "_pat_" + "11ABCDEFG0" * 4
AWS = "AK" + "IA" + "IOSFODNN7EXAMPLE"
SLACK = "xo" + "xb-" + "123456789012-abcdefABCDEF"
SLACK_HOOK = "https://hooks.slack.com/services/" + "T0000/B0000/" + "X" * 24
GOOGLE = "AI" + "za" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
GOOGLE_OAUTH = "ya" + "29." + "a0AfH6SMBx" * 3
STRIPE = "sk" + "_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
GROQ = "gs" + "k_" + "Wq8ZpL2mXv7Rt4Ny" * 3
HUGGING_FACE = "hf" + "_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"
XAI = "xa" + "i-" + "Kp3Lm9Qr2St7Vw4Xy8Za" * 4
GITLAB = "gl" + "pat-" + "x7Yz_Q2wErTy9uIoP3aS"
SENDGRID = "S" + "G." + "Ab3dEfGh1jKlMn0pQrStUv" + "." + "Wx9yZ_a1b2C3d4E5f6G7h8I9j0K1l2M3n4"
NPM = "np" + "m_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AZURE_HEX = "3f2a" + "9c1d7e5b4a60" * 2 + "8b2c"
PEM_BODY = "MIIEowIBAAKCAQEA7bq98" + "abcdEFGH1234" * 5
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"

SHAPES = [
    (f"key: {OPENAI}", OPENAI, "openai-key"),
    (f"old key {OPENAI_LEGACY} here", OPENAI_LEGACY, "openai-key"),
    (f"ANTHROPIC={ANTHROPIC}", ANTHROPIC, "anthropic-key"),
    (f"git clone https://x:{GITHUB}@github.com/o/r", GITHUB, "github-token"),
    (f"token {GITHUB_PAT}", GITHUB_PAT, "github-token"),
    (f"aws id {AWS}.", AWS, "aws-access-key"),
    (f"slack {SLACK}", SLACK, "slack-token"),
    (f"post to {SLACK_HOOK}", SLACK_HOOK, "slack-webhook"),
    (f"maps key {GOOGLE}", GOOGLE, "google-api-key"),
    (f"oauth {GOOGLE_OAUTH}", GOOGLE_OAUTH, "google-oauth-token"),
    (f"stripe {STRIPE}", STRIPE, "stripe-key"),
    (f"cookie={JWT};", JWT, "jwt"),
    (
        "curl -H 'Authorization: Bearer abc123def456ghi789jkl'",
        "abc123def456ghi789jkl",
        "bearer-token",
    ),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "basic-auth"),
    ("DATABASE_URL=postgres://app:hunter2x@db.internal:5432/app", "hunter2x", "password"),
    ("redis://:s3cr3tpw@cache:6379/0", "s3cr3tpw", "password"),
    ("password=hunter2", "hunter2", "secret"),
    ("db_password: 'correct horse battery'", "correct horse battery", "secret"),
    ('{"api_key": "abc-123-def-456"}', "abc-123-def-456", "secret"),
    (
        "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI",
        "secret",
    ),
    ("client_secret = 'Zx81-kk2'", "Zx81-kk2", "secret"),
    ("token: 9f8e7d6c5b4a", "9f8e7d6c5b4a", "secret"),
    (PEM, PEM_BODY, "private-key"),
    (f"export GROQ_API_KEY={GROQ}", GROQ, "groq-key"),
    (f"huggingface-cli login --token {HUGGING_FACE}", HUGGING_FACE, "huggingface-token"),
    (f"xai key {XAI}", XAI, "xai-key"),
    (f"git clone https://oauth2:{GITLAB}@gitlab.com/g/p.git", GITLAB, "gitlab-token"),
    (f"sendgrid {SENDGRID}", SENDGRID, "sendgrid-key"),
    (f"//registry.npmjs.org/:_authToken={NPM}", NPM, "npm-token"),
    (f"AZURE_OPENAI_API_KEY={AZURE_HEX}", AZURE_HEX, "azure-key"),
    (f"Ocp-Apim-Subscription-Key: {AZURE_HEX}", AZURE_HEX, "azure-key"),
    (f'{{"api-key": "{AZURE_HEX}"}}', AZURE_HEX, "azure-key"),
    (f'"key1": "{AZURE_HEX}",', AZURE_HEX, "azure-key"),
]


@pytest.mark.parametrize(
    ("text", "secret", "kind"), SHAPES, ids=[s[2] + str(i) for i, s in enumerate(SHAPES)]
)
def test_each_secret_shape_is_redacted_with_a_hint(text: str, secret: str, kind: str) -> None:
    out = redact(text)
    assert secret not in out
    assert placeholder(kind) in out
    assert kind in find_secrets(text)


def test_context_around_a_secret_stays() -> None:
    assert redact("postgres://app:hunter2x@db:5432/app") == (
        "postgres://app:[REDACTED:password]@db:5432/app"
    )
    assert redact("password=hunter2 and more") == "password=[REDACTED:secret] and more"
    assert redact('"api_key": "abc-123-def"') == '"api_key": "[REDACTED:secret]"'
    assert redact("Authorization: Bearer abc123def456ghi789") == (
        "Authorization: Bearer [REDACTED:bearer-token]"
    )


def test_a_secret_value_before_a_stray_separator_is_redacted() -> None:
    # Regression: a value followed by " =" was taken for the key of another assignment and kept.
    aws = "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    assert redact(aws + " =") == "export AWS_SECRET_ACCESS_KEY=[REDACTED:secret] ="
    assert redact(aws + "\n:") == "export AWS_SECRET_ACCESS_KEY=[REDACTED:secret]\n:"
    assert redact("token=abc123 = plain") == "token=[REDACTED:secret] = plain"
    # Base64 padding ends a value; it is not a separator.
    assert redact("api_key=dXNlcjpwYXNzd29yZA==") == "api_key=[REDACTED:secret]"
    for text in (aws + " =", "api_key=dXNlcjpwYXNzd29yZA=="):
        assert redact(redact(text)) == redact(text)


def test_a_secret_named_key_as_a_value_is_skipped_for_the_real_value() -> None:
    assert redact("credentials = db_password: 'x1234'") == (
        "credentials = db_password: '[REDACTED:secret]'"
    )
    assert redact("credentials = db_password = x1234") == (
        "credentials = db_password = [REDACTED:secret]"
    )


def test_an_azure_key_keeps_its_name() -> None:
    assert redact(f"AZURE_OPENAI_API_KEY={AZURE_HEX}") == (
        "AZURE_OPENAI_API_KEY=[REDACTED:azure-key]"
    )
    assert redact(f"api-key: {AZURE_HEX}") == "api-key: [REDACTED:azure-key]"


def test_a_private_key_cut_off_before_its_end_is_still_redacted() -> None:
    text = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\n{PEM_BODY}\nThen I ran the tests."
    out = redact(text)
    assert PEM_BODY not in out
    assert out == "[REDACTED:private-key]\nThen I ran the tests."


NOT_SECRETS = [
    "commit 0123456789abcdef0123456789abcdef01234567",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "request 123e4567-e89b-12d3-a456-426614174000 failed",
    "/home/user/.ssh/id_rsa and ~/.aws/credentials",
    "mail maria.kowalski@example.org or @mkowalski",
    "see https://example.com/a/b?x=1 and ssh://git@github.com/org/repo.git",
    "max_tokens=4096, max_output_tokens: 1024",
    "the token: about four characters",
    "password = os.environ['DB_PASSWORD']",
    "password=${DB_PASSWORD}",
    "token = self.token",
    "PWD=/home/user",
    "Basic configuration of the scheduler",
    "Bearer tokens are sent in headers",
    "risk-assessment-for-the-new-feature-rollout",
    "password: ''",
    "api_key = None",
    "eyJ is how a base64 JSON object starts",
    # 32 hex digits without a key's name before them: digests, trace ids, cache keys.
    "md5 d41d8cd98f00b204e9800998ecf8427e  setup.py",
    "trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span 00f067aa0ba902b7",
    "cache_key = 'd41d8cd98f00b204e9800998ecf8427e'",
    "from huggingface_hub import hf_hub_download",
    # a long lowercase identifier after hf_ is code: tokens mix upper and lower case
    "cache = hf_cachedtokenizerforsentencepiecemodels",
    # an npm token is npm_ and exactly 36 characters: a longer identifier is not one
    "npm_packagejsonversionoverridesfordependencieslist",
    "npm_config_cache=/tmp/npm-cache",
    "xai-sdk and gsk_ are prefixes",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text
    assert find_secrets(text) == []


@given(st.text(max_size=300))
def test_redaction_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@given(
    st.lists(
        st.sampled_from([s[0] for s in SHAPES] + NOT_SECRETS + ["plain words", "\n", "=", ":"]),
        max_size=8,
    ),
    st.sampled_from([" ", "\n", "; ", ", "]),
)
def test_redaction_of_mixed_text_is_idempotent_and_leaves_no_secret(
    pieces: list[str], sep: str
) -> None:
    text = sep.join(pieces)
    once = redact(text)
    assert redact(once) == once
    for _, secret, _ in SHAPES:
        if secret in text and len(secret) > 12:
            assert secret not in once
    assert all(m.group(0).startswith("[REDACTED:") for m in PLACEHOLDER.finditer(once))


def test_a_longer_hex_value_after_an_azure_key_name_is_never_cut_in_part() -> None:
    # 40 hex digits (a SHA-1) are not an Azure key: redacting the first 32 would leave the rest
    text = "Ocp-Apim-Subscription-Key: da39a3ee5e6b4b0d3255bfef95601890afd80709"
    assert redact(text) == text


def test_a_placeholder_inside_a_value_keeps_its_kind() -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlMTIzNDU2"
    once = redact(f'auth_token="session {jwt}"')
    assert once == 'auth_token="session [REDACTED:jwt]"'
    assert redact(once) == once
