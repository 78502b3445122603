// The Chat tab's live parts: a subject's memory event stream (GET /api/v1/events/memories, server-sent events as the
// `mnexium` SDK's `subscribe()` reads them: `event: memory.created` + `data: {...}`, also `connected`, `heartbeat`,
// `memory.superseded`, `memory.updated`, `memory.deleted`, `memory.restored`, `memory.recalled`, `profile.updated`)
// and the project's integrations. A server that does not offer either (404, 501) gets a quiet note, not an error.
import { useEffect, useState } from "preact/hooks";
import { get, openStream } from "../api.js";
import { Badge, Card, ErrorBox, Loading, Table, html, pick, useLoad, when } from "../ui.js";

const NOT_OFFERED = [404, 405, 501];
const KEPT_EVENTS = 50;
const RETRY_MS = 3000;

// Splits what arrived into whole events (a blank line ends one) and the unfinished rest.
export function parseEvents(text) {
  const blocks = text.replace(/\r\n?/g, "\n").split("\n\n");
  const rest = blocks.pop();
  const events = [];
  for (const block of blocks) {
    let type = "message";
    let id = null;
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue; // a comment (keep-alive)
      const at = line.indexOf(":");
      const name = at < 0 ? line : line.slice(0, at);
      const value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
      if (name === "event") type = value;
      else if (name === "data") data.push(value);
      else if (name === "id") id = value;
    }
    if (data.length === 0) continue;
    let payload;
    try {
      payload = JSON.parse(data.join("\n"));
    } catch (_) {
      payload = { text: data.join("\n") };
    }
    events.push({ type, id, data: payload });
  }
  return { events, rest };
}

const pause = (ms, signal) => new Promise((resolve) => {
  const timer = setTimeout(resolve, ms);
  signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
});

// The subject's event stream while the card is shown: reconnects (with Last-Event-ID) when it ends, stops for good
// when the server does not offer it or refuses the key.
function useMemoryEvents(subject) {
  const [state, setState] = useState({ status: "connecting", events: [], note: "" });
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    let lastEventId = null;
    const seen = new Set();
    setState({ status: "connecting", events: [], note: "" });
    const take = (event) => {
      if (event.id) {
        if (seen.has(event.id)) return;
        seen.add(event.id);
        lastEventId = event.id;
      }
      if (event.type === "connected") setState((previous) => ({ ...previous, status: "live" }));
      else if (event.type === "heartbeat") setState((previous) => ({ ...previous, heartbeat: new Date() }));
      else setState((previous) => ({ ...previous, events: [{ ...event, received: new Date() }, ...previous.events]
        .slice(0, KEPT_EVENTS) }));
    };
    (async () => {
      while (!signal.aborted) {
        try {
          const response = await openStream("/api/v1/events/memories", { subject_id: subject },
            { signal, lastEventId });
          setState((previous) => ({ ...previous, status: "live" }));
          const reader = response.body.getReader();
          const decoder = new TextDecoder();
          let buffered = "";
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            const parsed = parseEvents(buffered + decoder.decode(value, { stream: true }));
            buffered = parsed.rest;
            parsed.events.forEach(take);
          }
        } catch (error) {
          if (signal.aborted) return;
          if (NOT_OFFERED.includes(error.status) || error.status === 401 || error.status === 403) {
            setState((previous) => ({ ...previous, status: "unavailable", note: error.status === 403
              ? "This key may not read the event stream." : "This server does not offer the memory event stream." }));
            return;
          }
        }
        if (signal.aborted) return;
        setState((previous) => ({ ...previous, status: "reconnecting" }));
        await pause(RETRY_MS, signal);
      }
    })();
    return () => controller.abort();
  }, [subject]);
  return state;
}

const STATUS_KINDS = { live: "good", connecting: "plain", reconnecting: "warn", unavailable: "plain" };

function eventKind(type) {
  const action = String(type).split(".").pop();
  return { created: "created", superseded: "superseded", deleted: "deleted", updated: "fact", restored: "good",
    recalled: "accessed" }[action] || "plain";
}

function eventText(data) {
  const text = pick(data, "text", "field_key", "slot");
  if (text) return String(text);
  const id = pick(data, "id", "memory_id");
  if (id) return pick(data, "superseded_by") ? `${id} → ${data.superseded_by}` : String(id);
  return JSON.stringify(data);
}

export function MemoryEvents({ subject }) {
  const { status, events, note, heartbeat } = useMemoryEvents(subject);
  return html`<${Card} title="Live memory events" testid="subject-events">
    <p data-testid="events-status" data-status=${status}>
      <${Badge} kind=${STATUS_KINDS[status]}>${status === "unavailable" ? "not available" : status}<//>
      ${" "}<span class="muted">${status === "unavailable" ? note
        : heartbeat ? `last heartbeat ${when(heartbeat)}` : `events of ${subject} as they happen`}</span>
    </p>
    ${status === "unavailable" ? null : html`<${Table} testid="events-table" rows=${events}
      empty="No events since this card opened." columns=${[
        { label: "when", value: (event) => when(pick(event.data, "timestamp", "created_at") || event.received) },
        { label: "event", value: (event) => html`<${Badge} kind=${eventKind(event.type)}>${event.type}<//>` },
        { label: "what", value: (event) => eventText(event.data) },
      ]} />`}
  <//>`;
}

// The project's integrations (GET /api/v1/integrations, as the SDK's integrations.list reads it).
export function Integrations() {
  const integrations = useLoad(() => get("/api/v1/integrations", { include_inactive: true }), []);
  let body;
  if (integrations.error && NOT_OFFERED.includes(integrations.error.status)) {
    body = html`<p class="muted" data-testid="integrations-off">Integrations are not configured on this server.</p>`;
  } else if (integrations.error) {
    body = html`<${ErrorBox} error=${integrations.error} />`;
  } else if (integrations.loading && !integrations.data) {
    body = html`<${Loading} />`;
  } else {
    const data = integrations.data;
    const rows = Array.isArray(data) ? data : pick(data, "integrations", "data") || [];
    body = html`<${Table} testid="integrations-table" rows=${rows} empty="No integrations yet." columns=${[
      { label: "name", value: (row) => pick(row, "name", "integration_id") },
      { label: "mode", value: (row) => pick(row, "mode") || "—" },
      { label: "endpoint", value: (row) => html`<code>${pick(row, "endpoint_url", "url") || "—"}</code>` },
      { label: "active", value: (row) => (row.is_active === false ? html`<${Badge} kind="warn">inactive<//>`
        : html`<${Badge} kind="good">active<//>`) },
      { label: "updated", value: (row) => when(pick(row, "updated_at", "created_at")) },
    ]} />`;
  }
  return html`<${Card} title="Integrations" testid="chat-integrations">${body}<//>`;
}
