"""What a completion with recall on knows of its subject beside its memories: the truth of each claim slot (and,
once profiles exist, the profile's fields). Injected with the memories, in the system message (domain/assembly.py)."""

from __future__ import annotations

from typing import Any

from zengram.chat.services.claims import ClaimService


class SubjectKnowledge:
    def __init__(self, claims: ClaimService) -> None:
        self._claims = claims

    def facts(self, project_id: str, subject_id: str) -> dict[str, Any]:
        """slot → current value, slots by name."""
        return dict(self._claims.injected(project_id, subject_id))
