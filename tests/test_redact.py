"""The redaction module: every known key shape masked, prose left alone, linear time."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.redact import REDACTED, find_secrets, redact, redact_data

# Shapes of real credentials (made up, never valid), each with what must disappear.
SECRETS = {
    "anthropic": ("ANTHROPIC_API_KEY=sk-ant-api03-Zx9aBcDeFgHiJkLmNoPqRsTuVw", "sk-ant-api03"),
    "openai": ("key is sk-abcdefghijklmnop1234567890 here", "sk-abcdefghijklmnop1234567890"),
    "openai_project": ("sk-proj-AbCdEfGhIjKlMnOpQrStUv12", "AbCdEfGhIjKlMnOpQrStUv12"),
    "github_pat": ("token github_pat_11AAAAAAA0123456789_abcdefghijkl", "github_pat_11A"),
    "github_oauth": ("gho_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c69"),
    "github_app": ("ghs_16C7e42F292c6912E7710c838347Ae178B4a", "ghs_16C7e42F292c69"),
    "github_classic": ("ghp_16C7e42F292c6912E7710c838347Ae178B4a", "ghp_16C7e42F292c69"),
    "aws_key_id": ("aws_access_key_id=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    "aws_secret": (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI",
    ),
    "bearer": ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc123", "eyJhbGciOiJIUzI1NiJ9"),
    "basic": ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA"),
    "token_scheme": ("Authorization: token 0123456789abcdef", "0123456789abcdef"),
    "password_env": ("DB_PASSWORD=hunter2", "hunter2"),
    "secret_env": ("export CLIENT_SECRET='s3cr3t value'", "s3cr3t value"),
    "token_env": ("SLACK_TOKEN=abc.def.ghi", "abc.def.ghi"),
    "json_key": ('{"api_key": "zzzz-yyyy-xxxx"}', "zzzz-yyyy-xxxx"),
    "cli_flag": ("--token abc123def456", "abc123def456"),
    "url_userinfo": ("connect to http://user:pa55word@host/v1 failed", "pa55word"),
    "private_key": (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        "MIIEpAIBAAKCAQEA",
    ),
}


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_known_shape_is_masked(name: str) -> None:
    text, secret = SECRETS[name]
    masked = redact(text)
    assert secret not in masked
    assert REDACTED in masked
    assert find_secrets(text), name


def test_names_schemes_and_users_stay_visible() -> None:
    assert redact("DB_PASSWORD=hunter2") == "DB_PASSWORD=[REDACTED]"
    assert redact("Authorization: Bearer abcdefgh12345678") == "Authorization: Bearer [REDACTED]"
    assert redact("http://me:pw@host/v1") == "http://me:[REDACTED]@host/v1"


PROSE = [
    "the token counting is slow",
    "a password reset flow",
    "basic authentication and bearer tokens",
    "monkey=banana",
    "primary key: id",
    "token = get_token()",
    'password = os.environ["DB_PASSWORD"]',
    "API_KEY=${API_KEY}",
    "http://host:8080/path",
    "see https://example.com/a:b@c",  # no userinfo: '/' comes before '@'
    "sk-short",
]


@pytest.mark.parametrize("text", PROSE)
def test_prose_and_code_are_left_alone(text: str) -> None:
    assert redact(text) == text
    assert find_secrets(text) == []


def test_findings_name_their_line() -> None:
    text = "ok\nDB_PASSWORD=hunter2\nfine\nghp_16C7e42F292c6912E7710c838347Ae178B4a\n"
    findings = find_secrets(text)
    assert [(f.line, f.kind) for f in findings] == [(2, "secret_assignment"), (4, "github_token")]
    start, end = findings[0].span
    assert text[start:end] == "hunter2"


@given(st.text(), st.sampled_from(sorted(SECRETS)), st.text())
def test_secrets_never_survive_inside_any_text(before: str, name: str, after: str) -> None:
    text, secret = SECRETS[name]
    masked = redact(f"{before}\n{text}\n{after}")
    assert secret not in masked.replace(before, "").replace(after, "")


@given(st.text())
def test_redact_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@pytest.mark.parametrize(
    "text",
    [
        "a" * 500_000,
        "a." * 250_000,
        "x_" * 250_000,
        "key=" * 125_000,
        "http://" + "u" * 500_000,
        "-----BEGIN PRIVATE KEY-----" * 20_000,
        '"api_key": "' * 50_000,
    ],
    ids=["letters", "dotted", "underscored", "assignments", "userinfo", "key_blocks", "quotes"],
)
def test_large_hostile_inputs_are_linear(text: str) -> None:
    # Half a megabyte: minutes for a quadratic pattern, well under a second for a linear one.
    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 5.0


def test_redact_data_masks_strings_and_keeps_the_shape() -> None:
    payload = {"error": {"message": "DB_PASSWORD=hunter2"}, "n": 3, "runs": [{"x": "ok"}]}
    assert redact_data(payload) == {
        "error": {"message": "DB_PASSWORD=[REDACTED]"},
        "n": 3,
        "runs": [{"x": "ok"}],
    }
