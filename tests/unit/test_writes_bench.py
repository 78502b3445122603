"""`bench/writes.py` times the raw embedder on the texts the server embeds for the same drafts (#18: the write-to-
embedder ratio compares like with like), measures the sizes of a store kind in interleaved rounds, and shows the
write path alone (the in-memory indexes off) beside the growth target it does not judge."""

from __future__ import annotations

import pytest
from zengram.assembly.containers import Container
from zengram.memory.domain.models import MemoryType
from zengram.memory.domain.requests import MemoryDraft

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


def series(kind: str, size: int, p50_ms: float, cpu_ms: float, *, index_upkeep: bool = True) -> writes.WriteSeries:
    latency = writes.Latency.of([p50_ms / 1000] * 3)
    return writes.WriteSeries(kind=kind, size=size, clients=1, writes=3, wall_seconds=1.0, writes_per_s=100.0,
                              server_cpu_ms_per_write=cpu_ms, latency=latency, load=(0.0, 0.0, 0.0),
                              index_upkeep=index_upkeep)


def test_the_growth_target_is_judged_on_the_store_as_shipped_and_the_write_path_alone_is_shown_beside_it() -> None:
    results = writes.WriteResults(started_at="2026-12-04T07:00:00+00:00")
    results.embedder = writes.EmbedderFigures("onnx-int8", 10, 200.0, 5.0, writes.Latency.of([0.005]))
    results.series = [series("thread", 1_000, 4.0, 8.0), series("thread", 100_000, 5.0, 9.0),
                      series("thread", 100_000, 4.2, 8.2, index_upkeep=False),
                      series("store", 1_000, 4.0, 8.0), series("store", 100_000, 4.4, 8.8)]

    rows = {target.name: target for target in writes.targets(results)}
    shipped = rows["per-write cost 1,000 → 100,000, one thread"]
    alone = rows["  … write path alone (indexes off at 100,000)"]

    assert (shipped.figure, shipped.verdict) == ("1.25× (4.0→5.0 ms; p50 1.25×)", "MISSED (met in CPU time)")
    assert (alone.figure, alone.cpu, alone.verdict) == ("1.05× (4.0→4.2 ms; p50 1.05×)", "1.02× (8.00→8.20 ms)", "—")
    assert "thread-100000 (no upkeep)" in writes.render(results)


def test_the_subjects_of_a_round_may_be_any_labels() -> None:
    subjects = [(1_000, True), (100_000, True), (100_000, False)]
    schedule = [subject for subject, _ in interleaved(subjects, list(range(6)), rounds=2)]
    assert schedule == [*subjects, subjects[1], subjects[2], subjects[0]]


def test_growth_is_judged_on_the_mean_time_per_write_not_the_p50() -> None:
    low, high = series("store", 1_000, 4.0, 8.0), series("store", 100_000, 4.0, 8.0)
    high.latency = writes.Latency(count=3, mean_ms=5.2, p50_ms=4.4, p95_ms=9.0, p99_ms=9.0, min_ms=2.0, max_ms=9.0)
    results = writes.WriteResults(started_at="2026-12-04T07:00:00+00:00")
    results.embedder = writes.EmbedderFigures("onnx-int8", 10, 200.0, 5.0, writes.Latency.of([0.005]))
    results.series = [low, high]

    growth = next(t for t in writes.targets(results) if t.name.startswith("per-write cost"))

    assert growth.figure == "1.30× (4.0→5.2 ms; p50 1.10×)"
    assert growth.met is False
