// The chat context layer (Mnexium-style, under /api/v1): a subject's memories and claims, and the prompts. The
// tab appears only where the API serves /api/v1.
import { useState } from "preact/hooks";
import { get } from "../api.js";
import { Card, Loaded, Table, html, pick, useLoad, when } from "../ui.js";

const rowsOf = (body) => (Array.isArray(body) ? body : pick(body, "data", "items", "memories", "prompts") || []);

export function Chat() {
  const [subject, setSubject] = useState("");
  const [shown, setShown] = useState("");
  const prompts = useLoad(() => get("/api/v1/prompts"), []);
  return html`<div>
    <form class="filters" onSubmit=${(event) => { event.preventDefault(); setShown(subject.trim()); }}>
      <label>subject id<input name="subject" value=${subject} onInput=${(event) => setSubject(event.target.value)} /></label>
      <button type="submit">Show</button>
    </form>
    ${shown ? html`<${Subject} id=${shown} />` : null}
    <${Card} title="Prompts" testid="chat-prompts">
      <${Loaded} state=${prompts}>${(body) => html`<${Table} rows=${rowsOf(body)} columns=${[
        { label: "id", value: (row) => row.id },
        { label: "name", value: (row) => pick(row, "name", "title") || "—" },
        { label: "scope", value: (row) => pick(row, "scope", "scope_id") || "—" },
        { label: "updated", value: (row) => when(pick(row, "updated_at", "created_at")) },
      ]} />`}<//>
    <//>
  </div>`;
}

function Subject({ id }) {
  const memories = useLoad(() => get("/api/v1/memories", { subject_id: id, limit: 100 }), [id]);
  const slots = useLoad(() => get(`/api/v1/claims/subject/${encodeURIComponent(id)}/slots`), [id]);
  return html`<div class="columns">
    <${Card} title=${`Memories of ${id}`}>
      <${Loaded} state=${memories}>${(body) => html`<${Table} rows=${rowsOf(body)} columns=${[
        { label: "text", value: (row) => pick(row, "text", "content") },
        { label: "status", value: (row) => pick(row, "status", "state") || "—" },
        { label: "created", value: (row) => when(row.created_at) },
      ]} />`}<//>
    <//>
    <${Card} title="Claims">
      <${Loaded} state=${slots}>${(body) => html`<${Table} rows=${rowsOf(pick(body, "slots") || body)} columns=${[
        { label: "slot", value: (row) => pick(row, "slot", "predicate") },
        { label: "value", value: (row) => JSON.stringify(pick(row, "value", "object")) },
      ]} />`}<//>
    <//>
  </div>`;
}
