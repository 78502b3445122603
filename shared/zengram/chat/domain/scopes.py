"""The search-index scopes of the chat layer's documents (`zengram.kernel.search`: one index for the product).

Each part is percent-encoded, so no two (project, subject) pairs share a scope whatever characters they hold.
"""

from __future__ import annotations

from urllib.parse import quote


def _part(text: str) -> str:
    return quote(text, safe="")


def subject_scope(project_id: str, subject_id: str) -> str:
    """A subject's private memories."""
    return f"mnx-subject:{_part(project_id)}:{_part(subject_id)}"


def project_scope(project_id: str) -> str:
    """Memories every subject of the project sees (shared and public ones)."""
    return f"mnx-project:{_part(project_id)}"


def record_scope(project_id: str, type_name: str) -> str:
    """The records of one schema."""
    return f"mnx-record:{_part(project_id)}:{_part(type_name)}"
