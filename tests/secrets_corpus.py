"""A planted corpus of secrets: one realistic, made-up value per kind, in every context.

Each :class:`Plant` is a kind of credential a secret scanner knows (the kinds of
gitleaks' and detect-secrets' public rule sets, and the shapes an adversary planted
in a reliability review) with a value of the right shape, generated from a fixed seed: never a
real key. :func:`planted` puts each value in the contexts secrets leak through:
bare on a line, in a sentence, in a URL, in JSON (and JSON inside a JSON string),
in an HTTP header or cookie, in prose ("the password is ..."), in a ``.env`` line.
What must disappear is ``Plant.secret`` (the value, or its secret part: a URL's
password, a webhook's path).
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_RNG = random.Random(27)
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def rand(n: int, alphabet: str = ALNUM) -> str:
    """``n`` characters of ``alphabet`` with a digit, a capital and a small letter
    where the alphabet has them (as generated keys almost always do)."""
    while True:
        value = "".join(_RNG.choice(alphabet) for _ in range(n))
        wanted = [
            s
            for s in (string.digits, string.ascii_uppercase, string.ascii_lowercase)
            if set(s) & set(alphabet)
        ]
        if n < 12 or all(set(value) & set(s) for s in wanted):
            return value


@dataclass(frozen=True)
class Plant:
    kind: str
    value: str
    secret: str = ""  # what must not survive; the value when empty
    env: str = "APP_SETTING"  # its name in a .env line (a name that is no secret word)
    contexts: tuple[str, ...] = ()  # only these contexts; all when empty
    notes: dict[str, str] = field(default_factory=dict)

    @property
    def hidden(self) -> str:
        return self.secret or self.value


# Contexts every plant goes through (a value that is itself a URL skips "url").
_NOT_URL = (
    "bare",
    "sentence",
    "json",
    "json_named",
    "json_in_json",
    "header",
    "cookie",
    "prose",
    "env",
)
# A token with no shape of its own is not judged in a URL's path (paths hold ids and
# content hashes); in a URL's query it is a named parameter.
_BARE = (
    "bare",
    "sentence",
    "url",
    "json",
    "json_named",
    "json_in_json",
    "header",
    "cookie",
    "prose",
    "env",
)
_BLOCK = ("bare", "sentence", "json", "json_named", "json_in_json", "env_quoted")


def plants(seed: int = 27) -> tuple[Plant, ...]:
    """One plant of every kind, its values drawn from ``seed`` (the tests use 27)."""
    _RNG.seed(seed)
    _JWT = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
        "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUgRG9lIiwiaWF0IjoxNzE2MjM5MDIyfQ."
        + rand(43, URLSAFE)
    )
    _PGP = (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
        + "\n".join(rand(64, B64) for _ in range(6))
        + "\n="
        + rand(4, B64)
        + "\n-----END PGP PRIVATE KEY BLOCK-----"
    )
    _RSA = (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA"
        + rand(48, B64)
        + "\n"
        + "\n".join(rand(64, B64) for _ in range(5))
        + "\n-----END RSA PRIVATE KEY-----"
    )
    _OPENSSH = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"
        + rand(40, B64)
        + "\n"
        + "\n".join(rand(70, B64) for _ in range(3))
        + "\n-----END OPENSSH PRIVATE KEY-----"
    )
    _EC = (
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI"
        + rand(55, B64)
        + "\n-----END EC PRIVATE KEY-----"
    )
    _PKCS8 = (
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0w"
        + rand(40, B64)
        + "\n-----END ENCRYPTED PRIVATE KEY-----"
    )
    _SSH2 = (
        "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n"
        'Comment: "rsa-key-20240101"\n'
        + rand(70, B64)
        + "\n---- END SSH2 ENCRYPTED PRIVATE KEY ----"
    )
    _PUTTY = (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
        "Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAI" + rand(40, B64) + "\n"
        "Private-Lines: 1\n" + rand(44, B64) + "\nPrivate-MAC: " + rand(64, HEX)
    )
    _HEX64 = rand(64, HEX)
    _SAS_SIG = rand(43, ALNUM)
    _DB_PASSWORD = rand(16)
    _AWS_SECRET = rand(40, B64)
    UPPER_DIGITS = string.ascii_uppercase + string.digits
    _SLACK_PATH = f"T{rand(8, UPPER_DIGITS)}/B{rand(10, UPPER_DIGITS)}/{rand(24)}"
    _TELEGRAM = f"{_RNG.randrange(10**9, 10**10)}:AA{rand(33, URLSAFE)}"
    _DISCORD_HOOK = f"{_RNG.randrange(10**17, 10**18)}/{rand(68, URLSAFE)}"
    _AZURE_KEY = rand(86, B64) + "=="

    def uuid() -> str:
        return "-".join(rand(n, HEX) for n in (8, 4, 4, 4, 12))

    _TEAMS_PATH = f"{uuid()}@{uuid()}/IncomingWebhook/{rand(32, HEX)}/{uuid()}"

    return (
        # --- private keys ---
        Plant("private_key_pgp", _PGP, contexts=_BLOCK),
        Plant("private_key_rsa", _RSA, contexts=_BLOCK),
        Plant("private_key_openssh", _OPENSSH, contexts=_BLOCK),
        Plant("private_key_ec", _EC, contexts=_BLOCK),
        Plant("private_key_pkcs8_encrypted", _PKCS8, contexts=_BLOCK),
        Plant("private_key_ssh2", _SSH2, contexts=_BLOCK),
        Plant(
            "private_key_putty",
            _PUTTY,
            secret=_PUTTY.split("Private-Lines: 1\n")[1],
            contexts=_BLOCK,
        ),
        Plant("age_secret_key", "AGE-SECRET-KEY-1" + rand(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")),
        # --- AI providers ---
        Plant("anthropic_key", "sk-ant-api03-" + rand(93, URLSAFE) + "AA"),
        Plant("anthropic_admin_key", "sk-ant-admin01-" + rand(93, URLSAFE) + "AA"),
        Plant("openai_key", "sk-proj-" + rand(74, URLSAFE) + "T3BlbkFJ" + rand(74, URLSAFE)),
        Plant("openai_legacy_key", "sk-" + rand(20) + "T3BlbkFJ" + rand(20)),
        Plant("openrouter_key", "sk-or-v1-" + rand(64, HEX)),
        Plant("huggingface_token", "hf_" + rand(34, string.ascii_letters)),
        Plant("huggingface_org_token", "api_org_" + rand(34, string.ascii_letters)),
        Plant("perplexity_key", "pplx-" + rand(48)),
        Plant("groq_key", "gsk_" + rand(52)),
        Plant("xai_key", "xai-" + rand(80)),
        Plant("replicate_token", "r8_" + rand(37)),
        # --- code hosts and registries ---
        Plant("github_pat", "ghp_" + rand(36)),
        Plant("github_oauth", "gho_" + rand(36)),
        Plant("github_app", "ghs_" + rand(36)),
        Plant("github_fine_grained", "github_pat_" + rand(22) + "_" + rand(59)),
        Plant("gitlab_pat", "glpat-" + rand(20, URLSAFE)),
        Plant("gitlab_runner", "glrt-" + rand(20, URLSAFE)),
        Plant("npm_token", "npm_" + rand(36)),
        Plant("pypi_token", "pypi-AgEIcHlwaS5vcmc" + rand(70, URLSAFE)),
        Plant("rubygems_token", "rubygems_" + rand(48, HEX)),
        Plant("artifactory_key", "AKCp" + rand(69)),
        # --- clouds ---
        Plant("aws_access_key_id", "AKIA" + rand(16, string.ascii_uppercase + "234567")),
        Plant("aws_secret_access_key", _AWS_SECRET, contexts=_BARE),
        Plant(
            "aws_secret_access_key_example",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            contexts=_BARE,
        ),
        Plant("google_api_key", "AIza" + rand(35, URLSAFE)),
        Plant("google_oauth_secret", "GOCSPX-" + rand(28, URLSAFE)),
        Plant("google_oauth_token", "ya29." + rand(120, URLSAFE)),
        Plant(
            "azure_storage_connection_string",
            "DefaultEndpointsProtocol=https;AccountName=acmeprodstore;"
            f"AccountKey={_AZURE_KEY};EndpointSuffix=core.windows.net",
            secret=_AZURE_KEY,
        ),
        Plant(
            "azure_sas_url",
            "https://acmeprodstore.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o"
            f"&sp=r&se=2026-12-01T00:00:00Z&sig={_SAS_SIG}%3D",
            secret=_SAS_SIG,
            contexts=_NOT_URL,
        ),
        Plant("azure_client_secret", rand(3, ALNUM) + "8Q~" + rand(34, URLSAFE + "~.")),
        Plant("digitalocean_token", "dop_v1_" + rand(64, HEX)),
        Plant("alibaba_key_id", "LTAI" + rand(20)),
        Plant("heroku_key", "HRKU-AA" + rand(58, URLSAFE)),
        Plant("vault_token", "hvs." + rand(90, URLSAFE)),
        Plant("terraform_token", rand(14) + ".atlasv1." + rand(67, URLSAFE)),
        Plant("databricks_token", "dapi" + rand(32, HEX)),
        Plant("doppler_token", "dp.pt." + rand(43)),
        Plant(
            "dynatrace_token",
            "dt0c01." + rand(24, string.ascii_uppercase + string.digits) + "." + rand(64),
        ),
        Plant("pulumi_token", "pul-" + rand(40, HEX)),
        Plant("planetscale_token", "pscale_tkn_" + rand(43, URLSAFE)),
        Plant("grafana_token", "glsa_" + rand(32) + "_" + rand(8, HEX)),
        Plant("sentry_token", "sntryu_" + rand(64, HEX)),
        Plant("newrelic_key", "NRAK-" + rand(27, string.ascii_uppercase + string.digits)),
        Plant("flyio_token", "fo1_" + rand(43, URLSAFE)),
        # --- payments and commerce ---
        Plant("stripe_live_secret", "sk_live_" + rand(99)),
        Plant("stripe_test_secret", "sk_test_" + rand(24)),
        Plant("stripe_restricted", "rk_live_" + rand(99)),
        Plant("stripe_webhook_secret", "whsec_" + rand(32)),
        Plant("square_token", "sq0atp-" + rand(22, URLSAFE)),
        Plant("shopify_token", "shpat_" + rand(32, HEX)),
        Plant("shippo_token", "shippo_live_" + rand(40, HEX)),
        Plant("flutterwave_key", "FLWSECK_TEST-" + rand(32, "abcdefgh0123456789") + "-X"),
        Plant("easypost_token", "EZAK" + rand(54)),
        Plant("duffel_token", "duffel_live_" + rand(43, URLSAFE)),
        # --- messaging and mail ---
        Plant(
            "slack_bot_token",
            f"xoxb-{rand(12, string.digits)}-{rand(13, string.digits)}-{rand(24)}",
        ),
        Plant(
            "slack_user_token",
            f"xoxp-{rand(12, string.digits)}-{rand(12, string.digits)}-"
            f"{rand(13, string.digits)}-{rand(32, HEX)}",
        ),
        Plant(
            "slack_app_token",
            f"xapp-1-A{rand(10, UPPER_DIGITS)}-{rand(13, string.digits)}-{rand(64, HEX)}",
        ),
        Plant(
            "slack_webhook",
            f"https://hooks.slack.com/services/{_SLACK_PATH}",
            secret=_SLACK_PATH,
            env="SLACK_WEBHOOK_URL",
            contexts=_NOT_URL,
        ),
        Plant(
            "discord_webhook",
            f"https://discord.com/api/webhooks/{_DISCORD_HOOK}",
            secret=_DISCORD_HOOK,
            env="DISCORD_WEBHOOK_URL",
            contexts=_NOT_URL,
        ),
        Plant(
            "teams_webhook",
            f"https://acme.webhook.office.com/webhookb2/{_TEAMS_PATH}",
            secret=_TEAMS_PATH,
            env="TEAMS_WEBHOOK_URL",
            contexts=_NOT_URL,
        ),
        Plant("telegram_bot_token", _TELEGRAM),
        Plant(
            "telegram_bot_url",
            f"https://api.telegram.org/bot{_TELEGRAM}/sendMessage?chat_id=-1001234567890",
            secret=_TELEGRAM,
            env="NOTIFY_URL",
            contexts=_NOT_URL,
        ),
        Plant(
            "discord_bot_token",
            "M" + rand(25, URLSAFE) + "." + rand(6, URLSAFE) + "." + rand(27, URLSAFE),
        ),
        Plant("sendgrid_key", "SG." + rand(22, URLSAFE) + "." + rand(43, URLSAFE)),
        Plant("sendinblue_key", "xkeysib-" + rand(64, HEX) + "-" + rand(16)),
        Plant("mailgun_key", "key-" + rand(32, HEX)),
        Plant("mailchimp_key", rand(32, HEX) + "-us14"),
        Plant("twilio_key", "SK" + rand(32, HEX)),
        # --- tools and services ---
        Plant("linear_key", "lin_api_" + rand(40)),
        Plant("notion_token", "ntn_" + rand(11, string.digits) + rand(35)),
        Plant("postman_key", "PMAK-" + rand(24, HEX) + "-" + rand(34, HEX)),
        Plant("atlassian_token", "ATATT3xFfGF0" + rand(180, URLSAFE) + "=" + rand(8, HEX).upper()),
        Plant(
            "onepassword_secret_key",
            "A3-"
            + rand(6, string.ascii_uppercase + string.digits)
            + "-"
            + "-".join(rand(n, string.ascii_uppercase + string.digits) for n in (11, 5, 5, 5)),
        ),
        Plant("aws_bedrock_key", "ABSK" + rand(132, B64)),
        Plant("clojars_token", "CLOJARS_" + rand(60, LOWER_ALNUM)),
        Plant("cloudflare_origin_ca_key", "v1.0-" + rand(24, HEX) + "-" + rand(146, HEX)),
        Plant("facebook_page_token", "EAAC" + rand(160)),
        Plant("frameio_token", "fio-u-" + rand(64, URLSAFE)),
        Plant("harness_token", "pat." + rand(22, URLSAFE) + "." + rand(24) + "." + rand(20)),
        Plant("infracost_token", "ico-" + rand(32)),
        Plant("maxmind_key", rand(6) + "_" + rand(29) + "_mmk"),
        Plant("openshift_token", "sha256~" + rand(43, URLSAFE)),
        Plant("prefect_token", "pnu_" + rand(36)),
        Plant("readme_key", "rdme_" + rand(70, LOWER_ALNUM)),
        Plant("scalingo_token", "tk-us-" + rand(48, URLSAFE)),
        Plant("settlemint_token", "sm_pat_" + rand(16)),
        # --- tokens by structure ---
        Plant("jwt", _JWT),
        Plant("hmac_hex_64", _HEX64, contexts=_BARE),
        Plant("random_base62_32", rand(32), contexts=_BARE),
        Plant("random_urlsafe_43", rand(43, URLSAFE), contexts=_BARE),
        # --- credentials by context ---
        Plant(
            "url_password",
            f"postgres://app:{_DB_PASSWORD}@db.internal:5432/app",
            secret=_DB_PASSWORD,
            env="DATABASE_URL",
            contexts=_NOT_URL,
        ),
        Plant(
            "bearer_opaque",
            f"Bearer {rand(40, URLSAFE)}",
            contexts=("bare", "sentence", "json", "prose"),
        ),
        Plant(
            "basic_auth",
            "Basic dXNlcjpzM2NyM3QtcGFzc3dvcmQ=",
            contexts=("bare", "sentence", "json", "prose"),
        ),
        Plant("password_in_prose", "Tr0ub4dor&3", contexts=("prose", "env_named", "json_named")),
        Plant(
            "passphrase_words",
            "correct-horse-battery-staple",
            contexts=("prose", "env_named", "json_named"),
        ),
        Plant("session_cookie", rand(32, LOWER_ALNUM), contexts=("cookie", "set_cookie")),
        Plant(
            "curl_user_password",
            f"curl -u deploy:{rand(18)} https://ci.example.com/api",
            secret="",
            contexts=("bare", "sentence"),
        ),
    )


PLANTS = plants()


def _json(value: str) -> str:
    return json.dumps({"id": 7, "value": value})


CONTEXTS: dict[str, Callable[[str], str]] = {
    "bare": lambda v: v,
    "sentence": lambda v: f"Deploying now with {v} as configured.",
    "url": lambda v: f"GET https://api.example.com/v1/items?page=2&access_token={v}&sort=asc",
    "url_path": lambda v: f"see https://api.example.com/v1/{v}/status for details",
    "json": _json,
    "json_named": lambda v: json.dumps({"service": "billing", "api_key": v}),
    "json_in_json": lambda v: json.dumps({"type": "tool_result", "content": _json(v)}),
    "header": lambda v: f"X-Request-Id: 42\r\nAuthorization: Bearer {v}\r\nAccept: */*",
    "cookie": lambda v: f"Cookie: theme=dark; session={v}; lang=en",
    "set_cookie": lambda v: f"Set-Cookie: sid={v}; Path=/; HttpOnly; Secure",
    "prose": lambda v: f"I checked the vault: the password is {v} and it works.",
    "env": lambda v: f"APP_SETTING={v}",
    "env_named": lambda v: f"DB_PASSWORD={v}",
    "env_quoted": lambda v: "PRIVATE_KEY=" + json.dumps(v),
}
_DEFAULT = (
    "bare",
    "sentence",
    "url",
    "url_path",
    "json",
    "json_named",
    "json_in_json",
    "header",
    "cookie",
    "prose",
    "env",
)


def planted(corpus: tuple[Plant, ...] = PLANTS) -> Iterator[tuple[Plant, str, str]]:
    """Every ``(plant, context name, text)`` of the corpus."""
    for plant in corpus:
        for name in plant.contexts or _DEFAULT:
            text = CONTEXTS[name](plant.value)
            if name == "env" and plant.env != "APP_SETTING":
                text = f"{plant.env}={plant.value}"
            yield plant, name, text


def survivors(plant: Plant, masked: str) -> list[str]:
    """The parts of ``plant``'s secret still in ``masked``: the whole secret, or any 12
    characters of it in a row (a mask that left most of a key is a miss too)."""
    found = []
    for hidden in _parts(plant):
        if hidden in masked:
            found.append(hidden)
            continue
        width = 12
        for start in range(0, max(1, len(hidden) - width + 1)):
            piece = hidden[start : start + width]
            if len(piece) == width and piece in masked and _random_enough(piece):
                found.append(piece)
                break
    return found


def _parts(plant: Plant) -> list[str]:
    """What of the plant must go: for key blocks, each line of the body."""
    hidden = plant.hidden
    if plant.kind == "curl_user_password":
        hidden = plant.value.split("deploy:")[1].split()[0]
    if "\n" in hidden:
        return [
            line
            for line in hidden.splitlines()
            if len(line) >= 16 and "BEGIN" not in line and "END" not in line
        ]
    return [hidden]


def _random_enough(piece: str) -> bool:
    # A window of a structured part (``.atlasv1.``, ``/IncomingWebhook/``) is no leak.
    return any(c.isdigit() for c in piece) or sum(c.isupper() for c in piece) >= 3


KINDS = sorted({plant.kind for plant in PLANTS})


REALDATA = Path(__file__).resolve().parent / "fixtures" / "realdata"


def json_strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, at any depth."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_strings(item)


def realdata_strings(root: Path = REALDATA) -> list[tuple[str, str]]:
    """``(file, text)`` for every string of every JSON line of every real transcript."""
    texts = []
    for path in sorted(root.rglob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            texts.extend((path.name, text) for text in json_strings(line))
    return texts
