// GET /clients: the fingerprints (names, people, domains, keywords) that resolve a memory's client_id; and every
// client_id in use, from the entity registry (each memory is linked to its own client, type "client"), so a client
// that has memories but no fingerprint is listed too (issue 37: the tab was empty while five client_ids were used).
import { get } from "../api.js";
import { Card, Loaded, Table, html, number, useLoad, when } from "../ui.js";

const list = (values) => (values && values.length ? values.join(", ") : "—");

async function inUse() {
  try {
    return (await get("/entities", { type: "client", limit: 500 })).entities || [];
  } catch (_) {
    return [];  // a deployment without the entity registry: fingerprints only
  }
}

export async function clientRows() {
  const [fingerprints, used] = await Promise.all([get("/clients"), inUse()]);
  const rows = new Map((fingerprints.clients || []).map((client) => [client.client_id, { ...client }]));
  for (const entity of used) {
    const row = rows.get(entity.name) || { client_id: entity.name, unregistered: true };
    rows.set(entity.name, { ...row, mentions: entity.mention_count });
  }
  return [...rows.values()].sort((a, b) => a.client_id.localeCompare(b.client_id));
}

export function Clients() {
  const clients = useLoad(clientRows, []);
  return html`<${Card} title="Clients" testid="clients">
    <p class="muted">Every client_id with memories, and the fingerprints that resolve one (PUT /clients/{client_id});
      "no fingerprint": memories name it, nothing resolves to it.</p>
    <${Loaded} state=${clients}>${(rows) => html`<${Table} testid="clients-table" rows=${rows}
      empty="No clients yet: no memory has a client_id and no fingerprint is stored." columns=${[
        { label: "client_id", value: (row) => html`<a href=${`#/search?q=${encodeURIComponent(row.name || row.client_id)}`}>
          ${row.client_id}</a>` },
        { label: "mentions", value: (row) => (row.mentions === undefined ? "—" : number(row.mentions)) },
        { label: "name", value: (row) => (row.unregistered ? html`<span class="muted">no fingerprint</span>` : row.name || "—") },
        { label: "aliases", value: (row) => list(row.aliases) },
        { label: "people", value: (row) => list(row.people) },
        { label: "domains", value: (row) => list(row.domains) },
        { label: "keywords", value: (row) => list(row.keywords) },
        { label: "updated", value: (row) => when(row.updated_at) },
      ]} />`}<//>
  <//>`;
}
