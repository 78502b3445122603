"""`bench/writes.py` times the raw embedder on the texts the server embeds for the same drafts (#18: the write-to-
embedder ratio compares like with like)."""

from __future__ import annotations

from zengram.bootstrap import Container
from zengram.domain.models import MemoryType
from zengram.domain.requests import MemoryDraft

from bench.writes import embedded_text


def test_the_raw_embedder_times_the_text_a_write_embeds(hashing_container: Container) -> None:
    drafts = [
        MemoryDraft(type=MemoryType.FACT, content="Acme pays on the 5th", key="acme-pay-day", source_agent="ops-bot",
                    client_id="acme"),
        MemoryDraft(type=MemoryType.STATUS, content="The payroll export is green", subject="payroll-export",
                    status_value="green", source_agent="ops-bot", client_id="acme"),
        MemoryDraft(type=MemoryType.EVENT, content="The invoices moved to the new bucket", source_agent="ops-bot",
                    client_id="acme"),
    ]
    sync = hashing_container.memory.index_sync

    for draft in drafts:
        stored = hashing_container.memory.store(draft).memory
        assert embedded_text(draft) == sync.embedding_texts([stored])[0]
    assert embedded_text(drafts[0]) != drafts[0].content  # the key is embedded too
