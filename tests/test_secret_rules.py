"""The one secret rule set: every planted kind masked in every context, nothing real touched.

Redaction (:func:`core.redact.redact`) and the capsule lint
(:func:`core.capsules.secrets.secret_problems`) judge by the same rules
(:mod:`core.secret_rules`), so each planted secret must be both masked and flagged;
and the real Claude Code and Codex transcripts under ``tests/fixtures/realdata``
hold no secret, so redaction must leave every string of them as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from secrets_corpus import KINDS, Plant, planted, realdata_strings, survivors

from core.capsules.secrets import redact_capsule, secret_problems
from core.redact import REDACTED, find_secrets, redact
from core.secret_rules import KINDS as RULE_KINDS

REALDATA = Path(__file__).resolve().parent / "fixtures" / "realdata"
CASES = [(plant, context, text) for plant, context, text in planted()]


def test_the_corpus_covers_at_least_sixty_kinds() -> None:
    assert len(KINDS) >= 60, len(KINDS)
    assert len(CASES) >= 600


@pytest.mark.parametrize(
    ("plant", "context", "text"),
    CASES,
    ids=[f"{plant.kind}-{context}" for plant, context, _ in CASES],
)
def test_every_planted_secret_is_masked_and_flagged(plant: Plant, context: str, text: str) -> None:
    masked = redact(text)
    assert survivors(plant, masked) == [], masked
    assert REDACTED in masked
    assert find_secrets(text), "found by redact's rules"
    assert secret_problems(text), "flagged by the capsule lint"
    assert survivors(plant, redact_capsule(text)) == []
    assert redact(masked) == masked  # idempotent
    assert secret_problems(masked) == []


# The issue's planted secrets that redaction let through (and the lint, for five).
ISSUE_27 = {
    "pgp_private_key_block": (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF8x2ZkBCADZ0qH5mJ3vYx\n"
        "=Ab12\n-----END PGP PRIVATE KEY BLOCK-----",
        "lQOYBF8x2ZkBCADZ0qH5mJ3vYx",
    ),
    "bare_aws_secret": (
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    "bare_jwt": (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    "jwt_in_cookie": (
        "Cookie: jwt=eyJhbGciOiJIUzI1NiJ9.eyJ1c2VyIjoiYWRtaW4ifQ.c2lnbmF0dXJlMTIzNDU2Nzg5",
        "c2lnbmF0dXJlMTIzNDU2Nzg5",
    ),
    "stripe_live": ("charge with sk_live_51H8aBcDeFgHiJkLmNoPqRsTu", "51H8aBcDeFgHiJkLmNoPqRsTu"),
    "slack_webhook": (
        "curl -X POST https://hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX",
        "aBcDeFgHiJkLmNoPqRsTuVwX",
    ),
    "telegram_in_url": (
        "https://api.telegram.org/bot1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw4/getMe",
        "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw4",
    ),
    "npm_token": (
        "//registry.npmjs.org/ npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "a1B2c3D4e5F6g7",
    ),
    "huggingface_token": (
        "model pulled with hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
        "AbCdEfGhIjKlMn",
    ),
    "sendgrid_key": (
        "SG.aBcDeFgHiJkLmNoPqRsTuV.wXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ012",
        "wXyZ0123456789aBcDeFg",
    ),
    "azure_connection_string": (
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=Zm9vYmFyYmF6cXV4"
        "MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6QUJDREVGR0hJSktMTU5PUFFS==;"
        "EndpointSuffix=core.windows.net",
        "Zm9vYmFyYmF6cXV4MTIz",
    ),
    "bare_hmac_hex": (
        "7f3a9c2e4b8d1f6a0e5c3b9d2a7f4e1c8b6d0a3f5e2c9b7d4a1f8e6c3b0d5a2f",
        "7f3a9c2e4b8d1f6a0e5c3b9d",
    ),
    "password_in_prose": ("ok so the password is hunter2 for the staging box", "hunter2"),
}

# More shapes of the same secrets, as people and tools write them.
SHAPES_SEEN = {
    "password_is_colon": ("My password is: Sup3rS3cret!", "Sup3rS3cret"),
    "password_for_something": (
        "The password for the admin panel is tiger-lily-42",
        "tiger-lily-42",
    ),
    "password_quoted": ('the password was "letmein123"', "letmein123"),
    "service_bus_key": (
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;"
        "SharedAccessKey=Xy7kP9mQ2rT5vW8zA1bC4dE6fG0hJ3kL5nM8pR1sT4u=",
        "Xy7kP9mQ2rT5",
    ),
    "azure_in_json": (
        '{"AZURE_STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=https;AccountName=x;'
        "AccountKey=q1W2e3R4t5Y6u7I8o9P0aSdFgHjKlZxCvBnM1234567890abcdefghijklmnopqrst==;"
        'EndpointSuffix=core.windows.net"}',
        "q1W2e3R4t5Y6",
    ),
    "upper_hex_key": (
        "signing with 3B9F0C2D8E7A6F5B4C3D2E1F0A9B8C7D6E5F4A3B2C1D0E9F8A7B6C5D4E3F2A1B",
        "3B9F0C2D8E7A",
    ),
    "npmrc_auth_token": (
        "//registry.npmjs.org/:_authToken=npm_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2",
        "Ab1Cd2Ef3Gh4",
    ),
    "cookie_header_in_curl": (
        "curl -H 'Cookie: session_id=9f8e7d6c5b4a39281706f5e4d3c2b1a0' https://x.test",
        "9f8e7d6c5b4a",
    ),
}


@pytest.mark.parametrize("name", sorted(ISSUE_27) + sorted(SHAPES_SEEN))
def test_the_secrets_issue_27_planted_are_masked_and_flagged(name: str) -> None:
    text, secret = ISSUE_27.get(name) or SHAPES_SEEN[name]
    assert secret not in redact(text)
    assert secret_problems(text), name
    assert secret not in redact_capsule(text)


def test_every_rule_kind_has_a_description_and_a_planted_example() -> None:
    found: set[str] = set()
    for _plant, _context, text in CASES:
        found.update(f.kind for f in find_secrets(text))
    assert found <= set(RULE_KINDS)
    unexercised = set(RULE_KINDS) - found
    assert not unexercised, f"kinds no plant exercises: {sorted(unexercised)}"


def realdata_texts() -> list[tuple[str, str]]:
    return realdata_strings()


def test_real_transcripts_have_no_false_positives() -> None:
    texts = realdata_texts()
    assert len(texts) > 50_000
    changed = [(name, text[:200]) for name, text in texts if redact(text) != text]
    assert changed == []
    flagged = [(name, text[:200]) for name, text in texts if secret_problems(text)]
    assert flagged == []
