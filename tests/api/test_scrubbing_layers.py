"""The same texts are scrubbed identically through every layer that stores text: the memories (`/memory`), the chat
layer (`/api/v1`) and the document knowledge base (`/kb`) — one deployment key, one placeholder per secret, so each
stores exactly what the scrubber makes of the text (issue 37: 17 of 68 credentials leaked through all three).
Also: the chat layer's prompt `name` and a message `name` are scrubbed like every other free-text field, and two
chat memories differing only in a secret stay two memories."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from zengram.assembly.containers import build_container, build_documents_container
from zengram.embedded.app import build_embedded_app

from tests.data.credential_corpus_more import MORE_POSITIVES
from tests.data.credential_values import Credential
from tests.documents.backends import kb_settings
from tests.support import API_KEY, TEST_SCRUBBER, HashingEmbedder, TickingClock

HEADERS = {"x-api-key": API_KEY}
# One of each family that leaked, one line each (a chunk of its own file on /kb).
FAMILIES = ("openai-api-key", "config-file-secret", "command-line-password", "discord-bot-token", "paired-secret",
            "sentence-password", "labelled-secret", "base64-private-key")
SAMPLE: list[Credential] = [next(c for c in MORE_POSITIVES if c.detector == family and "\n" not in c.text)
                            for family in FAMILIES]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Path]]:
    tmp_path = tmp_path_factory.mktemp("layers")
    root = tmp_path / "docs"
    root.mkdir()
    settings = kb_settings(tmp_path / "data", [root])
    embedder = HashingEmbedder()
    container = build_container(settings, embedder=embedder, clock=TickingClock())
    documents = build_documents_container(settings, embedder=embedder)
    try:
        with TestClient(build_embedded_app(settings, container, documents)) as client:
            yield client, root
    finally:
        container.close()


def expected(credential: Credential) -> str:
    scrubbed = TEST_SCRUBBER.scrub(credential.text)
    # The scrubber redacts it whole (tests/unit covers every one): no piece survives (`Mail&Pass99` → `…]&Pass99`).
    pieces = [piece for piece in re.split(r"[&;,/ ]", credential.secret) if len(piece) >= 4]
    assert not [piece for piece in [credential.secret, *pieces] if piece in scrubbed], scrubbed
    return scrubbed


@pytest.mark.parametrize("credential", SAMPLE, ids=lambda credential: credential.detector)
def test_memory_layer_stores_what_the_scrubber_makes_of_the_text(app: tuple[TestClient, Path],
                                                                  credential: Credential) -> None:
    client, _ = app
    stored = client.post("/memory", json={"type": "event", "content": credential.text, "source_agent": "probe",
                                          "client_id": "acme"}, headers=HEADERS)
    assert stored.status_code == 201, stored.text
    assert client.get(f"/memory/{stored.json()['id']}", headers=HEADERS).json()["content"] == expected(credential)


@pytest.mark.parametrize("credential", SAMPLE, ids=lambda credential: credential.detector)
def test_chat_layer_stores_what_the_scrubber_makes_of_the_text(app: tuple[TestClient, Path],
                                                                credential: Credential) -> None:
    client, _ = app
    created = client.post("/api/v1/memories", json={"subject_id": credential.detector, "text": credential.text},
                          headers=HEADERS)
    assert created.status_code == 201, created.text
    assert created.json()["memory"]["text"] == expected(credential)


def test_document_layer_stores_what_the_scrubber_makes_of_the_text(app: tuple[TestClient, Path]) -> None:
    client, root = app
    folder = root / "notes"
    folder.mkdir()
    for number, credential in enumerate(SAMPLE):
        (folder / f"note{number}.md").write_text(credential.text + "\n", encoding="utf-8")
    job_id = client.post("/kb/index", json={"folder_path": str(folder)}, headers=HEADERS).json()["job_id"]
    deadline = time.monotonic() + 60
    while (job := client.get(f"/kb/index/jobs/{job_id}", headers=HEADERS).json())["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, job
        time.sleep(0.05)
    assert job["status"] == "done", job
    for credential in SAMPLE:
        words = " ".join(credential.must_keep.split()[:4]) or credential.detector
        query = {"query": words, "mode": "bm25", "top_k": 20, "similarity_threshold": 0.0}
        found: list[dict[str, Any]] = client.post("/kb/query", json=query, headers=HEADERS).json()["results"]
        texts = [result["text"].strip() for result in found]
        assert expected(credential) in texts, (credential.detector, texts)
        assert not any(credential.secret in text for text in texts)


def test_chat_prompt_and_message_names_are_scrubbed(app: tuple[TestClient, Path]) -> None:
    client, _ = app
    name = "ops prompt, root pw: Qwerty!234"
    created = client.post("/api/v1/prompts", json={"name": name, "prompt_text": "Be brief."}, headers=HEADERS)
    assert created.status_code in (200, 201), created.text
    prompt = created.json()["prompt"]
    assert prompt["name"] == TEST_SCRUBBER.scrub(name) != name
    patched = client.patch(f"/api/v1/prompts/{prompt['id']}", json={"name": "admin pass is Adm1nistrat0r"},
                           headers=HEADERS)
    assert "Adm1nistrat0r" not in patched.text and patched.status_code == 200, patched.text


def test_chat_memories_differing_only_in_a_secret_stay_two(app: tuple[TestClient, Path]) -> None:
    client, _ = app
    texts = ["The staging database password is Winter2026!Acme", "The staging database password is Summer2027!Acme"]
    for text in texts:
        created = client.post("/api/v1/memories", json={"subject_id": "ops", "text": text}, headers=HEADERS)
        assert created.status_code == 201 and created.json()["memory"] is not None, created.text
    stored = client.get("/api/v1/memories", params={"subject_id": "ops", "include_superseded": "true"},
                        headers=HEADERS).json()["data"]
    assert sorted(m["text"] for m in stored) == sorted(TEST_SCRUBBER.scrub(text) for text in texts)
