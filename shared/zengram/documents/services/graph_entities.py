"""One entity of the code graph with its one-hop neighbours: Agent Brain's `GET /graph/entity/{type}/{id}` (its
`GraphEntityRecord`, which the MCP `graph-entity://` resource reads), over the graph indexing builds.

Agent Brain's types are its SCHEMA-01 vocabulary (`Module`, `Class`, `Function`, `Method`, … and namespaced
`prefix:Name`); this graph holds modules, classes, functions and methods. An entity's id is its graph id
(`<file>::<qualified name>`) or, when that is unambiguous enough for a caller, its qualified or simple name (the
first match in id order)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from zengram.documents.domain.models import CodeEntity, EntityKind, Relation
from zengram.documents.ports import GraphStore
from zengram.kernel.errors import FeatureUnavailable, InvalidInput, NotFound

# Agent Brain's SCHEMA-01 entity types (agent_brain_server.models.graph.EntityType).
ENTITY_TYPES = ("Package", "Module", "Class", "Method", "Function", "Interface", "Enum", "DesignDoc", "UserDoc",
                "PRD", "Runbook", "README", "APIDoc", "Service", "Endpoint", "Database", "ConfigFile")
_NAMESPACED = re.compile(r"^[a-z][a-z0-9_-]{0,31}:[A-Za-z][A-Za-z0-9_]{0,63}$")
TYPE_OF_KIND = {EntityKind.MODULE: "Module", EntityKind.CLASS: "Class", EntityKind.FUNCTION: "Function",
                EntityKind.METHOD: "Method"}
NEIGHBOURS_MAX = 200


@dataclass(frozen=True)
class EntityRecord:
    entity: CodeEntity
    incoming: list[tuple[Relation, CodeEntity | None]]  # relations naming it, with the entity they start from
    outgoing: list[Relation]

    def body(self) -> dict[str, Any]:
        """Agent Brain's `GraphEntityRecord`: `{entity: {type, id, properties}, neighbors: {incoming, outgoing}}`."""
        return {
            "entity": {"type": TYPE_OF_KIND[self.entity.kind], "id": self.entity.id,
                       "properties": _properties(self.entity)},
            "neighbors": {
                "incoming": [{"type": TYPE_OF_KIND[source.kind] if source else "Entity",
                              "id": relation.source_entity, "predicate": relation.type.value.lower(),
                              "properties": {"source_chunk_id": relation.chunk_id, "source": relation.source}}
                             for relation, source in self.incoming],
                "outgoing": [{"type": "Entity", "id": relation.target, "predicate": relation.type.value.lower(),
                              "properties": {"source_chunk_id": relation.chunk_id, "source": relation.source}}
                             for relation in self.outgoing],
            },
        }


def check_entity_type(entity_type: str) -> None:
    if entity_type not in ENTITY_TYPES and not _NAMESPACED.fullmatch(entity_type):
        raise InvalidInput("entity_type", f"{entity_type!r} is not one of {', '.join(ENTITY_TYPES)} "
                                          "nor a namespaced type (prefix:Name)")


class GraphEntities:
    def __init__(self, graph: GraphStore, *, enabled: bool = True) -> None:
        self._graph = graph
        self._enabled = enabled

    def entity(self, entity_type: str, entity_id: str) -> EntityRecord:
        """400 for a type outside the vocabulary; 404 when no entity of that type has that id or name."""
        if not self._enabled:
            raise FeatureUnavailable("the code graph is disabled on this server (ZENGRAM_DOCUMENTS_GRAPH_ENABLED)")
        check_entity_type(entity_type)
        found = self._find(entity_type, entity_id)
        if found is None:
            raise NotFound(f"no {entity_type} entity {entity_id!r} in the code graph")
        incoming = self._graph.relations_to([found.name_key], NEIGHBOURS_MAX)
        sources = self._graph.entities(sorted({relation.source_entity for relation in incoming}))
        return EntityRecord(found, [(relation, sources.get(relation.source_entity)) for relation in incoming],
                            self._graph.relations_from([found.id], NEIGHBOURS_MAX))

    def project(self, source_tag: str) -> None:
        """Agent Brain's projection of caller-supplied facts (POST/DELETE /graph/project): not kept here."""
        raise FeatureUnavailable(f"graph projection is not supported by this server (source_tag {source_tag!r}): its "
                                 "graph is the code graph that indexing builds from the files; index the sources "
                                 "instead")

    def _find(self, entity_type: str, entity_id: str) -> CodeEntity | None:
        kinds = {kind for kind, name in TYPE_OF_KIND.items() if name == entity_type}
        if not kinds:
            return None
        exact = self._graph.entities([entity_id]).get(entity_id)
        if exact is not None:
            return exact if exact.kind in kinds else None
        named = [entity for entity in self._graph.named([entity_id.lower()], NEIGHBOURS_MAX) if entity.kind in kinds]
        return min(named, key=lambda entity: entity.id) if named else None


def _properties(entity: CodeEntity) -> dict[str, Any]:
    return {"name": entity.name, "qualified_name": entity.qualified_name, "source": entity.source,
            "language": entity.language, "line": entity.line, "source_chunk_id": entity.chunk_id}
