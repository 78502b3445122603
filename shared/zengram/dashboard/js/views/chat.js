// The chat context layer (Mnexium-style, under /api/v1): the system prompts, and a subject's memories, claims and
// conversations. The tab appears only where the API serves /api/v1. Fields as the official `mnexium` SDK reads
// them (prompts `{prompts: […]}`, memories `{data: […]}`, chats `{chats: […]}`), older shapes tolerated.
import { useState } from "preact/hooks";
import { get } from "../api.js";
import { Badge, Card, Loaded, Table, html, pick, useLoad, when } from "../ui.js";

const rowsOf = (body) => (Array.isArray(body) ? body
  : pick(body, "data", "items", "memories", "prompts", "chats") || []);

// Claim slots come as a list of claims, grouped by status (GET /claims/subject/{id}/slots: the active ones are the
// subject's truth), or as an object keyed by slot name.
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
  </div>`;
}

function Subject({ id }) {
  const memories = useLoad(() => get("/api/v1/memories", { subject_id: id, limit: 100 }), [id]);
  const slots = useLoad(() => get(`/api/v1/claims/subject/${encodeURIComponent(id)}/slots`), [id]);
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
    <${Card} title="Claims" testid="subject-claims">
      <${Loaded} state=${slots}>${(body) => html`<${Table} rows=${slotRows(body)} empty="No claims." columns=${[
        { label: "slot", value: (row) => pick(row, "slot", "predicate") },
        { label: "value", value: (row) => shown(pick(row, "value", "object_value", "object")) },
        { label: "confidence", value: (row) => shown(row.confidence) },
      ]} />`}<//>
    <//>
    <${Card} title="Conversations" testid="subject-chats">
      <${Loaded} state=${chats}>${(body) => html`<${Table} rows=${rowsOf(body)} empty="No conversations." columns=${[
        { label: "chat", value: (row) => html`<code>${pick(row, "chat_id", "id")}</code>` },
        { label: "messages", value: (row) => shown(row.message_count) },
        { label: "last message", value: (row) => when(pick(row, "last_message_at", "updated_at")) },
      ]} />`}<//>
    <//>
  </div>`;
}
