// The chat context layer (Mnexium-style, under /api/v1): the system prompts and integrations, and a subject's truth
// (its claims), profile, memories, live memory events and conversations. The tab appears only where the API serves
// /api/v1. Fields as the official `mnexium` SDK reads them (prompts `{prompts: […]}`, memories `{data: […]}`, chats
// `{chats: […]}`, truth `{slots: […]}`, profile `{fields: […]}`), older shapes tolerated.
import { useState } from "preact/hooks";
import { get } from "../api.js";
import { Badge, Card, Loaded, Table, html, pick, useLoad, when } from "../ui.js";
import { Integrations, MemoryEvents } from "./chat_live.js";

const rowsOf = (body) => (Array.isArray(body) ? body
  : pick(body, "data", "items", "memories", "prompts", "chats") || []);

// The truth comes as a list of slots (GET /claims/subject/{id}/truth), or grouped by status (the active ones), or as
// an object keyed by slot name.
function slotRows(body) {
  const slots = pick(body, "slots", "data") ?? body;
  if (Array.isArray(slots)) return slots;
  if (slots && Array.isArray(slots.active)) return slots.active;
  return Object.entries(slots || {}).map(([slot, claim]) => (
    claim && typeof claim === "object" ? { slot, ...claim } : { slot, value: claim }));
}

const shown = (value) => (value === undefined || value === null ? "—"
  : typeof value === "object" ? JSON.stringify(value) : String(value));

export function Chat() {
  const [subject, setSubject] = useState("");
  const [chosen, setChosen] = useState("");
  const prompts = useLoad(() => get("/api/v1/prompts"), []);
  return html`<div>
    <${Card} title="Subject">
      <form class="filters" data-testid="subject-form"
        onSubmit=${(event) => { event.preventDefault(); setChosen(subject.trim()); }}>
        <label>subject id<input name="subject" required value=${subject}
          onInput=${(event) => setSubject(event.target.value)} /></label>
        <button type="submit">Show</button>
      </form>
    <//>
    ${chosen ? html`<${Subject} id=${chosen} />` : null}
    <${Card} title="System prompts" testid="chat-prompts">
      <${Loaded} state=${prompts}>${(body) => html`<${Table} testid="prompts-table" rows=${rowsOf(body)}
        empty="No system prompts yet." columns=${[
          { label: "name", value: (row) => pick(row, "name", "title", "id") },
          { label: "default", value: (row) => (row.is_default ? html`<${Badge} kind="good">default<//>` : "") },
          { label: "prompt", value: (row) => html`<span class="muted">${shown(pick(row, "prompt_text", "text"))
            .slice(0, 160)}</span>` },
          { label: "updated", value: (row) => when(pick(row, "updated_at", "created_at")) },
        ]} />`}<//>
    <//>
    <${Integrations} />
  </div>`;
}

// Profile fields (GET /profiles?subject_id=): `{fields: [{field_key, value, …}]}`, or an object of field → value.
function profileRows(body) {
  const fields = pick(body, "fields") ?? pick(body, "profile", "data");
  if (Array.isArray(fields)) return fields;
  return Object.entries(fields || {}).map(([field_key, value]) => ({ field_key, value }));
}

function Subject({ id }) {
  const memories = useLoad(() => get("/api/v1/memories", { subject_id: id, limit: 100 }), [id]);
  const truth = useLoad(() => get(`/api/v1/claims/subject/${encodeURIComponent(id)}/truth`), [id]);
  const profile = useLoad(() => get("/api/v1/profiles", { subject_id: id }), [id]);
  const chats = useLoad(() => get("/api/v1/chat/history/list", { subject_id: id, limit: 50 }), [id]);
  return html`<div class="columns" data-testid="subject">
    <${Card} title=${`Memories of ${id}`} testid="subject-memories">
      <${Loaded} state=${memories}>${(body) => html`<${Table} rows=${rowsOf(body)} empty="No memories." columns=${[
        { label: "text", value: (row) => pick(row, "text", "content") },
        { label: "kind", value: (row) => pick(row, "kind", "type") || "—" },
        { label: "status", value: (row) => pick(row, "status", "state") || "—" },
        { label: "created", value: (row) => when(row.created_at) },
      ]} />`}<//>
    <//>
    <${Card} title="Truth (claims)" testid="subject-claims">
      <${Loaded} state=${truth}>${(body) => html`<${Table} testid="truth-table" rows=${slotRows(body)}
        empty="No claims." columns=${[
          { label: "slot", value: (row) => pick(row, "slot", "predicate") },
          { label: "value", value: (row) => shown(pick(row, "value", "object_value", "object")) },
          { label: "confidence", value: (row) => shown(row.confidence) },
          { label: "source", value: (row) => shown(pick(row, "source", "source_type")) },
        ]} />`}<//>
    <//>
    <${Card} title="Profile" testid="subject-profile">
      <${Loaded} state=${profile}>${(body) => html`<${Table} testid="profile-table" rows=${profileRows(body)}
        empty="No profile fields." columns=${[
          { label: "field", value: (row) => pick(row, "field_key", "key", "slot") },
          { label: "value", value: (row) => shown(row.value) },
          { label: "source", value: (row) => shown(row.source) },
          { label: "updated", value: (row) => when(pick(row, "updated_at", "created_at")) },
        ]} />`}<//>
    <//>
    <${MemoryEvents} subject=${id} />
    <${Card} title="Conversations" testid="subject-chats">
      <${Loaded} state=${chats}>${(body) => html`<${Table} rows=${rowsOf(body)} empty="No conversations." columns=${[
        { label: "chat", value: (row) => html`<code>${pick(row, "chat_id", "id")}</code>` },
        { label: "messages", value: (row) => shown(row.message_count) },
        { label: "last message", value: (row) => when(pick(row, "last_message_at", "updated_at")) },
      ]} />`}<//>
    <//>
  </div>`;
}
