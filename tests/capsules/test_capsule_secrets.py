"""The capsule secret lint: every kind found on its line, capsule prose left alone, redaction."""

from __future__ import annotations

import secrets
import string
import time

import pytest

from core.capsules.secrets import redact_capsule, secret_problems
from core.redact import REDACTED

CLEAN = """\
---
branch: feature/login
source_session: 1a2b3c4d
created_at: 2026-11-23T21:35:21Z
primary_objective: Finish the login flow and hand the token refresh to a sub-agent
token_budget: 1200
version: "0.1"
references:
  - path: core/auth/session.py
    blob: 4b825dc642cb6eb9a060e54bf8d69288fbee4904
---
# Mission Snapshot
Finish the password reset flow; the token counting for prompts is done.

# Key Decisions & Rationale
- Bearer tokens are checked in `core/auth/session.py`, not in the proxy.
- The key: value store stays in SQLite (HTTP2ServerConfigV3Builder is gone).

# Active Workstreams
- AbstractSingletonProxyFactoryBean2 refactor, see commit 9fceb02d0ae598e95dc970b74767f19372d61af8.

# Pending Actions
- Set `OPENAI_API_KEY=<your key>` locally; CI reads `API_KEY=${API_KEY}`.
- Run id 0f8fad5b-d9cb-469f-a165-70867728950e failed at 2026-11-23T21:40:02Z.

# Knowledge Base
- `tests/fixtures/realdata/claude_session_2024.jsonl` holds the transcript.
- The secret key lives in the vault (`vault read secret/app`), never here: [REDACTED].
- Connect with http://localhost:8080/v1 and postgres://app@db/app.

# Risks & Watchpoints
- sk-learn is not a dependency; max_tokens = 4096.

# Transcript Highlights
- 2026-11-23T21:02:11Z message 42: "the password is in the vault"

# Exploratory Threads & User Preferences
- Prefers ThisIsAVeryLongCamelCase1dentifier names spelled out.
"""


def test_a_capsule_of_ordinary_prose_has_no_secrets() -> None:
    assert secret_problems(CLEAN) == []
    assert redact_capsule(CLEAN) == CLEAN


# A line for each kind, each made up (never valid), with what must disappear.
FAKE_RANDOM = "Zq8vR2nLx7TwK4pYb9MdHs3F"  # 24 random-looking characters
TRUE_POSITIVES = {
    "secret_anthropic_key": "- key sk-ant-api03-Zx9aBcDeFgHiJkLmNoPqRsTuVw in use",
    "secret_openai_key": "- the proxy sends sk-proj-AbCdEfGhIjKlMnOpQrStUv12",
    "secret_github_token": "- pushed with ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "secret_aws_access_key_id": "- the bucket is read with AKIAIOSFODNN7EXAMPLE",
    "secret_slack_token": "- alerts post with xoxb-1234567890-abcdefghij",
    "secret_google_api_key": "- maps use AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "secret_auth_credential": "- curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc123'",
    "secret_url_password": "- the db is postgres://app:hunter2hunter@db.internal/app",
    "secret_secret_assignment": "- export STRIPE_SECRET_KEY=rk_live_notreallyakey",
    "secret_high_entropy": f"- the webhook signs with {FAKE_RANDOM} (from the dashboard)",
}


@pytest.mark.parametrize("code", sorted(TRUE_POSITIVES))
def test_each_kind_is_found_on_its_line_and_redacted(code: str) -> None:
    line = TRUE_POSITIVES[code]
    text = CLEAN.replace("# Knowledge Base\n", f"# Knowledge Base\n{line}\n")
    at = text.splitlines().index(line) + 1
    problems = secret_problems(text)
    assert [(p.line, p.code) for p in problems] == [(at, code)]
    assert problems[0].severity == "error"
    redacted = redact_capsule(text)
    assert redacted == text.replace(line, redact_capsule(line))
    assert REDACTED in redacted
    assert secret_problems(redacted) == []
    assert redact_capsule(redacted) == redacted  # idempotent


def test_a_message_names_the_kind_never_the_value() -> None:
    [problem] = secret_problems("DB_PASSWORD=correct-horse-battery")
    assert "correct-horse" not in problem.message
    assert "secret-named" in problem.message
    assert problem.located("c.md").startswith("c.md:1: secret_secret_assignment: ")


def test_env_style_names_keep_the_name_and_lose_the_value() -> None:
    text = "DB_PASSWORD=hunter2\nGITHUB_TOKEN: abc.def.ghi\nAPI_KEY=${API_KEY}\n"
    assert [(p.line, p.code) for p in secret_problems(text)] == [
        (1, "secret_secret_assignment"),
        (2, "secret_secret_assignment"),
    ]
    assert redact_capsule(text) == (
        f"DB_PASSWORD={REDACTED}\nGITHUB_TOKEN: {REDACTED}\nAPI_KEY=${{API_KEY}}\n"
    )


def test_a_private_key_block_is_one_problem_on_its_first_line() -> None:
    block = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAA\n"
        "-----END OPENSSH PRIVATE KEY-----"
    )
    text = f"# Knowledge Base\nthe deploy key:\n{block}\nend\n"
    assert [(p.line, p.code) for p in secret_problems(text)] == [(3, "secret_private_key")]
    assert redact_capsule(text) == f"# Knowledge Base\nthe deploy key:\n{REDACTED}\nend\n"


def test_the_user_and_host_of_a_url_stay_visible() -> None:
    assert redact_capsule("http://me:pa55word@host/v1") == f"http://me:{REDACTED}@host/v1"


def test_random_keys_are_found_and_identifiers_digests_and_paths_are_not() -> None:
    alphabet = string.ascii_letters + string.digits
    rng = secrets.SystemRandom()
    keys = ["".join(rng.choice(alphabet) for _ in range(40)) for _ in range(200)]
    keys = [k for k in keys if any(c.isdigit() for c in k)]
    found = sum(bool(secret_problems(f"value {key} here")) for key in keys)
    assert found >= 0.8 * len(keys)  # about 9 in 10 at 40 characters
    not_secrets = [
        "9fceb02d0ae598e95dc970b74767f19372d61af8",  # a commit id
        "0f8fad5b-d9cb-469f-a165-70867728950e",  # a UUID
        "Base64EncodedSHA256DigestOfTheFile",
        "getUserById2FromCacheOrStore",
        "S3BucketNameForLogsV2Production",
        "test_capsule_check_exits_1_on_problems",
        "src/components/UserProfile2Card/index.tsx",
        "2026-11-23T21:35:21Z",
        "ALL_CAPS_CONSTANT_NAME_2",
        # ids of messages, tool calls and requests a transcript highlight cites
        "msg_01XFDUDYJgAACzvnptvVoYEL",
        "toolu_01A09q90qw90lq917835lq9",
        "call_AvUkcEDS8tiUyr1JW8hw2z43",
        "req_011CUjzhV8Rv3bG5nKwQpX2m",
        "https://x.com/Some_One/status/1977645937225822664",
    ]
    for text in not_secrets:
        assert secret_problems(f"see {text} there") == [], text


def test_many_urls_and_tokens_stay_linear() -> None:
    # 20,000 URLs and 20,000 ids: a check of every token against every URL would take
    # minutes; one pass takes well under a second.
    text = "".join(f"- https://h.example/p{n} msg_{n:020d}AbCdEfGhIj\n" for n in range(20_000))
    started = time.perf_counter()
    assert secret_problems(text) == []
    assert time.perf_counter() - started < 5.0
