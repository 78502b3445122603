"""Credentials recognised by where they stand rather than by a label right before them (issue 37): passwords on
command lines (`curl -u user:pw`, `mysql -pPASS`, `redis-cli -a pw`, `docker login -p pw`), config files (`.npmrc`
`_authToken=`, `.pgpass` lines), Kubernetes Secret manifests (base64 `data:` values), a token paired with its id
(a Twilio key SID and its secret), and passwords in ordinary sentences ("The password for the staging server is
…", "root pw: …", "Router login is admin / …", "Door passcode is …").

Each function yields (start, end) of the values to redact; `credentials.py` names and orders the detectors. Every
regex here is bounded (`{0,n}` gaps, no nested repetition), so a pass stays linear in the text.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from zengram.kernel.anchors import LITERALS, anchored
from zengram.kernel.secret_shapes import (
    PROSE_WORDS,
    TRAILING_PUNCTUATION,
    char_classes,
    is_stand_in,
    looks_like_a_password,
)

Found = Iterator[tuple[int, int]]
_VALUE = r"(?P<value>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s\"'`|;&<>]{1,200})"


def _unquoted(match: re.Match[str], group: str = "value") -> tuple[int, int, str]:
    value, start = match.group(group), match.start(group)
    if len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]:
        return start + 1, start + len(value) - 1, value[1:-1]
    return start, start + len(value), value


def _is_value(value: str) -> bool:
    """Not a stand-in (`$PW`, `<password>`), a prose word, a flag or a path (`PWD=/home/runner`)."""
    return (bool(value) and not is_stand_in(value) and value.lower() not in PROSE_WORDS
            and not value.startswith(("-", "/", "~/", "./")))


# -- command lines ------------------------------------------------------------------------------------------------

_COMMAND_PASSWORDS = [
    # curl / wget: -u user:password, --user user:password, --user=user:password
    re.compile(r"(?<![\w-])(?:curl|wget|http)\b[^\n]{0,200}?\s(?:-u|--user|--proxy-user|--http-user)(?:=|[ \t]+)"
               r"[\"']?[^\s:\"']{1,64}:(?P<value>[^\s\"']{1,200})"),
    # mysql family: -pPASS (attached: `-p PASS` would prompt and name a database), --password handled elsewhere
    re.compile(r"(?<![\w-])(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb|mariadb-dump)\b[^\n]{0,200}?"
               r"\s-p(?P<value>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s\"'`|;&<>]{1,200})"),
    # redis-cli -a pw, sshpass -p pw, docker/podman/helm … login -p pw
    re.compile(r"(?<![\w-])redis-cli\b[^\n]{0,200}?\s(?:-a|--pass|--askpass)[ \t]+" + _VALUE),
    re.compile(r"(?<![\w-])sshpass[ \t]+-p[ \t]*" + _VALUE),
    re.compile(r"(?<![\w-])(?:docker|podman|buildah|skopeo|helm(?:[ \t]+registry)?|oras|nerdctl|crane)"
               r"[ \t]+login\b[^\n]{0,200}?\s(?:-p|--password)(?:=|[ \t]+)" + _VALUE),
]


# Each command's regex is tried only where its command's name starts, and only in a text holding its option
# (`-u`, `-p`, `-a`, `--pass`: a URL-heavy text names `http` often and never `-u`).
_COMMAND_SCANS = [(anchored(pattern, *names), frozenset(LITERALS.add(options, ignore_case=False)))
                  for pattern, names, options in zip(_COMMAND_PASSWORDS, [
                      ("curl", "wget", "http"), ("mysql", "mariadb"), ("redis-cli",), ("sshpass",),
                      ("docker", "podman", "buildah", "skopeo", "helm", "oras", "nerdctl", "crane")],
                      [("-u",), ("-p",), ("-a", "--pass"), ("-p",), ("-p",)], strict=True)]


def command_line_passwords(text: str) -> Found:
    found = LITERALS.found(text)
    for scan, options in _COMMAND_SCANS:
        if not found.holds_any(options):
            continue
        for match in scan(text):
            start, end, value = _unquoted(match)
            if _is_value(value):
                yield start, end


# -- config files -------------------------------------------------------------------------------------------------

_NPMRC = re.compile(r"(?im)(?:^|:)_(?:authToken|auth|password)[ \t]*=[ \t]*[\"']?(?P<value>[^\s\"']{6,})")
# hostname:port:database:username:password — a host (or *), a port (or *), then three fields; \: escapes a colon.
_PGPASS = re.compile(r"(?m)^[ \t]*(?P<host>[A-Za-z0-9_.*-]{1,253}):(?:\d{1,5}|\*):"
                     r"(?:[^:\s\\]|\\.){1,64}:(?:[^:\s\\]|\\.){1,64}:(?P<value>\S{1,200})[ \t]*$")


_NPMRC_SCAN = anchored(_NPMRC, "_auth", "_password", lead=(0, 1))  # at the `_`, or the `:` before it
_PORT = re.compile(r":[\d*]")  # a .pgpass line holds one, after its host


def _pgpass_lines(text: str) -> Iterator[re.Match[str]]:
    """`_PGPASS.finditer(text)`, on the lines holding a `:` then a digit or `*` (a match never spans lines)."""
    line_end = -1
    for port in _PORT.finditer(text):
        if port.start() < line_end:
            continue
        line_start = text.rfind("\n", 0, port.start()) + 1
        line_end = text.find("\n", port.start())
        line_end = len(text) if line_end < 0 else line_end
        yield from _PGPASS.finditer(text, line_start, line_end)


def config_file_secrets(text: str) -> Found:
    for scan in (_NPMRC_SCAN, _pgpass_lines):
        for match in scan(text):
            start, end, value = _unquoted(match)
            host = match.groupdict().get("host")
            if _is_value(value) and (host is None or host == "*" or any(c.isalpha() for c in host)):
                yield start, end  # a .pgpass host is a name or `*`, never bare digits (`10:30:00:…`)


# -- Kubernetes Secret manifests and base64 private keys ----------------------------------------------------------

_SECRET_DATA = re.compile(r"(?m)^(?P<indent>[ \t]*)data:[ \t]*\n")
_DATA_ENTRY = re.compile(r"(?P<indent>[ \t]+)[\"']?[\w.-]{1,253}[\"']?:[ \t]*[\"']?(?P<value>[A-Za-z0-9+/]{2,}={0,2})"
                         r"[\"']?[ \t]*(?:\n|$)")
_BASE64_PEM = re.compile(r"(?<![A-Za-z0-9+/])LS0tLS1CRUdJT[A-Za-z0-9+/]{20,}={0,2}")
_BASE64_PEM_SCAN = anchored(_BASE64_PEM, "LS0tLS1CRUdJT")


def kubernetes_secret_data(text: str) -> Found:
    """Every base64 value of a `data:` block in a text that declares `kind: Secret` (Kubernetes stores the
    secret's bytes there, only encoded): the block's entries are the lines indented deeper than `data:`."""
    if not re.search(r"kind:[ \t]*[\"']?Secret\b", text):
        return
    for block in _SECRET_DATA.finditer(text):
        position, outer = block.end(), len(block.group("indent"))
        while (entry := _DATA_ENTRY.match(text, position)) and len(entry.group("indent")) > outer:
            yield entry.start("value"), entry.end("value")
            position = entry.end()


def base64_private_keys(text: str) -> Found:
    """A PEM private key base64-encoded again (`tls.key: LS0tLS1CRUdJTi…`, a Helm value, a CI variable)."""
    for match in _BASE64_PEM_SCAN(text):
        encoded = match.group(0)
        try:
            decoded = base64.b64decode(encoded[: len(encoded) // 4 * 4] or encoded, validate=False)
        except (binascii.Error, ValueError):
            continue
        if b"PRIVATE KEY" in decoded[:80]:
            yield match.span()


# -- a token next to its id ---------------------------------------------------------------------------------------

_TWILIO_PAIR = re.compile(r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])[\s\S]{0,80}?(?<![A-Za-z0-9])"
                          r"(?P<value>[A-Za-z0-9]{32})(?![A-Za-z0-9])")
_AWS_SECRET_IN_PROSE = re.compile(r"(?i)\bsecret[ _-]?(?:access[ _-]?)?key\b[^\n]{0,80}?(?<![A-Za-z0-9/+])"
                                  r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")


_TWILIO_SCAN = anchored(_TWILIO_PAIR, "SK")
_AWS_SECRET_SCAN = anchored(_AWS_SECRET_IN_PROSE, "secret")


def paired_secrets(text: str) -> Found:
    """A Twilio API key's secret after its SID, and an AWS secret access key introduced in prose ("the secret
    access key for the backup user is …"): 40 base64 characters of mixed case and digits."""
    for match in _TWILIO_SCAN(text):
        digit, lower, upper, _ = char_classes(match.group("value"))
        if digit and (lower or upper):
            yield match.span("value")
    for match in _AWS_SECRET_SCAN(text):
        digit, lower, upper, _ = char_classes(match.group("value"))
        if (digit and lower and upper) or (lower and upper and "/" in match.group("value")):
            yield match.span("value")


# -- passwords in sentences ---------------------------------------------------------------------------------------

_SENTENCE_VALUE = r"(?P<value>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s\"'`]{1,200})"
_PASSWORD_NOUN = r"(?:password|passwd|passphrase|passcode|pass[ ]?code|pw|pwd|pin(?:[ ]?code)?)"
# "The password for the staging server is X", "root pw: X", "Door passcode is X", "PIN code: 4417"
_SENTENCE_PASSWORD = re.compile(
    rf"(?i)(?<![\w.-]){_PASSWORD_NOUN}(?![\w-])(?P<about>(?:[ \t]+[\w-]{{1,30}}){{0,8}}?)"
    r"(?:[ \t]+(?:is|was|are)[ \t]+(?:now[ \t]+|still[ \t]+|(?:set|changed)[ \t]+to[ \t]+)?|[ \t]*:[ \t]*)"
    + _SENTENCE_VALUE)
# "Router login is admin / X", "login: admin/X", "creds admin / X"
_LOGIN_PAIR = re.compile(r"(?i)(?<![\w-])(?:login|credentials|creds|user[ ]?name[ ]?/[ ]?password)"
                         r"(?:[ \t]+(?:is|are)[ \t]+|[ \t]*:[ \t]*)[^\s/]{1,64}[ \t]*/[ \t]*" + _SENTENCE_VALUE)
# "guest wifi pass Sunflower-42", "VPN pass: X"
_BARE_PASS = re.compile(r"(?i)(?<![\w-])(?:wi-?fi|vpn|guest|admin|root|door|gate|alarm|router|login|account|user)"
                        r"[ \t]+pass(?:[ \t]*:[ \t]*|[ \t]+(?:is[ \t]+)?)" + _SENTENCE_VALUE)
_SHORT_CODE = re.compile(r"\d{4,}[#*]?")


_SENTENCE_SCANS = [anchored(_SENTENCE_PASSWORD, "pass", "pw", "pin"),
                   anchored(_LOGIN_PAIR, "login", "credentials", "creds", "username", "user name"),
                   anchored(_BARE_PASS, "wifi", "wi-fi", "vpn", "guest", "admin", "root", "door", "gate", "alarm",
                            "router", "login", "account", "user")]


def sentence_passwords(text: str) -> Found:
    for scan in _SENTENCE_SCANS:
        for match in scan(text):
            start, _, value = _unquoted(match)
            value = value.rstrip(TRAILING_PUNCTUATION)
            if _is_value(value) and (looks_like_a_password(value) or _SHORT_CODE.fullmatch(value)):
                yield start, start + len(value)
