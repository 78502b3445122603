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

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import replace

from zengram.kernel import credential_contexts as contexts
from zengram.kernel.anchors import LITERALS, anchored, literal_hint, positions
from zengram.kernel.label_spots import Skip, cli_flags, label_matches, may_hold_a_label
from zengram.kernel.provider_tokens import PROVIDER_TOKENS as PROVIDER_TOKENS
from zengram.kernel.provider_tokens import Detector as Detector
from zengram.kernel.provider_tokens import Span as Span
from zengram.kernel.provider_tokens import _basic_credentials, _bearer_token, _hint, _pattern
from zengram.kernel.secret_shapes import MASK as MASK
from zengram.kernel.secret_shapes import PROSE_WORDS, TRAILING_PUNCTUATION, char_classes, first_word, is_stand_in
from zengram.kernel.secret_shapes import label_kind as label_kind
from zengram.kernel.secret_shapes import labelled_value_is_secret as labelled_value_is_secret
from zengram.kernel.secret_shapes import looks_generated as looks_generated
from zengram.kernel.secret_shapes import looks_like_a_password as looks_like_a_password

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
    for match in _urls(text):
        rest, base = match.group("rest"), match.start("rest")
        at = _userinfo_end(rest)
        if at <= 0:
            continue
        user, colon, password = rest[:at].partition(":")
        if colon and password and not is_stand_in(password):
            yield base + len(user) + 1, base + at, "url-credentials"
        elif not colon and looks_generated(user) and len(user) >= 16:
            yield base, base + at, "url-credentials"


_SCHEME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_SCHEME_SEPARATOR = LITERALS.add(("://",), ignore_case=False)


def _urls(text: str) -> Iterator[re.Match[str]]:
    """`_URL.finditer(text)`, tried only at the start of the run of scheme characters before each `://` (a match
    starts there or nowhere: its look-behind rules out a start inside the run)."""
    done = 0
    for separator in positions(text, _SCHEME_SEPARATOR, False) or ():
        if separator < done:
            continue
        start = separator
        while start > separator - 32 and start > 0 and text[start - 1] in _SCHEME_CHARACTERS:
            start -= 1
        match = _URL.match(text, start)
        if match is not None:
            yield match
            done = match.end()


def _userinfo_end(rest: str) -> int:
    """The `@` that ends the user info: the last one followed by a host and preceded by something that can be
    user info — not a path (https://medium.com/@name) nor host:port/path (http://localhost:8080/@admin)."""
    # Each candidate `@` is judged without slicing `rest` (a URL of many `@`s would cost its length each).
    at, colon = len(rest), rest.find(":")
    mark = min((index for index in (rest.find(mark) for mark in "/?#") if index >= 0), default=len(rest))
    dot = rest.find(".") if "." in rest else len(rest)
    while (at := rest.rfind("@", 0, at)) > 0:
        user_end = colon if 0 <= colon < at else at  # userinfo is rest[:at], its user rest[:user_end]
        in_path = mark < user_end or rest[at - 1] == "/" or (
            user_end < at and _PORT_AND_PATH.match(rest, user_end + 1, at) is not None
            and (dot < user_end or (user_end == 9 and rest.startswith("localhost"))))
        if not in_path and _HOST_AFTER_AT.match(rest, at + 1):
            return at
    return -1


_PORT_AND_PATH = re.compile(r"\d{1,5}/")


_NAMES_OF_A_TOKEN = {"token", "jwt", "key", "secret", "apikey", "credentials", "auth", "access_token"}
_SINGLE_TOKEN_SCHEMES = {"bearer", "basic", "token", "apikey", "api-key", "key", "sso-key", "otp", "splunk"}
_AUTHORIZATION = re.compile(
    r"(?i)(?<![\w-])(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?:(?P<scheme>bearer|basic|token|digest|negotiate|ntlm|hmac|apikey|api-key|key|sso-key|aws4-hmac-sha256|otp"
    r"|splunk)[ \t]+)?(?P<value>[^\s\"'][^\"'\n]*)")


_AUTHORIZATION_SCAN = anchored(_AUTHORIZATION, "proxy-", "authorization")


def _authorization_header(text: str) -> Iterator[Span]:
    """An Authorization header's credentials, whatever their length; the scheme stays readable."""
    for match in _AUTHORIZATION_SCAN(text):
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


_CONNECTION_STRING_SCAN = anchored(_CONNECTION_STRING_SECRET, "password", "pwd", "accountkey", "sharedaccess",
                                   "sharedsecretvalue")


def _connection_string_secrets(text: str) -> Iterator[Span]:
    """`Password=…;`, `AccountKey=…` in ADO.NET / ODBC / Azure connection strings: the value runs to the next
    `;`, spaces included. Only inside a `key=value;…` list (a `;` right before the label or right after it)."""
    for match in _CONNECTION_STRING_SCAN(text):
        start = match.start("secret")
        value = match.group("secret").rstrip()
        before = match.start()  # no slices of the text: a text of many pairs would cost its length each
        while before > 0 and text[before - 1] in " \t":
            before -= 1
        in_list = text.startswith(";", before - 1) if before else False
        in_list = in_list or text.startswith(";", start + len(match.group("secret")))
        if value and in_list and not is_stand_in(value):
            yield start, start + len(value), "connection-string-secret"


STRUCTURES = [
    *_PRIVATE_KEY_BLOCKS,
    Detector("url-credentials", _url_credentials),
    Detector("authorization-header", _authorization_header),
    _pattern("bearer-token", r"(?i)(?<![A-Za-z0-9])bearer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]+=*)(?![A-Za-z0-9._~+/=-])",
             accept=_bearer_token, anchors=("bearer",)),
    _pattern("basic-auth", r"(?i)(?<![A-Za-z0-9])basic[ \t]+(?P<secret>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])",
             accept=_basic_credentials, anchors=("basic",)),
    _pattern("docker-auth", r"\"auth\"[ \t]*:[ \t]*\"(?P<secret>[A-Za-z0-9+/]{6,}={0,2})\"",  # ~/.docker/config.json
             accept=_basic_credentials),
    _pattern("azure-storage-key",
             r"(?i)(?:AccountKey|SharedAccessKey)[ \t]*=[ \t]*(?P<secret>[A-Za-z0-9+/]{40,}={0,2})",
             anchors=("accountkey", "sharedaccesskey")),
    Detector("connection-string-secret", _connection_string_secrets),
    _pattern("signed-url-signature",  # Azure SAS, S3 / GCS presigned URLs
             r"(?i)[?&](?:sig|signature|x-amz-signature|x-amz-security-token|x-goog-signature|x-goog-credential)="
             r"(?P<secret>[^&\s#\"'<>]{16,})",
             anchors=("?sig", "&sig", "?x-amz-s", "&x-amz-s", "?x-goog-", "&x-goog-")),
]

# -- labelled secrets --------------------------------------------------------------------------------------------

_QUOTED = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'([^'\n]*)'|`([^`\n]*)`")
_TOKEN = re.compile(r"[^\s\"'`]+")
# `key=value`: to the next space or quote, or the next `&key=`, `,key=`, `;key=` / `;User Id=` (a query string, a
# connection string); a lone `&`, `;` or `,` is part of the value. One branch per character: linear.
_BARE_TOKEN = re.compile(r"(?:[^\s\"'`<>&;,]|[&,](?![A-Za-z_][\w.-]{0,63}=)"
                         r"|;(?![ \t]*[A-Za-z_][\w.-]{0,63}(?:[ \t][A-Za-z_][\w.-]{0,63})?=))+")
# Where a `_BARE_TOKEN` ends: found by one search (Python skips to the next of these characters fast), not by
# matching the value character by character (10x slower on a long value).
_BARE_TOKEN_END = re.compile(r"[\s\"'`<>]|[&,](?=[A-Za-z_][\w.-]{0,63}=)"
                             r"|;(?=[ \t]*[A-Za-z_][\w.-]{0,63}(?:[ \t][A-Za-z_][\w.-]{0,63})?=)")
# Where an unquoted password phrase ends: the line, a sentence, a following `key: value` pair, a quote.
_PHRASE_END = re.compile(r"\n|\r|[.!?](?=\s+[A-Z])|;\s|[,;&]\s*[A-Za-z_][\w.-]*\s*[:=]|[\"`]")


# Labels nested in one long token (`token=token=token=…`) each see the rest of it as their value: judging each
# would cost the token's length per label, quadratic in the text. The first few long values of a token are
# judged, the others skipped; every short value (a query string's `&`-separated pairs) is judged.
_LONG_VALUE = 256
_LONG_VALUES_PER_TOKEN = 4


class _TokenEnds:
    """Where the token at a position ends, each character scanned once: a token is a run of one character
    class, so every position inside a run found earlier ends where that run ends."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._runs: dict[re.Pattern[str], tuple[int, int]] = {}
        self.long_values: dict[int, int] = {}  # a `_TOKEN` run's end -> long values judged in it

    def end(self, token: re.Pattern[str], start: int) -> int:
        run_start, run_end = self._runs.get(token, (0, 0))
        if not run_start <= start < run_end:
            run_start, run_end = start, _token_end(token, self._text, start)
            self._runs[token] = run_start, run_end
        return run_end

    def judge_long_value(self, start: int) -> bool:
        """Whether the long value at `start` is among the first few of its token (and counts it)."""
        run = self.end(_TOKEN, start)
        self.long_values[run] = self.long_values.get(run, 0) + 1
        return self.long_values[run] <= _LONG_VALUES_PER_TOKEN


# Inside a token only these characters can end a `_BARE_TOKEN` value before the token ends.
_BARE_STOP = re.compile(r"[<>&;,]")
_LABEL_REACH = 68  # a label word to its value: at most a 64-character label, a quote and a 2-character separator


def _token_end(token: re.Pattern[str], text: str, start: int) -> int:
    """`token.match(text, start).end()` (`start` where it does not match)."""
    if token is _BARE_TOKEN:
        stop = _BARE_TOKEN_END.search(text, start)
        return stop.start() if stop else len(text)
    match = token.match(text, start)
    return match.end() if match else start


def _labelled_secrets(text: str) -> Iterator[Span]:
    covered = 0  # a label inside a value already found is part of that secret
    ends = _TokenEnds(text)
    skip = Skip()
    for match in label_matches(text, skip):
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
        bare = sep == "=" and text[value_start - 1] == "="
        value_end = ends.end(_BARE_TOKEN if bare else _TOKEN, value_start)
        if value_end - value_start > _LONG_VALUE and not ends.judge_long_value(value_start):
            skip.to = _no_short_value_before(text, value_start, ends.end(_TOKEN, value_start))
            continue
        span = _unquoted_value(text, (value_start, value_end), kind, sep,
                               match.group("label") if in_code else None)
        if span is not None:
            covered = span[1]
            yield span[0], span[1], kind


def _no_short_value_before(text: str, start: int, token_end: int) -> int:
    """Where the next label worth judging may stand, after the long value at `start` in a token ending at
    `token_end` whose long values were all judged: a value of a label before it would start more than 256
    characters before the token's end, or before the next character that can end a bare value (`&x=`), and so be
    long and skipped too. (In `token=token=…` this skips each token's labels in bulk.)"""
    stop = _BARE_STOP.search(text, start, token_end)
    return min(stop.start() if stop else token_end, token_end) - _LONG_VALUE - _LABEL_REACH


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


def _unquoted_value(text: str, token: tuple[int, int], kind: str, sep: str,
                    label: str | None) -> tuple[int, int] | None:
    """The span of the unquoted value whose token (`_TOKEN`, or `_BARE_TOKEN` after `=`) is `token`, after a
    label of `kind` and its separator `sep`, when it is a secret: not a stand-in nor code; under a weaker label a
    token that looks generated; after "is"/"was" one word that looks like a password; after any other password
    label, a one-word password or a phrase (`_password_judgment`)."""
    start, end = token
    if start == end:
        return None
    bare = sep == "=" and text[start - 1] == "="
    whole = text[start:end]
    judged = (_cached_judgment if end - start <= _CACHED_TOKEN else _judgment)(whole, kind, sep, label, bare)
    if judged == _PHRASE:
        return _password_phrase(text, start)
    return (start, start + judged) if judged else None


_PHRASE = -1
_CACHED_TOKEN = 128  # texts repeat their values: a short one is judged once per label, kind and separator


def _judgment(whole: str, kind: str, sep: str, label: str | None, bare: bool) -> int:
    """What `_unquoted_value` finds in the token `whole`: the length of its one-word secret, 0 for none, or
    `_PHRASE` when the value is a password phrase running on past the token."""
    word = whole.rstrip(TRAILING_PUNCTUATION)
    if not word or is_stand_in(word) or is_stand_in(whole) or _is_code(word, label):
        return 0
    if label is not None and _not_a_secret_after(label, word):
        return 0
    if kind == "secret":  # `signing key: kid=2024-05` names another pair, judged by its own label
        return len(word) if looks_generated(word) and not _PAIR_VALUE.match(word) else 0
    if sep in ("is", "was") or sep.startswith(("is", "was")):
        return len(word) if looks_like_a_password(word) else 0
    return _password_judgment(word, bare)


@functools.lru_cache(maxsize=4096)
def _cached_judgment(whole: str, kind: str, sep: str, label: str | None, bare: bool) -> int:
    return _judgment(whole, kind, sep, label, bare)


_PAIR_VALUE = re.compile(r"[A-Za-z_][\w.-]*=")


def _not_a_secret_after(label: str, value: str) -> bool:
    """`PWD=/home/runner/work` is the working directory; `pass=142 fail=0` a test count."""
    name = label.rsplit(".", 1)[-1].lower()
    return (name in ("pwd", "oldpwd") and value.startswith(("/", "~"))) or (
        name in ("pass", "passed", "passes") and value.isdigit())


def _password_judgment(word: str, bare: bool) -> int:
    """After a password label, the value's first `word` decides: prose is no password; `key=value` (shell,
    query string, `bare`) or a classic password is one token; anything else is a phrase."""
    if word.lower() in PROSE_WORDS:
        return 0
    digit, _, _, other = char_classes(word)
    return len(word) if bare or (len(word) >= 6 and (digit or other)) else _PHRASE


def _password_phrase(text: str, start: int) -> tuple[int, int] | None:
    """A phrase ("correct horse battery staple"): up to the end of the line or sentence, or the next pair."""
    end_of_phrase = _PHRASE_END.search(text, start)
    end = end_of_phrase.start() if end_of_phrase else len(text)
    phrase = text[start:end].rstrip().rstrip(TRAILING_PUNCTUATION).rstrip()
    return (start, start + len(phrase)) if phrase else None


def _cli_flag_secrets(text: str) -> Iterator[Span]:
    """`--password hunter2`, `--token=…` (the `=` form is also a label; a finding twice is merged)."""
    for match in cli_flags(text):
        kind = label_kind(match.group("label"))
        value = match.group("value")
        start = match.start("value")
        if value[:1] in "\"'":
            value, start = value[1:-1], start + 1
        if kind is not None and labelled_value_is_secret(kind, value):
            yield start, start + len(value), kind


_XML_SECRET = re.compile(r"(?i)<(?P<tag>[\w:.-]{1,64})>(?P<value>[^<\n]{1,500})</(?P=tag)>")


def _xml_secrets(text: str) -> Iterator[Span]:
    for match in _XML_SECRET.finditer(text):  # fast: every match starts with `<`
        kind = label_kind(match.group("tag").rsplit(":", 1)[-1])
        if kind is not None and labelled_value_is_secret(kind, match.group("value")):
            yield match.start("value"), match.end("value"), kind


LABELLED = [
    Detector("labelled-secret", _labelled_secrets),
    Detector("cli-flag-secret", _cli_flag_secrets),
    Detector("xml-secret", _xml_secrets),
    _pattern("netrc-password",
             r"\b(?:machine\s+(?:[\w-]+\.)+[\w-]+|default)\s+login\s+\S+\s+password\s+(?P<secret>\S+)",
             accept=lambda value: not is_stand_in(value), anchors=("machine", "default")),
]

def _spans(find: Callable[[str], Iterator[tuple[int, int]]], kind: str) -> Callable[[str], Iterator[Span]]:
    return lambda text: ((start, end, kind) for start, end in find(text))


# Recognised by where they stand (`credential_contexts`): a command line, a config file, a manifest, a sentence.
CONTEXTS = [
    Detector("command-line-password", _spans(contexts.command_line_passwords, "command-line-password")),
    Detector("config-file-secret", _spans(contexts.config_file_secrets, "config-file-secret")),
    Detector("kubernetes-secret", _spans(contexts.kubernetes_secret_data, "kubernetes-secret")),
    Detector("base64-private-key", _spans(contexts.base64_private_keys, "private-key")),
    Detector("paired-secret", _spans(contexts.paired_secrets, "paired-secret")),
    Detector("sentence-password", _spans(contexts.sentence_passwords, "password")),
]

# -- hints: what a text must hold for a detector to find anything in it ------------------------------------------

def _either(*hints: Callable[[str], object]) -> Callable[[str], bool]:
    return lambda text: any(hint(text) for hint in hints)


# Each hint names literals every match of the detector holds (case-insensitive where the detector's regex is);
# detectors sharing a name share one hint, which covers each of them. The private key blocks and docker-auth
# start with a literal the regex engine already searches for fast: no hint.
_HINTS: dict[str, Callable[[str], object]] = {
    "aws-access-key-id": literal_hint("AKIA", "ASIA", "ABIA", "ACCA"),
    "aws-secret-access-key": _either(literal_hint("secret", ignore_case=True), literal_hint("AKIA", "ASIA")),
    "anthropic-api-key": literal_hint("sk-ant-"),
    "openai-api-key": literal_hint("sk-"),
    "github-token": literal_hint("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab-token": literal_hint(*(f"gl{kind}-" for kind in ("pat", "dt", "ptt", "rt", "soat", "ft", "cbt", "imt",
                                                           "oas"))),
    "slack-token": literal_hint("xox", "xapp-"),
    "slack-webhook": literal_hint("hooks.slack.com", ignore_case=True),
    "discord-webhook": literal_hint("discord", ignore_case=True),
    "zengram-api-key": literal_hint("zgk_"),
    "npm-token": literal_hint("npm_"),
    "pypi-token": literal_hint("pypi-AgEIcHlwaS5vcmc"),
    "huggingface-token": literal_hint("hf_", "api_org_"),
    "stripe-key": literal_hint("sk_", "rk_", "whsec_"),
    "google-api-key": literal_hint("AIza"),
    "google-oauth-secret": literal_hint("GOCSPX-", "ya29.", "1//0"),
    "jwt": literal_hint("eyJ"),
    "twilio-api-key": literal_hint("SK"),
    "sendgrid-api-key": literal_hint("SG."),
    "mailgun-api-key": literal_hint("key-"),
    "mailchimp-api-key": literal_hint("-us"),
    "telegram-bot-token": literal_hint(":AA"),
    # Every match holds its middle part and the start of the last; Python finds that from each "." fast.
    "discord-bot-token": _hint(r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}"),
    "command-line-password": literal_hint("curl", "wget", "http", "mysql", "mariadb", "redis-cli", "sshpass", "login"),
    "config-file-secret": _either(literal_hint("_auth", "_password", ignore_case=True), _hint(r":(?:\d|\*)")),
    "kubernetes-secret": literal_hint("Secret"),
    "base64-private-key": literal_hint("LS0tLS1CRUdJT"),
    "paired-secret": _either(literal_hint("SK"), literal_hint("secret", ignore_case=True)),
    "sentence-password": literal_hint("pass", "pw", "pin", "login", "cred", "user", ignore_case=True),
    "llm-provider-key": literal_hint("gsk_", "xai-", "r8_", "pplx-"),
    "service-token": literal_hint("_v1_", "shpat_", "shpca_", "shppa_", "shpss_", "dapi", "ATATT3", "lin_api_", "sq0",
                                  "HRKU-", "NRAK-", "sntrys_", "sntryu_", "hvs.", "hvb.", "dp.", "AGE-SECRET-KEY-1"),
    "url-credentials": _hint(r"://[^\s\"'<>`]*@"),
    "authorization-header": literal_hint("authorization", ignore_case=True),
    "bearer-token": literal_hint("bearer", ignore_case=True),
    "basic-auth": literal_hint("basic", ignore_case=True),
    "azure-storage-key": literal_hint("accountkey", "sharedaccesskey", ignore_case=True),
    "connection-string-secret": literal_hint("password", "pwd", "accountkey", "sharedaccess", "sharedsecretvalue",
                                             ignore_case=True),
    "signed-url-signature": literal_hint("?sig", "&sig", "?x-amz-s", "&x-amz-s", "?x-goog-", "&x-goog-",
                                         ignore_case=True),
    "labelled-secret": may_hold_a_label,
    "cli-flag-secret": may_hold_a_label,
    "xml-secret": may_hold_a_label,
    "netrc-password": literal_hint("password"),
}

DETECTORS: list[Detector] = [replace(detector, hint=_HINTS.get(detector.name))
                             for detector in [*PROVIDER_TOKENS, *STRUCTURES, *LABELLED, *CONTEXTS]]
