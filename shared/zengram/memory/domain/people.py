"""People named in a memory's text by their role, found without an LLM (issue 37: "Sarah Chen is Initech's CTO" never
became a person entity unless a client's fingerprint listed her).

A person is a run of two or three capitalised words ("Sarah Chen", "Mary-Jane O'Neil") that the text ties to a
role: the name, then `is`/`was`/`as`/a comma and the role within a few words ("Sarah Chen is Initech's CTO",
"Hank Scorpio, VP of Operations"), or the role, then the name ("CTO Sarah Chen", "our contact is Hank Scorpio").
Capitalised words without a role nearby ("New York", "Deploy Pipeline") are not people. Confidence 0.85: below the
fingerprints' people (0.98) and the dictionary (0.95), whose spans are claimed first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

PERSON_CONFIDENCE = 0.85
ROLES = ("CEO|CTO|CFO|COO|CIO|CISO|CPO|CMO|VP|SVP|EVP|President|Chair|Chairman|Chairwoman|founder|co-founder|"
         "cofounder|owner|partner|director|manager|head|lead|engineer|developer|designer|architect|analyst|"
         "consultant|recruiter|administrator|admin|accountant|lawyer|counsel|intern|contact|point of contact|"
         "champion|sponsor|stakeholder|assistant|secretary|officer|coordinator|specialist|scientist|researcher")
_WORD = r"(?:[A-Z]['’])?[A-Z][a-z]+(?:-[A-Z]?[a-z]+)?"
_NAME = rf"(?P<name>{_WORD}(?: {_WORD}){{1,2}})"
# A name at the start of a sentence may follow these; they are never part of one.
_NOT_NAMES = frozenset({"The", "A", "An", "Our", "Their", "His", "Her", "Its", "My", "Your", "We", "This", "That",
                        "These", "Those", "Every", "Each", "New", "Old", "Head", "Lead", "Team", "Project"})
_NAME_THEN_ROLE = re.compile(
    rf"(?<![\w-]){_NAME}(?:,| is| was| as| who is| remains| becomes| became)(?: now| still)?"
    rf"(?: (?:the|a|an|our|their|its|his|her|[A-Z][\w&.-]*(?:'s|’s)))?(?: [\w-]+){{0,2}} (?:{ROLES})\b")
_ROLE_THEN_NAME = re.compile(rf"\b(?:{ROLES})(?: is| was|:|,)? {_NAME}(?![\w-])")


def people_in(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, name) of each person the text names by role, in order."""
    for pattern in (_NAME_THEN_ROLE, _ROLE_THEN_NAME):
        for match in pattern.finditer(text):
            words = match.group("name").split(" ")
            while words and words[0] in _NOT_NAMES:
                words = words[1:]
            if len(words) < 2:
                continue
            name = " ".join(words)
            end = match.end("name")
            yield end - len(name), end, name
