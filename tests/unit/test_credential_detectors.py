"""Every detector against its positive and negative examples, and the whole scrubber against the corpus:
≥ 40 real-format credentials that must be redacted, ≥ 40 ordinary technical sentences that must come back
unchanged (tests/data/credential_corpus.py)."""

from __future__ import annotations

import dataclasses
import itertools
import random

import pytest
from zengram.kernel.content import PLACEHOLDER, Scrubber, derive_digest_key
from zengram.kernel.credentials import DETECTORS, Detector

from tests.data.credential_corpus import NEAR_MISSES, ORDINARY, POSITIVES, Credential

SCRUBBER = Scrubber(derive_digest_key("corpus-test-key"))
DETECTOR_NAMES = sorted({detector.name for detector in DETECTORS})
NEAR_MISS_CASES = [(name, text) for name, texts in NEAR_MISSES.items() for text in texts]


def detectors_named(name: str) -> list[Detector]:
    return [detector for detector in DETECTORS if detector.name == name]


def test_the_corpus_holds_at_least_40_credentials_and_40_ordinary_sentences() -> None:
    assert len(POSITIVES) >= 40
    assert len(ORDINARY) >= 40
    assert len({credential.text for credential in POSITIVES}) == len(POSITIVES)


@pytest.mark.parametrize("name", DETECTOR_NAMES)
def test_every_detector_has_positive_and_negative_examples(name: str) -> None:
    assert any(credential.detector == name for credential in POSITIVES), f"no credential for {name}"
    assert NEAR_MISSES.get(name), f"no near miss for {name}"


@pytest.mark.parametrize("credential", POSITIVES, ids=lambda credential: credential.detector)
def test_each_credential_is_found_by_its_detector(credential: Credential) -> None:
    at = credential.text.index(credential.secret)
    spans = [span for detector in detectors_named(credential.detector) for span in detector.find(credential.text)]

    assert any(start <= at and at + len(credential.secret) <= end for start, end, _ in spans), spans


@pytest.mark.parametrize("credential", POSITIVES, ids=lambda credential: credential.detector)
def test_each_credential_is_redacted_and_the_rest_of_the_text_kept(credential: Credential) -> None:
    scrubbed = SCRUBBER.scrub(credential.text)

    assert credential.secret not in scrubbed
    assert PLACEHOLDER.search(scrubbed)
    assert credential.must_keep in scrubbed
    assert SCRUBBER.scrub(scrubbed) == scrubbed  # idempotent: an exported record imports unchanged


@pytest.mark.parametrize(("name", "text"), NEAR_MISS_CASES)
def test_near_misses_are_not_found_and_come_back_unchanged(name: str, text: str) -> None:
    assert [span for detector in detectors_named(name) for span in detector.find(text)] == []
    assert SCRUBBER.scrub(text) == text


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_comes_back_unchanged(text: str) -> None:
    assert SCRUBBER.scrub(text) == text


def test_no_two_credentials_scrub_to_the_same_text() -> None:
    scrubbed = {SCRUBBER.scrub(credential.text) for credential in POSITIVES}

    assert len(scrubbed) == len(POSITIVES)


@pytest.mark.parametrize("credential", POSITIVES, ids=lambda credential: credential.detector)
def test_a_different_secret_in_the_same_text_scrubs_differently(credential: Credential) -> None:
    last = credential.secret[-1]
    other = credential.secret[:-1] + ("7" if last != "7" else "8")
    changed = credential.text.replace(credential.secret, other)

    assert SCRUBBER.scrub(changed) != SCRUBBER.scrub(credential.text)


def test_the_issues_merged_pair_stays_apart() -> None:
    authentication = SCRUBBER.scrub("Token authentication failed on server alpha")
    validation = SCRUBBER.scrub("Token validation failed on server alpha")

    assert authentication == "Token authentication failed on server alpha"
    assert validation == "Token validation failed on server alpha"


def test_password_phrases_lose_the_whole_value() -> None:
    for text in ("password: correct horse battery staple", 'password: "correct horse battery staple"',
                 "PASSWORD = correct horse battery staple"):
        scrubbed = SCRUBBER.scrub(text)
        assert not any(word in scrubbed for word in ("correct", "horse", "battery", "staple")), scrubbed


def test_a_password_phrase_ends_at_its_line_sentence_or_the_next_pair() -> None:
    scrubbed = SCRUBBER.scrub("vpn password: tall trees ever. Rotate it monthly.\nuser: ops, password: blue sky, "
                              "port: 1194")

    assert "tall" not in scrubbed and "blue sky" not in scrubbed
    assert scrubbed.endswith(". Rotate it monthly.\nuser: ops, password: " + scrubbed.split("password: ")[2])
    assert scrubbed.endswith(", port: 1194")


@pytest.mark.parametrize(("url", "password", "after"), [
    ("redis://:pw-only-9@cache:6379", "pw-only-9", "@cache:6379"),
    ("postgres://u:p@ss/w0rd@db:5432/x", "p@ss/w0rd", "@db:5432/x"),
    ("https://user:a:b:c@host/path", "a:b:c", "@host/path"),
    ("https://user:pw@host/path/@me", "pw", "@host/path/@me"),
    ("amqp://guest:Rabbit@Hole42@mq:5672/", "Rabbit@Hole42", "@mq:5672/"),
])
def test_url_passwords_holding_slashes_ats_or_colons_are_redacted_whole(url: str, password: str, after: str) -> None:
    scrubbed = SCRUBBER.scrub(url)

    assert password not in scrubbed
    assert PLACEHOLDER.fullmatch(scrubbed.split("://", 1)[1].split(":", 1)[1].removesuffix(after))


def test_detector_names_are_placeholder_safe() -> None:
    for name in DETECTOR_NAMES:
        assert PLACEHOLDER.fullmatch(f"[REDACTED:{name}:0123456789ab]"), name


def test_scrubbing_pairs_of_credentials_keeps_both_out() -> None:
    for first, second in itertools.islice(itertools.combinations(POSITIVES, 2), 0, None, 37):
        scrubbed = SCRUBBER.scrub(f"{first.text}\n{second.text}")
        assert first.secret not in scrubbed and second.secret not in scrubbed


@pytest.mark.parametrize("text", [
    "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\nPrivate-MAC: 17f872fccfdb62be6bf9a1"
    "5d782500c4cc627b3bff9374b5dffba726bcd22e11PGPASSWORD=Pg!Admin#2026 psql",
    "secret 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mongodb+srv://admin:Mong0!Pass:word@cluster0.ab1cd.mongodb.net/prod",
    "` & & Bearer spring.datasource.password=Spr1ngBoot$ecret Basic",
])
def test_a_redaction_that_exposes_a_neighbour_is_followed_by_another_pass(text: str) -> None:
    once = SCRUBBER.scrub(text)

    assert SCRUBBER.scrub(once) == once
    assert not any(secret in once for secret in ("Pg!Admin", "Mong0!Pass", "Spr1ngBoot"))


def test_scrubbing_glued_fragments_is_idempotent() -> None:
    """Fragments of the corpus glued together at random (a redaction can expose a neighbour: `…e11PGPASSWORD=`
    only reads as a label once its left side is a placeholder): scrubbing the result again changes nothing."""
    pieces = [credential.text for credential in POSITIVES] + ORDINARY + [text for _, text in NEAR_MISS_CASES]
    atoms = ["[REDACTED]", "[REDACTED:password:0123456789ab]", "password", ":", "=", "@", "://", "\n", '"', "is",
             "Bearer", "Basic", "token", "secret", ";", "&", "-----BEGIN", "--password", "é"]
    rng = random.Random(12)
    for _ in range(1500):
        parts = []
        for _ in range(rng.randint(1, 6)):
            part = rng.choice(pieces) if rng.random() < 0.5 else rng.choice(atoms)
            if rng.random() < 0.3 and len(part) > 4:
                start = rng.randrange(len(part))
                part = part[start:start + rng.randint(1, 40)]
            parts.append(part)
        text = rng.choice(["", " ", "\n"]).join(parts)
        once = SCRUBBER.scrub(text)
        assert SCRUBBER.scrub(once) == once, text


UNHINTED = Scrubber(derive_digest_key("corpus-test-key"),
                    [dataclasses.replace(detector, hint=None) for detector in DETECTORS])


def test_the_hints_only_skip_detectors_that_would_find_nothing() -> None:
    """Each detector's hint is a cheap test a text must pass for it to find anything: scrubbing with the hints
    gives exactly what running every detector on every text gives, on the corpus, on its fragments glued with
    the hints' literals in both cases and in look-alike Unicode, and on random text."""
    pieces = [credential.text for credential in POSITIVES] + ORDINARY + [text for _, text in NEAR_MISS_CASES]
    atoms = ["password", "PASS_word", "pa.ss", "P_W_D", "sEcReT", "to-ken", "K\u212aey", "\u017fecret", "key",
             "Credential", "AKIA", "sk-", "://", "@", ":", "=", " is ", "\n", "Authorization", "BEARER", "basic",
             "AccountKey", "?sig", "&X-Amz-S", "-us1", ":AA", "_v1_", "hv\u0073.", "\u0130", "é", "--", "<", ">"]
    rng = random.Random(18)
    texts = list(pieces)
    for _ in range(3000):
        parts = []
        for _ in range(rng.randint(1, 6)):
            part = rng.choice(pieces) if rng.random() < 0.4 else rng.choice(atoms)
            if rng.random() < 0.3 and len(part) > 4:
                start = rng.randrange(len(part))
                part = part[start:start + rng.randint(1, 40)]
            parts.append(part)
        texts.append(rng.choice(["", " ", "\n", "_", "="]).join(parts))
    for text in texts:
        assert SCRUBBER.find(text) == UNHINTED.find(text), text
        assert SCRUBBER.scrub(text) == UNHINTED.scrub(text), text


@pytest.mark.parametrize("credential", POSITIVES, ids=lambda credential: credential.detector)
def test_every_credential_passes_its_detectors_hint(credential: Credential) -> None:
    hints = [detector.hint for detector in detectors_named(credential.detector) if detector.hint is not None]

    assert all(hint(credential.text) for hint in hints)
