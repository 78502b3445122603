"""Realistic, deterministic benchmark text: LoCoMo conversations mixed with generated agent memories.

Everything comes from one seeded random generator consumed in order, so the first N memories are the
same whatever the total asked for: a cached store of N memories stays valid when the corpus grows.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zengram.memory.domain.models import Category, Importance, KnowledgeCategory, MemoryType
from zengram.memory.domain.requests import MemoryDraft

from bench.recall.data import locomo_file

# Bump when the generated text changes: cached stores built from another version are re-seeded.
CORPUS_VERSION = 1
SEED = 20260301

MIN_WORDS = 10
MAX_WORDS = 80
LOCOMO_SHARE = 0.05  # chance that the next memory is a LoCoMo turn or observation (until they run out)
LOCOMO_QUESTION_SHARE = 0.4

AGENTS = (
    "claude-code", "cursor", "planner", "ops-bot", "sales-assistant",
    "support-agent", "research-agent", "scheduler", "qa-agent", "deploy-bot",
)
TYPE_WEIGHTS = {MemoryType.EVENT: 40, MemoryType.FACT: 25, MemoryType.DECISION: 15, MemoryType.STATUS: 20}

_COMPANY_FIRST = (
    "Acme", "Bluefin", "Cobalt", "Driftwood", "Evergreen", "Foxglove", "Granite", "Harbor", "Ironwood",
    "Juniper", "Kestrel", "Lumen", "Meridian", "Northwind", "Oakridge", "Pinnacle", "Quartz", "Redwood",
    "Summit", "Tidewater", "Umber", "Vantage", "Willow", "Yarrow", "Zephyr",
)
_COMPANY_SECOND = (
    "Robotics", "Health", "Logistics", "Analytics", "Foods", "Energy", "Media", "Labs", "Finance",
    "Retail", "Studios", "Systems", "Travel", "Bank", "Insurance",
)
_FIRST_NAMES = (
    "Alice", "Bruno", "Chen", "Dana", "Elif", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kofi", "Lena",
    "Marta", "Nikhil", "Olga", "Pablo", "Quinn", "Rosa", "Sami", "Tomas", "Uma", "Viktor", "Wen", "Ximena",
    "Yusuf", "Zoe", "Amara", "Ben", "Carla", "Dmitri", "Emeka", "Fatima", "Gustavo", "Hana", "Ivan", "Julia",
)
_LAST_NAMES = (
    "Okafor", "Schmidt", "Tanaka", "Novak", "Silva", "Haddad", "Kowalski", "Lindqvist", "Moreau", "Patel",
    "Rossi", "Sato", "Andersen", "Byrne", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Ivanova",
)
TEAM = ("Maya", "Leo", "Priya", "Sven", "Aisha", "Tom", "Noor", "Karl", "Lucia", "Omar", "Ruth", "Felix")
SERVICES = (
    "billing-api", "auth-service", "search-gateway", "notification-worker", "checkout", "reporting-etl",
    "image-resizer", "webhook-relay", "user-profile", "inventory-sync", "pricing-engine", "audit-log",
    "mobile-backend", "admin-portal", "recommendation-service", "email-sender", "ledger", "scheduler-cron",
    "feature-flags", "data-export",
)
ENVIRONMENTS = ("staging", "production", "eu-west-1 production", "us-east-1 production", "canary", "dev")
TECH = (
    "Postgres", "Redis", "Kafka", "RabbitMQ", "Elasticsearch", "DynamoDB", "MySQL", "ClickHouse",
    "MongoDB", "BigQuery", "Snowflake", "S3", "Cloudflare R2", "SQS", "Temporal",
)
PURPOSES = (
    "session storage", "analytics", "the event pipeline", "search", "job queues", "audit trails",
    "product catalogue data", "billing records", "caching", "reporting", "file uploads",
)
PROJECTS = (
    "SSO rollout", "Q3 pricing change", "data warehouse migration", "onboarding flow redesign",
    "mobile app launch", "SOC 2 audit", "Stripe billing migration", "newsletter redesign", "brand refresh",
    "API v2 deprecation", "GDPR data retention cleanup", "multi-region failover", "customer portal rebuild",
    "Kubernetes upgrade", "partner integration", "loyalty programme", "search relevance tuning",
    "checkout A/B test", "content calendar for Q4", "cost reduction initiative",
)
MEETINGS = ("weekly sync", "quarterly business review", "kickoff", "retro", "steering committee",
            "design review", "planning session", "incident review")
ROLES = ("CTO", "head of marketing", "product owner", "engineering manager", "procurement lead",
         "security officer", "CFO", "brand manager", "data lead", "operations director")
CHANNELS = ("email", "Slack", "phone", "Teams", "a shared Notion page")
REGIONS = ("eu-west-1", "us-east-1", "ap-southeast-2", "eu-central-1", "us-west-2")
CAUSES = (
    "a missing database index", "an expired TLS certificate", "a misconfigured feature flag",
    "connection pool exhaustion", "a bad cache key after the deploy", "a third-party API outage",
    "a memory leak in the image library", "DNS propagation delays", "a schema migration that locked a table",
    "rate limiting by the payment provider",
)
REASONS = (
    "the legal review is not finished", "their team is short-staffed until the new hires start",
    "the budget for next quarter is not approved yet", "it conflicts with their holiday sales peak",
    "the vendor cannot guarantee the SLA", "the pilot users asked for more time",
    "it halves the hosting bill", "the team already knows it well", "it supports the compliance reporting they need",
    "the current setup will not scale past next year",
)
CONCERNS = ("data residency", "response times", "pricing transparency", "vendor lock-in", "accessibility",
            "the migration downtime", "security reviews", "the tone of the campaign")
FEATURES = ("CSV export", "single sign-on", "audit log search", "dark mode", "a Spanish localisation",
            "usage-based billing", "webhook retries", "role-based access control", "an offline mode")
DOCUMENTS = ("proposal", "statement of work", "architecture diagram", "launch checklist", "incident report",
             "brand guidelines draft", "security questionnaire", "pricing sheet", "quarterly report")
STATUSES = ("on track", "blocked", "at risk", "done", "in review", "waiting on client", "paused")
COLOURS = ("deep teal", "warm orange", "navy blue", "forest green", "charcoal", "coral")
TONES = ("friendly but precise", "formal", "playful", "confident and concise", "warm and personal")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")

EVENT_TEMPLATES = (
    "Deployed {service} {version} to {env} for {client}; the rollout finished in {minutes} minutes with no errors.",
    "Weekly sync with {person} from {client}: they confirmed the {project} timeline and asked for a revised "
    "estimate by {date}.",
    "{person} from {client} reported intermittent timeouts on {service} since {date}; opened {ticket}.",
    "Rolled back {service} in {env} after the error rate rose to {pct}% following the {version} release.",
    "Held the {meeting} with {client}; {person} raised concerns about {concern}.",
    "Sent the {document} to {person} at {client} for review.",
    "Incident {ticket}: {service} latency spiked to {ms} ms in {env} for {minutes} minutes; the root cause was "
    "{cause}.",
    "Migrated {count} records for {client} from {tech} to {tech2} over the weekend.",
    "{colleague} paired with {person} on the {project} and finished the first milestone.",
    "Customer call with {client}: {person} wants {feature} before {date}.",
    "{person} at {client} is out of office until {date}.",
    "Ran the load test for {client}'s {service}: {count} requests per minute at p95 {ms} ms.",
    "{client} signed the {document} on {date}.",
    "Demoed {feature} to {person} and two engineers from {client}; they want a pilot.",
)
FACT_TEMPLATES = (
    "{client} uses {tech} for {purpose}, hosted in {region}.",
    "{person} is the {role} at {client} and prefers to be contacted by {channel}.",
    "The {client} contract renews on {date} at {money} per year.",
    "{client}'s production database is {tech} {version} with about {count} GB of data.",
    "{client} requires every deployment to {env} to be approved by {person}.",
    "Brand guidelines for {client}: primary colour {colour}, tone of voice {tone}.",
    "{client} has {count} active users on the enterprise plan.",
    "The {service} for {client} runs on Kubernetes with {small} replicas in {region}.",
    "{client}'s fiscal year ends in {month}, so budget decisions happen in the weeks before.",
    "Support tickets from {client} go to {colleague} first; escalations go to {person}.",
)
DECISION_TEMPLATES = (
    "Decided with {person} to postpone the {project} for {client} until {date} because {reason}.",
    "We chose {tech} over {tech2} for {client}'s {purpose} because {reason}.",
    "Agreed to freeze deployments to {env} for {client} from {date} while the {project} is under way.",
    "{client} approved a budget of {money} for the {project}.",
    "Going with a {small}-week phased rollout of the {project} for {client}, starting with internal users.",
    "Dropped {feature} from the {client} scope for this quarter; {person} agreed.",
    "{client} will move {service} to {region} to address {concern}.",
)
STATUS_TEMPLATES = (
    "The {project} for {client} is {status}: {detail_short}.",
    "{service} in {env} for {client}: {status}, owner {colleague}.",
    "Status of {ticket} ({client}, {service}): {status}.",
    "{client} onboarding is {status}; {person} still has to {action}.",
)
DETAIL_SHORT = (
    "waiting for the security review", "two of five milestones delivered", "design sign-off happened on Friday",
    "the vendor contract is still with legal", "QA found three blocking bugs", "data backfill at 60 percent",
)
ACTIONS = ("send the signed DPA", "share production credentials through the vault", "confirm the launch date",
           "invite our team to their Slack", "review the pricing sheet", "nominate a technical contact")
DETAILS = (
    "Next step: {colleague} will follow up by {date}.",
    "{person} mentioned that their board meets on {date} and wants numbers before then.",
    "This affects roughly {count} users in {region}.",
    "Follow-up is tracked in {ticket}.",
    "The team estimates {small} days of work, mostly on the {service} side.",
    "Budget impact is about {money}.",
    "Keep in mind that {client} is sensitive about {concern}.",
    "A previous attempt in {month} failed because of {cause}.",
    "{colleague} owns the follow-up and will report back in the {meeting}.",
    "Dashboards for {service} in {env} show the details.",
    "No customer-facing impact was observed.",
    "{person} asked us to copy {person2} on all future emails about this.",
    "After the change p95 latency is {ms} ms and the error rate {pct}%.",
    "{person2} from their finance team needs the invoice split by cost centre.",
    "We should revisit this at the {meeting} on {date}.",
    "The {document} needs updating to reflect this.",
    "{colleague} thinks {tech} would be simpler, but {person} prefers to keep the current stack.",
    "Their legal team wants all data to stay in {region}.",
    "Everyone on the call agreed, although {person2} had reservations about the timeline.",
    "If this slips again we risk missing the {project} deadline.",
    "Related: the {project} depends on {service} being stable.",
    "{colleague} wrote a short runbook so the on-call engineer can handle it alone.",
)
QUESTION_TEMPLATES = (
    "What did we decide about the {project} for {client}?",
    "What is the current status of the {project} at {client}?",
    "Who is the {role} at {client}?",
    "When does the {client} contract renew and at what price?",
    "Why was {service} rolled back in {env}?",
    "Which database does {client} use for {purpose}?",
    "What did {person} ask for in the last call with {client}?",
    "Are there any open incidents on {service} in {env}?",
    "How many replicas does {service} run for {client}?",
    "What are the brand guidelines for {client}?",
    "Has {client} approved the budget for the {project}?",
    "What happened in the {meeting} with {client}?",
    "Who approves deployments to {env} at {client}?",
    "What caused the latency spike on {service} last {weekday}?",
    "Is {person} from {client} on holiday right now?",
    "Why did we pick {tech} for {client}?",
    "What is blocking the {project} for {client}?",
    "What does {client} want before {month}?",
    "When is the next {meeting} with {client} and what is on the agenda?",
    "How should I contact {person} at {client}?",
)
_KEPT_IN_DETAILS = ("person", "person2", "colleague", "service", "project", "env")
_DATE_FORMATS = ("{day} {month}", "{weekday} {day} {month}", "{month} {day}")


@dataclass(frozen=True)
class Client:
    id: str
    name: str
    contacts: tuple[str, ...]


@dataclass(frozen=True)
class Query:
    text: str
    client_id: str
    source: str  # "locomo" or "generated"


def word_count(text: str) -> int:
    return len(text.split())


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


class Corpus:
    """Memories (`drafts`) and questions (`queries`), reproducible from `SEED`."""

    def __init__(self, locomo_path: Path | None = None, seed: int = SEED) -> None:
        self._rng = random.Random(seed)
        self.clients = self._make_clients()
        self._locomo = json.loads(locomo_file(locomo_path).read_text(encoding="utf-8"))
        self._conversation_client = {
            sample["sample_id"]: self.clients[i * 7 % len(self.clients)].id for i, sample in enumerate(self._locomo)
        }
        self._drafts: list[MemoryDraft] = []
        self._from_locomo: list[bool] = []
        self._seen: set[str] = set()
        self._stream = self._draft_stream()

    # -- memories --------------------------------------------------------------------------------------

    def drafts(self, count: int, start: int = 0) -> list[MemoryDraft]:
        """Memories `start` .. `start + count - 1`; all distinct texts, the same on every run."""
        while len(self._drafts) < start + count:
            draft, from_locomo = next(self._stream)
            self._drafts.append(draft)
            self._from_locomo.append(from_locomo)
        return self._drafts[start:start + count]

    def locomo_count(self, count: int) -> int:
        """How many of the first `count` memories come from LoCoMo (the rest are generated)."""
        self.drafts(count)
        return sum(self._from_locomo[:count])

    def _draft_stream(self) -> Iterator[tuple[MemoryDraft, bool]]:
        rng = random.Random(self._rng.random())
        locomo_items = self._locomo_memories(rng)
        types = list(TYPE_WEIGHTS)
        weights = list(TYPE_WEIGHTS.values())
        index = 0
        while True:
            from_locomo = bool(locomo_items) and rng.random() < LOCOMO_SHARE
            memory_type = rng.choices(types, weights)[0]
            fields = locomo_items.pop() if from_locomo else self._generated(rng, memory_type, index)
            if fields["content"] in self._seen:
                continue
            self._seen.add(fields["content"])
            index += 1
            yield MemoryDraft(**fields), from_locomo

    def _generated(self, rng: random.Random, memory_type: MemoryType, index: int) -> dict[str, Any]:
        client = rng.choice(self.clients)
        slots = self._slots(rng, client)
        templates = {
            MemoryType.EVENT: EVENT_TEMPLATES, MemoryType.FACT: FACT_TEMPLATES,
            MemoryType.DECISION: DECISION_TEMPLATES, MemoryType.STATUS: STATUS_TEMPLATES,
        }[memory_type]
        content = rng.choice(templates).format(**slots)
        # Lengths skew short, like real agent notes, but reach MAX_WORDS.
        target = round(rng.triangular(MIN_WORDS, MAX_WORDS, 18))
        # Details keep the note's people, service and project, with fresh dates, amounts and tickets.
        detail_slots = {**self._slots(rng, client), **{name: slots[name] for name in _KEPT_IN_DETAILS}}
        for detail in rng.sample(DETAILS, len(DETAILS)):
            if word_count(content) >= target:
                break
            sentence = detail.format(**detail_slots)
            if word_count(content) + word_count(sentence) > MAX_WORDS:
                continue
            content = f"{content} {sentence}"
        fields: dict[str, Any] = {
            "type": memory_type,
            "content": content,
            "source_agent": rng.choice(AGENTS),
            "client_id": client.id,
            "category": rng.choice(list(Category)),
            "importance": rng.choices(list(Importance), [1, 3, 6, 2])[0],
            "knowledge_category": rng.choice([*KnowledgeCategory, None]),
            "metadata": {"ticket": slots["ticket"]} if rng.random() < 0.3 else {},
        }
        if memory_type is MemoryType.FACT and rng.random() < 0.8:
            fields["key"] = f"{_slug(slots['project'])}.{index:06d}"  # distinct: facts never supersede here
        if memory_type is MemoryType.STATUS:
            fields["subject"] = f"{_slug(slots['service'])}/{index:06d}"
            fields["status_value"] = slots["status"]
        return fields

    def _locomo_memories(self, rng: random.Random) -> list[dict[str, Any]]:
        """Conversation turns as events, per-session observations as facts; shuffled, popped from the end."""
        items: list[dict[str, Any]] = []
        for sample in self._locomo:
            client_id = self._conversation_client[sample["sample_id"]]
            conversation = sample["conversation"]
            speakers = (conversation["speaker_a"], conversation["speaker_b"])
            session = 1
            while f"session_{session}_date_time" in conversation:
                turns = conversation.get(f"session_{session}") or []
                when = conversation[f"session_{session}_date_time"]
                for turn in turns:
                    other = speakers[1] if turn["speaker"] == speakers[0] else speakers[0]
                    text = turn["text"]
                    if turn.get("blip_caption"):
                        text += f" [shares {turn['blip_caption']}]"
                    items.append({"type": MemoryType.EVENT, "content": f"At {when}, {turn['speaker']} told {other}: "
                                  f"{text}", "client_id": client_id, "source_agent": "research-agent"})
                session += 1
            for observations in sample["observation"].values():
                for facts in observations.values():
                    for fact, *_ in facts:
                        items.append({"type": MemoryType.FACT, "content": fact, "client_id": client_id,
                                      "source_agent": "planner", "category": Category.SEMANTIC})
        items = [item for item in items if MIN_WORDS <= word_count(item["content"]) <= MAX_WORDS]
        rng.shuffle(items)
        return items

    # -- questions -------------------------------------------------------------------------------------

    def queries(self, count: int) -> list[Query]:
        """`count` distinct natural-language questions, LoCoMo's and generated ones mixed."""
        rng = random.Random(SEED + 1)
        locomo = [
            Query(str(qa["question"]), self._conversation_client[sample["sample_id"]], "locomo")
            for sample in self._locomo for qa in sample["qa"]
        ]
        rng.shuffle(locomo)
        chosen: list[Query] = []
        seen: set[str] = set()
        while len(chosen) < count:
            if locomo and rng.random() < LOCOMO_QUESTION_SHARE:
                query = locomo.pop()
            else:
                client = rng.choice(self.clients)
                query = Query(rng.choice(QUESTION_TEMPLATES).format(**self._slots(rng, client)), client.id,
                              "generated")
            if query.text not in seen:
                seen.add(query.text)
                chosen.append(query)
        return chosen

    # -- helpers ---------------------------------------------------------------------------------------

    def _make_clients(self) -> list[Client]:
        names = [f"{first} {second}" for first in _COMPANY_FIRST for second in _COMPANY_SECOND]
        self._rng.shuffle(names)
        clients = []
        for name in names[:50]:
            contacts = tuple(f"{self._rng.choice(_FIRST_NAMES)} {self._rng.choice(_LAST_NAMES)}" for _ in range(4))
            clients.append(Client(_slug(name), name, contacts))
        return clients

    @staticmethod
    def _slots(rng: random.Random, client: Client) -> dict[str, str]:
        person, person2 = rng.sample(client.contacts, 2)
        tech, tech2 = rng.sample(TECH, 2)
        month = rng.choice(MONTHS)
        date = rng.choice(_DATE_FORMATS).format(day=rng.randint(1, 28), month=month, weekday=rng.choice(WEEKDAYS))
        return {
            "client": client.name, "person": person, "person2": person2, "colleague": rng.choice(TEAM),
            "service": rng.choice(SERVICES), "env": rng.choice(ENVIRONMENTS), "tech": tech, "tech2": tech2,
            "purpose": rng.choice(PURPOSES), "project": rng.choice(PROJECTS), "meeting": rng.choice(MEETINGS),
            "role": rng.choice(ROLES), "channel": rng.choice(CHANNELS), "region": rng.choice(REGIONS),
            "cause": rng.choice(CAUSES), "reason": rng.choice(REASONS), "concern": rng.choice(CONCERNS),
            "feature": rng.choice(FEATURES), "document": rng.choice(DOCUMENTS), "status": rng.choice(STATUSES),
            "colour": rng.choice(COLOURS), "tone": rng.choice(TONES), "month": month, "date": date,
            "weekday": rng.choice(WEEKDAYS), "detail_short": rng.choice(DETAIL_SHORT), "action": rng.choice(ACTIONS),
            "version": f"v{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 12)}",
            "ticket": f"{rng.choice(('OPS', 'ENG', 'SUP', 'CS', 'SEC'))}-{rng.randint(100, 9999)}",
            "minutes": str(rng.randint(2, 95)), "ms": str(rng.randint(40, 4000)),
            "pct": f"{rng.uniform(0.1, 12):.1f}", "count": f"{rng.randint(2, 900) * 100:,}",
            "small": str(rng.randint(2, 12)), "money": f"${rng.randint(5, 400) * 1000:,}",
        }
