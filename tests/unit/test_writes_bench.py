"""`bench/writes.py` times the raw embedder on the texts the server embeds for the same drafts (#18: the write-to-
embedder ratio compares like with like), and measures the sizes of a store kind in interleaved rounds."""

from __future__ import annotations

import pytest
from zengram.bootstrap import Container
from zengram.domain.models import MemoryType
from zengram.domain.requests import MemoryDraft

from bench import writes
from bench.targets import Target
from bench.writes import embedded_text, interleaved


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


def test_every_size_gets_every_measured_write_once_in_order() -> None:
    schedule = list(interleaved([1_000, 10_000, 100_000], list(range(10)), rounds=3))

    for size in (1_000, 10_000, 100_000):
        assert [write for measured, share in schedule if measured == size for write in share] == list(range(10))


def test_the_size_that_starts_a_round_rotates() -> None:
    schedule = list(interleaved([1_000, 10_000, 100_000], list(range(9)), rounds=3))

    assert [size for size, _ in schedule] == [1_000, 10_000, 100_000, 10_000, 100_000, 1_000,
                                              100_000, 1_000, 10_000]


@pytest.mark.parametrize("option", ["--writes", "--rounds", "--clients", "--import-records", "--import-batch"])
def test_a_count_of_nothing_is_refused_before_any_server_starts(option: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        writes.parse_args([option, "0"])
    assert refused.value.code == 2
    assert f"argument {option}: must be at least 1, not 0" in capsys.readouterr().err


def test_a_verdict_says_met_missed_or_missed_only_in_wall_time_without_naming_a_cause() -> None:
    def target(met: bool | None, cpu_met: bool | None = None) -> Target:
        return Target("per-write cost", "≤ 1.2×", "p50 1.24×", met, "1.17×", cpu_met)

    assert target(True).verdict == "met"
    assert target(False, cpu_met=False).verdict == "MISSED"
    assert target(False, cpu_met=True).verdict == "MISSED (met in CPU time)"
    assert target(None).verdict == "not measured"
