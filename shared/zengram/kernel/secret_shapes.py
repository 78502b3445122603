"""What a secret looks like, for the credential detectors (`zengram.kernel.credentials`): the shape of a value
(generated, a password, a stand-in such as `${VAR}` or `****`, prose about the secret) and the labels that say a
secret follows (`password`, `API_KEY`, `clientSecret`)."""

from __future__ import annotations

import functools
import re

# -- value shapes -----------------------------------------------------------------------------------------------

# A value that stands for a secret without being one: a variable, a template slot, a mask, an earlier redaction.
_STAND_IN = re.compile(r"""(?x)^(?:
    \$\{.*\}|\$\(.*\)|\$[A-Za-z_]\w*        # ${VAR}  $(command)  $VAR
  | \{\{.*\}\}|%[A-Za-z_]\w*%               # {{slot}}  %VAR%
  | (?:<[^<>]*>[^<>\w]*)+                   # <your-token>  <username>:<password>
  | \[REDACTED\b.*                           # an earlier redaction
  | [*xX•.…#_-]{3,}                          # ****  xxxx  ...
  | [A-Z]+(?:_[A-Z]+)+                       # YOUR_API_KEY
  | \(?(?:redacted|hidden|masked|omitted|removed|elided)\)?
)$""")

# First words that make a "value" prose about the secret rather than the secret ("password: required").
PROSE_WORDS = frozenset("""
    a an the this that these those your our their my his her its same another any no none null nil n/a na
    required optional mandatory empty blank unset unknown tbd todo hidden masked redacted omitted removed
    must should will would can cannot could may might shall is are was were be been being has have had do does
    not never also only just still now then see check ask use uses used using set stored saved kept managed
    rotated reset changed updated expired expires expiring invalid incorrect wrong missing weak strong
    encrypted hashed provided given supplied needed needs sent shown available disabled enabled true false
    in on at of for from to via by with as into under below above per policy length minimum maximum min max
    if whether when which where how what
    str bytes string int bool float object dict list tuple secretstr secretbytes
""".split())  # the last line: type annotations (`password: str | None = None`)

TRAILING_PUNCTUATION = ".,;:)]}>"


# What detectors see in place of an earlier placeholder (same length, so spans stay valid): not a word, not
# whitespace, never part of a token; a value starting with it is a stand-in.
MASK = "\ue000"


# Texts repeat their words and labels: the short ones are judged once each per process (issue 37, scrubbing speed);
# long ones are not kept, so the caches hold at most _CACHED_CHARS characters per entry.
_CACHED_CHARS = 128


def is_stand_in(value: str) -> bool:
    return _cached_is_stand_in(value) if len(value) <= _CACHED_CHARS else _is_stand_in(value)


@functools.lru_cache(maxsize=4096)
def _cached_is_stand_in(value: str) -> bool:
    return _is_stand_in(value)


def _is_stand_in(value: str) -> bool:
    value = value.strip()
    return value.startswith(MASK) or bool(_STAND_IN.match(value))


def first_word(value: str) -> str:
    return value.split(maxsplit=1)[0].lower().strip(TRAILING_PUNCTUATION + "'\"`") if value.split() else ""


_SPACE = re.compile(r"\s")
_WORD_LIKE = re.compile(r"(?:[A-Z]?[a-z]+)+|[A-Z]+")
_DIGIT, _LOWER, _UPPER, _OTHER = (re.compile(chars) for chars in (r"\d", "[a-z]", "[A-Z]", r"[^A-Za-z0-9]"))


def char_classes(value: str) -> tuple[bool, bool, bool, bool]:
    """Has a digit, a lowercase letter, an uppercase letter, something else."""
    return (bool(_DIGIT.search(value)), bool(_LOWER.search(value)), bool(_UPPER.search(value)),
            bool(_OTHER.search(value)))


def looks_generated(value: str) -> bool:
    """A machine-made secret: letters mixed with digits, or long mixed case, or a long run of digits —
    not a word, a path or a URL."""
    if len(value) < 8 or _SPACE.search(value) or is_stand_in(value):
        return False
    if value.startswith(("/", "./", "~/")) or "://" in value:
        return False
    digit, lower, upper, _ = char_classes(value)
    if not digit and all(_WORD_LIKE.fullmatch(part) for part in re.split(r"[._]", value.rstrip(TRAILING_PUNCTUATION))):
        return False  # names, not randomness: TextGenerationStreamOutputToken, tokenize.TokenInfo, NEXT_PAGE
    return (digit and (lower or upper)) or (len(value) >= 16 and lower and upper) or (len(value) >= 16 and digit)


def looks_like_a_password(value: str) -> bool:
    """One word after "password is": a digit, a symbol or an inner capital, or long enough not to be prose."""
    return _cached_password_look(value) if len(value) <= _CACHED_CHARS else _password_look(value)


@functools.lru_cache(maxsize=4096)
def _cached_password_look(value: str) -> bool:
    return _password_look(value)


def _password_look(value: str) -> bool:
    if len(value) < 6 or is_stand_in(value) or value.lower() in PROSE_WORDS:
        return False
    digit, _, _, other = char_classes(value)
    return digit or other or bool(_UPPER.search(value, 1)) or len(value) >= 12


# -- labels ---------------------------------------------------------------------------------------------------

_PASSWORD_WORDS = ("password", "passwd", "passphrase", "pwd")
# Not "auth" or "signature": "auth: OAuth2-PKCE", "signature: SHA256withRSA" name methods, not secrets.
_SECRET_WORDS = frozenset({"secret", "token", "apikey", "accesskey", "secretkey", "privatekey", "authtoken",
                           "credential", "credentials"})
_KEY_QUALIFIERS = frozenset({"api", "access", "secret", "private", "auth", "signing", "encryption", "master",
                             "account", "client", "app", "application", "service", "subscription", "shared",
                             "storage", "consumer", "webhook", "license", "session", "admin", "deploy"})
_NEUTRAL_SUFFIXES = frozenset({"value", "base", "string"})  # SECRET_KEY_BASE, password_value
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def label_kind(label: str, qualifier: str = "", *, bare_equals: bool = False) -> str | None:
    """"password" for a password label, "secret" for another secret's label, None for anything else.

    `label` is one identifier (`DB_PASSWORD`, `clientSecret`, `x-api-key`); `qualifier` the word before it
    (`API` in "API key"); `bare_equals`: written `label=value`, where `pass` is a password label too.
    """
    if len(label) + len(qualifier) <= _CACHED_CHARS:
        return _cached_label_kind(label, qualifier, bare_equals)
    return _label_kind(label, qualifier, bare_equals)


@functools.lru_cache(maxsize=4096)
def _cached_label_kind(label: str, qualifier: str, bare_equals: bool) -> str | None:
    return _label_kind(label, qualifier, bare_equals)


def _label_kind(label: str, qualifier: str, bare_equals: bool) -> str | None:
    words = [word.lower() for word in _WORD.findall(label)]
    while len(words) > 1 and words[-1] in _NEUTRAL_SUFFIXES:
        words.pop()
    if not words:
        return None
    last, joined = words[-1], "".join(words)
    if last in _PASSWORD_WORDS or joined.endswith(_PASSWORD_WORDS[:3]):
        return "password"
    if last == "pass" and (len(words) > 1 or bare_equals):
        return "password"
    if last in _SECRET_WORDS:
        return "secret"
    before = words[-2] if len(words) > 1 else qualifier.lower()
    if last == "key" and before in _KEY_QUALIFIERS:
        return "secret"
    return None


def labelled_value_is_secret(kind: str, value: str) -> bool:
    """Whether a whole value under a secret's label (a metadata entry, a quoted value) is the secret."""
    value = value.strip()
    if not value or is_stand_in(value):
        return False
    if kind == "password":
        return first_word(value) not in PROSE_WORDS
    return looks_generated(value)
