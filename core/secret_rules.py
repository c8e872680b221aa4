"""The secret rules: every shape and context delegate treats as a credential.

One rule set, used by everything that keeps secrets out of sight: redaction of what
is stored, indexed and shown (:mod:`core.redact`) and the capsule and hand-off lints
(:mod:`core.capsules.secrets`, :mod:`core.documents.handoff_template`). The kinds
follow the public rule sets of well-kept secret scanners (gitleaks' ``gitleaks.toml``,
detect-secrets' plugins); :data:`KINDS` names each kind and says what it looks like.

Four families of rules:

* **Shapes** that are secrets wherever they appear: a provider's prefix and length
  (``sk_live_…``, ``npm_…``, ``hf_…``, ``SG.….…``, ``xoxb-…``), a JWT, a private key
  block (PEM, PGP, SSH2, PuTTY), a webhook URL whose path is the secret.
* **Contexts**: the credential after ``Bearer``/``Basic`` or an ``Authorization:``
  header, a URL's password, the value of an assignment whose *name* looks secret
  (``API_KEY=…``, ``"password": "…"``, ``--token …``, ``AccountKey=…``), a cookie's
  value, a signed URL's signature, ``curl -u user:pass``, "the password is …" in
  prose. The name, the scheme and the user stay visible.
* **Bare tokens** with no name around them: a 40-character AWS secret access key,
  a 64-hex HMAC key, and any random-looking token (the high-entropy rule). Digests
  (commit ids, ``sha256:…``), ids agents mint (``msg_…``, ``toolu_…``), URL paths and
  identifiers made of words are not secrets and are left alone.

Every rule names the literals (or a cheap pattern) a text must hold for it to be
worth running; :data:`PREFILTER` is all of them in one regex, so most text is judged
in one scan. Every pattern is linear in its input (no nested unbounded repetition).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

REDACTED = "[REDACTED]"

Span = tuple[int, int, str]
"""``(start, end, kind)`` of one secret: character offsets, end exclusive."""


@dataclass(frozen=True, slots=True)
class Shape:
    """A secret recognised by its own shape; ``group`` is the part to mask."""

    kind: str
    pattern: re.Pattern[str]
    needs: tuple[str, ...]  # lower-case literals, one of which the text must hold
    group: int = 0
    multiline: bool = False  # may span lines (key blocks): judged on the whole text


# A token starts / ends here (not inside a longer run of token characters).
_L = r"(?<![A-Za-z0-9_-])"
_R = r"(?![A-Za-z0-9_-])"


def _shape(
    kind: str, pattern: str, needs: Iterable[str], *, group: int = 0, flags: int = 0
) -> Shape:
    return Shape(kind, re.compile(pattern, flags), tuple(w.lower() for w in needs), group)


def _prefixed(kind: str, prefixes: Iterable[str], body: str, *, flags: int = 0) -> Shape:
    """A token that is ``prefix`` + ``body`` for one of ``prefixes``, bounded."""
    prefixes = tuple(prefixes)
    alternatives = "|".join(re.escape(p) for p in prefixes)
    return _shape(kind, rf"{_L}(?:{alternatives}){body}{_R}", prefixes, flags=flags)


_KEY_BLOCK = re.compile(
    r"-----BEGIN[ A-Z0-9_-]{0,60}PRIVATE KEY(?: BLOCK)?-----"
    r".*?(?:-----END[ A-Z0-9_-]{0,60}PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)

SHAPES: tuple[Shape, ...] = (
    # --- private keys (multi-line) ---
    Shape("private_key", _KEY_BLOCK, ("-----begin",), multiline=True),
    Shape(
        "private_key",
        re.compile(
            r"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----"
            r".*?(?:---- END SSH2 ENCRYPTED PRIVATE KEY ----|\Z)",
            re.DOTALL,
        ),
        ("---- begin ssh2",),
        multiline=True,
    ),
    Shape(
        "private_key",
        re.compile(r"Private-Lines: *\d+.*?(?:Private-MAC: *[0-9a-fA-F]+|\Z)", re.DOTALL),
        ("private-lines:",),
        multiline=True,
    ),
    _shape("private_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", ["age-secret-key-1"]),
    # --- AI providers ---
    _prefixed("anthropic_key", ["sk-ant-"], r"[A-Za-z0-9_-]{8,}"),
    _shape(
        "openai_key",
        rf"{_L}sk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_-]{{16,}}",
        ["sk-"],
    ),
    _prefixed("huggingface_token", ["hf_"], r"[A-Za-z0-9]{30,40}"),
    _prefixed("huggingface_token", ["api_org_"], r"[A-Za-z0-9]{30,40}"),
    _prefixed("perplexity_key", ["pplx-"], r"[A-Za-z0-9]{40,56}"),
    _prefixed("groq_key", ["gsk_"], r"[A-Za-z0-9]{40,60}"),
    _prefixed("xai_key", ["xai-"], r"[A-Za-z0-9]{60,90}"),
    _prefixed("replicate_token", ["r8_"], r"[A-Za-z0-9]{30,40}"),
    # --- code hosts and registries ---
    _prefixed("github_token", ["ghp_", "gho_", "ghs_", "ghu_", "ghr_"], r"[A-Za-z0-9]{20,}"),
    _prefixed("github_token", ["github_pat_"], r"[A-Za-z0-9_]{20,}"),
    _prefixed(
        "gitlab_token",
        [
            "glpat-",
            "gldt-",
            "glptt-",
            "glrt-",
            "glsoat-",
            "glcbt-",
            "glffct-",
            "glft-",
            "glimt-",
            "glagent-",
            "gloas-",
            "GR1348941",
        ],
        r"[A-Za-z0-9_.-]{20,}",
    ),
    _prefixed("npm_token", ["npm_"], r"[A-Za-z0-9]{36}"),
    _prefixed("pypi_token", ["pypi-AgEIcHlwaS5vcmc"], r"[A-Za-z0-9_-]{40,}"),
    _prefixed("rubygems_token", ["rubygems_"], r"[a-f0-9]{48}"),
    _prefixed("clojars_token", ["CLOJARS_"], r"[a-z0-9]{60}", flags=re.IGNORECASE),
    _prefixed("artifactory_token", ["AKCp"], r"[A-Za-z0-9]{60,80}"),
    _prefixed("artifactory_token", ["cmVmdGtu"], r"[A-Za-z0-9]{50,70}"),
    # --- clouds ---
    _shape(
        "aws_access_key_id",
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])",
        ["akia", "asia", "abia", "acca", "a3t"],
    ),
    _prefixed("aws_bedrock_key", ["ABSK"], r"[A-Za-z0-9+/]{100,}={0,2}"),
    _prefixed("google_api_key", ["AIza"], r"[A-Za-z0-9_-]{35}"),
    _prefixed("google_oauth_secret", ["GOCSPX-"], r"[A-Za-z0-9_-]{24,32}"),
    _prefixed("google_oauth_token", ["ya29."], r"[A-Za-z0-9_.-]{20,}"),
    _shape("google_oauth_token", rf"{_L}1//0[A-Za-z0-9_-]{{40,}}", ["1//0"]),
    _shape(
        "azure_storage_key",
        r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)[ \t]*=[ \t]*([^\s;\"'<>]{8,})",
        ["accountkey", "sharedaccesskey", "sharedaccesssignature"],
        group=1,
    ),
    _shape(
        "azure_client_secret",
        r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
        ["q~"],
    ),
    _prefixed("digitalocean_token", ["dop_v1_", "doo_v1_", "dor_v1_"], r"[a-f0-9]{64}"),
    _prefixed("alibaba_key_id", ["LTAI"], r"[A-Za-z0-9]{20}"),
    _prefixed("heroku_key", ["HRKU-AA"], r"[A-Za-z0-9_-]{58}"),
    _prefixed("flyio_token", ["fo1_"], r"[A-Za-z0-9_-]{40,}"),
    _prefixed("flyio_token", ["fm1a_", "fm1r_", "fm2_"], r"[A-Za-z0-9+/]{64,}={0,3}"),
    _prefixed("vault_token", ["hvs.", "hvb."], r"[A-Za-z0-9_-]{24,}"),
    _shape(
        "terraform_token",
        rf"{_L}[A-Za-z0-9]{{14}}\.atlasv1\.[A-Za-z0-9_=-]{{60,70}}{_R}",
        ["atlasv1"],
    ),
    _shape("openshift_token", rf"{_L}sha256~[A-Za-z0-9_-]{{43}}{_R}", ["sha256~"]),
    _prefixed("cloudflare_ca_key", ["v1.0-"], r"[a-f0-9]{24}-[a-f0-9]{146}"),
    _prefixed("databricks_token", ["dapi"], r"[a-f0-9]{32}(?:-\d)?"),
    _prefixed(
        "doppler_token", ["dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim."], r"[A-Za-z0-9]{40,44}"
    ),
    _prefixed("dynatrace_token", ["dt0c01."], r"[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    _prefixed("pulumi_token", ["pul-"], r"[a-f0-9]{40}"),
    _prefixed(
        "planetscale_token",
        ["pscale_tkn_", "pscale_pw_", "pscale_oauth_"],
        r"[A-Za-z0-9_=.-]{32,64}",
    ),
    _prefixed("scalingo_token", ["tk-us-"], r"[A-Za-z0-9_-]{48}"),
    _prefixed("grafana_token", ["glc_"], r"[A-Za-z0-9+/]{32,}={0,3}"),
    _prefixed("grafana_token", ["glsa_"], r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    _prefixed("grafana_token", ["eyJrIjoi"], r"[A-Za-z0-9]{60,}={0,3}"),
    _prefixed("sentry_token", ["sntrys_", "sntryu_"], r"[A-Za-z0-9+/=_]{40,}"),
    _prefixed("newrelic_key", ["NRAK-", "NRII-", "NRJS-"], r"[A-Za-z0-9-]{19,40}"),
    _prefixed("onepassword_token", ["ops_eyJ"], r"[A-Za-z0-9+/]{100,}={0,3}"),
    _shape(
        "onepassword_token",
        rf"{_L}A3-[A-Z0-9]{{6}}-(?:[A-Z0-9]{{11}}|[A-Z0-9]{{6}}-[A-Z0-9]{{5}})-[A-Z0-9]{{5}}-[A-Z0-9]{{5}}-[A-Z0-9]{{5}}{_R}",
        ["a3-"],
    ),
    # --- payments and commerce ---
    _shape(
        "stripe_key",
        rf"{_L}(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{{10,}}",
        ["sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"],
    ),
    _prefixed("stripe_key", ["whsec_"], r"[A-Za-z0-9+/=]{24,}"),
    _prefixed("square_token", ["sq0atp-", "sq0csp-", "sq0idp-"], r"[A-Za-z0-9_-]{22,60}"),
    _prefixed("shopify_token", ["shpat_", "shpca_", "shppa_", "shpss_"], r"[a-fA-F0-9]{32}"),
    _prefixed("shippo_token", ["shippo_live_", "shippo_test_"], r"[a-fA-F0-9]{40}"),
    _prefixed("flutterwave_key", ["FLWSECK-", "FLWSECK_TEST-"], r"[a-hA-H0-9]{12,32}(?:-X)?"),
    _prefixed("easypost_token", ["EZAK", "EZTK"], r"[A-Za-z0-9]{54}"),
    _prefixed("duffel_token", ["duffel_test_", "duffel_live_"], r"[A-Za-z0-9_=-]{43}"),
    _prefixed("facebook_token", ["EAAC", "EAAM"], r"[A-Za-z0-9]{100,}"),
    # --- messaging and mail ---
    _prefixed(
        "slack_token",
        ["xoxa-", "xoxb-", "xoxe-", "xoxo-", "xoxp-", "xoxr-", "xoxs-"],
        r"[A-Za-z0-9-]{10,}",
    ),
    _prefixed("slack_token", ["xoxe.xoxb-", "xoxe.xoxp-", "xapp-"], r"[A-Za-z0-9-]{10,}"),
    _shape(
        "slack_webhook",
        r"(?i)hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_-]{20,})",
        ["hooks.slack.com"],
        group=1,
    ),
    _shape(
        "discord_webhook",
        r"(?i)discord(?:app)?\.com/api/webhooks/(\d{5,30}/[A-Za-z0-9_-]{30,})",
        ["discord"],
        group=1,
    ),
    _shape(
        "teams_webhook",
        r"(?i)\.webhook\.office\.com/webhookb2/([A-Za-z0-9@/_-]{40,})",
        ["webhook.office.com"],
        group=1,
    ),
    _shape(
        # ``123456789:AA…``, bare or after ``/bot`` in an API URL.
        "telegram_bot_token",
        r"(?:(?<=bot)|(?<![A-Za-z0-9_:-]))\d{5,16}:A[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-])",
        [":a"],
    ),
    _shape(
        "discord_bot_token",
        r"(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_.-])",
        [],
    ),
    _shape("sendgrid_key", rf"{_L}SG\.[A-Za-z0-9_-]{{16,32}}\.[A-Za-z0-9_-]{{16,64}}{_R}", ["sg."]),
    _prefixed("sendinblue_key", ["xkeysib-"], r"[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    _shape("mailgun_key", rf"{_L}(?:key|pubkey)-[a-f0-9]{{32}}{_R}", ["key-"]),
    _shape("mailchimp_key", rf"{_L}[a-f0-9]{{32}}-us\d{{1,2}}{_R}", ["-us"]),
    _shape("twilio_key", r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", []),
    # --- tools and services ---
    _prefixed("linear_key", ["lin_api_"], r"[A-Za-z0-9]{40}"),
    _prefixed("notion_token", ["ntn_"], r"[A-Za-z0-9]{40,50}"),
    _shape("notion_token", rf"{_L}secret_[A-Za-z0-9]{{43}}{_R}", ["secret_"]),
    _prefixed("postman_key", ["PMAK-"], r"[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
    _prefixed("prefect_token", ["pnu_"], r"[A-Za-z0-9]{36}"),
    _prefixed("readme_key", ["rdme_"], r"[a-z0-9]{70}"),
    _prefixed("infracost_token", ["ico-"], r"[A-Za-z0-9]{32}"),
    _prefixed("frameio_token", ["fio-u-"], r"[A-Za-z0-9_=-]{64}"),
    _prefixed("atlassian_token", ["ATATT3"], r"[A-Za-z0-9_=-]{100,}"),
    _shape(
        "settlemint_token",
        rf"{_L}sm_(?:aat|pat|sat)_[A-Za-z0-9]{{16}}{_R}",
        ["sm_aat_", "sm_pat_", "sm_sat_"],
    ),
    _shape("maxmind_key", rf"{_L}[A-Za-z0-9]{{6}}_[A-Za-z0-9]{{29}}_mmk{_R}", ["_mmk"]),
    _shape(
        "harness_token",
        rf"{_L}(?:pat|sat)\.[A-Za-z0-9_-]{{22}}\.[A-Za-z0-9]{{24}}\.[A-Za-z0-9]{{20}}{_R}",
        ["pat.", "sat."],
    ),
    # --- JSON Web Tokens (a header, a payload, a signature that may be empty) ---
    _shape(
        "jwt",
        rf"{_L}eyJ[A-Za-z0-9_-]{{10,}}={{0,2}}\.[A-Za-z0-9_-]{{2,}}={{0,2}}(?:\.[A-Za-z0-9_-]*={{0,2}}){{1,3}}",
        ["eyj"],
    ),
)


# --- secrets by context -----------------------------------------------------------

# ``Bearer <token>`` anywhere; ``Basic <base64>`` anywhere. The group is the credential.
_AUTH_SCHEME = re.compile(r"(?i)\b(?:bearer|basic)[ \t]+([A-Za-z0-9._~+/-]{8,}=*)")
# ``Authorization: <scheme> <credential>`` for any other scheme (``token``, ``Digest``...).
_AUTH_HEADER = re.compile(
    r"(?i)\b(?:proxy-)?authorization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
    r"[A-Za-z-]+[ \t]+([^\s\"'\\,]{4,})"
)
# ``scheme://user:password@host``: the group is the password.
_URL_USERINFO = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{0,20}://[^\s/:@?#]{0,200}:([^\s/@?#]{1,200})@")
# ``scheme://TOKEN@host``: a user name that is a token (git remotes carry them).
_URL_TOKEN_USER = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{0,20}://([A-Za-z0-9_-]{20,200})@")
# ``NAME = value`` / ``"name": "value"`` / ``--name value``: the name is checked by
# :func:`is_secret_name`; quoted values may hold spaces, bare values may not. A quote
# may be escaped (JSON inside a JSON string: ``{\"password\": \"…\"}``).
_ASSIGNMENT = re.compile(
    r"(?<![\w.-])(?:--)?\\?[\"']?((?:[A-Za-z_][\w.-]{0,80}?)?"
    r"(?i:key|token|secret|pass(?:word|wd|phrase|code)?|pwd|credentials?|auth)(?![\w.-]))"
    # Only the name is consumed (the rest is a lookahead), so ``export NAME=...``
    # still finds ``NAME`` after trying ``export``.
    r"(?=\\?[\"']?(?:[ \t]*(?::=|[:=])[ \t]*|(?<=[A-Za-z0-9])[ \t]+(?=\S))"
    r"(?:\\?\"([^\"\n\\]{1,500})\\?\"|'([^'\n]{1,500})'"
    r"|([^\s\"'`,;()\[\]{}<>=\\]{3,200}=*)(?![\w.]*\()))"
)
_SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "passcode",
        "pwd",
        "passphrase",
        "credential",
        "credentials",
        "auth",
    }
)
# Words that make the *value* a placeholder, not a secret.
_NOT_A_VALUE = re.compile(
    r"(?i)^(?:\[REDACTED\]|\*+|x{3,}|<[^>]*>|\$\{?\w+\}?|\{\{[^}]*\}\}|none|null|nil|true|false|"
    r"undefined|changeme|redacted|example|os\.environ.*|process\.env.*|env\..*)$"
)
# ``the password is hunter2`` / ``my API token was 'x9…'``: a secret named in prose
# (``=`` and ``:`` are assignments, judged by their own rule).
_PROSE = re.compile(
    r"(?i)\b(?:password|passphrase|passwd|passcode|pass ?word|pwd|secret|"
    r"(?:api|access|secret|private|auth)[ _-]?(?:key|token)|token)s?"
    # "the password for the admin panel is ...": a few words may come between.
    r"(?:[ \t]+(?:for|of|on|to|in)\b[^\n.;:!?]{1,60}?)?"
    r"[ \t]+(?:is|was|would be|will be|is set to|set to|became|->)[ \t]*:?[ \t]+"
    r"(?:now[ \t]+|still[ \t]+)?"
    r"([\"'`\u201c]?)([^\s\"'`\u201d]{4,200})"
)
_TRAILING = ".,;:!?)]}"
# A cookie header, or a cookie passed to curl: every ``name=value`` after it.
_COOKIE = re.compile(r"(?i)(?:\b(?:set-)?cookie\\?[\"']?[ \t]*[:=]|(?<!\w)(?:-b|--cookie)[ \t]+)")
_COOKIE_PAIR = re.compile(
    r"[ \t]*\\?[\"']?([!#$%&'*+.^_`|~0-9A-Za-z-]{1,80})=([^;\s\"',\\]{1,4000})"
)
_COOKIE_ATTRIBUTES = frozenset(
    {
        "path",
        "domain",
        "expires",
        "max-age",
        "samesite",
        "secure",
        "httponly",
        "priority",
        "version",
    }
)
_COOKIE_SECRET_WORDS = (
    "sess",
    "sid",
    "token",
    "auth",
    "jwt",
    "csrf",
    "xsrf",
    "remember",
    "login",
    "key",
    "secret",
    "pass",
    "cred",
    "user",
)
# A signed URL's signature or session token (``?sig=``, ``X-Amz-Signature=``...).
_SIGNED_URL = re.compile(
    r"(?i)[?&](?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token|"
    r"x-goog-credential|code_verifier|client_secret)=([^&\s#\"'<>]{8,})"
)
# ``curl -u user:password`` / ``--user user:password``: the group is the password.
_CURL_USER = re.compile(
    r"(?<![\w-])(?:-u|--user)(?:[ \t]+|=)[\"']?[^\s:\"']{1,100}:([^\s\"']{1,200})"
)
# ``<add key="ClearTextPassword" value="…" />`` (NuGet, .NET configs).
_XML_VALUE = re.compile(
    r"(?i)<add[ \t]+key=[\"'][^\"']{0,80}(?:password|secret|token|apikey|api_key)[\"'][ \t]+"
    r"value=[\"']([^\"']{1,500})[\"']"
)


@functools.lru_cache(maxsize=1024)
def is_secret_name(name: str) -> bool:
    """``API_KEY``, ``openai.apiKey``, ``db-password``: the last word names a secret."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower().replace(".", "_").replace("-", "_")
    parts = [p for p in words.split("_") if p]
    if not parts:
        return False
    last = parts[-1]
    # ``--key`` alone as a CLI flag or ``key: value`` in prose is too common; ask for
    # a qualifier (``api_key``, ``SECRET_KEY``) unless the word is unambiguous.
    if last == "key":
        return len(parts) > 1
    return last in _SECRET_WORDS or "password" in last or last.endswith("token")


def _looks_like_credential(value: str) -> bool:
    """A bare word after "the password is": a credential has a digit, a symbol, inner
    capitals or three hyphenated words; a name (``config.api_token``) or a word does not."""
    if len(value) < 4 or _NOT_A_VALUE.match(value):
        return False
    if any(c in value for c in "([{$") or value.startswith(("os.", "process.", "~/", "./", "/")):
        return False  # code or a path, not a value
    if any(c.isdigit() for c in value) or any(not c.isalnum() and c not in "._-/" for c in value):
        return True
    return any(c.isupper() for c in value[1:]) or value.count("-") >= 2


def _auth(text: str, folded: str) -> Iterator[Span]:
    if "bearer" in folded or "basic" in folded:
        for match in _AUTH_SCHEME.finditer(text):
            value = match.group(1)
            if len(value) >= 16 or any(c.isdigit() or c == "=" for c in value):
                yield match.start(1), match.end(1), "auth_credential"
    if "authorization" in folded:
        for match in _AUTH_HEADER.finditer(text):
            yield match.start(1), match.end(1), "auth_credential"


def _urls(text: str, folded: str) -> Iterator[Span]:
    for match in _URL_USERINFO.finditer(text):
        yield match.start(1), match.end(1), "url_password"
    for match in _URL_TOKEN_USER.finditer(text):
        user = match.group(1)
        if any(c.isdigit() for c in user) and any(c.isalpha() for c in user):
            yield match.start(1), match.end(1), "url_password"
    if "=" in folded:
        for match in _SIGNED_URL.finditer(text):
            yield match.start(1), match.end(1), "signed_url"


def _assignments(text: str, folded: str) -> Iterator[Span]:
    for match in _ASSIGNMENT.finditer(text):
        group = next(g for g in (2, 3, 4) if match.group(g) is not None)
        value = match.group(group)
        if not is_secret_name(match.group(1)) or _NOT_A_VALUE.match(value.strip()):
            continue
        # ``token counting`` / ``password reset`` in prose: a bare value after a space
        # (no ``=`` or ``:``) only counts when it looks like a credential.
        separator = text[match.end(1) : match.start(group)]
        if group == 4 and not re.search(r"[:=]", separator) and not _looks_random_word(value):
            continue
        yield match.start(group), match.end(group), "secret_assignment"
    if "<add" in folded:
        for match in _XML_VALUE.finditer(text):
            yield match.start(1), match.end(1), "secret_assignment"
    if "-u" in folded or "--user" in folded:
        for match in _CURL_USER.finditer(text):
            yield match.start(1), match.end(1), "url_password"


def _looks_random_word(value: str) -> bool:
    return len(value) >= 8 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _prose(text: str) -> Iterator[Span]:
    for match in _PROSE.finditer(text):
        quote, value = match.group(1), match.group(2)
        start, end = match.start(2), match.end(2)
        while end > start and text[end - 1] in _TRAILING and not quote:
            end -= 1
        value = text[start:end]
        quoted = quote in ('"', "'", "\u201c") and not _NOT_A_VALUE.match(value)
        if (quoted and len(value) >= 4) or _looks_like_credential(value):
            yield start, end, "secret_in_prose"


def _cookies(text: str) -> Iterator[Span]:
    for header in _COOKIE.finditer(text):
        position = header.end()
        line_end = text.find("\n", position)
        line_end = len(text) if line_end < 0 else line_end
        while position < line_end:
            pair = _COOKIE_PAIR.match(text, position, line_end)
            if pair is None:
                break
            name, value = pair.group(1).lower(), pair.group(2)
            secret_name = any(word in name for word in _COOKIE_SECRET_WORDS)
            if name not in _COOKIE_ATTRIBUTES and (
                (secret_name and len(value) >= 4 and not _NOT_A_VALUE.match(value))
                or (len(value) >= 16 and _looks_random_word(value))
            ):
                yield pair.start(2), pair.end(2), "cookie_value"
            position = pair.end()
            while position < line_end and text[position] in ";, \t":
                position += 1


# --- bare tokens ------------------------------------------------------------------

HIGH_ENTROPY_MIN_LENGTH = 20
"""Shorter tokens are too often words, versions or ids to judge by their letters."""
ENTROPY_SHARE = 0.8
"""A token's Shannon entropy per character must be at least this share of the most
its length allows (log2 of the length): random keys reach it 85-90% of the time."""
WORDY_SHARE = 0.5
"""A token at least this share made of words (``Server``, ``config``) is an
identifier (``HTTP2ServerConfigV3Builder``), not a key."""

# A run of characters a key or a base64 blob is made of, not touching another one.
_TOKEN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{20,}={0,2}(?![A-Za-z0-9+/=_-])")
_WORD_RUN = re.compile(r"[A-Z]?[a-z]{2,}")
_VOWEL = re.compile(r"[aeiouy]").search
_FOUR_CONSONANTS = re.compile(r"[^aeiouy]{4}").search
# Ids agents and their APIs generate (random, and quoted on purpose), and digests
# named by their algorithm: not secrets.
_NOT_A_KEY = re.compile(
    r"(?:msg|toolu|srvtoolu|call|req|resp|rs|fc|chatcmpl|sha1|sha256|sha384|sha512)[_-]"
)
# A URL up to its query: its path may look random (``/status/1977645937225822664``,
# a package's content hash) and a secret in its query is a ``key=value`` the
# context rules find.
_URL_PATH = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{0,20}://[^\s?#\"'<>()\[\]]+")
_HEX = frozenset("0123456789abcdefABCDEF")
# What names a hex run a digest rather than a key, just before it.
_DIGEST_WORDS = (
    "sha",
    "digest",
    "hash",
    "checksum",
    "integrity",
    "commit",
    "blob",
    "tree",
    "oid",
    "etag",
    "fingerprint",
    "object",
)


def looks_random(token: str) -> bool:
    """Whether ``token`` looks like a generated key: mixed case and digits, close to
    the most entropy its length allows, and not made of words."""
    letters = token.rstrip("=")
    if len(letters) < HIGH_ENTROPY_MIN_LENGTH:
        return False
    if not (
        any(c.isdigit() for c in letters)
        and any(c.isupper() for c in letters)
        and any(c.islower() for c in letters)
    ):
        return False  # hex digests, snake_case names, ALL_CAPS constants
    counts = Counter(letters)
    size = len(letters)
    entropy = -sum(n / size * math.log2(n / size) for n in counts.values())
    if entropy < ENTROPY_SHARE * math.log2(size):
        return False
    return _wordy(letters) < WORDY_SHARE * size


def _wordy(token: str) -> int:
    """How many of ``token``'s letters are in words (``Server``, ``config``): runs of
    small letters, capitalised or not, that have a vowel and no four consonants in a
    row (a random run like ``ldnbce`` is no word)."""
    count = 0
    for match in _WORD_RUN.finditer(token):
        word = match.group().lower()
        if _VOWEL(word) and not _FOUR_CONSONANTS(word):
            count += len(word)
    return count


def _aws_secret(token: str) -> bool:
    """40 characters of base64 with mixed case and digits, not a path of words."""
    if len(token) != 40 or "_" in token or "-" in token or all(c in _HEX for c in token):
        return False
    if not (
        any(c.isdigit() for c in token)
        and any(c.isupper() for c in token)
        and any(c.islower() for c in token)
    ):
        return False
    return not _path_like(token)


def _path_like(token: str) -> bool:
    """``Users/me/Projects2``, ``tmpTdpm3M/lib/python3``: most parts are words (a
    ``+`` is base64's, never a path's)."""
    if "+" in token:
        return False
    parts = [p for p in token.split("/") if len(p) >= 3]
    words = sum(1 for p in parts if p.isdigit() or _wordy(p) * 2 >= len(p))
    return bool(parts) and words * 2 >= len(parts)


def _hex_secret(text: str, start: int, token: str) -> bool:
    """64 hex digits (an HMAC or signing key) not named a digest just before."""
    if len(token) != 64 or not all(c in _HEX for c in token):
        return False
    if token.isdigit() or not any(c.isdigit() for c in token):
        return False
    before = text[max(0, start - 24) : start].lower()
    after = text[start + 64 : start + 66]
    return not any(word in before for word in _DIGEST_WORDS) and after != "  "


def _bare_tokens(text: str, taken: list[tuple[int, int]]) -> Iterator[Span]:
    """Keys with no name around them, outside the spans already found and URL paths."""
    urls = [m.span() for m in _URL_PATH.finditer(text)] if "://" in text else []
    skip = sorted(taken + urls)
    # Tokens come in order: one pass over the sorted skip spans keeps a pasted
    # megabyte linear (the editor checks as a person types).
    reach, next_skip = -1, 0
    for match in _TOKEN.finditer(text):
        start, end = match.span()
        while next_skip < len(skip) and skip[next_skip][0] < end:
            reach = max(reach, skip[next_skip][1])
            next_skip += 1
        if reach > start:
            continue  # overlaps a span that starts before the token ends
        token = match.group()
        if _NOT_A_KEY.match(token):
            continue
        if _hex_secret(text, start, token):
            yield start, end, "hex_secret"
        elif _aws_secret(token):
            yield start, end, "aws_secret_access_key"
        elif looks_random(token) and not ("/" in token and _path_like(token)):
            yield start, end, "high_entropy"


# --- the whole rule set -------------------------------------------------------------

# Literals the context rules need (lower case): a text holding none of them, no
# shape's literal and no bare-token candidate holds no secret.
_AUTH_WORDS = ("bearer", "basic", "authorization")
_URL_WORDS = ("://", "sig=", "signature=", "x-amz-", "x-goog-", "client_secret=", "code_verifier=")
_ASSIGNMENT_WORDS = (
    "key",
    "token",
    "secret",
    "pass",
    "pwd",
    "credential",
    "auth",
    "<add",
    "-u ",
    "--user",
)
_PROSE_WORDS = ("pass", "pwd", "secret", "key", "token")
_COOKIE_WORDS = ("cookie", "-b ", "--cookie")


def _literal_trie(words: Iterable[str]) -> str:
    """One regex matching any of ``words``, factored by common prefixes (Python's
    engine tries alternatives one by one; a trie tries each character once)."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def render(node: dict[str, Any]) -> str:
        branches = [re.escape(c) + render(child) for c, child in sorted(node.items()) if c]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return render(trie)


_LITERALS = sorted(
    {w for shape in SHAPES for w in shape.needs}.union(
        _AUTH_WORDS, _URL_WORDS, _ASSIGNMENT_WORDS, _PROSE_WORDS, _COOKIE_WORDS
    )
)
_LITERAL = re.compile(f"(?=({_literal_trie(_LITERALS)}))")
"""Any rule's literal in the lower-cased text, one scan for all of them (a lookahead,
so a literal that starts inside another one is found too)."""
_MULTILINE = tuple(w for shape in SHAPES if shape.multiline for w in shape.needs)

# The prefilter, in two cheap scans. Most shapes' secrets are a long run of key
# characters (20 or more) starting with the shape's literal, so looking at the
# few long runs a text holds finds them; the other literals (context words, and
# shape literals that stand outside such a run: ``sg.``, ``hooks.slack.com``,
# ``-----begin``) are scanned for in the lower-cased text.
_RUN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+/_-")
_RUN = re.compile(r"[A-Za-z0-9+/_-]{20,}")
_UUID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
).fullmatch
_IN_RUN = sorted(
    {
        w
        for shape in SHAPES
        if not shape.multiline
        for w in shape.needs
        if set(w) <= _RUN_CHARS and len(w) >= 3
    }
    - {"sk-"}  # ``sk-ant-`` keys may be shorter than a run
)
_RUN_LITERAL = re.compile(_literal_trie(_IN_RUN))
# ``://`` is in every URL; only one with a user (``://user:pass@``, ``://TOKEN@``)
# may hold a URL rule's secret, and ``sig=``-style parameters are scanned for.
_SCAN = re.compile(_literal_trie(sorted(set(_LITERALS) - set(_IN_RUN) - {":a", "://"})))
_USERINFO = re.compile(r"://[^\s/@?#]{1,400}@")
_HAS_UPPER = re.compile(r"[A-Z]").search
_HAS_LOWER = re.compile(r"[a-z]").search
_ALL_HEX = re.compile(r"[0-9a-fA-F]+").fullmatch


_HAS_DIGIT = re.compile(r"[0-9]").search


def _worth_a_look(run: str) -> bool:
    """Whether a long run of key characters may be or hold a secret: it has a shape's
    literal, or it is 64 hex digits, or it mixes digits and both cases (what every
    bare-token rule and literal-less shape asks) and is not an id (a UUID, an agent's)."""
    if not _HAS_DIGIT(run):
        return _RUN_LITERAL.search(run.lower()) is not None
    if _NOT_A_KEY.match(run) or _UUID(run):
        return False
    if _RUN_LITERAL.search(run.lower()):
        return True
    if _ALL_HEX(run):
        return len(run) == 64 or run.startswith("SK")  # else a commit id or a digest
    return bool(_HAS_UPPER(run) and _HAS_LOWER(run))


def _fold(text: str) -> str:
    """``text`` in lower case, each character where it was (``İ`` would grow)."""
    folded = text.lower()
    if len(folded) == len(text):
        return folded
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def hit_positions(text: str) -> tuple[list[int], bool]:
    """Where in ``text`` a rule may find a secret (sorted), and whether one of them
    spans lines (a key block: the text must be judged whole). No position: no secret."""
    folded = _fold(text)
    found = [m.start() for m in _SCAN.finditer(folded)]
    if "://" in text:
        found.extend(m.start() for m in _USERINFO.finditer(text))
    found.extend(m.start() for m in _RUN.finditer(text) if _worth_a_look(m.group()))
    if not found:
        return found, False
    found.sort()
    return found, any(word in folded for word in _MULTILINE)


def _hits(folded: str) -> frozenset[str]:
    """The literals ``folded`` holds, each hit standing for every literal inside it too
    (a match of ``sk-ant-`` is one of ``sk-`` as well)."""
    return frozenset(m.group(1) for m in _LITERAL.finditer(folded))


# Shapes by the literals that let them run; a literal also stands for those inside it.
_SHAPES_BY_LITERAL: dict[str, tuple[int, ...]] = {
    word: tuple(i for i, shape in enumerate(SHAPES) if any(need in word for need in shape.needs))
    for word in _LITERALS
}
_ALWAYS = tuple(i for i, shape in enumerate(SHAPES) if not shape.needs)


def _has(hits: frozenset[str], words: tuple[str, ...]) -> bool:
    return any(need in hit for hit in hits for need in words)


def find_spans(text: str) -> list[Span]:
    """Every secret in ``text`` as ``(start, end, kind)``, in order, overlaps merged."""
    folded = _fold(text)
    hits = _hits(folded)
    spans: list[Span] = []
    chosen = sorted({i for hit in hits for i in _SHAPES_BY_LITERAL.get(hit, ())}.union(_ALWAYS))
    for index in chosen:
        shape = SHAPES[index]
        group = shape.group
        spans.extend(
            (m.start(group), m.end(group), shape.kind) for m in shape.pattern.finditer(text)
        )
    if hits:
        if _has(hits, _AUTH_WORDS):
            spans.extend(_auth(text, folded))
        if _has(hits, _URL_WORDS):
            spans.extend(_urls(text, folded))
        if _has(hits, _ASSIGNMENT_WORDS):
            spans.extend(_assignments(text, folded))
        if _has(hits, _PROSE_WORDS):
            spans.extend(_prose(text))
        if _has(hits, _COOKIE_WORDS):
            spans.extend(_cookies(text))
    if any(_worth_a_look(m.group()) for m in _RUN.finditer(text)):
        spans.sort()
        spans.extend(_bare_tokens(text, [(s, e) for s, e, _ in spans]))
    spans.sort()
    merged: list[Span] = []
    for start, end, kind in spans:
        if start >= end:
            continue
        if merged and start < merged[-1][1]:
            last_start, last_end, last_kind = merged[-1]
            merged[-1] = (last_start, max(last_end, end), last_kind)
        else:
            merged.append((start, end, kind))
    # Already masked: redaction is idempotent, the lints stay quiet.
    return [span for span in merged if text[span[0] : span[1]] != REDACTED]


# What each kind looks like, for messages and docs (the secret itself is never quoted).
KINDS: dict[str, str] = {
    "private_key": "a private key (PEM, PGP, OpenSSH, SSH2 or PuTTY block, age key)",
    "anthropic_key": "an Anthropic API key",
    "openai_key": "an OpenAI (or OpenAI-compatible) API key",
    "huggingface_token": "a Hugging Face token",
    "perplexity_key": "a Perplexity API key",
    "groq_key": "a Groq API key",
    "xai_key": "an xAI API key",
    "replicate_token": "a Replicate token",
    "github_token": "a GitHub token",
    "gitlab_token": "a GitLab token",
    "npm_token": "an npm token",
    "pypi_token": "a PyPI upload token",
    "rubygems_token": "a RubyGems API key",
    "clojars_token": "a Clojars token",
    "artifactory_token": "a JFrog Artifactory key",
    "aws_access_key_id": "an AWS access key id",
    "aws_secret_access_key": "an AWS secret access key",
    "aws_bedrock_key": "an Amazon Bedrock API key",
    "google_api_key": "a Google API key",
    "google_oauth_secret": "a Google OAuth client secret",
    "google_oauth_token": "a Google OAuth access or refresh token",
    "azure_storage_key": "an Azure storage account key or shared access signature",
    "azure_client_secret": "an Azure AD client secret",
    "digitalocean_token": "a DigitalOcean token",
    "alibaba_key_id": "an Alibaba Cloud access key id",
    "heroku_key": "a Heroku API key",
    "flyio_token": "a Fly.io token",
    "vault_token": "a HashiCorp Vault token",
    "terraform_token": "a Terraform Cloud token",
    "openshift_token": "an OpenShift user token",
    "cloudflare_ca_key": "a Cloudflare Origin CA key",
    "databricks_token": "a Databricks token",
    "doppler_token": "a Doppler token",
    "dynatrace_token": "a Dynatrace token",
    "pulumi_token": "a Pulumi token",
    "planetscale_token": "a PlanetScale token or password",
    "scalingo_token": "a Scalingo token",
    "grafana_token": "a Grafana token",
    "sentry_token": "a Sentry token",
    "newrelic_key": "a New Relic key",
    "onepassword_token": "a 1Password secret key or service-account token",
    "stripe_key": "a Stripe secret, restricted or webhook key",
    "square_token": "a Square token",
    "shopify_token": "a Shopify token",
    "shippo_token": "a Shippo token",
    "flutterwave_key": "a Flutterwave key",
    "easypost_token": "an EasyPost key",
    "duffel_token": "a Duffel token",
    "facebook_token": "a Facebook access token",
    "slack_token": "a Slack token",
    "slack_webhook": "a Slack webhook URL",
    "discord_webhook": "a Discord webhook URL",
    "teams_webhook": "a Microsoft Teams webhook URL",
    "telegram_bot_token": "a Telegram bot token",
    "discord_bot_token": "a Discord bot token",
    "sendgrid_key": "a SendGrid API key",
    "sendinblue_key": "a Brevo (Sendinblue) key",
    "mailgun_key": "a Mailgun key",
    "mailchimp_key": "a Mailchimp API key",
    "twilio_key": "a Twilio API key",
    "linear_key": "a Linear API key",
    "notion_token": "a Notion token",
    "postman_key": "a Postman API key",
    "prefect_token": "a Prefect token",
    "readme_key": "a ReadMe API key",
    "infracost_token": "an Infracost token",
    "frameio_token": "a Frame.io token",
    "atlassian_token": "an Atlassian API token",
    "settlemint_token": "a SettleMint token",
    "maxmind_key": "a MaxMind license key",
    "harness_token": "a Harness token",
    "jwt": "a JSON Web Token",
    "auth_credential": "an Authorization credential (Bearer, Basic or token)",
    "url_password": "a password or token in a URL (or after curl -u)",
    "signed_url": "a signed URL's signature or session token",
    "secret_assignment": "the value of a secret-named setting (key, token, password...)",
    "secret_in_prose": 'a password or token named in prose ("the password is ...")',
    "cookie_value": "a session or auth cookie's value",
    "hex_secret": "a 64-hex signing or HMAC key",
    "high_entropy": "a random-looking string (a key or token without a name)",
}
