// GET /stats: counts, the search index's health (index_health), decay and retrieval settings, top entities.
import { get } from "../api.js";
import { Badge, Card, Fields, Loaded, Stat, Table, html, number, pick, useLoad, when } from "../ui.js";

const COUNTS = [
  ["total_memories", "memories"], ["active", "active"], ["superseded", "superseded"], ["deleted", "deleted"],
  ["consolidated", "consolidated"], ["vectors_count", "in the search index"], ["decayed_below_50pct", "decayed below 50%"],
];

export function Overview() {
  const stats = useLoad(() => get("/stats"), []);
  return html`<${Loaded} state=${stats}>${(body) => html`
    <div class="stats-row" data-testid="counts">
      ${COUNTS.filter(([name]) => body[name] !== undefined).map(([name, label]) =>
        html`<${Stat} label=${label} value=${body[name]} testid=${`count-${name}`} />`)}
    </div>
    <p class="muted" data-testid="counts-note">${countsNote(body)}</p>
    <div class="columns">
      <${IndexHealth} health=${body.index_health} />
      <${Card} title="By type" testid="by-type">
        <${Table} columns=${[{ label: "type", value: (row) => row[0] }, { label: "memories", value: (row) => number(row[1]) }]}
          rows=${Object.entries(body.by_type || {})} />
      <//>
      <${Card} title="Retrieval and decay">
        <${Fields} object=${{ ...(body.retrieval || {}), decay_factor: pick(body.decay_config, "factor"),
                              decaying_types: (pick(body.decay_config, "affected_types") || []).join(", ") }} />
      <//>
      <${TopEntities} entities=${body.entities} />
    </div>
    <button onClick=${stats.reload}>Refresh</button>`}
  <//>`;
}

function IndexHealth({ health }) {
  if (!health) return null;
  const kind = health.status === "ok" ? "good" : health.status === "degraded" ? "warn" : "bad";
  return html`<${Card} title="Index health" testid="index-health">
    <p>Search index: <${Badge} kind=${kind}>${health.status}<//></p>
    ${health.error ? html`<p class="error">${health.error}</p>` : null}
    <${Fields} object=${{ pending_index: health.pending_index, parked: health.parked }} />
    ${(health.parked_records || []).length ? html`<${Table} rows=${health.parked_records} columns=${[
      { label: "memory", value: (row) => row.id },
      { label: "attempts", value: (row) => row.attempts },
      { label: "last error", value: (row) => row.last_error },
      { label: "parked", value: (row) => when(row.parked_at) },
    ]} />` : null}
  <//>`;
}

function TopEntities({ entities }) {
  if (!entities) return null;
  return html`<${Card} title=${`Entities (${number(entities.total)})`} testid="top-entities">
    <${Table} rows=${entities.top_mentioned || []} columns=${[
      { label: "entity", value: (row) => html`<a href=${`#/entities/${encodeURIComponent(pick(row, "canonical_name", "name"))}`}>
        ${pick(row, "canonical_name", "name")}</a>` },
      { label: "type", value: (row) => pick(row, "entity_type", "type") },
      { label: "mentions", value: (row) => number(row.mention_count) },
    ]} />
  <//>`;
}

// Why "memories" and "in the search index" differ (issue 37: the overview showed both without saying).
export function countsNote(body) {
  const pending = pick(body.index_health, "pending_index") || 0;
  const indexed = body.vectors_count;
  const gap = typeof indexed === "number" ? indexed - body.total_memories : null;
  return `"memories" counts every memory not deleted (active + superseded). "In the search index" counts the
    index's entries: one per memory already indexed (superseded ones stay, so include_superseded finds them), less
    the ${number(pending)} still waiting for the index, plus the chat layer's subject memories and records, which
    share the index.${gap === null ? "" : ` Here the index holds ${number(Math.abs(gap))} ${gap < 0 ? "fewer" : "more"}.`}`;
}
