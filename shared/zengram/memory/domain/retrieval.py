"""Retrieval profiles: the heuristics tuned for one kind of content, named and switched together
(ZENGRAM_RETRIEVAL_PROFILE; docs/retrieval-profiles.md).

`conversation` (the default) is tuned on conversation turns stored as "Speaker: text" events (LoCoMo,
bench/recall/RESULTS.md): a boost for turns by the speaker a question names, a boost for turns that say when if the
question asks when, and neighbouring turns of the same thread indexed as keyword context. `plain` switches all of
them off: memories are ranked on their own words and meaning alone.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from zengram.memory.domain.query import QueryBoosts

ProfileName = Literal["conversation", "plain"]


@dataclass(frozen=True)
class RetrievalProfile:
    name: ProfileName
    speaker_boost: float  # × for a "Speaker: text" memory whose speaker the query names (1: off)
    time_boost: float  # × for a memory that says when, if the query asks when (1: off)
    context_turns: int  # earlier events of the same thread indexed with an event (keyword text; 0: off)
    context_next_turns: int  # later events of the same thread indexed with it (0: off)

    @property
    def query_boosts(self) -> QueryBoosts:
        return QueryBoosts(speaker=self.speaker_boost, time=self.time_boost)

    def overridden(self, *, speaker_boost: float | None = None, time_boost: float | None = None,
                   context_turns: int | None = None, context_next_turns: int | None = None) -> RetrievalProfile:
        """This profile with the given values (None: the profile's own) in place of its own."""
        return replace(
            self,
            speaker_boost=self.speaker_boost if speaker_boost is None else speaker_boost,
            time_boost=self.time_boost if time_boost is None else time_boost,
            context_turns=self.context_turns if context_turns is None else context_turns,
            context_next_turns=self.context_next_turns if context_next_turns is None else context_next_turns,
        )


CONVERSATION = RetrievalProfile("conversation", speaker_boost=1.3, time_boost=1.2, context_turns=2,
                                context_next_turns=1)
PLAIN = RetrievalProfile("plain", speaker_boost=1.0, time_boost=1.0, context_turns=0, context_next_turns=0)
PROFILES: dict[ProfileName, RetrievalProfile] = {profile.name: profile for profile in (CONVERSATION, PLAIN)}
DEFAULT_PROFILE = CONVERSATION
