"""Record type and field names: their patterns, apart from the record models, so a chat turn's request (`mnx.records
.tables`) validates type names without importing them (#18 §5)."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

TYPE_NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"
FIELD_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
TypeName = Annotated[str, StringConstraints(pattern=TYPE_NAME_PATTERN)]
FieldName = Annotated[str, StringConstraints(pattern=FIELD_NAME_PATTERN)]
