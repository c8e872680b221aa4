"""Secrets recognised by their own shape, wherever they appear: the shape rule table.

A provider's prefix and length (``sk_live_…``, ``npm_…``, ``hf_…``, ``SG.….…``,
``xoxb-…``), a JWT, a private key block (PEM, PGP, SSH2, PuTTY), a webhook URL
whose path is the secret. Each :class:`Shape` names the literals a text must hold
for it to be worth running.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


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
