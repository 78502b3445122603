// GET /briefing: what was stored since a chosen moment, bucketed by type.
import { useState } from "preact/hooks";
import { get } from "../api.js";
import { Badge, Card, ErrorBox, Fields, Loading, MemoryLink, Table, html, pick, when } from "../ui.js";

const BUCKETS = [
  ["events", "top_events", "Events"], ["facts_updated", "top_facts", "Facts updated"],
  ["status_changes", "top_statuses", "Status changes"], ["decisions", "top_decisions", "Decisions"],
];

function localInput(date) {
  const shifted = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return shifted.toISOString().slice(0, 16);
}

export function Briefing() {
  const [form, setForm] = useState({ since: localInput(new Date(Date.now() - 7 * 86_400_000)), agent: "",
                                     include: "all", client_id: "", format: "compact", limit: "100" });
  const [result, setResult] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const set = (name) => (event) => setForm({ ...form, [name]: event.target.value });

  async function submit(event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setResult(await get("/briefing", { ...form, since: new Date(form.since).toISOString() }));
    } catch (failure) {
      setResult(null);
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return html`<div>
    <form class="filters" onSubmit=${submit} data-testid="briefing-form">
      <label>since<input type="datetime-local" name="since" required value=${form.since} onInput=${set("since")} /></label>
      <label>agent<input name="agent" value=${form.agent} onInput=${set("agent")} placeholder="leave out its own" /></label>
      <label>include<select name="include" value=${form.include} onChange=${set("include")}>
        <option value="all">all (its own too)</option><option value="">others only</option></select></label>
      <label>client_id<input name="client_id" value=${form.client_id} onInput=${set("client_id")} /></label>
      <label>format<select name="format" value=${form.format} onChange=${set("format")}>
        ${["compact", "summary", "full"].map((name) => html`<option value=${name}>${name}</option>`)}</select></label>
      <label>limit<input type="number" name="limit" value=${form.limit} onInput=${set("limit")} /></label>
      <button type="submit" disabled=${busy}>Brief me</button>
    </form>
    <${ErrorBox} error=${error} />
    ${busy ? html`<${Loading} />` : null}
    ${result ? html`<${BriefingResult} result=${result} />` : null}
  </div>`;
}

function BriefingResult({ result }) {
  const summary = result.summary || {};
  const entities = pick(summary, "entities_mentioned", "top_entities") || [];
  return html`<div data-testid="briefing-result">
    <${Card} title=${`Since ${when(result.since)}`} testid="briefing-summary">
      <${Fields} object=${{
        total: pick(summary, "total_entries", "total"), in_period: pick(summary, "total_in_period", "returned"),
        by_type: summary.by_type, agents: (pick(summary, "agents_active", "active_agents") || []).join(", "),
        clients: (pick(summary, "clients_mentioned", "mentioned_clients") || []).join(", "),
        entities: entities.map((e) => `${e.name} (${pick(e, "count", "mentions")})`).join(", "),
      }} />
    <//>
    <div class="columns">
      ${BUCKETS.map(([name, summaryName, title]) => {
        const rows = pick(result, name, summaryName) || [];
        return html`<${Card} title=${`${title} (${rows.length})`} testid=${`bucket-${name}`}>
          <${Table} rows=${rows} empty="None in this period." columns=${[
            { label: "memory", value: (row) => (row.id ? html`<${MemoryLink} id=${row.id} />` : "—") },
            { label: "what", value: (row) => pick(row, "content", "headline", "text") },
            { label: "by", value: (row) => row.source_agent || "—" },
            { label: "importance", value: (row) => (row.importance ? html`<${Badge} kind=${row.importance}>
              ${row.importance}<//>` : "—") },
            { label: "when", value: (row) => when(row.created_at) },
          ]} />
        <//>`;
      })}
    </div>
  </div>`;
}
