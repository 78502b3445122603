"""One source of defaults: the retrieval profiles hold the conversation heuristics, ScoringConfig and ContextPolicy the
rest, and Settings takes its defaults from them (so `Settings()` and the domain's defaults never disagree)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from zengram.memory.domain.context import ContextPolicy
from zengram.memory.domain.graph import GraphPolicy
from zengram.memory.domain.query_plan import QueryExtras
from zengram.memory.domain.rerank import RerankPolicy
from zengram.memory.domain.retrieval import CONVERSATION, DEFAULT_PROFILE, PLAIN, PROFILES
from zengram.memory.domain.scoring import ScoringConfig
from zengram.memory.domain.temporal import TemporalMode
from zengram.settings import Settings


@pytest.fixture(autouse=True)
def _no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ZENGRAM_RETRIEVAL_PROFILE", "ZENGRAM_SPEAKER_BOOST", "ZENGRAM_TIME_BOOST", "ZENGRAM_FUSION",
                 "ZENGRAM_INDEX_CONTEXT_TURNS", "ZENGRAM_INDEX_CONTEXT_NEXT_TURNS", "ZENGRAM_TEMPORAL_RESOLVER",
                 "ZENGRAM_TEMPORAL_BOOST", "ZENGRAM_QUERY_EXPANSION", "ZENGRAM_GRAPH_RETRIEVAL",
                 "GRAPH_RETRIEVAL_ENABLED", "ZENGRAM_GRAPH_WEIGHT", "RRF_GRAPH_WEIGHT", "ZENGRAM_RERANK_ENABLED",
                 "RERANK_ENABLED", "ZENGRAM_RERANK_CANDIDATES", "RERANK_CANDIDATES", "ZENGRAM_RERANK_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)


def test_the_settings_defaults_are_the_domain_defaults(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    assert settings.retrieval() == DEFAULT_PROFILE == CONVERSATION
    assert settings.scoring() == ScoringConfig()
    assert settings.context_policy() == ContextPolicy()
    assert (settings.scoring().fusion, settings.scoring().speaker_boost, settings.scoring().time_boost) == (
        "linear", 1.3, 1.2)
    assert (settings.context_policy().turns, settings.context_policy().next_turns) == (2, 1)


def test_the_plain_profile_switches_every_conversation_heuristic_off(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, retrieval_profile="plain")
    assert settings.retrieval() == PLAIN
    assert (settings.scoring().speaker_boost, settings.scoring().time_boost) == (1.0, 1.0)
    assert not settings.context_policy().enabled
    assert settings.scoring().fusion == "linear"  # fusion is no conversation heuristic: the profile leaves it


def test_a_setting_of_its_own_overrides_one_value_of_the_profile(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, retrieval_profile="plain", index_context_turns=1, speaker_boost=1.5)
    assert (settings.scoring().speaker_boost, settings.scoring().time_boost) == (1.5, 1.0)
    assert (settings.context_policy().turns, settings.context_policy().next_turns) == (1, 0)
    assert Settings(data_dir=tmp_path, time_boost=1).scoring().time_boost == 1.0  # conversation, "when" boost off


def test_the_profile_is_read_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZENGRAM_RETRIEVAL_PROFILE", "plain")
    assert Settings(data_dir=tmp_path).retrieval() == PLAIN
    monkeypatch.setenv("ZENGRAM_RETRIEVAL_PROFILE", "chatty")
    with pytest.raises(ValueError, match="retrieval_profile"):
        Settings(data_dir=tmp_path)


def test_every_profile_is_listed_under_its_name() -> None:
    assert PROFILES == {"conversation": CONVERSATION, "plain": PLAIN}
    assert ContextPolicy().window == timedelta(hours=1)


def test_the_retrieval_extras_defaults_are_the_domain_defaults_and_off(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    assert settings.query_extras() == QueryExtras()
    assert settings.graph_policy() == GraphPolicy()
    assert settings.rerank_policy() == RerankPolicy()
    extras = settings.query_extras()
    assert (extras.temporal_windows, extras.temporal_boost, extras.query_expansion) == (TemporalMode.OFF, False, False)
    assert not settings.graph_retrieval and not settings.rerank_enabled
    assert settings.scoring().graph_weight == 0.1  # the measured best, for whoever turns the graph path on
    assert (settings.rerank_policy().candidates, settings.rerank_policy().timeout_seconds) == (40, 3.0)


@pytest.mark.parametrize("profile", ["conversation", "plain"])
def test_no_profile_turns_an_extra_on(tmp_path: Path, profile: str) -> None:
    settings = Settings(data_dir=tmp_path, retrieval_profile=profile)
    assert settings.query_extras() == QueryExtras()
    assert settings.graph_policy() == GraphPolicy() and settings.rerank_policy() == RerankPolicy()
    assert settings.scoring().graph_weight == ScoringConfig().graph_weight


def test_an_extra_set_on_its_own_keeps_the_other_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZENGRAM_TEMPORAL_RESOLVER", "calendar")
    monkeypatch.setenv("RRF_GRAPH_WEIGHT", "0.5")  # upstream's name
    monkeypatch.setenv("RERANK_CANDIDATES", "60")
    monkeypatch.setenv("GRAPH_RETRIEVAL_ENABLED", "true")
    settings = Settings(data_dir=tmp_path)
    assert settings.graph_policy() == GraphPolicy(enabled=True)
    assert settings.query_extras() == QueryExtras(temporal_windows=TemporalMode.CALENDAR)
    assert settings.scoring().graph_weight == 0.5
    assert settings.rerank_policy() == RerankPolicy(candidates=60)
