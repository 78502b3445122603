"""The pure parts of `bench/peers`: the workload handed to the peer, its answers, the figures and ratios."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bench.peers.figures import Machine, SystemFigures, cpu_model, figures_of, outcomes_of, ratios, render
from bench.peers.systems import Floor, rotated
from bench.peers.workload import Answer, answer_json, answers_from_json, conversation_json, selected
from bench.recall.data import Conversation, Question, Turn
from bench.recall.metrics import Outcome
from tests.support import HashingEmbedder

DATE = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def conversation(sample_id: str = "conv-1") -> Conversation:
    turns = [Turn((1, 1), "Ann", "Ann: I adopted a grey cat named Pixel", DATE),
             Turn((1, 2), "Bob", "Bob: my bike got a flat tyre on the hill", DATE),
             Turn((2, 1), "Ann", "Ann: Pixel sleeps on the piano all day", DATE)]
    questions = [Question(sample_id, "What is the name of Ann's cat?", 4, frozenset({(1, 1)})),
                 Question(sample_id, "Where does the cat sleep and what is it called?", 1, frozenset({(1, 1), (2, 1)})),
                 Question(sample_id, "What did Bob adopt?", 5, frozenset({(1, 2)}))]
    return Conversation(sample_id, turns, questions)


def figures(name: str, turns: int, seconds: float, recall: float, p50: float, p95: float) -> SystemFigures:
    return SystemFigures(name=name, turns=turns, ingest_seconds=seconds, questions=10, recall_at_10=recall,
                         p50_ms=p50, p95_ms=p95)


def test_selected_keeps_the_named_conversations_and_only_questions_of_categories_1_to_4() -> None:
    chosen = selected([conversation("conv-1"), conversation("conv-2")], ["conv-2"])

    assert [c.sample_id for c in chosen] == ["conv-2"]
    assert [q.category for q in chosen[0].questions] == [4, 1]
    assert len(selected([conversation("conv-1"), conversation("conv-2")], [])) == 2
    with pytest.raises(ValueError, match="conv-9"):
        selected([conversation()], ["conv-9"])


def test_the_workload_carries_every_turn_and_question_in_order() -> None:
    only = conversation_json(conversation())

    assert only["id"] == "conv-1"
    assert [t["dia_id"] for t in only["turns"]] == [[1, 1], [1, 2], [2, 1]]
    assert only["turns"][1]["content"] == "Bob: my bike got a flat tyre on the hill"
    assert only["questions"][0] == "What is the name of Ann's cat?"


def test_answers_survive_the_trip_through_json_and_must_be_one_per_question() -> None:
    conversations = [conversation()]
    raw = [answer_json([[(1, 1)], [], [(2, 1), (1, 2)]], 12.5), answer_json([], 3.0), answer_json([[(1, 2)]], 4.0)]

    answers = answers_from_json(raw, conversations)

    assert answers[0] == Answer([frozenset({(1, 1)}), frozenset(), frozenset({(2, 1), (1, 2)})], 12.5)
    assert answers[1].ranked == []
    with pytest.raises(ValueError, match="answered 2 questions, 3 were asked"):
        answers_from_json(raw[:2], conversations)


def test_figures_read_recall_at_10_and_latency_percentiles_from_the_outcomes() -> None:
    hit_first = Outcome(4, frozenset({(1, 1)}), [frozenset({(1, 1)})], 10.0)
    half_found = Outcome(1, frozenset({(1, 1), (2, 1)}), [frozenset({(9, 9)})] * 9 + [frozenset({(2, 1)})], 30.0)
    found_too_late = Outcome(2, frozenset({(1, 2)}), [frozenset({(9, 9)})] * 10 + [frozenset({(1, 2)})], 50.0)

    result = figures_of("x", 200, 4.0, [hit_first, half_found, found_too_late])

    assert result.recall_at_10 == pytest.approx((1 + 0.5 + 0) / 3)
    assert result.questions == 3
    assert result.p50_ms == pytest.approx(30.0)
    assert result.p95_ms == pytest.approx(48.0)  # numpy's linear interpolation between 30 and 50
    assert result.turns_per_second == pytest.approx(50.0)


def test_outcomes_pair_each_question_with_its_answer_and_refuse_a_count_mismatch() -> None:
    conversations = [conversation()]
    answers = [Answer([frozenset({(1, 1)})], 1.0), Answer([], 2.0), Answer([], 3.0)]

    outcomes = outcomes_of(conversations, answers)

    assert [(o.category, o.latency_ms) for o in outcomes] == [(4, 1.0), (1, 2.0), (5, 3.0)]
    assert outcomes[1].evidence == frozenset({(1, 1), (2, 1)})
    with pytest.raises(ValueError):
        outcomes_of(conversations, answers[:2])


def test_ratios_are_ours_divided_by_the_other_for_every_figure() -> None:
    ours = figures("ours", 1000, 10.0, 0.75, 30.0, 60.0)
    peer = figures("mem0", 1000, 40.0, 0.50, 120.0, 240.0)

    result = ratios(ours, peer)

    assert (result.ingest, result.p50, result.p95, result.recall) == pytest.approx((4.0, 0.25, 0.25, 1.5))
    assert (result.ours, result.other) == ("ours", "mem0")


def test_the_report_names_the_machine_its_load_and_every_figure() -> None:
    machine = Machine(at=datetime(2026, 12, 2, 8, 0, tzinfo=UTC), cpu="Test CPU", cores=2, system="Linux",
                      python="3.11.7", loads=(("start", (3.0, 2.5, 2.0)), ("the end", (4.0, 3.0, 2.0))))
    ours = figures("ours", 1000, 10.0, 0.75, 30.0, 60.0)
    peer = figures("mem0", 1000, 40.0, 0.50, 120.0, 240.0)

    text = render(machine, [ours, peer], [ratios(ours, peer)])

    assert "2026-12-02 08:00 UTC on Test CPU, 2 cores" in text
    assert "3.0 / 2.5 / 2.0 at start, 4.0 / 3.0 / 2.0 at the end" in text
    assert "| ours | 1000 | 100.0 | 10 | 30.0 | 60.0 | 0.750 |" in text
    assert "| mem0 | 1000 | 25.0 | 10 | 120.0 | 240.0 | 0.500 |" in text
    assert "| ours ÷ mem0 | 4.00× | 0.25× | 0.25× | 1.50× |" in text


def test_cpu_model_reads_the_model_name_line() -> None:
    assert cpu_model("processor\t: 0\nmodel name\t: Intel(R)  Xeon(R) Processor\nflags\t: fpu\n") == \
        "Intel(R) Xeon(R) Processor"
    assert cpu_model("processor\t: 0\n") == "unknown"


def test_rotation_changes_who_goes_first_every_conversation() -> None:
    assert [rotated(["floor", "ours", "mem0"], turn) for turn in range(4)] == [
        ["floor", "ours", "mem0"], ["ours", "mem0", "floor"], ["mem0", "floor", "ours"], ["floor", "ours", "mem0"]]
    assert rotated([], 3) == []


def test_the_floor_ranks_turns_by_exact_cosine_and_embeds_one_turn_per_call() -> None:
    embedder = HashingEmbedder()
    chat = conversation()
    question = Question("conv-1", "Pixel sleeps on the piano all day", 4, frozenset({(2, 1)}))
    chat = Conversation(chat.sample_id, chat.turns, [question])
    floor = Floor(embedder)

    seconds = floor.ingest(chat)
    (outcome,) = floor.ask(chat)

    assert seconds > 0
    assert embedder.calls == 1 + len(chat.turns) + 1  # warm-up, one per turn, one per question
    assert outcome.ranked[0] == frozenset({(2, 1)})
    assert sorted(next(iter(ids)) for ids in outcome.ranked) == [(1, 1), (1, 2), (2, 1)]
    assert outcome.evidence == frozenset({(2, 1)})
    assert outcome.latency_ms > 0
