"""The credential detectors: one named entry per kind of secret, each finding the exact span to redact.

Three families, in priority order (on a tie between overlapping findings, the earlier detector names the kind):
provider token formats, whose shape alone marks them (`ghp_…`, `AKIA…`, `xoxb-…`); structures that carry a secret
(private key blocks, URLs with a password, Authorization headers, connection strings); and labelled secrets
(`password: …`, `API_KEY=…`), where the label says a secret follows and the value's shape decides whether one
does: after a password label anything but a placeholder is redacted, after a weaker label (`secret`, `token`,
`api key`) only a value that looks generated. So "password is required", "Secret: classified", "Token
authentication failed" and "Bearer instruments" are left alone.

Formats follow the providers' documentation, cross-checked against gitleaks' and detect-secrets' rules. What a
value or a label looks like (generated, a password, a stand-in, a secret's label) is judged in `secret_shapes`.
Every detector has positive and negative examples in tests/unit/test_credential_detectors.py.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from zengram.kernel.secret_shapes import MASK as MASK
from zengram.kernel.secret_shapes import PROSE_WORDS, TRAILING_PUNCTUATION, char_classes, first_word, is_stand_in
from zengram.kernel.secret_shapes import label_kind as label_kind
from zengram.kernel.secret_shapes import labelled_value_is_secret as labelled_value_is_secret
from zengram.kernel.secret_shapes import looks_generated as looks_generated
from zengram.kernel.secret_shapes import looks_like_a_password as looks_like_a_password

Span = tuple[int, int, str]  # start, end, kind


@dataclass(frozen=True)
class Detector:
    name: str  # also the kind a placeholder names, unless the detector says otherwise per finding
    find: Callable[[str], Iterator[Span]]
    # A cheap test every text it finds something in passes (a literal its matches all hold): the scrubber
    # skips `find` on texts that fail it, so ordinary text costs a few literal searches, not every detector.
    # It must never be False where `find` would find something; None: always run `find`.
    hint: Callable[[str], object] | None = None


def _hint(regex: str, flags: int = 0) -> Callable[[str], object]:
    """A hint from a regex of the literals a detector's matches hold, compiled with the detector's own flags
    (so case-insensitive matching folds characters exactly as the detector's regex does)."""
    return re.compile(regex, flags).search


# -- building blocks --------------------------------------------------------------------------------------------

def _pattern(name: str, regex: str, *, flags: int = 0,
             accept: Callable[[str], bool] | None = None) -> Detector:
    """A detector from one regex: the `secret` group (or the whole match) is the span; `accept` filters."""
    compiled = re.compile(regex, flags)
    group = "secret" if "secret" in compiled.groupindex else 0

    def find(text: str) -> Iterator[Span]:
        for match in compiled.finditer(text):
            start, end = match.span(group)
            if start < end and (accept is None or accept(match.group(group))):
                yield start, end, name

    return Detector(name, find)


def _has_digit_and_letter(value: str) -> bool:
    digit, lower, upper, _ = char_classes(value)
    return digit and (lower or upper)


def _random_looking(value: str) -> bool:
    digit, lower, upper, _ = char_classes(value)
    return digit or (lower and upper)


def _basic_credentials(value: str) -> bool:
    """`Basic` credentials are base64 of `user:password`."""
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


def _bearer_token(value: str) -> bool:
    digit, lower, upper, other = char_classes(value)
    return (len(value) >= 6 and digit and (lower or upper)) or (len(value) >= 16 and (digit or other or
                                                                                       (lower and upper)))


_BEFORE = r"(?<![A-Za-z0-9_])"  # a token starts here
_AFTER = r"(?![A-Za-z0-9_])"

# -- provider token formats -------------------------------------------------------------------------------------

PROVIDER_TOKENS = [
    _pattern("aws-access-key-id", r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    # The secret half of an AWS key pair: 40 base64 characters, only recognisable by its label (env, ini, JSON,
    # CLI, camelCase) or by standing right after an access key id (credentials CSV, "id / secret" notes).
    _pattern("aws-secret-access-key",
             r"(?<![A-Za-z0-9])(?:aws[_.-]?)?secret[_.-]?(?:access[_.-]?)?key[\"']?[ \t]*(?:=>|:=|[:=]|[ \t])[ \t]*"
             r"[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])", flags=re.IGNORECASE),
    _pattern("aws-secret-access-key",
             r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])[^\n]{0,100}?(?<![A-Za-z0-9/+])"
             r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
             accept=lambda value: all(char_classes(value)[:3]) or (_random_looking(value) and "/" in value)),
    _pattern("anthropic-api-key", _BEFORE + r"sk-ant-[A-Za-z0-9_-]{32,}", accept=_has_digit_and_letter),
    _pattern("openai-api-key",
             r"(?<![A-Za-z0-9_-])sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20,})(?![A-Za-z0-9_-])",
             accept=_has_digit_and_letter),
    _pattern("github-token", _BEFORE + r"(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{50,})" + _AFTER),
    _pattern("gitlab-token",
             r"(?<![A-Za-z0-9_-])gl(?:pat|dt|ptt|rt|soat|ft|cbt|imt|oas)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*",
             accept=_random_looking),
    _pattern("slack-token", r"(?<![A-Za-z0-9])(?:xox(?:e\.xox)?[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{20,})",
             accept=lambda value: any(c.isdigit() for c in value[5:])),
    _pattern("slack-webhook",
             r"(?i)https?://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/+-]{20,})",
             accept=_random_looking),
    _pattern("discord-webhook",
             r"(?i)https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{5,}/(?P<secret>[A-Za-z0-9_-]{30,})"),
    _pattern("zengram-api-key", _BEFORE + r"zgk_[0-9a-f]{32}_[A-Za-z0-9_-]{43}" + _AFTER),  # our own scoped keys
    _pattern("npm-token", _BEFORE + r"npm_[A-Za-z0-9]{36}" + _AFTER, accept=_random_looking),
    _pattern("pypi-token", _BEFORE + r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
    _pattern("huggingface-token", _BEFORE + r"(?:hf_|api_org_)[A-Za-z0-9]{30,}" + _AFTER, accept=_random_looking),
    _pattern("stripe-key", _BEFORE + r"(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})" + _AFTER,
             accept=_has_digit_and_letter),
    _pattern("google-api-key", r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"),
    _pattern("google-oauth-secret",
             r"(?<![A-Za-z0-9_-])(?:GOCSPX-[A-Za-z0-9_-]{28}|ya29\.[A-Za-z0-9_-]{20,}|1//0[A-Za-z0-9_-]{30,})",
             accept=_has_digit_and_letter),
    _pattern("jwt", r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*"),
    _pattern("twilio-api-key", r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", accept=_has_digit_and_letter),
    _pattern("sendgrid-api-key", _BEFORE + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _AFTER),
    _pattern("mailgun-api-key", r"(?<![A-Za-z0-9])key-[0-9a-f]{32}(?![A-Za-z0-9])", accept=_has_digit_and_letter),
    _pattern("mailchimp-api-key", r"(?<![A-Za-z0-9])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9])"),
    _pattern("telegram-bot-token", r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"),
    _pattern("llm-provider-key",  # Groq, xAI, Replicate, Perplexity
             _BEFORE + r"(?:gsk_[A-Za-z0-9]{48,}|xai-[A-Za-z0-9]{60,}|r8_[A-Za-z0-9]{37}|pplx-[A-Za-z0-9]{40,})"
             + _AFTER,
             accept=_random_looking),
    _pattern("service-token",  # DigitalOcean, Shopify, Databricks, Atlassian, Linear, Square, Heroku, New Relic,
             # Sentry, HashiCorp Vault, Doppler, age
             r"(?<![A-Za-z0-9_.-])(?:do[opr]_v1_[a-f0-9]{64}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|dapi[a-f0-9]{32}"
             r"|ATATT3[A-Za-z0-9_=-]{50,}|lin_api_[A-Za-z0-9]{40}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}"
             r"|HRKU-[A-Za-z0-9_-]{30,}|NRAK-[A-Z0-9]{27}|sntry[su]_[A-Za-z0-9+/=_]{40,}|hv[sb]\.[A-Za-z0-9_-]{24,}"
             r"|dp\.(?:pt|st|ct|sa)\.[A-Za-z0-9]{40,}|AGE-SECRET-KEY-1[0-9A-Z]{58})(?![A-Za-z0-9_-])",
             accept=_has_digit_and_letter),
]

# -- structures that carry a secret ------------------------------------------------------------------------------

_PRIVATE_KEY_BLOCKS = [
    # A block without its END line (a truncated paste) is redacted to the end of the text.
    _pattern("private-key", r"-----BEGIN (?P<label>[A-Z0-9 ]*PRIVATE KEY)-----(?:.*?-----END (?P=label)-----|.*)",
             flags=re.DOTALL),
    _pattern("pgp-private-key", r"-----BEGIN PGP PRIVATE KEY BLOCK-----(?:.*?-----END PGP PRIVATE KEY BLOCK-----|.*)",
             flags=re.DOTALL),
    _pattern("putty-private-key", r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC: [0-9a-fA-F]+|\Z)", flags=re.DOTALL),
]

_URL = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}://(?P<rest>[^\s\"'<>`]+)")
_HOST_AFTER_AT = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?(?:[/?#]|[.,;:)\]]*$)")


def _url_credentials(text: str) -> Iterator[Span]:
    """`scheme://user:password@host`, where the password may hold `/`, `@` or `:` and the user may be empty
    (`redis://:pw@host`): the host follows the last `@` (a password is more likely to hold an `@` than a path
    is). A token used as the user name (`https://ghp_…@github.com`) is redacted too."""
    for match in _URL.finditer(text):
        rest, base = match.group("rest"), match.start("rest")
        at = _userinfo_end(rest)
        if at <= 0:
            continue
        user, colon, password = rest[:at].partition(":")
        if colon and password and not is_stand_in(password):
            yield base + len(user) + 1, base + at, "url-credentials"
        elif not colon and looks_generated(user) and len(user) >= 16:
            yield base, base + at, "url-credentials"


def _userinfo_end(rest: str) -> int:
    """The `@` that ends the user info: the last one followed by a host and preceded by something that can be
    user info — not a path (https://medium.com/@name) nor host:port/path (http://localhost:8080/@admin)."""
    at = len(rest)
    while (at := rest.rfind("@", 0, at)) > 0:
        userinfo = rest[:at]
        user, colon, password = userinfo.partition(":")
        in_path = any(mark in user for mark in "/?#") or userinfo.endswith("/") or (
            colon and re.match(r"\d{1,5}/", password) and ("." in user or user == "localhost"))
        if not in_path and _HOST_AFTER_AT.match(rest, at + 1):
            return at
    return -1


_NAMES_OF_A_TOKEN = {"token", "jwt", "key", "secret", "apikey", "credentials", "auth", "access_token"}
_SINGLE_TOKEN_SCHEMES = {"bearer", "basic", "token", "apikey", "api-key", "key", "sso-key", "otp", "splunk"}
_AUTHORIZATION = re.compile(
    r"(?i)(?<![\w-])(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?:(?P<scheme>bearer|basic|token|digest|negotiate|ntlm|hmac|apikey|api-key|key|sso-key|aws4-hmac-sha256|otp"
    r"|splunk)[ \t]+)?(?P<value>[^\s\"'][^\"'\n]*)")


def _authorization_header(text: str) -> Iterator[Span]:
    """An Authorization header's credentials, whatever their length; the scheme stays readable."""
    for match in _AUTHORIZATION.finditer(text):
        value, start = match.group("value"), match.start("value")
        scheme = (match.group("scheme") or "").lower()
        first = value.split()[0]
        if is_stand_in(first) or _is_code(text[start:start + len(first) + 1]):
            continue  # Bearer ${API_TOKEN}, request.headers.get("Authorization"), f"Bearer {token}"
        if scheme in _SINGLE_TOKEN_SCHEMES:
            value = first.rstrip(",;")
            if value.lower().rstrip(TRAILING_PUNCTUATION) in _NAMES_OF_A_TOKEN:
                continue  # "Authorization: Bearer token" names the token
        elif not scheme and not looks_generated(first.rstrip(TRAILING_PUNCTUATION)):
            continue  # without a scheme only a token counts: `authorization: Optional[str]`, `'Authorization': auth`
        value = value.rstrip().rstrip(TRAILING_PUNCTUATION) or value.rstrip()
        if not value or first_word(value) in PROSE_WORDS:
            continue
        yield start, start + len(value), "authorization-header"


_CONNECTION_STRING_SECRET = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:password|pwd|accountkey|sharedaccesskey|sharedaccesssignature|sharedsecretvalue)"
    r"[ \t]*=[ \t]*(?P<secret>[^;\r\n\"'`]+)")


def _connection_string_secrets(text: str) -> Iterator[Span]:
    """`Password=…;`, `AccountKey=…` in ADO.NET / ODBC / Azure connection strings: the value runs to the next
    `;`, spaces included. Only inside a `key=value;…` list (a `;` right before the label or right after it)."""
    for match in _CONNECTION_STRING_SECRET.finditer(text):
        start = match.start("secret")
        value = match.group("secret").rstrip()
        before = text[:match.start()].rstrip(" \t")
        in_list = before.endswith(";") or text[start + len(match.group("secret")):].startswith(";")
        if value and in_list and not is_stand_in(value):
            yield start, start + len(value), "connection-string-secret"


STRUCTURES = [
    *_PRIVATE_KEY_BLOCKS,
    Detector("url-credentials", _url_credentials),
    Detector("authorization-header", _authorization_header),
    _pattern("bearer-token", r"(?i)(?<![A-Za-z0-9])bearer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]+=*)(?![A-Za-z0-9._~+/=-])",
             accept=_bearer_token),
    _pattern("basic-auth", r"(?i)(?<![A-Za-z0-9])basic[ \t]+(?P<secret>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])",
             accept=_basic_credentials),
    _pattern("docker-auth", r"\"auth\"[ \t]*:[ \t]*\"(?P<secret>[A-Za-z0-9+/]{6,}={0,2})\"",  # ~/.docker/config.json
             accept=_basic_credentials),
    _pattern("azure-storage-key",
             r"(?i)(?:AccountKey|SharedAccessKey)[ \t]*=[ \t]*(?P<secret>[A-Za-z0-9+/]{40,}={0,2})"),
    Detector("connection-string-secret", _connection_string_secrets),
    _pattern("signed-url-signature",  # Azure SAS, S3 / GCS presigned URLs
             r"(?i)[?&](?:sig|signature|x-amz-signature|x-amz-security-token|x-goog-signature|x-goog-credential)="
             r"(?P<secret>[^&\s#\"'<>]{16,})"),
]

# -- labelled secrets --------------------------------------------------------------------------------------------

_LABEL = re.compile(r"""(?x)
    (?<![\w.-])
    (?:(?P<qualifier>[A-Za-z]{2,20})[ ])?        # "API key", "root password"
    (?P<label>[A-Za-z][\w.-]{0,63})
    (?P<quote>["']?)
    (?P<sep>[ \t]*(?:=>|:=|=(?!=)|:(?![:/]))[ \t]*|[ \t]+(?:is|was)[ \t]+(?:set[ \t]+to[ \t]+)?)
""")
_QUOTED = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'([^'\n]*)'|`([^`\n]*)`")
_TOKEN = re.compile(r"[^\s\"'`]+")
_SHELL_OR_QUERY_TOKEN = re.compile(r"[^\s\"'`,;&<>]+")  # `key=value`: `&`, `;`, `,` end the value
# Where an unquoted password phrase ends: the line, a sentence, a following `key: value` pair, a quote.
_PHRASE_END = re.compile(r"\n|\r|[.!?](?=\s+[A-Z])|;\s|[,;&]\s*[A-Za-z_][\w.-]*\s*[:=]|[\"`]")


def _labelled_secrets(text: str) -> Iterator[Span]:
    covered = 0  # a label inside a value already found is part of that secret
    for match in _LABEL.finditer(text):
        if match.start("label") < covered:
            continue
        sep = match.group("sep").strip()
        kind = label_kind(match.group("label"), match.group("qualifier") or "", bare_equals=match.group("sep") == "=")
        if kind is None:
            continue
        value_start = match.end()
        quoted = _QUOTED.match(text, value_start)
        if quoted:
            group = next(index for index in (1, 2, 3) if quoted.group(index) is not None)
            start, end = quoted.span(group)
            if labelled_value_is_secret(kind, quoted.group(group)):
                covered = end
                yield start, end, kind
            continue
        in_code = "=" in sep or bool(match.group("quote"))  # an assignment, or a dict entry `"password": x`
        span = _unquoted_value(text, value_start, kind, sep, match.group("label") if in_code else None)
        if span is not None:
            covered = span[1]
            yield span[0], span[1], kind


_CODE_REFERENCE = re.compile(r"""(?x)
    [A-Za-z_][\w.]*[(\[].*            # os.getenv(…), config['password'], Optional[str], token[7:]
  | [\[{(].*                           # "password": {"type": "string"}
  | [fbru]{1,2}["'].*                  # f"Bearer {token}"
""")
_VARIABLE = re.compile(r"[A-Za-z_]+(?:\.[A-Za-z_]+)+|[a-z]+(?:_[a-z]+)+")  # self.password, proxy_auth


def _is_code(value: str, label: str | None = None) -> bool:
    """`password=os.getenv(…)`, `config['password']`, `"password": {"type": …}`, `f"Bearer {token}"`, and with
    `label` (an assignment or a dict entry: `password=password`, `self.password = password`,
    `"password": password_var`) a variable: code or a structure handing a secret on, not the secret. Under an
    environment variable's label (`DB_PASSWORD=super_secret_pw`) a snake_case word is the value itself, as it is
    in YAML (`db_password: super_secret_pw`, no label given)."""
    if _CODE_REFERENCE.fullmatch(value):
        return True
    if label is None or label.isupper():
        return False
    return value == label.rsplit(".", 1)[-1] or bool(_VARIABLE.fullmatch(value))


def _unquoted_value(text: str, start: int, kind: str, sep: str, label: str | None) -> tuple[int, int] | None:
    """The span of the unquoted value at `start`, after a label of `kind` and its separator `sep`, when it is
    a secret: not a stand-in nor code; under a weaker label a token that looks generated; after "is"/"was" one
    word that looks like a password; after any other password label, what `_password_value` takes."""
    bare = sep == "=" and text[start - 1] == "="
    token = (_SHELL_OR_QUERY_TOKEN if bare else _TOKEN).match(text, start)
    if token is None:
        return None
    word = token.group(0).rstrip(TRAILING_PUNCTUATION)
    single = (start, start + len(word))
    if not word or is_stand_in(word) or is_stand_in(token.group(0)) or _is_code(word, label):
        return None
    if kind == "secret":
        return single if looks_generated(word) else None
    if sep in ("is", "was") or sep.startswith(("is", "was")):
        return single if looks_like_a_password(word) else None
    return _password_value(text, start, word, bare)


def _password_value(text: str, start: int, word: str, bare: bool) -> tuple[int, int] | None:
    """After a password label, the value's first `word` decides: prose is no password; `key=value` (shell,
    query string, `bare`) or a classic password is one token; anything else is a phrase."""
    if word.lower() in PROSE_WORDS:
        return None
    digit, _, _, other = char_classes(word)
    if bare or (len(word) >= 6 and (digit or other)):
        return start, start + len(word)
    # A phrase ("correct horse battery staple"): up to the end of the line or sentence, or the next pair.
    end_of_phrase = _PHRASE_END.search(text, start)
    end = end_of_phrase.start() if end_of_phrase else len(text)
    phrase = text[start:end].rstrip().rstrip(TRAILING_PUNCTUATION).rstrip()
    return (start, start + len(phrase)) if phrase else None


_CLI_FLAG = re.compile(r"(?<!\S)--?(?P<label>[A-Za-z][\w-]{2,63})(?:=|[ \t]+)(?!-)"
                       r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"']+)")


def _cli_flag_secrets(text: str) -> Iterator[Span]:
    """`--password hunter2`, `--token=…` (the `=` form is also a label; a finding twice is merged)."""
    for match in _CLI_FLAG.finditer(text):
        kind = label_kind(match.group("label"))
        value = match.group("value")
        start = match.start("value")
        if value[:1] in "\"'":
            value, start = value[1:-1], start + 1
        if kind is not None and labelled_value_is_secret(kind, value):
            yield start, start + len(value), kind


_XML_SECRET = re.compile(r"(?i)<(?P<tag>[\w:.-]{1,64})>(?P<value>[^<\n]{1,500})</(?P=tag)>")


def _xml_secrets(text: str) -> Iterator[Span]:
    for match in _XML_SECRET.finditer(text):
        kind = label_kind(match.group("tag").rsplit(":", 1)[-1])
        if kind is not None and labelled_value_is_secret(kind, match.group("value")):
            yield match.start("value"), match.end("value"), kind


LABELLED = [
    Detector("labelled-secret", _labelled_secrets),
    Detector("cli-flag-secret", _cli_flag_secrets),
    Detector("xml-secret", _xml_secrets),
    _pattern("netrc-password",
             r"\b(?:machine\s+(?:[\w-]+\.)+[\w-]+|default)\s+login\s+\S+\s+password\s+(?P<secret>\S+)",
             accept=lambda value: not is_stand_in(value)),
]

# -- hints: what a text must hold for a detector to find anything in it ------------------------------------------

_NOT_ASCII_ALNUM = re.compile(r"[^A-Za-z0-9]")
_LABEL_WORDS = ("pass", "pwd", "secret", "token", "key", "credential")


@functools.lru_cache(maxsize=8)
def may_hold_a_label(text: str) -> bool:
    """Whether `text` may hold a label `label_kind` names. A label's words are its ASCII letter and digit runs,
    lower-cased and joined, and each kind needs one of `_LABEL_WORDS` in them (`password`, `passwd`, `pass`,
    `pwd`, `secret`, `token`, `key`, `credential`…); the text squeezed the same way holds every label's joined
    words, so it holds one of them too. (Cached: the three label detectors ask about the same text.)"""
    squeezed = _NOT_ASCII_ALNUM.sub("", text).lower()
    return any(word in squeezed for word in _LABEL_WORDS)


# Each regex names literals every match of the detector holds (case-insensitive where the detector's regex is);
# detectors sharing a name share one hint, which covers each of them. The private key blocks and docker-auth
# start with a literal the regex engine already searches for fast: no hint.
_HINTS: dict[str, Callable[[str], object]] = {
    "aws-access-key-id": _hint("AKIA|ASIA|ABIA|ACCA"),
    "aws-secret-access-key": _hint("(?i:secret)|AKIA|ASIA"),
    "anthropic-api-key": _hint("sk-ant-"),
    "openai-api-key": _hint("sk-"),
    "github-token": _hint("gh[pousr]_|github_pat_"),
    "gitlab-token": _hint("gl(?:pat|dt|ptt|rt|soat|ft|cbt|imt|oas)-"),
    "slack-token": _hint("xox|xapp-"),
    "slack-webhook": _hint(r"hooks\.slack\.com", re.IGNORECASE),
    "discord-webhook": _hint("discord", re.IGNORECASE),
    "zengram-api-key": _hint("zgk_"),
    "npm-token": _hint("npm_"),
    "pypi-token": _hint("pypi-AgEIcHlwaS5vcmc"),
    "huggingface-token": _hint("hf_|api_org_"),
    "stripe-key": _hint("sk_|rk_|whsec_"),
    "google-api-key": _hint("AIza"),
    "google-oauth-secret": _hint(r"GOCSPX-|ya29\.|1//0"),
    "jwt": _hint("eyJ"),
    "twilio-api-key": _hint("SK[0-9a-fA-F]{32}"),
    "sendgrid-api-key": _hint(r"SG\."),
    "mailgun-api-key": _hint("key-"),
    "mailchimp-api-key": _hint("-us[0-9]"),
    "telegram-bot-token": _hint(":AA"),
    "llm-provider-key": _hint("gsk_|xai-|r8_|pplx-"),
    "service-token": _hint(r"_v1_|shp(?:at|ca|pa|ss)_|dapi|ATATT3|lin_api_|sq0|HRKU-|NRAK-|sntry[su]_|hv[sb]\."
                           r"|dp\.|AGE-SECRET-KEY-1"),
    "url-credentials": _hint(r"://[^\s\"'<>`]*@"),
    "authorization-header": _hint("authorization", re.IGNORECASE),
    "bearer-token": _hint("bearer", re.IGNORECASE),
    "basic-auth": _hint("basic", re.IGNORECASE),
    "azure-storage-key": _hint("accountkey|sharedaccesskey", re.IGNORECASE),
    "connection-string-secret": _hint("password|pwd|accountkey|sharedaccess|sharedsecretvalue", re.IGNORECASE),
    "signed-url-signature": _hint("[?&](?:sig|x-amz-s|x-goog-)", re.IGNORECASE),
    "labelled-secret": may_hold_a_label,
    "cli-flag-secret": may_hold_a_label,
    "xml-secret": may_hold_a_label,
    "netrc-password": _hint("password"),
}

DETECTORS: list[Detector] = [replace(detector, hint=_HINTS.get(detector.name))
                             for detector in [*PROVIDER_TOKENS, *STRUCTURES, *LABELLED]]
