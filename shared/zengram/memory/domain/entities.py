"""Entities: what memories are about (clients, people, technologies, services…), found without an LLM.

`extract_entities` follows semantics.md: known client ids/aliases and agent names (confidence 0.98), a
technology dictionary and known systems/services (0.95), the alias table (0.90), hostnames as domains (0.85),
people named by their role (0.85, `zengram.memory.domain.people`); anything under 0.80 is dropped. Matching is
case-insensitive on whole words, except for the few names that
are also everyday English words ("React", "Go", "Swift"…), which must be written with their capital.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints, field_serializer

from zengram.kernel.text_rules import NotBlank
from zengram.memory.domain.people import PERSON_CONFIDENCE, people_in

if TYPE_CHECKING:  # models.py imports this module: no import of it (or of clients.py) at runtime here
    from zengram.memory.domain.clients import ClientFingerprint

MIN_CONFIDENCE = 0.80
MAX_ENTITIES_PER_MEMORY = 40  # one DynamoDB transaction per entity holds its edge changes (≤ 100 actions)


class EntityType(StrEnum):
    CLIENT = "client"
    PERSON = "person"
    SYSTEM = "system"
    SERVICE = "service"
    DOMAIN = "domain"
    TECHNOLOGY = "technology"
    WORKFLOW = "workflow"
    AGENT = "agent"


class EntityRef(BaseModel):
    """One entity a memory mentions: its canonical name, type, and how sure extraction was."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: EntityType
    confidence: float = Field(default=1.0, ge=0, le=1)

    @property
    def key(self) -> str:
        return entity_key(self.name)


class EntityRecord(BaseModel):
    """An entity as the registry holds it."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: EntityType
    mention_count: int
    first_seen: datetime | None = None
    last_seen: datetime | None = None

    @field_serializer("first_seen", "last_seen", when_used="json")
    def _timestamp_text(self, moment: datetime | None) -> str | None:
        from zengram.kernel.timestamps import format_timestamp

        return format_timestamp(moment) if moment is not None else None


class RelatedEntity(BaseModel):
    """A co-occurrence edge seen from one entity: `strength` memories mention both."""

    model_config = ConfigDict(frozen=True)

    name: str
    strength: int


class GraphEdge(BaseModel):
    """An undirected co-occurrence edge between two entity keys (`source` sorts first)."""

    model_config = ConfigDict(frozen=True)

    source: str
    target: str
    strength: int

    @classmethod
    def between(cls, one: str, other: str, strength: int) -> GraphEdge:
        source, target = sorted((one, other))
        return cls(source=source, target=target, strength=strength)


class EntityGraph(BaseModel):
    """The most mentioned entities and the co-occurrence edges among them."""

    nodes: list[EntityRecord]
    edges: list[GraphEdge]  # strongest first, then by keys


class EntityStats(BaseModel):
    total: int
    by_type: dict[str, int]
    top_mentioned: list[EntityRecord]


MAX_ENTITY_LIST_LIMIT = 500
MAX_ENTITY_MEMORIES_LIMIT = 100
MAX_RECLASSIFICATIONS = 100
MAX_ENTITY_OFFSET = 1_000_000  # far beyond any registry; keeps the number inside what SQLite can bind
EntityName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=256), NotBlank()]


class EntityListRequest(BaseModel):
    """Query of GET /entities."""

    type: EntityType | None = None
    limit: int = Field(default=50, ge=1, le=MAX_ENTITY_LIST_LIMIT)
    offset: int = Field(default=0, ge=0, le=MAX_ENTITY_OFFSET)


MAX_GRAPH_NODES = 200


class EntityGraphRequest(BaseModel):
    """Query of GET /entities/graph."""

    type: EntityType | None = None
    limit: int = Field(default=60, ge=1, le=MAX_GRAPH_NODES, description="The most mentioned entities to draw")
    min_strength: int = Field(default=1, ge=1, le=1_000_000, description="Leave out weaker edges")


class EntityMemoriesRequest(BaseModel):
    """Query of GET /entities/{name}/memories."""

    limit: int = Field(default=20, ge=1, le=MAX_ENTITY_MEMORIES_LIMIT)


class Reclassification(BaseModel):
    name: EntityName
    new_type: EntityType


class ReclassifyRequest(BaseModel):
    """Body of POST /entities/reclassify: a preview unless `dry_run` is false."""

    model_config = ConfigDict(extra="ignore")

    reclassifications: Annotated[list[Reclassification], Field(min_length=1, max_length=MAX_RECLASSIFICATIONS)]
    dry_run: StrictBool = True  # JSON true or false only: `0` or "no" must not start a real reclassification


class MergeRequest(BaseModel):
    """Body of POST /entities/{name}/merge: the entity absorbed into `name`."""

    model_config = ConfigDict(extra="ignore")

    merge_from: EntityName


class MentionCount(BaseModel):
    name: str
    type: EntityType
    mentions: int


def most_mentioned(entity_lists: Iterable[Sequence[EntityRef]], limit: int = 10) -> list[MentionCount]:
    """The entities named most often across these memories (each memory counts once), ties by name."""
    counts: Counter[str] = Counter()
    latest: dict[str, EntityRef] = {}
    for refs in entity_lists:
        for ref in {ref.key: ref for ref in refs}.values():
            counts[ref.key] += 1
            latest.setdefault(ref.key, ref)
    ranked = sorted(counts, key=lambda key: (-counts[key], latest[key].name.casefold()))
    return [MentionCount(name=latest[key].name, type=latest[key].type, mentions=counts[key]) for key in ranked[:limit]]


def entity_key(name: str) -> str:
    """How the registry and the search index compare names: trimmed and case-folded."""
    return " ".join(name.split()).casefold()


# -- dictionaries -------------------------------------------------------------------------------------------

_TECHNOLOGIES = """
React|Go|Rust|Swift|Express|Python|JavaScript|TypeScript|Java|Kotlin|Scala|Ruby|PHP|C++|C#|Elixir|Erlang|Haskell|Clojure|Dart|Lua|Perl|
R language|Julia|Objective-C|Bash|PowerShell|SQL|GraphQL|HTML|CSS|Sass|Tailwind CSS|WebAssembly|Solidity|Zig|
Next.js|Nuxt|Remix|Gatsby|Astro|SvelteKit|Svelte|Vue.js|Angular|Ember.js|jQuery|Redux|Vite|Webpack|esbuild|Babel|
Node.js|Deno|Bun|NestJS|Django|Flask|FastAPI|Ruby on Rails|Laravel|Symfony|Spring Boot|ASP.NET|.NET|Phoenix|
Gin|Pydantic|SQLAlchemy|Prisma|Drizzle|Hibernate|pandas|NumPy|PyTorch|TensorFlow|scikit-learn|Keras|
Hugging Face|LangChain|LlamaIndex|Jupyter|Storybook|Jest|Vitest|Cypress|Playwright|Selenium|pytest|
React Native|Flutter|SwiftUI|Electron|Expo|
PostgreSQL|MySQL|MariaDB|SQLite|MongoDB|Redis|Memcached|Cassandra|DynamoDB|Elasticsearch|OpenSearch|
ClickHouse|Snowflake|BigQuery|Redshift|Supabase|Firebase|Firestore|Neo4j|CockroachDB|Pinecone|Weaviate|
Qdrant|Milvus|pgvector|Kafka|RabbitMQ|Apache Spark|Airflow|dbt|Flink|
Docker|Kubernetes|Helm|Terraform|Pulumi|Ansible|Nginx|Apache HTTP Server|Linux|Ubuntu|Debian|Windows|macOS|
Git|gRPC|REST|WebSocket|OAuth|JWT|OpenAPI|Prometheus|Grafana|OpenTelemetry|Istio|Envoy|Argo CD|
AWS|AWS Lambda|Amazon S3|Amazon EC2|Amazon ECS|Amazon EKS|Amazon RDS|Amazon SQS|Amazon SNS|CloudFront|
CloudFormation|API Gateway|Step Functions|EventBridge|Amazon Bedrock|Amazon Aurora|AWS SAM|
Google Cloud|Cloud Run|Azure|Azure Functions|Cloudflare Workers|
OpenAI|GPT-4|GPT-4o|Claude|Llama|Mistral|Ollama|MiniLM
"""
# Names that are also everyday words ("react to", "render a page", "go live"): matched only as written.
_EVERYDAY_WORDS = frozenset("""
React|Go|Rust|Swift|Express|Spring|Ruby|Julia|Dart|REST|Windows|Flask|Helm|Jest|Linear|Render|Segment|Zoom|
Sanity|Clerk|Expo|Bun|Gin|Phoenix|Remix|Astro|Llama|Notion|Discord|Sentry|Envoy|Drizzle|Snowflake|Bash|Sass|
Electron|Confluence|Asana|Mistral|Claude|Airflow|Git|Linux|Ember.js|Svelte|Keras|Kafka|Elixir
""".replace("\n", "").split("|"))

_SERVICES = """
GitHub|GitLab|Bitbucket|GitHub Actions|CircleCI|Jenkins|Travis CI|Slack|Discord|Microsoft Teams|Zoom|Notion|
Confluence|Jira|Linear|Asana|Trello|Figma|Stripe|PayPal|Shopify|Twilio|SendGrid|Mailchimp|HubSpot|Salesforce|
Zendesk|Intercom|Segment|Mixpanel|Amplitude|Google Analytics|Sentry|Datadog|PagerDuty|New Relic|Vercel|Netlify|
Heroku|Render|Fly.io|DigitalOcean|Auth0|Okta|Clerk|Algolia|Contentful|Sanity|WordPress|Webflow|Zapier|n8n|
Airtable|Google Drive|Google Docs|Gmail|Dropbox|LinkedIn|YouTube|Cloudflare|Docker Hub|npm|PyPI
"""
_SYSTEMS = "CRM|ERP|CMS|data warehouse|data lake|message queue|load balancer|CDN|feature flags|design system"
_WORKFLOWS = """
code review|continuous integration|continuous deployment|deployment pipeline|release process|onboarding|
incident response|postmortem|sprint planning|retrospective|standup|on-call rotation|A/B test
"""

# Other spellings → canonical name (confidence 0.90). Abbreviations that are also words ("node", "pg",
# "lambda", "spark") are left out on purpose.
ALIASES: dict[str, str] = {
    "nextjs": "Next.js", "next js": "Next.js", "reactjs": "React", "react.js": "React", "vuejs": "Vue.js",
    "nodejs": "Node.js", "node js": "Node.js", "nuxtjs": "Nuxt", "nuxt.js": "Nuxt", "expressjs": "Express",
    "express.js": "Express", "postgres": "PostgreSQL", "psql": "PostgreSQL", "mongo": "MongoDB",
    "dynamo": "DynamoDB", "dynamo db": "DynamoDB", "k8s": "Kubernetes", "golang": "Go", "js": "JavaScript",
    "ror": "Ruby on Rails", "dotnet": ".NET", "csharp": "C#", "cpp": "C++", "aws lambda functions": "AWS Lambda",
    "s3": "Amazon S3", "ec2": "Amazon EC2", "ecs": "Amazon ECS", "eks": "Amazon EKS", "rds": "Amazon RDS",
    "sqs": "Amazon SQS", "sns": "Amazon SNS", "amazon web services": "AWS", "gcp": "Google Cloud",
    "google cloud platform": "Google Cloud", "ms teams": "Microsoft Teams", "github.com": "GitHub",
    "gitlab.com": "GitLab", "tailwind": "Tailwind CSS", "sklearn": "scikit-learn", "huggingface": "Hugging Face",
    "gpt4": "GPT-4", "chatgpt": "OpenAI", "argocd": "Argo CD", "otel": "OpenTelemetry", "ci/cd": "deployment pipeline",
    "pr review": "code review", "stand-up": "standup", "ab test": "A/B test", "postgre sql": "PostgreSQL",
}

_CONFIDENCE = {"known": 0.98, "dictionary": 0.95, "alias": 0.90, "domain": 0.85}
_TLDS = ("com|org|net|io|ai|dev|app|co|us|uk|de|fr|nl|es|it|eu|ca|au|in|jp|cloud|tech|so|sh|me|info|biz|xyz|gg|"
         "tv|ly|to|gov|edu")
_HOSTNAME = re.compile(
    r"(?<![\w.-])((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:" + _TLDS + r"))(?![\w-]|\.\w)", re.IGNORECASE)
# What every host name holds (a label's last character, its dot, a top-level domain's first letter), found at C
# speed: most texts have none, and the full pattern, tried at every position, cost ~20 µs a turn (#38).
_HOSTNAME_HINT = re.compile(r"[a-z0-9]\.[a-z]", re.IGNORECASE)


def _split(names: str) -> list[str]:
    return [name.strip() for name in names.replace("\n", "").split("|") if name.strip()]


@functools.cache
def _all_terms() -> dict[str, EntityType]:
    """Canonical name → type, every dictionary entry."""
    found: dict[str, EntityType] = {}
    for names, type_ in ((_TECHNOLOGIES, EntityType.TECHNOLOGY), (_SERVICES, EntityType.SERVICE),
                         (_SYSTEMS, EntityType.SYSTEM), (_WORKFLOWS, EntityType.WORKFLOW)):
        for name in _split(names):
            found.setdefault(name, type_)
    return found


@functools.cache
def _dictionary() -> dict[str, tuple[str, EntityType]]:
    """Case-folded term → (canonical name, type) for the terms matched case-insensitively."""
    return {name.casefold(): (name, type_) for name, type_ in _all_terms().items() if name not in _EVERYDAY_WORDS}


@functools.cache
def _case_sensitive() -> dict[str, tuple[str, EntityType]]:
    """Exact term → (canonical name, type) for the everyday words."""
    return {name: (name, type_) for name, type_ in _all_terms().items() if name in _EVERYDAY_WORDS}


@functools.cache
def _canonical_types() -> dict[str, EntityType]:
    """Canonical name (case-folded) → type, for every dictionary entry and alias target."""
    return {name.casefold(): type_ for name, type_ in _all_terms().items()}


def _term_pattern(terms: Iterable[str], *, ignore_case: bool) -> re.Pattern[str] | None:
    """The terms on whole words only, the longest that fits first (so "AWS Lambda" wins over "AWS").

    Written as a prefix tree (`AWS(?: Lambda)?`): at each position of the text the engine follows one branch
    per character instead of trying every term in turn, and a greedy optional part makes a longer term win,
    as an alternation of the terms longest first would."""
    folded = {term.lower() if ignore_case else term for term in terms}
    if not folded:
        return None
    return re.compile(rf"(?<!\w){_prefix_tree(sorted(folded))}(?!\w)", re.IGNORECASE if ignore_case else 0)


def _prefix_tree(terms: Sequence[str]) -> str:
    """A regex matching exactly `terms` (distinct, sorted, none empty), longer matches preferred."""
    branches: list[str] = []
    ends_here = False
    for first, group in itertools.groupby(terms, key=lambda term: term[:1]):
        rests = [term[1:] for term in group]
        if not first:
            ends_here = True
            continue
        more = [rest for rest in rests if rest]
        tail = _prefix_tree(more) if more else ""
        if more and len(more) < len(rests):  # the term may also end after `first`
            tail = f"(?:{tail})?"
        branches.append(re.escape(first) + tail)
    body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
    return f"(?:{body})?" if ends_here else body


@functools.cache
def _static_patterns() -> tuple[re.Pattern[str] | None, re.Pattern[str] | None, re.Pattern[str] | None]:
    return (_term_pattern(_dictionary(), ignore_case=True),
            _term_pattern(_case_sensitive(), ignore_case=False),
            _term_pattern(ALIASES, ignore_case=True))


def _known_terms(clients: Sequence[ClientFingerprint], agents: Sequence[str]) -> dict[str, EntityRef]:
    """Lower-cased term → entity for the caller's known clients (id, name, aliases, people, domains) and agents."""
    known: dict[str, EntityRef] = {}
    confidence = _CONFIDENCE["known"]
    for agent in agents:
        if agent.strip():
            known.setdefault(agent.casefold(), EntityRef(name=agent, type=EntityType.AGENT, confidence=confidence))
    for client in clients:
        ref = EntityRef(name=client.client_id, type=EntityType.CLIENT, confidence=confidence)
        for term in [client.client_id, client.name or "", *client.aliases]:
            if term.strip():
                known[term.casefold()] = ref
        for person in client.people:
            if person.strip():
                known.setdefault(person.casefold(), EntityRef(name=person, type=EntityType.PERSON,
                                                              confidence=confidence))
        for domain in client.domains:
            if domain.strip():
                known.setdefault(domain.casefold(), EntityRef(name=domain.casefold(), type=EntityType.DOMAIN,
                                                              confidence=confidence))
    return known


@functools.lru_cache(maxsize=64)
def _known_pattern(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    return _term_pattern(terms, ignore_case=True)


def extract_entities(
    text: str,
    known_clients: Sequence[ClientFingerprint] = (),
    known_agents: Sequence[str] = (),
) -> list[EntityRef]:
    """The entities `text` mentions, in order of first mention, one per canonical name.

    A span claimed by a more confident source is not matched again by a less confident one, so
    "acme.com" of a known client is not also a plain domain and "AWS Lambda" is not also "AWS".
    """
    found: dict[str, tuple[int, EntityRef]] = {}
    taken: list[tuple[int, int]] = []

    def claim(match: re.Match[str], ref: EntityRef) -> None:
        claim_span(*match.span(), ref)

    def claim_span(start: int, end: int, ref: EntityRef) -> None:
        if ref.confidence < MIN_CONFIDENCE or any(start < e and s < end for s, e in taken):
            return
        taken.append((start, end))
        current = found.get(ref.key)
        if current is None or ref.confidence > current[1].confidence:
            found[ref.key] = (min(start, current[0]) if current else start, ref)

    known = _known_terms(known_clients, known_agents)
    known_pattern = _known_pattern(tuple(sorted(known)))
    if known_pattern is not None:
        for match in known_pattern.finditer(text):
            claim(match, known[match.group(0).casefold()])
    dictionary_pattern, case_pattern, alias_pattern = _static_patterns()
    for pattern, confidence in ((dictionary_pattern, "dictionary"), (case_pattern, "dictionary"),
                                (alias_pattern, "alias")):
        for match in pattern.finditer(text) if pattern else ():
            name = _canonical_of_match(match.group(0), confidence)
            claim(match, EntityRef(name=name, type=_canonical_types()[name.casefold()],
                                   confidence=_CONFIDENCE[confidence]))
    for match in _HOSTNAME.finditer(text) if _HOSTNAME_HINT.search(text) else ():
        host = match.group(1).casefold().removeprefix("www.")
        claim(match, EntityRef(name=host, type=EntityType.DOMAIN, confidence=_CONFIDENCE["domain"]))
    for start, end, name in people_in(text):  # named by their role: "Sarah Chen is Initech's CTO"
        claim_span(start, end, EntityRef(name=name, type=EntityType.PERSON, confidence=PERSON_CONFIDENCE))
    ordered = sorted(found.values(), key=lambda pair: pair[0])
    return [ref for _, ref in ordered][:MAX_ENTITIES_PER_MEMORY]


WRITER_CONFIDENCE = 0.98  # a memory's own client and agent are known, as a known client or agent named in text is


def with_writers(found: Sequence[EntityRef], client_id: str | None, source_agent: str) -> list[EntityRef]:
    """`found` plus the memory's own client (unless `global`, the no-client) and its agent, as upstream Zengram
    links every memory to them (types client and agent); an entity already found keeps its place and type."""
    keys = {ref.key for ref in found}
    writers = [EntityRef(name=name, type=type_, confidence=WRITER_CONFIDENCE)
               for name, type_ in ((client_id, EntityType.CLIENT), (source_agent, EntityType.AGENT))
               if name and name != "global" and entity_key(name) not in keys]
    # Writers first, so the cap drops one of the text's entities rather than a writer.
    return [*writers, *found][:MAX_ENTITIES_PER_MEMORY] if writers else list(found)


def _canonical_of_match(matched: str, source: str) -> str:
    if source == "alias":
        return ALIASES[matched.casefold()]
    entry = _dictionary().get(matched.casefold()) or _case_sensitive().get(matched)
    return entry[0] if entry else matched


def canonical_entity_name(name: str) -> str:
    """The dictionary's spelling of `name` ("nextjs", "NEXT.JS" → "Next.js"); unknown names come back trimmed."""
    cleaned = " ".join(name.split())
    folded = cleaned.casefold()
    if folded in ALIASES:
        return ALIASES[folded]
    entry = _dictionary().get(folded)
    if entry is not None:
        return entry[0]
    for canonical in _case_sensitive():
        if canonical.casefold() == folded:
            return canonical
    return cleaned


def aliases_of(name: str) -> list[str]:
    """The alias-table spellings that resolve to `name`."""
    wanted = entity_key(name)
    return sorted(alias for alias, canonical in ALIASES.items() if entity_key(canonical) == wanted)


def dictionary_type(name: str) -> EntityType | None:
    """The type the dictionary gives a canonical name, if it knows it."""
    return _canonical_types().get(entity_key(canonical_entity_name(name)))
