"""What both parts of the scrubbing corpus build on: the seeded generator of synthetic values and the `Credential`
record (tests/data/credential_corpus.py)."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
from dataclasses import dataclass

BASE62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits
BASE64 = BASE62 + "+/"
URL_SAFE = BASE62 + "-_"


def fake(seed: str, length: int, alphabet: str = BASE62) -> str:
    """`length` characters of `alphabet`, the same every run for the same seed, with at least one digit and one
    letter of each case when the alphabet has them (as real keys have)."""
    rng = random.Random(hashlib.sha256(seed.encode()).digest())
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(length))
        wanted = [group for group in (string.digits, string.ascii_lowercase, string.ascii_uppercase)
                  if any(c in alphabet for c in group)]
        if length < 8 or all(any(c in group for c in value) for group in wanted):
            return value


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt(subject: str) -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": subject, "exp": 1893456000}).encode())
    return f"{header}.{payload}.{fake(subject, 43, URL_SAFE)}"


def pem_body(seed: str, lines: int = 4) -> str:
    return "\n".join(fake(f"{seed}{line}", 64, BASE64) for line in range(lines))


@dataclass(frozen=True)
class Credential:
    detector: str  # the detector that must find it (the placeholder names it, or the kind it reports)
    text: str
    secret: str  # must not survive scrubbing
    kept: str | None = None  # must survive (default: all the text before the secret)

    def __str__(self) -> str:
        return self.text

    @property
    def must_keep(self) -> str:
        return self.text[:self.text.index(self.secret)] if self.kept is None else self.kept
