"""The web dashboard end to end: a real embedded server with sample data, Debian's Chromium (headless) driven by
Playwright, every view visited, search → memory history and an entity node clicked through, screenshots checked
for content, and no console errors.

Chromium comes from Debian (`make chromium`); Playwright only drives it (no browser download). Without Chromium
this module is skipped with the reason, except under CI=true, where that fails it. ZENGRAM_DASHBOARD_SHOTS=<folder>
keeps the screenshots (docs/dashboard.png is one of them).
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.responses import JSONResponse
from zengram.assembly.containers import build_container
from zengram.embedded.app import build_embedded_app
from zengram.embedded.background import BackgroundServer
from zengram.settings import Settings

from tests.dashboard.sample_data import Sample, sample_clock, seed, write_documents
from tests.llm_server import ScriptedLLMServer, settings_with_llm
from tests.support import API_KEY, HashingEmbedder

# One worker runs the module: one browser and one sample server, and the tests in file order (consolidation last).
pytestmark = pytest.mark.xdist_group("dashboard")

# As the machine notes say Chromium must start here: without background networking it makes no connection of its own.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Optional parts of the API the dashboard probes for its tabs: their refusal is expected and logged by the browser.
PROBES = ("/kb/health/status", "/api/v1/prompts", "/admin/keys")
VIEWPORT = {"width": 1280, "height": 900}
# What the consolidation engine's language model answers: no change to make (the sample stays as it is).
EMPTY_PLAN = {"merged_facts": [], "contradictions": [], "connections": [], "summaries": [], "categories": []}


SUBJECT = "user-42"


def chromium_path() -> str:
    found = shutil.which("chromium")
    if found is None:
        reason = "Debian's chromium is not installed (`make chromium` installs it): the dashboard test cannot run"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


@dataclass
class Dashboard:
    url: str
    sample: Sample
    browser: Any
    shots: Path | None


@dataclass
class Console:
    """What the page said: errors and uncaught exceptions (failed probes of optional routes aside, and the
    requests a test expects to be refused, `refused`)."""

    errors: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def listen(self, page: Any) -> None:
        page.on("console", self._message)
        page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))

    def _message(self, message: Any) -> None:
        if message.type not in ("error", "warning"):
            return
        source = message.location.get("url", "")
        if message.text.startswith("Failed to load resource") and source.endswith((*PROBES, *self.refused)):
            return
        self.errors.append(f"{message.type}: {message.text} ({source})")


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory: pytest.TempPathFactory, _scripted_llm_server: ScriptedLLMServer) -> Iterator[Dashboard]:
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    documents = write_documents(tmp_path_factory.mktemp("documents"))
    settings = settings_with_llm(Settings(data_dir=tmp_path_factory.mktemp("dashboard") / "data", api_key=API_KEY,
                                          rate_limit_enabled=False, documents_allowed_roots=[str(documents)]),
                                 _scripted_llm_server)
    clock = sample_clock()
    container = build_container(settings, embedder=HashingEmbedder(), clock=clock)
    shots = os.environ.get("ZENGRAM_DASHBOARD_SHOTS")
    try:
        with BackgroundServer(build_embedded_app(settings, container)) as server, sync_playwright() as playwright:
            sample = seed(server.url, API_KEY, clock, documents)
            browser = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_FLAGS)
            try:
                yield Dashboard(server.url, sample, browser, Path(shots) if shots else None)
            finally:
                browser.close()
    finally:
        container.close()


@pytest.fixture
def console() -> Console:
    return Console()


@pytest.fixture
def page(dashboard: Dashboard, console: Console) -> Iterator[Any]:
    """A fresh browser context (empty session storage), listened to; the test ends with no console error."""
    context = dashboard.browser.new_context(viewport=VIEWPORT)
    opened = context.new_page()
    console.listen(opened)
    try:
        yield opened
        assert console.errors == []
    finally:
        context.close()


def sign_in(page: Any, dashboard: Dashboard, key: str = API_KEY) -> None:
    page.goto(f"{dashboard.url}/dashboard/")
    page.fill("input[name=key]", key)
    assert page.input_value("input[name=base]") == dashboard.url  # the API beside the page
    page.click("[data-testid=signin] button[type=submit]")
    page.wait_for_selector("[data-testid=counts]")


def open_tab(page: Any, tab: str) -> None:
    page.click(f"header nav a[data-tab={tab}]")
    page.wait_for_selector(f"main[data-view={tab}]")


def screenshot(page: Any, dashboard: Dashboard, name: str, selector: str | None = None) -> bytes:
    if selector is None:
        page.evaluate("window.scrollTo(0, 0)")  # else the sticky header is drawn where the page was scrolled to
    target = page.locator(selector) if selector else page
    image: bytes = target.screenshot(**({} if selector else {"full_page": True}))
    if dashboard.shots is not None:
        dashboard.shots.mkdir(parents=True, exist_ok=True)
        (dashboard.shots / f"{name}.png").write_bytes(image)
    return image


def assert_drawn(png: bytes, *, min_colours: int, min_inked: float) -> None:
    """Not a blank picture: at least `min_colours` distinct colours, and `min_inked` of the pixels differ from
    the most common one (the background)."""
    from PIL import Image

    picture = Image.open(io.BytesIO(png)).convert("RGB")
    colours = picture.getcolors(maxcolors=picture.width * picture.height) or []
    background = max(count for count, _ in colours)
    inked = 1 - background / (picture.width * picture.height)
    assert len(colours) >= min_colours, f"{len(colours)} colours"
    assert inked >= min_inked, f"{inked:.1%} of the pixels differ from the background"


def rows(page: Any, selector: str) -> int:
    count: int = page.locator(selector).count()
    return count


# -- the tests ---------------------------------------------------------------------------------------------------


def test_the_key_is_asked_for_and_kept_in_the_session_only(dashboard: Dashboard, page: Any,
                                                           console: Console) -> None:
    console.refused.append("/stats")  # the wrong key's sign-in
    page.goto(f"{dashboard.url}/dashboard/")
    page.fill("input[name=key]", "not-the-key")
    page.click("[data-testid=signin] button[type=submit]")
    assert "401" in page.locator("[role=alert]").inner_text()
    assert page.evaluate("sessionStorage.length") == 0

    page.fill("input[name=key]", API_KEY)
    page.click("[data-testid=signin] button[type=submit]")
    page.wait_for_selector("[data-testid=counts]")
    assert page.evaluate("sessionStorage.getItem('zengram.key')") == API_KEY
    assert page.evaluate("localStorage.length") == 0 and page.context.cookies() == []

    page.reload()  # the same tab keeps it
    page.wait_for_selector("[data-testid=counts]")
    page.click("[data-testid=signout]")
    page.wait_for_selector("[data-testid=signin]")
    assert page.evaluate("sessionStorage.getItem('zengram.key')") is None


def test_the_overview_shows_counts_and_index_health(dashboard: Dashboard, page: Any) -> None:
    sign_in(page, dashboard)

    assert page.inner_text("[data-testid=count-total_memories] .stat-value") == "12"
    assert page.inner_text("[data-testid=count-superseded] .stat-value") == "3"  # two facts, one status
    note = page.inner_text("[data-testid=counts-note]")  # issue 37: why the two counts differ
    assert "superseded" in note and "waiting for the index" in note and "chat layer" in note
    assert page.inner_text("[data-testid=index-health] .badge") == "ok"
    assert rows(page, "[data-testid=top-entities] tbody tr") == 10
    tabs = page.locator("header nav a").all_inner_texts()
    assert tabs == ["Overview", "Search", "Briefing", "Entities", "Consolidation", "Clients", "Keys", "Documents",
                    "Chat"]
    assert_drawn(screenshot(page, dashboard, "overview"), min_colours=40, min_inked=0.05)


def test_without_the_chat_layer_its_tab_stays_away(page: Any, tmp_path: Path) -> None:
    """A deployment without /api/v1 (its probe answers 404): no Chat tab, and #/chat is no view."""
    settings = Settings(data_dir=tmp_path / "data", api_key=API_KEY, rate_limit_enabled=False)
    container = build_container(settings, embedder=HashingEmbedder())
    app = build_embedded_app(settings, container)

    @app.middleware("http")
    async def no_chat_layer(request: Any, call_next: Any) -> Any:
        if request.url.path.startswith("/api/v1"):
            return JSONResponse({"error": "not found"}, status_code=404)
        return await call_next(request)

    try:
        with BackgroundServer(app) as server:
            page.goto(f"{server.url}/dashboard/")
            page.fill("input[name=key]", API_KEY)
            page.click("[data-testid=signin] button[type=submit]")
            page.wait_for_selector("header nav a[data-tab=documents]")  # the probes have answered
            page.goto(f"{server.url}/dashboard/#/chat")
            page.wait_for_selector("main >> text=No such view here.")
            assert "Chat" not in page.locator("header nav a").all_inner_texts()
    finally:
        container.close()


def test_documents_status_folders_jobs_and_a_query(dashboard: Dashboard, page: Any) -> None:
    sign_in(page, dashboard)
    open_tab(page, "documents")
    page.wait_for_selector("[data-testid=kb-folders] tbody tr")
    page.wait_for_selector("[data-testid=kb-status] >> text=total_documents")  # its own request: may come later
    assert "total_documents\t3" in page.inner_text("[data-testid=kb-status]")
    assert rows(page, "[data-testid=kb-jobs] tbody tr") == 1
    assert "done" in page.inner_text("[data-testid=kb-jobs]")
    page.fill("[data-testid=kb-query] input[name=query]", "PostgreSQL failover replica")
    page.select_option("[data-testid=kb-query] select[name=mode]", "bm25")
    page.click("[data-testid=kb-query] button[type=submit]")
    page.wait_for_selector("[data-testid=kb-results] tbody tr")
    first = page.locator("[data-testid=kb-results] tbody tr").first.inner_text()
    assert "postgres.txt" in first and "promote the replica" in first
    assert_drawn(screenshot(page, dashboard, "documents"), min_colours=20, min_inked=0.03)


def test_search_with_filters_shows_the_scores_then_the_memory_history(dashboard: Dashboard, page: Any) -> None:
    sign_in(page, dashboard)
    open_tab(page, "search")
    page.fill("input[name=q]", "Acme primary database")
    page.select_option("select[name=type]", "fact")
    page.fill("input[name=client_id]", "acme-corp")
    page.check("input[name=include_superseded]")
    page.click("[data-testid=search-form] button[type=submit]")
    page.wait_for_selector("[data-testid=hit]")

    hits = page.locator("[data-testid=hit]")
    assert hits.count() == 3  # every version of the fact, superseded ones included; nothing else
    # Issue 37: every bar on one absolute scale (1, or the largest score shown), not each hit's own best score.
    bars = page.eval_on_selector_all("[data-testid=hit] .bar-row", "rows => rows.map(row => "
                                     "[parseFloat(row.querySelector('.fill').style.width), "
                                     "parseFloat(row.querySelector('b').textContent)])")
    scale = max(1.0, *(score for _, score in bars))
    assert all(abs(width - 100 * score / scale) <= 1 for width, score in bars), bars
    assert len({round(width) for width, _ in bars}) > 1, bars
    assert "PostgreSQL 16" in hits.first.inner_text()
    breakdown = hits.first.locator("table.breakdown").inner_text()
    assert "effective_score" in breakdown and "sources" in breakdown
    assert "multi_path" in page.inner_text("[data-testid=retrieval]")
    assert_drawn(screenshot(page, dashboard, "search"), min_colours=40, min_inked=0.05)

    hits.first.locator("a.memory-link").click()
    page.wait_for_selector("[data-testid=decay-chart] canvas")
    assert rows(page, "[data-testid=chain] li") == 3
    assert rows(page, "[data-testid=chain] li.current") == 1
    timeline = page.inner_text("[data-testid=timeline]")
    assert "corroborated" in timeline and "review-bot" in timeline and "accessed" in timeline
    assert "observation_count\t2" in page.inner_text("[data-testid=corroboration]")
    assert_drawn(screenshot(page, dashboard, "decay-chart", "[data-testid=decay-chart]"), min_colours=8,
                 min_inked=0.02)
    assert_drawn(screenshot(page, dashboard, "memory"), min_colours=40, min_inked=0.05)


def test_clicking_an_entity_node_shows_its_memories(dashboard: Dashboard, page: Any) -> None:
    sign_in(page, dashboard)
    open_tab(page, "entities")
    page.wait_for_selector("[data-testid=entity-graph][data-ready=true]")
    assert "co-occurrence edges" in page.inner_text("[data-testid=graph-summary]")
    assert rows(page, "[data-testid=node-list] li") >= 12
    assert_drawn(screenshot(page, dashboard, "graph", "[data-testid=entity-graph]"), min_colours=20, min_inked=0.03)

    where = page.evaluate("""() => {
        const cy = document.getElementById('entity-graph')._cy;
        const node = cy.nodes().filter((n) => n.data('label') === 'PostgreSQL')[0];
        return node.renderedPosition();
    }""")
    box = page.locator("[data-testid=entity-graph]").bounding_box()
    page.mouse.click(box["x"] + where["x"], box["y"] + where["y"])  # on the canvas, where the node is drawn

    page.wait_for_selector("[data-testid=entity-memories] tbody tr")
    assert page.inner_text("[data-testid=entity-panel] h2") == "PostgreSQL"
    assert rows(page, "[data-testid=entity-memories] tbody tr") == 5
    assert_drawn(screenshot(page, dashboard, "entities"), min_colours=40, min_inked=0.05)

    page.locator("[data-testid=entity-memories] a.memory-link").first.click()
    page.wait_for_selector("[data-testid=memory-history]")


def test_briefing_since_a_chosen_time(dashboard: Dashboard, page: Any) -> None:
    sign_in(page, dashboard)
    open_tab(page, "briefing")
    page.fill("input[name=since]", "2000-01-01T00:00")
    page.click("[data-testid=briefing-form] button[type=submit]")
    page.wait_for_selector("[data-testid=briefing-result]")
    assert rows(page, "[data-testid=bucket-events] tbody tr") == 6
    assert rows(page, "[data-testid=bucket-decisions] tbody tr") == 1

    page.fill("input[name=since]", "2999-01-01T00:00")  # nothing after that
    page.click("[data-testid=briefing-form] button[type=submit]")
    page.wait_for_selector("[data-testid=bucket-events] >> text=None in this period.")
    assert_drawn(screenshot(page, dashboard, "briefing"), min_colours=20, min_inked=0.03)


def test_clients_and_keys(dashboard: Dashboard, page: Any) -> None:
    sign_in(page, dashboard)
    open_tab(page, "clients")
    page.wait_for_selector("[data-testid=clients-table]")
    # Issue 37: every client_id in use is listed, with a fingerprint or without one.
    assert page.locator("[data-testid=clients-table] tbody tr td:first-child").all_inner_texts() == [
        "acme-corp", "globex", "initech"]
    assert "Hank Scorpio" in page.inner_text("[data-testid=clients-table]")
    assert "no fingerprint" in page.locator("[data-testid=clients-table] tbody tr").nth(2).inner_text()
    assert_drawn(screenshot(page, dashboard, "clients"), min_colours=20, min_inked=0.03)

    open_tab(page, "keys")
    page.wait_for_selector("[data-testid=keys-table]")
    assert "acme reader" in page.inner_text("[data-testid=keys-table]")
    assert_drawn(screenshot(page, dashboard, "keys"), min_colours=20, min_inked=0.03)


def test_a_read_key_of_one_client_sees_its_own_and_no_keys_tab(dashboard: Dashboard, page: Any) -> None:
    sign_in(page, dashboard, dashboard.sample.read_key)
    assert "Keys" not in page.locator("header nav a").all_inner_texts()
    open_tab(page, "entities")
    page.wait_for_selector("[data-testid=entity-graph][data-ready=true]")
    names = page.locator("[data-testid=node-list] li button").all_inner_texts()
    assert "PostgreSQL" in names and "Stripe" not in names  # Stripe is named by globex's memories only
    page.goto(f"{dashboard.url}/dashboard/#/keys")
    page.wait_for_selector("main >> text=No such view here.")


INTEGRATIONS_URL = "/api/v1/integrations?include_inactive=true"
EVENTS_URL = f"/api/v1/events/memories?subject_id={SUBJECT}"
# What the memory event stream sends, in the shape the mnexium SDK's subscribe() reads (and core-mnx documents).
EVENT_STREAM = "".join(f"id: {number}\nevent: {kind}\ndata: {json.dumps(data)}\n\n"
                       for number, (kind, data) in enumerate([
    ("connected", {"subject_id": SUBJECT}),
    ("memory.created", {"id": "mem_new", "subject_id": SUBJECT, "text": "Moved to Porto",
                        "created_at": "2026-01-02T10:00:00Z"}),
    ("heartbeat", {"timestamp": "2026-01-02T10:00:30Z"}),
    ("memory.superseded", {"id": "mem_old", "superseded_by": "mem_new"}),
], start=1))


@contextmanager
def chat_layer(tmp_path: Path) -> Iterator[str]:
    """A server of its own whose chat layer has two prompts and, for SUBJECT, memories, a claim and a profile
    field; yields its URL."""
    settings = Settings(data_dir=tmp_path / "data", api_key=API_KEY, rate_limit_enabled=False)
    container = build_container(settings, embedder=HashingEmbedder())
    try:
        with BackgroundServer(build_embedded_app(settings, container)) as server, \
                httpx.Client(base_url=f"{server.url}/api/v1", headers={"x-mnexium-key": API_KEY}) as seed:
            for name, text in (("Support tone", "Answer briefly and kindly."), ("Billing", "Quote invoice numbers.")):
                seed.post("/prompts", json={"name": name, "prompt_text": text}).raise_for_status()
            for text, kind in (("Lives in Lisbon", "fact"), ("Prefers email over phone", "preference")):
                seed.post("/memories", json={"subject_id": SUBJECT, "text": text, "kind": kind}).raise_for_status()
            claim = {"subject_id": SUBJECT, "slot": "home_city", "value": "Lisbon"}
            seed.post("/claims", json=claim).raise_for_status()
            seed.patch("/profiles", json={"subject_id": SUBJECT, "updates": [
                {"field_key": "timezone", "value": "Europe/Lisbon"}]}).raise_for_status()
            yield server.url
    finally:
        container.close()


def open_subject(page: Any, url: str) -> None:
    page.goto(f"{url}/dashboard/")
    page.fill("input[name=key]", API_KEY)
    page.click("[data-testid=signin] button[type=submit]")
    page.wait_for_selector("header nav a[data-tab=chat]")
    open_tab(page, "chat")
    page.fill("[data-testid=subject-form] input[name=subject]", SUBJECT)
    page.click("[data-testid=subject-form] button[type=submit]")
    page.wait_for_selector("[data-testid=subject-memories] tbody tr")


def test_the_chat_tab_shows_a_subjects_truth_profile_memories_and_the_optional_parts_quietly(
        dashboard: Dashboard, page: Any, console: Console, tmp_path: Path) -> None:
    # Integrations and the event stream may not be offered (501): the browser logs that refusal, nothing else may.
    console.refused += [INTEGRATIONS_URL, EVENTS_URL]
    with chat_layer(tmp_path) as url:
        open_subject(page, url)
        assert rows(page, "[data-testid=prompts-table] tbody tr") == 2
        memories = page.inner_text("[data-testid=subject-memories]")
        assert "Lives in Lisbon" in memories and "Prefers email over phone" in memories
        truth = page.locator("[data-testid=truth-table] tbody tr", has_text="home_city")
        assert "Lisbon" in truth.inner_text()
        profile = page.locator("[data-testid=profile-table] tbody tr", has_text="timezone")
        assert "Europe/Lisbon" in profile.inner_text()
        page.wait_for_selector("[data-testid=subject-chats] >> text=No conversations.")
        # Offered or not, integrations and the live events are never a red error box.
        page.wait_for_selector("[data-testid=chat-integrations] :is([data-testid=integrations-off], "
                               "[data-testid=integrations-table], p.muted)")
        page.wait_for_selector("[data-testid=events-status]:not([data-status=connecting])")
        assert page.locator("main .error").count() == 0
        assert_drawn(screenshot(page, dashboard, "chat"), min_colours=20, min_inked=0.03)


def test_the_chat_tab_degrades_quietly_where_integrations_and_events_answer_501(
        page: Any, console: Console, tmp_path: Path) -> None:
    console.refused += [INTEGRATIONS_URL, EVENTS_URL]
    refusal = {"status": 501, "content_type": "application/json",
               "body": json.dumps({"error": "integrations: not supported by this server"})}
    page.route(f"**{INTEGRATIONS_URL}", lambda route: route.fulfill(**refusal))
    page.route(f"**{EVENTS_URL}", lambda route: route.fulfill(**refusal))
    with chat_layer(tmp_path) as url:
        open_subject(page, url)
        page.wait_for_selector("[data-testid=integrations-off] >> text=not configured")
        page.wait_for_selector("[data-testid=events-status][data-status=unavailable]")
        assert "does not offer" in page.inner_text("[data-testid=events-status]")
        assert page.locator("main .error").count() == 0


def test_the_chat_tab_lists_integrations_and_the_subjects_live_memory_events(
        page: Any, tmp_path: Path) -> None:
    integration = {"integration_id": "int_weather", "name": "Weather", "mode": "pull", "is_active": True,
                   "endpoint_url": "https://weather.example/api", "updated_at": "2026-01-02T09:00:00Z"}
    page.route(f"**{INTEGRATIONS_URL}", lambda route: route.fulfill(
        status=200, content_type="application/json", body=json.dumps({"integrations": [integration]})))
    asked: list[str | None] = []

    def stream(route: Any) -> None:
        asked.append(route.request.headers.get("x-api-key"))
        route.fulfill(status=200, headers={"content-type": "text/event-stream"}, body=EVENT_STREAM)

    page.route(f"**{EVENTS_URL}", stream)
    with chat_layer(tmp_path) as url:
        open_subject(page, url)
        assert "https://weather.example/api" in page.inner_text("[data-testid=integrations-table]")
        page.wait_for_selector("[data-testid=events-table] >> text=memory.superseded")
        events = page.locator("[data-testid=events-table] tbody tr").all_inner_texts()
        assert len(events) == 2  # newest first; connected and heartbeat set the status, not rows
        assert "memory.superseded" in events[0] and "mem_old → mem_new" in events[0]
        assert "memory.created" in events[1] and "Moved to Porto" in events[1]
        assert asked[0] == API_KEY  # the key travels in a header (EventSource could not send one)
        assert "last heartbeat" in page.inner_text("[data-testid=events-status]")


def test_consolidation_status_and_a_run_started_from_the_dashboard(dashboard: Dashboard, page: Any,
                                                                   llm_server: ScriptedLLMServer) -> None:
    # Last in this module: the run marks the sample consolidated (the LLM plans no change).
    llm_server.script(*[EMPTY_PLAN] * 4)
    sign_in(page, dashboard)
    open_tab(page, "consolidation")
    page.wait_for_selector("[data-testid=consolidation-status] .badge")
    status = page.inner_text("[data-testid=consolidation-status]")
    assert "idle" in status and "test-chat-model" in status

    page.click("[data-testid=consolidate-now]")
    started = page.locator("[data-testid=started-runs] [data-testid=job]")
    started.locator(".badge >> text=succeeded").wait_for()  # the card polls the job until it has ended
    job_id = page.evaluate("JSON.parse(sessionStorage.getItem('zengram.jobs'))[0]")
    assert job_id in started.inner_text() and "batches" in started.inner_text()
    # then the status is read again: it names the run, and shows it beside it
    page.wait_for_selector(f"[data-testid=consolidation-status] >> text={job_id}")
    assert rows(page, "[data-testid=job]") == 2
    assert "Last finished run" in page.inner_text("main")
    assert_drawn(screenshot(page, dashboard, "consolidation"), min_colours=20, min_inked=0.03)

    page.reload()  # the runs started in this tab are remembered for the session
    page.wait_for_selector(f"[data-testid=job] >> text=Run {job_id}")
