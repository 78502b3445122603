"""Provider choice, prompt resolution, history budgets, learning job transitions and project resolution."""

from __future__ import annotations

from datetime import timedelta

import pytest
from zengram.chat.domain.history import Role, StoredMessage, within_budget
from zengram.chat.domain.learning import JobStatus, LearningJob, LearnMode
from zengram.chat.domain.prompts import PromptScope, SystemPrompt, resolve
from zengram.chat.domain.providers import Provider, ProviderEndpoints, choose_provider, provider_refusal
from zengram.chat.domain.recalls import LearningOutcome
from zengram.chat.domain.tenancy import resolve_project
from zengram.kernel.errors import FeatureUnavailable, Forbidden, InvalidInput
from zengram.kernel.keys import TenantScope
from zengram.web.errors import status_of

from tests.contract.chat.helpers import T0


@pytest.mark.parametrize(("model", "keys", "explicit", "chosen"), [
    ("gpt-4o-mini", {}, None, Provider.DEFAULT),
    ("claude-sonnet-4", {Provider.OPENAI: "k"}, None, Provider.OPENAI),  # the only key sent decides
    ("claude-sonnet-4", {Provider.OPENAI: "k", Provider.ANTHROPIC: "k"}, None, Provider.ANTHROPIC),
    ("gemini-2.0-flash", {Provider.OPENAI: "k", Provider.GOOGLE: "k"}, None, Provider.GOOGLE),
    ("llama3.1", {Provider.GOOGLE: "k", Provider.ANTHROPIC: "k"}, None, Provider.ANTHROPIC),
    ("gpt-4o", {Provider.OPENAI: "k"}, Provider.DEFAULT, Provider.DEFAULT),
    ("anything", {Provider.GOOGLE: "k"}, Provider.GOOGLE, Provider.GOOGLE),
])
def test_the_provider_of_a_request(model: str, keys: dict[Provider, str], explicit: Provider | None,
                                   chosen: Provider) -> None:
    assert choose_provider(model, keys, explicit) is chosen


def test_an_explicit_keyed_provider_needs_its_key() -> None:
    with pytest.raises(InvalidInput, match=r"^x-anthropic-key: required"):
        choose_provider("gpt-4o", {Provider.OPENAI: "k"}, Provider.ANTHROPIC)


def test_without_a_key_the_default_provider_answers_or_nothing_does() -> None:
    urls = {Provider.OPENAI: "https://o", Provider.ANTHROPIC: "https://a", Provider.GOOGLE: "https://g"}
    with pytest.raises(FeatureUnavailable):
        ProviderEndpoints(urls).call_for("gpt-4o", {})
    call = ProviderEndpoints(urls, "http://ollama/v1", None, "llama3.1").call_for("gpt-4o", {})
    assert (call.base_url, call.api_key, call.model) == ("http://ollama/v1", None, "llama3.1")
    keyed = ProviderEndpoints(urls).call_for("claude-3", {Provider.ANTHROPIC: "secret"})
    assert (keyed.base_url, keyed.api_key, keyed.model) == ("https://a", "secret", "claude-3")
    assert "secret" not in repr(keyed)


def test_a_refused_key_names_its_header() -> None:
    refused = provider_refusal(Provider.OPENAI, 401, "Incorrect API key provided")
    assert status_of(refused) == 400 and str(refused).startswith("x-openai-key: refused by openai (401)")
    assert status_of(provider_refusal(Provider.DEFAULT, 429, "slow down")) == 429
    assert status_of(provider_refusal(Provider.OPENAI, 404, "no such model")) == 404
    assert status_of(provider_refusal(Provider.GOOGLE, 422, "unprocessable")) == 400
    assert status_of(provider_refusal(Provider.GOOGLE, 418, "teapot")) == 400


def prompt(name: str, scope: PromptScope = PromptScope.PROJECT, scope_id: str | None = None, seconds: int = 0,
           **fields: object) -> SystemPrompt:
    moment = T0 + timedelta(seconds=seconds)
    values: dict[str, object] = {"id": f"sp_{name}", "project_id": "acme", "name": name, "prompt_text": name,
                                 "scope": scope, "scope_id": scope_id, "is_default": True, "created_at": moment,
                                 "updated_at": moment}
    return SystemPrompt.model_validate({**values, **fields})


def test_prompts_resolve_project_then_subject_then_chat() -> None:
    prompts = [prompt("chat", PromptScope.CHAT, "c1"), prompt("subject", PromptScope.SUBJECT, "alice"),
               prompt("late", seconds=5), prompt("early", seconds=9, priority=1), prompt("off", is_default=False),
               prompt("inactive", is_active=False), prompt("bob", PromptScope.SUBJECT, "bob"),
               prompt("other chat", PromptScope.CHAT, "c2")]
    assert [p.name for p in resolve(prompts, "alice", "c1")] == ["early", "late", "subject", "chat"]
    assert [p.name for p in resolve(prompts, None, None)] == ["early", "late"]


def message(index: int, text: str) -> StoredMessage:
    return StoredMessage(project_id="acme", subject_id="alice", chat_id="c", index=index, role=Role.USER,
                         content=text, created_at=T0)


def test_history_keeps_the_most_recent_whole_messages_within_budget() -> None:
    messages = [message(0, "a" * 400), message(1, "b" * 40), message(2, "c" * 40)]  # 104, 14, 14 tokens
    assert [m.index for m in within_budget(messages, 28)] == [1, 2]
    assert [m.index for m in within_budget(messages, 131)] == [1, 2]
    assert [m.index for m in within_budget(messages, 132)] == [0, 1, 2]
    assert within_budget(messages, 10) == []


def test_a_failing_job_backs_off_then_fails_for_good() -> None:
    job = LearningJob(id="job_1", project_id="acme", subject_id="alice", chat_id="c", event_id="e",
                      memories=LearnMode.AUTO, messages=[], not_before=T0, created_at=T0, updated_at=T0)
    lease, wait = timedelta(seconds=60), timedelta(seconds=30)
    first = job.claimed(T0, lease).failed("boom", T0, max_attempts=3, retry_after=wait)
    assert (first.status, first.attempts, first.not_before) == (JobStatus.PENDING, 1, T0 + wait)
    second = first.claimed(T0, lease).failed("boom", T0, max_attempts=3, retry_after=wait)
    assert second.not_before == T0 + 2 * wait
    last = second.claimed(T0, lease).failed("x" * 900, T0, max_attempts=3, retry_after=wait)
    assert last.status is JobStatus.FAILED and len(last.last_error or "") == 500 and not last.is_due(T0 + lease)
    again = last.requeued(T0)
    assert again.status is JobStatus.PENDING and again.attempts == 0 and again.is_due(T0)
    done = again.claimed(T0, lease).finished(LearningOutcome(status="done", created=["m"]), T0)
    assert done.report().model_dump() == {**LearningOutcome(status="done", created=["m"]).model_dump(),
                                          "job_id": "job_1", "attempts": 1}


def test_the_project_of_a_request() -> None:
    assert resolve_project(TenantScope.EVERYONE, None) == "global"
    assert resolve_project(TenantScope.of(["acme"]), None) == "acme"
    assert resolve_project(TenantScope.of(["acme", "global"]), None) == "global"
    assert resolve_project(TenantScope.of(["acme", "globex"]), "globex") == "globex"
    with pytest.raises(InvalidInput, match=r"^x-mnx-project-id: required"):
        resolve_project(TenantScope.of(["acme", "globex"]), None)
    with pytest.raises(Forbidden, match=r"^x-mnx-project-id:"):
        resolve_project(TenantScope.of(["acme"]), "globex")
