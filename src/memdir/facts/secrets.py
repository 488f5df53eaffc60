"""Finding credentials in text: detect-secrets' detectors plus rules written for notes.

Two sources, one list of findings (kind + the matched text, which is never
shown: it only lets a caller tell a credential an edit adds from one a file
already held):

* **detect-secrets** (Yelp): its regular-expression detectors for provider
  tokens (AWS, GitHub, GitLab, Slack tokens and webhooks, Stripe, Twilio,
  SendGrid, npm, PyPI, OpenAI, Discord, Telegram, Mailchimp, Square, Azure
  storage keys, JSON Web Tokens, private key blocks including PGP and PuTTY,
  URLs with a password). Only ``analyze_string`` is called: no network
  verification, no settings, no baseline. Its keyword and high-entropy
  plugins are not used: they read code (quoted strings, file types) and either
  miss prose or flag ordinary notes.
* **memdir's rules**, after gitleaks' and trufflehog's public rule sets:
  prefixed tokens detect-secrets lacks (Anthropic, Hugging Face, Google OAuth,
  HashiCorp Vault, DigitalOcean, Shopify, Databricks ...), credential
  assignments (``DB_PASSWORD=hunter2``, ``aws_secret_access_key = ...``,
  ``password: hunter2``), ``Authorization:`` headers, connection strings with
  an empty user name, netrc lines, ``--password`` flags, a password given in a
  sentence, and long random-looking tokens.

Prose about credentials stays allowed: ``I reset my password yesterday``,
``Password: stored in the team vault``, ``the API key is rotated monthly``.
Obvious placeholders (``${DB_PASSWORD}``, ``<token>``, ``***``,
``postgres://user:password@localhost``) are not credentials.
"""

from __future__ import annotations

import importlib
import itertools
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any
from urllib.parse import unquote, urlsplit

from memdir.facts.secret_notes import (
    assigned_values,
    candidate_lines,
    is_placeholder,
    labelled_values,
    looks_like_key,
    table_values,
)

_LIBRARY_DETECTORS = (
    ("aws", "AWSKeyDetector", "an AWS access key"),
    ("azure_storage_key", "AzureStorageKeyDetector", "an Azure storage account key"),
    ("basic_auth", "BasicAuthDetector", "a URL with a password"),
    ("discord", "DiscordBotTokenDetector", "a Discord bot token"),
    ("github_token", "GitHubTokenDetector", "a GitHub token"),
    ("gitlab_token", "GitLabTokenDetector", "a GitLab token"),
    ("jwt", "JwtTokenDetector", "a JSON Web Token"),
    ("mailchimp", "MailchimpDetector", "a Mailchimp API key"),
    ("npm", "NpmDetector", "an npm token"),
    ("openai", "OpenAIDetector", "an OpenAI API key"),
    ("private_key", "PrivateKeyDetector", "a private key"),
    ("pypi_token", "PypiTokenDetector", "a PyPI token"),
    ("sendgrid", "SendGridDetector", "a SendGrid API key"),
    ("slack", "SlackDetector", "a Slack token or webhook"),
    ("square_oauth", "SquareOAuthDetector", "a Square OAuth secret"),
    ("stripe", "StripeDetector", "a Stripe key"),
    ("telegram_token", "TelegramBotTokenDetector", "a Telegram bot token"),
    ("twilio", "TwilioKeyDetector", "a Twilio API key"),
)

_B = r"(?<![A-Za-z0-9_])"  # a token starts here (not inside a longer word)
_E = r"(?![A-Za-z0-9_])"  # ... and ends here
_PREFIXED: tuple[tuple[str, str], ...] = (
    ("a PEM private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    ("an API key of the form sk-...", _B + r"sk-(?:[A-Za-z0-9]+-){0,2}[A-Za-z0-9_-]{20,}"),
    ("a GitHub token", _B + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{22,})"),
    ("an AWS access key id", _B + r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}" + _E),
    ("a Slack token", _B + r"xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"),
    ("a Google API key", _B + r"AIza[0-9A-Za-z_-]{35}"),
    ("a Google OAuth secret or token", _B + r"(?:GOCSPX-[\w-]{28}|ya29\.[\w-]{20,})"),
    ("a Stripe key", _B + r"[rs]k_(?:live|test)_[0-9A-Za-z]{16,}"),  # pk_: publishable
    ("an npm token", _B + r"npm_[A-Za-z0-9]{36}" + _E),
    ("a Hugging Face token", _B + r"hf_[A-Za-z]{34}" + _E),
    ("a HashiCorp Vault token", _B + r"hv[sbr]\.[\w-]{24,}"),
    ("a Terraform Cloud token", r"[a-z0-9]{14}\.atlasv1\.[a-z0-9_=-]{60,}"),
    ("a DigitalOcean token", _B + r"do[opr]_v1_[a-f0-9]{64}" + _E),
    ("a Shopify token", _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E),
    ("a Linear API key", _B + r"lin_api_[A-Za-z0-9]{40}" + _E),
    ("a Postman API key", _B + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _E),
    ("a Databricks token", _B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E),
    (
        "a Grafana token",
        _B + r"(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})",
    ),
    ("a New Relic key", _B + r"NRAK-[A-Z0-9]{27}" + _E),
    ("a Sentry token", _B + r"sntry[su]_[A-Za-z0-9+/=_-]{40,}"),
    ("a Doppler token", _B + r"dp\.(?:pt|st|sa|ct|scim)\.[A-Za-z0-9]{40,44}"),
    ("a PlanetScale token", _B + r"pscale_(?:tkn|pw|oauth)_[\w.=-]{32,64}"),
    ("a Pulumi token", _B + r"pul-[a-f0-9]{40}" + _E),
    ("a RubyGems key", _B + r"rubygems_[a-f0-9]{48}" + _E),
    ("an age secret key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    ("a Discord webhook", r"(?i)discord(?:app)?\.com/api/webhooks/\d+/[\w-]{30,}"),
    (
        "a Microsoft Teams webhook",
        r"(?i)\.webhook\.office\.com/webhookb2/[\w-]+@[\w-]+/IncomingWebhook/[a-f0-9]{32}/",
    ),
    ("a Stripe webhook secret", _B + r"whsec_[A-Za-z0-9+/]{24,}"),
    ("a memdir access token", _B + r"mdt_[0-9a-f]{8}_[A-Za-z0-9_-]{43}"),
    ("a 1Password secret key", _B + r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})"),
    ("an Atlassian API token", _B + r"ATATT3[A-Za-z0-9_=-]{100,}"),
    ("an Alibaba Cloud access key", _B + r"LTAI[a-zA-Z0-9]{20}" + _E),
    ("an Azure AD client secret", _B + r"[a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34}"),
    ("a Docker Hub token", _B + r"dckr_pat_[\w-]{27}" + _E),
    ("a Supabase token", _B + r"sbp_[a-f0-9]{40}" + _E),
    ("a Heroku API key", _B + r"HRKU-[\w-]{58,}"),
    ("a Mailgun key", _B + r"key-[a-f0-9]{32}" + _E),
    ("a Brevo (Sendinblue) key", _B + r"xkeysib-[a-f0-9]{64}-[a-zA-Z0-9]{16}"),
    ("a Dynatrace token", _B + r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    ("a Fly.io token", _B + r"fo1_[\w-]{43}"),
    ("a Notion token", _B + r"(?:ntn_\d{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})" + _E),
    ("a Figma token", _B + r"figd_[\w-]{40}"),
    ("a Groq API key", _B + r"gsk_[A-Za-z0-9]{52}" + _E),
    ("a Replicate token", _B + r"r8_[A-Za-z0-9]{37}" + _E),
    ("a Perplexity API key", _B + r"pplx-[A-Za-z0-9]{48}" + _E),
    ("an xAI API key", _B + r"xai-[A-Za-z0-9]{70,}"),
    ("a Square access token", _B + r"(?:EAAA[\w-]{60}|sq0atp-[\w-]{22})"),
    ("a Mapbox secret token", _B + r"sk\.eyJ[\w-]+\.[\w-]{22}"),
    ("a Buildkite token", _B + r"bkua_[a-f0-9]{40}" + _E),
    ("a Cloudflare origin CA key", _B + r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    ("a Prefect key", _B + r"pnu_[A-Za-z0-9]{36}" + _E),
    ("a Typeform token", _B + r"tfp_[\w.-]{59}"),
    ("a Shippo token", _B + r"shippo_(?:live|test)_[a-f0-9]{40}"),
    ("a Flutterwave key", _B + r"FLWSECK(?:_TEST)?-[a-h0-9]{32}-X"),
    ("an EasyPost key", _B + r"EZ[AT]K[a-zA-Z0-9]{54}"),
    ("a Readme API key", _B + r"rdme_[a-z0-9]{70}"),
    ("a Clojars token", _B + r"CLOJARS_[a-z0-9]{60}"),
    ("an Adobe client secret", _B + r"p8e-[a-zA-Z0-9]{32}" + _E),
    ("a Frame.io token", _B + r"fio-u-[\w=-]{64}"),
    ("a Duffel token", _B + r"duffel_(?:test|live)_[\w=-]{43}"),
    ("a JFrog token", _B + r"(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})" + _E),
    ("a ClickHouse Cloud key", _B + r"4b1d[A-Za-z0-9]{38}" + _E),
    ("an Infracost key", _B + r"ico-[a-zA-Z0-9]{32}" + _E),
    ("a Harness token", _B + r"pat\.[\w-]{22}\.[0-9a-f]{24}\.[A-Za-z0-9]{20}"),
    (
        "a JSON Web Token",
        _B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
    ("a bearer token", r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{20,}=*"),
    (
        "an Authorization header",
        r"(?i)\b(?:proxy-)?authorization\s*[:=]\s*(?:basic|bearer|token|digest|negotiate|"
        r"apikey)?\s*[A-Za-z0-9+/=._~-]{8,}",
    ),
    ("a URL with a password", r"(?i)\b[a-z][a-z0-9+.-]*://:(?P<value>[^\s/@:]{3,})@"),
    ("a netrc login", r"(?i)\blogin\s+\S+\s+password\s+(?P<value>\S+)"),
    (
        "a password flag",
        r"(?i)(?<![\w-])--(?:password|passwd|pass)[ =](?P<value>[^\s-]\S*)",
    ),
    (  # --secret=db-password names a secret; only a key-like value is one
        "a token flag",
        r"(?i)(?<![\w-])--(?:token|api-key|apikey|secret|auth-token|access-token)[ =]"
        r"(?P<value>(?P<tail>[^\s-]\S*))",
    ),
)

_TOKEN = re.compile(r"[A-Za-z0-9+/_=.-]{24,}")
_NOT_A_SECRET_BEFORE = re.compile(
    r"(?i)(?:\b(?:sha(?:1|224|256|384|512)?|md5|blake2b?|id|ids|uuid|guid|ulid|identifier|"
    r"digest|hash|checksum|commit|revision|rev|etag|fingerprint|cid|txid|tx|address|trace|"
    r"span|public[ _-]?key|pub[ _-]?key|publickey)\s*(?:is|[:=#])?\s*"
    r"|(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com)\s+"
    # a password hash: bcrypt $2b$12$..., crypt $6$salt$..., $argon2id$v=19$...$salt$
    r"|\$2[abxy]?\$\d{2}\$|\$[156]\$(?:rounds=\d+\$)?(?:[^$\s]{0,16}\$)?|\$argon2(?:id|i|d)\$\S*\$)$"
)
_DIGEST_OR_ID = re.compile(
    r"(?:sha(?:1|224|256|384|512)|md5|blake2b?)[-:=].*"
    # An object id with its type in front (Stripe's cus_, in_, pi_, Vercel's dpl_, msg_ ...);
    # the prefixes of keys (sk_, rk_, whsec_ ...) are caught by the rules above.
    r"|(?!(?:sk|rk|whsec|secret|key|token|pat|api|apikey|auth|access|priv|private|pass|pw|pwd)_)"
    r"[a-z]{2,8}_[A-Za-z0-9_]+"
    r"|pk\.eyJ.*"  # a Mapbox public token
)
_URL = re.compile(
    r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s<>\"'`()\[\]{}|\\^]+"
    r"|\bdata:[\w/+.-]+;base64,[A-Za-z0-9+/=]+"  # an embedded image, not a key
)
_URL_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://(?P<user>[^\s:/@]*):(?P<value>[^\s/@]+)@[\w.\[-]")
_URL_PARAMETERS = {  # query parameters that carry a credential: all values, or key-like ones
    "access_token": False, "accesstoken": False, "api_key": False, "apikey": False,
    "api-key": False, "private_token": False, "client_secret": False, "password": False,
    "passwd": False, "pwd": False, "pass": False, "auth_token": False, "authtoken": False,
    "refresh_token": False, "id_token": False, "session_token": False, "secret": False,
    "access_key": False, "accesskey": False, "secret_key": False, "app_key": False,
    "appkey": False, "app_secret": False, "api_secret": False, "consumer_secret": False,
    "x-amz-signature": False, "x-amz-credential": False, "x-amz-security-token": False,
    "x-goog-signature": False, "x-goog-credential": False, "sig": True, "signature": True,
    "token": True, "key": True, "auth": True, "jwt": True,
}  # fmt: skip
# Parameters of links made to be shared: a meeting passcode, a shared album's key.
_SHARED_LINK_PARAMETERS = {("zoom.us", "pwd"), ("photos.google.com", "key")}


@dataclass(frozen=True)
class SecretFinding:
    """A credential found in text: what kind, and the matched text (never to be shown)."""

    kind: str
    value: str


@cache
def _library_detectors() -> tuple[tuple[str, Any], ...]:
    """detect-secrets' detectors, imported on first use (the import takes ~0.1 s)."""
    found = []
    for module, name, kind in _LIBRARY_DETECTORS:
        plugin = importlib.import_module(f"detect_secrets.plugins.{module}")
        found.append((kind, getattr(plugin, name)()))
    return tuple(found)


_KEYWORDS = {  # rules whose pattern does not start with one literal prefix
    "an API key of the form sk-...": ("sk-",),
    "a GitHub token": ("gh", "github_pat_"),
    "an AWS access key id": ("akia", "asia", "abia", "acca", "a3t"),
    "a Slack token": ("xox", "xapp-"),
    "a Google OAuth secret or token": ("gocspx-", "ya29."),
    "a Stripe key": ("k_live_", "k_test_"),
    "a HashiCorp Vault token": ("hvs.", "hvb.", "hvr."),
    "a Terraform Cloud token": (".atlasv1.",),
    "a DigitalOcean token": ("_v1_",),
    "a Shopify token": ("shp",),
    "a Grafana token": ("glc_", "glsa_"),
    "a Sentry token": ("sntry",),
    "a Doppler token": ("dp.",),
    "a PlanetScale token": ("pscale_",),
    "a 1Password secret key": ("a3-",),
    "an Azure AD client secret": ("q~",),
    "a Notion token": ("ntn_", "secret_"),
    "a Square access token": ("eaaa", "sq0atp-"),
    "a Mapbox secret token": ("sk.eyj",),
    "a Shippo token": ("shippo_",),
    "a Flutterwave key": ("flwseck",),
    "an EasyPost key": ("ezak", "eztk"),
    "a Duffel token": ("duffel_",),
    "a JFrog token": ("akcp", "cmvmd"),
    "a JSON Web Token": ("eyj",),
    "a Discord webhook": ("discord",),
    "a Microsoft Teams webhook": ("webhook.office",),
    "a bearer token": ("bearer",),
    "an Authorization header": ("authorization",),
    "a URL with a password": (":@", "://:"),
    "a netrc login": ("password",),
    "a password flag": ("--",),
    "a token flag": ("--",),
}
_LIBRARY_KEYWORDS = {
    "an AWS access key": ("akia", "asia", "abia", "acca", "a3t", "aws"),
    "an Azure storage account key": ("accountkey",),
    "a URL with a password": ("://",),
    "a JSON Web Token": ("eyj",),
    "a Mailchimp API key": ("-us",),
    "an npm token": ("_authtoken",),
    "an OpenAI API key": ("t3blbkfj",),
    "a private key": ("private key", "putty"),
    "a PyPI token": ("pypi-",),
    "a SendGrid API key": ("sg.",),
    "a Slack token or webhook": ("xox", "hooks.slack"),
    "a Square OAuth secret": ("sq0csp",),
    "a Stripe key": ("k_live",),
    "a Telegram bot token": (":",),
}


def _literal_prefix(pattern: str) -> tuple[str, ...]:
    """The literal text a prefixed-token pattern starts with (lower case), if any."""
    body = pattern.removeprefix(_B)
    literal = re.match(r"(?:[A-Za-z0-9_~-]|\\.)+", body)
    prefix = literal.group(0).replace("\\", "").lower() if literal else ""
    return (prefix,) if len(prefix) >= 2 else ()


@cache
def _compiled() -> tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...]:
    return tuple(
        (kind, _KEYWORDS.get(kind) or _literal_prefix(pattern), re.compile(pattern))
        for kind, pattern in _PREFIXED
    )


def _mentions(lowered: str, keywords: tuple[str, ...]) -> bool:
    """Whether a rule can match at all (a cheap test before its regular expression)."""
    return not keywords or any(word in lowered for word in keywords)


def find_secrets(text: str) -> list[SecretFinding]:
    """Every credential-looking span of ``text``, in no particular order."""
    return list(_find(text))


@lru_cache(maxsize=8)  # an edit scans the file's text, which the last write scanned
def _find(text: str) -> tuple[SecretFinding, ...]:
    return tuple(dict.fromkeys(_matches(text)))


def _matches(text: str) -> Iterator[SecretFinding]:
    lowered = text.lower()
    for kind, detector in _library_detectors():
        if not _mentions(lowered, _LIBRARY_KEYWORDS.get(kind, ())):
            continue
        for value in detector.analyze_string(text):
            if kind != "a URL with a password" or not is_placeholder(_url_password(value)):
                yield SecretFinding(kind, value)
    for kind, keywords, pattern in _compiled():
        if not _mentions(lowered, keywords):
            continue
        for match in pattern.finditer(text):
            groups = match.groupdict()
            value = groups.get("value") or match.group(0)
            if "value" in groups and is_placeholder(value):
                continue
            if groups.get("tail") is not None and not looks_like_key(groups["tail"]):
                continue
            yield SecretFinding(kind, value)
    urls = list(_URL.finditer(text))
    for url in urls:
        yield from _url_secrets(url.group(0).rstrip(".,;:!?"))
    prose = _mask(text, urls) if urls else text
    yield from _note_secrets(prose)
    for match in _TOKEN.finditer(prose):
        token = match.group(0).rstrip(".-")
        if _looks_random(token) and not _DIGEST_OR_ID.fullmatch(token):
            before = prose[max(0, match.start() - 120) : match.start()]
            if not _NOT_A_SECRET_BEFORE.search(before):
                yield SecretFinding("a long random-looking token (an API key or password?)", token)


def _mask(text: str, urls: list[re.Match[str]]) -> str:
    """``text`` with each URL blanked out (same length, so offsets and lines hold)."""
    parts: list[str] = []
    last = 0
    for url in urls:
        parts.extend((text[last : url.start()], " " * (url.end() - url.start())))
        last = url.end()
    parts.append(text[last:])
    return "".join(parts)


def _url_password(value: str) -> str:
    match = _URL_PASSWORD.match(value)
    return match["value"] if match else value


def _url_secrets(url: str) -> Iterator[SecretFinding]:
    """A password in a URL's user part, or a credential in its query parameters.

    A URL's path is a list of names and ids (a Google Docs id, a Slack permalink, a
    Figma file key), never judged as a token: only the parameters that carry
    credentials by name (``access_token``, ``api_key``, ``X-Amz-Signature``, ...) are.
    """
    userinfo = _URL_PASSWORD.match(url)
    if userinfo and not is_placeholder(unquote(userinfo["value"])):
        yield SecretFinding("a URL with a password", userinfo["value"])
    parts = urlsplit(url)
    host = (parts.hostname or "").lower() if "@" not in parts.netloc or userinfo else ""
    pairs = re.split(r"[&;]", parts.query) + parts.path.split(";")[1:] + parts.netloc.split(";")[1:]
    for pair in pairs:
        name, _, value = pair.partition("=")
        name, value = unquote(name).lower(), unquote(value)
        if name not in _URL_PARAMETERS or is_placeholder(value) or len(value) < 8:
            continue
        if any(host.endswith(site) and name == param for site, param in _SHARED_LINK_PARAMETERS):
            continue
        if _URL_PARAMETERS[name] and not looks_like_key(value):
            continue
        yield SecretFinding(f"a credential in a URL parameter ({name}=...)", value)


def _note_secrets(text: str) -> Iterator[SecretFinding]:
    """Credentials as notes hold them: after labels, in tables, assigned to names."""
    for kind, value in assigned_values(text):
        yield SecretFinding(kind, value)
    if "|" in text:
        for kind, value in table_values(text):
            yield SecretFinding(kind, value)
    for line in candidate_lines(text):
        for kind, value in labelled_values(line):
            yield SecretFinding(kind, value)


def detect_secret(text: str) -> str | None:
    """The kind of the first credential ``text`` seems to contain, or None."""
    found = find_secrets(text)
    return found[0].kind if found else None


def new_secrets(before: str, after: str) -> list[SecretFinding]:
    """Credentials in ``after`` that ``before`` did not hold (what an edit would add)."""
    known = {finding.value for finding in find_secrets(before)} if before else set()
    return [finding for finding in find_secrets(after) if finding.value not in known]


def _entropy(token: str) -> float:
    counts = Counter(token)
    return -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())


def _looks_random(token: str) -> bool:
    classes = (any(c.islower() for c in token), any(c.isupper() for c in token))
    # Random keys scatter digits among letters; CamelCase names with a year do not.
    switches = sum(a.isdigit() != b.isdigit() for a, b in itertools.pairwise(token))
    return all(classes) and switches >= 3 and _entropy(token) >= 4.0
