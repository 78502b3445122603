"""The embedded stand-in for the local cloud (`ZENGRAM_E2E_TARGET=embedded`): one server in this process with the
state keys the suite reads, its LLM and chat providers on the scripted model server. It checks the tests; the
cloud is what they are for."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zengram.assembly.containers import build_container
from zengram.embedded.app import build_embedded_app
from zengram.embedded.background import BackgroundServer
from zengram.settings import Settings

from tests.api.chat.conftest import NO_LEARNING, chat_settings_for
from tests.llm_server import ScriptedLLMServer, settings_with_llm
from tests.support import API_KEY, REPO_ROOT, HashingEmbedder


@contextmanager
def embedded_cloud(folder: Path) -> Iterator[dict[str, Any]]:
    llm = ScriptedLLMServer().start()
    llm.default(NO_LEARNING)
    base = Settings(data_dir=folder / "data", api_key=API_KEY, rate_limit_enabled=False,
                    documents_allowed_roots=[str(REPO_ROOT), str(folder)])
    # the chat layer's provider: the deployment's default one (the cloud cannot point x-openai-key elsewhere)
    settings = chat_settings_for(settings_with_llm(base, llm), llm, chat_default_base_url=llm.url_for("openai"))
    container = build_container(settings, embedder=HashingEmbedder())  # the wall clock, as the cloud's
    try:
        with BackgroundServer(build_embedded_app(settings, container)) as server:
            yield {"target": "embedded", "api_url": server.url, "api_key": API_KEY, "admin_key": API_KEY,
                   "documents_root": str(folder), "_scripted_llm": llm}
    finally:
        container.close()
        llm.stop()
