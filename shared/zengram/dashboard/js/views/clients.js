// GET /clients: the fingerprints (names, people, domains, keywords) that resolve a memory's client_id.
import { get } from "../api.js";
import { Card, Loaded, Table, html, useLoad, when } from "../ui.js";

const list = (values) => (values && values.length ? values.join(", ") : "—");

export function Clients() {
  const clients = useLoad(() => get("/clients"), []);
  return html`<${Card} title="Clients" testid="clients">
    <${Loaded} state=${clients}>${(body) => html`<${Table} testid="clients-table" rows=${body.clients || []}
      empty="No client fingerprints yet (PUT /clients/{client_id})." columns=${[
        { label: "client_id", value: (row) => html`<a href=${`#/search?q=${encodeURIComponent(row.name || row.client_id)}`}>
          ${row.client_id}</a>` },
        { label: "name", value: (row) => row.name || "—" },
        { label: "aliases", value: (row) => list(row.aliases) },
        { label: "people", value: (row) => list(row.people) },
        { label: "domains", value: (row) => list(row.domains) },
        { label: "keywords", value: (row) => list(row.keywords) },
        { label: "updated", value: (row) => when(row.updated_at) },
      ]} />`}<//>
  <//>`;
}
