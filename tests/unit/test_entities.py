"""Entity extraction without an LLM (semantics.md, "Entities"): sources, confidences, word boundaries, aliases."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from zengram.memory.domain import entities as entities_module
from zengram.memory.domain.clients import ClientFingerprint
from zengram.memory.domain.entities import (
    MAX_ENTITIES_PER_MEMORY,
    EntityRef,
    EntityType,
    aliases_of,
    canonical_entity_name,
    entity_key,
    extract_entities,
    most_mentioned,
)

T0 = datetime(2026, 3, 1, tzinfo=UTC)
ACME = ClientFingerprint(client_id="acme-corp", name="Acme Corporation", aliases=["Acme Corp", "ACME"],
                         people=["Jane Doe"], domains=["acme.com"], created_at=T0, updated_at=T0)


def found(text: str, known_clients: Sequence[ClientFingerprint] = (),
          known_agents: Sequence[str] = ()) -> list[tuple[str, str, float]]:
    return [(ref.name, ref.type.value, ref.confidence)
            for ref in extract_entities(text, known_clients, known_agents)]


def test_dictionary_alias_and_domain_sources_with_their_confidences() -> None:
    assert found("Next.js on k8s, billing on Stripe, status page at status.example.io") == [
        ("Next.js", "technology", 0.95), ("Kubernetes", "technology", 0.90), ("Stripe", "service", 0.95),
        ("status.example.io", "domain", 0.85),
    ]


def test_matching_is_case_insensitive_on_whole_words() -> None:
    assert found("NEXT.JS and postgresql and KUBERNETES") == [
        ("Next.js", "technology", 0.95), ("PostgreSQL", "technology", 0.95), ("Kubernetes", "technology", 0.95)]
    assert found("pythonic code, dockerized builds, a slackline, kafkaesque queues") == []


@pytest.mark.parametrize("text", [
    "we need a reactive design", "they react quickly", "go live on Monday", "render the page",
    "a linear scan", "a swift reply", "zoom in on the chart", "pure notion of time",
])
def test_everyday_words_are_not_entities_unless_written_as_the_name(text: str) -> None:
    assert found(text) == []


def test_everyday_word_names_match_with_their_capital() -> None:
    assert [name for name, _, _ in found("React UI, Go workers, tickets in Linear, deploys on Render")] == [
        "React", "Go", "Linear", "Render"]


def test_the_longest_name_wins_and_each_entity_is_listed_once_in_order() -> None:
    assert found("AWS Lambda calls DynamoDB; AWS Lambda again; then AWS") == [
        ("AWS Lambda", "technology", 0.95), ("DynamoDB", "technology", 0.95), ("AWS", "technology", 0.95)]
    assert found("postgres now, PostgreSQL later") == [("PostgreSQL", "technology", 0.95)]  # the surer source


def test_known_clients_people_domains_and_agents() -> None:
    text = "Jane Doe from Acme Corp asked n8n-router about acme.com; ACME renews in May"
    assert found(text, known_clients=[ACME], known_agents=["n8n-router"]) == [
        ("Jane Doe", "person", 0.98), ("acme-corp", "client", 0.98), ("n8n-router", "agent", 0.98),
        ("acme.com", "domain", 0.98)]


def test_hostnames_are_domains_but_file_names_and_frameworks_are_not() -> None:
    assert found("mail ops@www.globex.co.uk or see https://www.globex.com/pricing") == [
        ("globex.co.uk", "domain", 0.85), ("globex.com", "domain", 0.85)]
    assert found("edit config.json and index.ts for the Vue.js app") == [("Vue.js", "technology", 0.95)]
    assert found("Fly.io hosts it") == [("Fly.io", "service", 0.95)]


def test_at_most_the_cap_of_entities_per_memory() -> None:
    many = ", ".join(["Python", "Java", "Kotlin", "Scala", "Ruby", "PHP", "Elixir", "Erlang", "Haskell", "Dart",
                      "Lua", "Perl", "Julia", "Bash", "SQL", "GraphQL", "HTML", "CSS", "Sass", "Zig", "Nuxt",
                      "Remix", "Gatsby", "Astro", "Svelte", "Angular", "jQuery", "Redux", "Vite", "Webpack",
                      "esbuild", "Babel", "Deno", "Bun", "NestJS", "Django", "Flask", "FastAPI", "Laravel",
                      "Symfony", "Phoenix", "Gin", "Pydantic"])
    assert len(extract_entities(many)) == MAX_ENTITIES_PER_MEMORY


@pytest.mark.parametrize(("name", "canonical"), [
    ("nextjs", "Next.js"), ("NEXT.JS", "Next.js"), ("next js", "Next.js"), ("postgres", "PostgreSQL"),
    ("k8s", "Kubernetes"), ("react", "React"), ("golang", "Go"), ("  Some   Thing ", "Some Thing"),
    ("FooBar", "FooBar"),
])
def test_canonical_entity_name(name: str, canonical: str) -> None:
    assert canonical_entity_name(name) == canonical


def test_keys_and_aliases() -> None:
    assert entity_key(" Next.JS ") == "next.js"
    assert aliases_of("PostgreSQL") == ["postgre sql", "postgres", "psql"]
    assert aliases_of("Unheard Of") == []


def test_most_mentioned_counts_each_memory_once() -> None:
    docker, slack = EntityRef(name="Docker", type=EntityType.TECHNOLOGY), EntityRef(name="Slack",
                                                                                    type=EntityType.SERVICE)
    ranked = most_mentioned([[docker, docker], [docker, slack], [slack], []], limit=5)
    assert [(m.name, m.mentions) for m in ranked] == [("Docker", 2), ("Slack", 2)]
    assert most_mentioned([[docker], [slack]], limit=1)[0].name == "Docker"  # ties by name


def _plain_alternation(terms: Sequence[str], *, ignore_case: bool) -> re.Pattern[str]:
    """The straightforward form of a term pattern: every term, longest first, on whole words."""
    body = "|".join(re.escape(term) for term in sorted(set(terms), key=lambda term: (-len(term), term)))
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE if ignore_case else 0)


@pytest.mark.parametrize(("terms", "ignore_case"), [
    (sorted(entities_module._dictionary()), True), (sorted(entities_module._case_sensitive()), False),
    (sorted(entities_module.ALIASES), True), (["AWS", "AWS Lambda", "aws-sdk", "a", "ab", "abc", "C++", "C#"], True),
])
def test_term_patterns_find_what_a_plain_alternation_of_the_terms_finds(terms: list[str], ignore_case: bool) -> None:
    """The prefix tree (`AWS(?: Lambda)?`) is only faster: the same spans, the longest term that fits winning."""
    fast, plain = entities_module._term_pattern(terms, ignore_case=ignore_case), _plain_alternation(
        terms, ignore_case=ignore_case)
    assert fast is not None
    rng = random.Random(18)
    pieces = [*terms, *(term.upper() for term in terms[:50]), " ", ".", "-", "_", "x", "Lambda", "\n"]
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
        assert [m.span() for m in fast.finditer(text)] == [m.span() for m in plain.finditer(text)], text


# -- people named by their role (issue 37) ------------------------------------------------------------------


@pytest.mark.parametrize(("text", "person"), [
    ("Sarah Chen is Initech's CTO", "Sarah Chen"),
    ("Globex's main contact is Hank Scorpio, VP of Operations", "Hank Scorpio"),
    ("CTO Sarah Chen approved the Kafka migration", "Sarah Chen"),
    ("Our new CTO is Priya Patel", "Priya Patel"),
    ("Mary-Jane O'Neil was the lead engineer on the billing rewrite", "Mary-Jane O'Neil"),
])
def test_a_person_named_by_their_role_is_a_person(text: str, person: str) -> None:
    assert (person, "person", 0.85) in found(text)


@pytest.mark.parametrize("text", ["We moved the office to New York last year", "Deploy Pipeline is green again",
                                  "The Billing Service is owned by the platform team", "Met with John Smith today"])
def test_capitalised_words_without_a_role_are_not_people(text: str) -> None:
    assert [name for name, type_, _ in found(text) if type_ == "person"] == []


def test_a_fingerprint_person_keeps_its_higher_confidence() -> None:
    assert found("Jane Doe is Acme's CTO", [ACME])[0] == ("Jane Doe", "person", 0.98)


HOST_SHAPES = ["api.acme.com", "ACME.IO", "x.co", "foo-bar.dev", "1.com", "a.b.c.org", "www.Example.NET",
               "\u212a.com", "tiny.sh.", "(see docs.example.ai)", "mail@example.org", "1.5.ai"]


def test_the_host_name_hint_holds_wherever_a_host_name_is_found() -> None:
    """Extraction skips the host name pattern in texts without its hint: the hint must be in every text the
    pattern matches (random texts built from host-shaped pieces, and the shapes themselves)."""
    pieces = [*HOST_SHAPES, ".", "-", " ", "a", "Z", "9", "com", "io", "\u212a", "\u017f", "é", "..", "_"]
    draw = random.Random(38)
    texts = [*HOST_SHAPES, *("".join(draw.choices(pieces, k=draw.randint(1, 8))) for _ in range(5000))]
    matched = [text for text in texts if entities_module._HOSTNAME.search(text)]
    assert len(matched) > 1000
    assert [text for text in matched if not entities_module._HOSTNAME_HINT.search(text)] == []
    assert found("status at docs.example.ai, not at home.") == [("docs.example.ai", "domain", 0.85)]
