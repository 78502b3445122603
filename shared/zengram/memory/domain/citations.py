"""`[mem:<id>]` citations in LLM answers: keep the ones that name an analysed memory, strip invented ones.

Models write citations loosely: `[mem:ID]`, `[MEM: ID]`, `[mem:ID1, mem:ID2]` or `[mem:ID1; ID2]`. Every form
is read; what survives is rewritten canonically as `[mem:<id>]` (one per bracket, the analysed id's own
spelling). Ids are matched case-insensitively, since models like to upper-case UUIDs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["CitationChecker", "citations_in", "strip_unknown_citations"]

_CITATION = re.compile(r"\s*\[mem:([^\]\[]*)\]", re.IGNORECASE)
_SEPARATOR = re.compile(r"[,;\s]+")
_PREFIX = re.compile(r"^mem:", re.IGNORECASE)


def _ids_in_bracket(inside: str) -> list[str]:
    return [_PREFIX.sub("", part) for part in _SEPARATOR.split(inside) if _PREFIX.sub("", part)]


def citations_in(text: str) -> list[str]:
    """Every id cited in `text`, in order, as written (repeats and invented ids included)."""
    return [memory_id for match in _CITATION.finditer(text) for memory_id in _ids_in_bracket(match.group(1))]


class CitationChecker:
    """Checks citations against the memories an answer was given (`analysed_ids`); pure, no I/O."""

    def __init__(self, analysed_ids: Iterable[str]) -> None:
        self._canonical = {memory_id.lower(): memory_id for memory_id in analysed_ids}

    def known(self, memory_id: str) -> str | None:
        """The analysed id `memory_id` names (in its own spelling), or None when it names none."""
        return self._canonical.get(memory_id.strip().lower())

    def clean(self, text: str) -> str:
        """`text` without invented citations; the others rewritten canonically, one `[mem:<id>]` each."""
        def rewrite(match: re.Match[str]) -> str:
            kept = [found for found in map(self.known, _ids_in_bracket(match.group(1))) if found]
            leading_space = match.group(0)[: len(match.group(0)) - len(match.group(0).lstrip())]
            return (leading_space + " ".join(f"[mem:{memory_id}]" for memory_id in kept)) if kept else ""

        return _CITATION.sub(rewrite, text).strip()

    def clean_all(self, texts: Sequence[str]) -> list[str]:
        """Each text cleaned; entries left empty (nothing but invented citations) are dropped."""
        return [cleaned for cleaned in map(self.clean, texts) if cleaned]

    def known_ids(self, memory_ids: Iterable[str]) -> list[str]:
        """The analysed ids among `memory_ids`, deduplicated, in order of first appearance."""
        seen: dict[str, None] = {}
        for memory_id in memory_ids:
            found = self.known(memory_id)
            if found is not None:
                seen.setdefault(found, None)
        return list(seen)

    def cited_ids(self, texts: Iterable[str]) -> list[str]:
        """The analysed ids cited anywhere in `texts`, deduplicated, in order of first appearance."""
        return self.known_ids(memory_id for text in texts for memory_id in citations_in(text))


def strip_unknown_citations(text: str, analysed_ids: Iterable[str]) -> tuple[str, list[str]]:
    """One text at a time: `text` without invented citations, and the analysed ids it cites (deduplicated)."""
    checker = CitationChecker(analysed_ids)
    cleaned = checker.clean(text)
    return cleaned, checker.cited_ids([cleaned])
