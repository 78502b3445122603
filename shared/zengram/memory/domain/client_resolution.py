"""client_id auto-resolution (semantics.md): which known client, if any, a text is about.

Texts and fingerprint terms are normalised the same way (NFD, accents stripped, lowercase, anything not a
letter or digit turned into a space), then each term must appear as whole words: "Acme" matches "acme's
roadmap" but not "acmeville". Each client scores the weights of the distinct terms found (alias, client_id
and domain 3; person and keyword 1). Exactly one client at or above the threshold wins; none, or a tie of
several, leaves the memory "global".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from zengram.memory.domain.clients import ClientFingerprint
from zengram.memory.domain.models import GLOBAL_CLIENT

STRONG_WEIGHT = 3  # alias, client_id, domain: names that point at one client
WEAK_WEIGHT = 1  # person, keyword: hints that need a second hint (or a name) to count
THRESHOLD = 2

_NOT_ALPHANUMERIC = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """Lowercase words separated by single spaces, accents removed: 'Café-Zürich!' → 'cafe zurich'."""
    decomposed = unicodedata.normalize("NFD", text)
    without_accents = "".join(char for char in decomposed if not unicodedata.combining(char))
    return " ".join(_NOT_ALPHANUMERIC.sub(" ", without_accents.lower()).split())


@dataclass(frozen=True)
class ClientTerms:
    """One client's fingerprint, normalised once: phrase → weight (the highest, when a phrase repeats)."""

    client_id: str
    weights: dict[str, int]

    @classmethod
    def of(cls, fingerprint: ClientFingerprint) -> ClientTerms:
        weighted: list[tuple[Iterable[str], int]] = [
            ([fingerprint.client_id, *fingerprint.aliases, *fingerprint.domains], STRONG_WEIGHT),
            ([*fingerprint.people, *fingerprint.keywords], WEAK_WEIGHT),
        ]
        weights: dict[str, int] = {}
        for terms, weight in weighted:
            for term in terms:
                phrase = normalise(term)
                if phrase:
                    weights[phrase] = max(weight, weights.get(phrase, 0))
        return cls(fingerprint.client_id, weights)

    def score(self, normalised_text: str) -> int:
        padded = f" {normalised_text} "
        return sum(weight for phrase, weight in self.weights.items() if f" {phrase} " in padded)


def client_scores(text: str, clients: Sequence[ClientTerms]) -> dict[str, int]:
    """Every client's score for `text` (zero scores included)."""
    normalised = normalise(text)
    return {client.client_id: client.score(normalised) for client in clients}


def resolve_client(text: str, clients: Sequence[ClientTerms]) -> str:
    """The one client scoring at least THRESHOLD, else "global"."""
    passing = [client_id for client_id, score in client_scores(text, clients).items() if score >= THRESHOLD]
    return passing[0] if len(passing) == 1 else GLOBAL_CLIENT
