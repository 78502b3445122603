"""client_id auto-resolution (semantics.md): normalisation, whole-word matching, weights, threshold, ties."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from zengram.memory.domain.client_resolution import ClientTerms, client_scores, normalise, resolve_client
from zengram.memory.domain.clients import ClientFingerprint

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def fingerprint(client_id: str, **terms: Any) -> ClientFingerprint:
    return ClientFingerprint(client_id=client_id, created_at=NOW, updated_at=NOW, **terms)


ACME = fingerprint("acme-corp", name="Acme Corporation", aliases=["Acme", "Acme Corporation"],
                   people=["Jane Doe", "Raúl"], domains=["acme.com"], keywords=["rockets", "anvils"])
GLOBEX = fingerprint("globex", aliases=["Globex", "Globex Corp"], people=["Hank Scorpio"],
                     domains=["globex.io"], keywords=["rockets", "volcano"])
CLIENTS = [ClientTerms.of(ACME), ClientTerms.of(GLOBEX)]


@pytest.mark.parametrize(("text", "expected"), [
    ("Café-Zürich!", "cafe zurich"),
    ("  ACME's   Q3_roadmap ", "acme s q3 roadmap"),
    ("Ångström naïve", "angstrom naive"),
    ("", ""),
])
def test_normalise_strips_accents_case_and_punctuation(text: str, expected: str) -> None:
    assert normalise(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Call with Acme about the renewal", "acme-corp"),  # alias
    ("acme-corp asked for a quote", "acme-corp"),  # client_id, normalised to "acme corp"
    ("Mail from ops@acme.com bounced", "acme-corp"),  # domain
    ("Jane Doe wants more anvils", "acme-corp"),  # person 1 + keyword 1 = threshold
    ("Spoke to Raul and Jane Doe", "acme-corp"),  # two people; the accent-free spelling still matches Raúl
    ("GLOBEX CORP signed", "globex"),  # multi-word alias, any case
])
def test_one_client_at_or_above_the_threshold_wins(text: str, expected: str) -> None:
    assert resolve_client(text, CLIENTS) == expected


@pytest.mark.parametrize("text", [
    "Jane Doe joined the call",  # one person only: 1 < 2
    "rockets are cheaper this year",  # a keyword both clients share: 1 each
    "Acmeville council approved the road",  # a partial word is no match
    "acmes and globexes",  # neither is a whole word
    "The weather is nice",
    "",
])
def test_below_the_threshold_stays_global(text: str) -> None:
    assert resolve_client(text, CLIENTS) == "global"


def test_a_tie_above_the_threshold_stays_global() -> None:
    text = "Acme and Globex are merging"
    assert client_scores(text, CLIENTS) == {"acme-corp": 3, "globex": 3}
    assert resolve_client(text, CLIENTS) == "global"


def test_two_clients_passing_with_different_scores_still_stay_global() -> None:
    """The rule is 'exactly one passes', not 'the best wins'."""
    text = "Acme (acme.com) mentioned Hank Scorpio's volcano"
    scores = client_scores(text, CLIENTS)
    assert scores["acme-corp"] > scores["globex"] >= 2
    assert resolve_client(text, CLIENTS) == "global"


def test_a_multi_word_alias_needs_all_its_words_in_order() -> None:
    only_first_word = [ClientTerms.of(fingerprint("gx", aliases=["Globex Corp"]))]
    assert resolve_client("Globex announced", only_first_word) == "global"
    assert resolve_client("corp of Globex", only_first_word) == "global"
    assert resolve_client("the Globex-Corp deal", only_first_word) == "gx"


def test_a_term_counts_once_with_its_highest_weight() -> None:
    """'acme' as alias and keyword, mentioned three times, is still one strong match."""
    terms = ClientTerms.of(fingerprint("a1", aliases=["Acme"], keywords=["acme", "ACME"]))
    assert terms.weights == {"a1": 3, "acme": 3}
    assert client_scores("acme acme acme", [terms]) == {"a1": 3}


def test_blank_terms_are_ignored() -> None:
    terms = ClientTerms.of(fingerprint("c1", aliases=["!!!", " "], keywords=["-"]))
    assert terms.weights == {"c1": 3}
    assert resolve_client("!!! - anything", [terms]) == "global"


def test_accented_fingerprint_terms_match_plain_text_and_vice_versa() -> None:
    clients = [ClientTerms.of(fingerprint("nestle", aliases=["Nestlé"])),
               ClientTerms.of(fingerprint("zurich-re", aliases=["Zurich Re"]))]
    assert resolve_client("nestle shipment delayed", clients) == "nestle"
    assert resolve_client("ZÜRICH RE renewed", clients) == "zurich-re"


def test_no_known_clients_means_global() -> None:
    assert resolve_client("Acme Corp", []) == "global"
