// The entity graph (GET /entities/graph): nodes by type, sized by mentions; edges by co-occurrence strength.
// Clicking a node (or its name in the list) shows the entity and its memories.
import { useEffect, useRef, useState } from "preact/hooks";
import cytoscape from "cytoscape";
import { get } from "../api.js";
import { Badge, Card, Loaded, MemoryLink, Table, html, number, pick, useLoad, when } from "../ui.js";

const TYPES = ["", "client", "person", "system", "service", "domain", "technology", "workflow", "agent"];
export const TYPE_COLOURS = {
  client: "#d9480f", person: "#c2255c", system: "#5f3dc4", service: "#1971c2", domain: "#0c8599",
  technology: "#2f9e44", workflow: "#e67700", agent: "#495057",
};

export function Entities({ argument }) {
  const [filters, setFilters] = useState({ type: "", limit: "60", min_strength: "1" });
  const [selected, setSelected] = useState(argument || null);
  const graph = useLoad(() => get("/entities/graph", filters), [filters.type, filters.limit, filters.min_strength]);
  const set = (name) => (event) => setFilters({ ...filters, [name]: event.target.value });
  useEffect(() => { if (argument) setSelected(argument); }, [argument]);

  return html`<div class="entities">
    <form class="filters" onSubmit=${(event) => event.preventDefault()}>
      <label>type<select name="type" value=${filters.type} onChange=${set("type")}>
        ${TYPES.map((type) => html`<option value=${type}>${type || "any"}</option>`)}</select></label>
      <label>nodes<input type="number" name="limit" min="1" max="200" value=${filters.limit} onChange=${set("limit")} /></label>
      <label>min strength<input type="number" name="min_strength" min="1" value=${filters.min_strength}
        onChange=${set("min_strength")} /></label>
    </form>
    <${Loaded} state=${graph}>${(body) => html`
      <div class="graph-layout">
        <div>
          <${Graph} body=${body} onSelect=${setSelected} selected=${selected} />
          <p class="muted" data-testid="graph-summary">${body.node_count} entities, ${body.edge_count} co-occurrence edges
            (line width: memories naming both).</p>
          <div class="legend">${Object.entries(TYPE_COLOURS).map(([type, colour]) => html`
            <span><i style=${{ background: colour }}></i>${type}</span>`)}</div>
        </div>
        <div>
          ${selected ? html`<${EntityPanel} name=${selected} />` : html`<p class="muted">Click a node to see its memories.</p>`}
          <${Card} title="In the picture">
            <ul class="node-list" data-testid="node-list">${(body.nodes || []).map((node) => {
              const name = pick(node, "canonical_name", "name");
              return html`<li><button class="link" onClick=${() => setSelected(name)}>${name}</button>
                <span class="muted"> ${pick(node, "entity_type", "type")} · ${node.mention_count}</span></li>`;
            })}</ul>
          <//>
        </div>
      </div>`}
    <//>
  </div>`;
}

function Graph({ body, onSelect, selected }) {
  const container = useRef(null);
  const chart = useRef(null);
  useEffect(() => {
    const nodes = body.nodes || [];
    const most = Math.max(1, ...nodes.map((node) => node.mention_count || 1));
    const strongest = Math.max(1, ...(body.edges || []).map((edge) => edge.strength));
    delete container.current.dataset.ready;
    const cy = cytoscape({
      container: container.current,
      elements: [
        ...nodes.map((node) => ({ data: {
          id: node.id, label: pick(node, "canonical_name", "name"), type: pick(node, "entity_type", "type"),
          size: 18 + 34 * Math.sqrt((node.mention_count || 1) / most) } })),
        ...(body.edges || []).map((edge) => ({ data: {
          id: `${edge.source}|${edge.target}`, source: edge.source, target: edge.target, strength: edge.strength,
          width: 1 + 7 * (edge.strength / strongest) } })),
      ],
      style: [
        { selector: "node", style: {
          "background-color": (node) => TYPE_COLOURS[node.data("type")] || "#868e96",
          label: "data(label)", width: "data(size)", height: "data(size)", "font-size": 11, color: "#212529",
          "text-valign": "bottom", "text-margin-y": 3 } },
        { selector: "edge", style: { width: "data(width)", "line-color": "#adb5bd", opacity: 0.8,
                                     "curve-style": "haystack" } },
        { selector: "node:selected", style: { "border-width": 3, "border-color": "#212529" } },
      ],
    });
    const layout = cy.layout({ name: nodes.length > 1 ? "cose" : "grid", animate: false, randomize: false,
                               padding: 24, nodeRepulsion: () => 9000, idealEdgeLength: () => 90 });
    layout.on("layoutstop", () => { container.current.dataset.ready = "true"; });
    layout.run();
    cy.on("tap", "node", (event) => onSelect(event.target.data("label")));
    container.current._cy = cy; // lets the end-to-end test find where a node is drawn, to click it there
    chart.current = cy;
    return () => cy.destroy();
  }, [body]);
  useEffect(() => {
    const cy = chart.current;
    if (!cy) return;
    cy.nodes().unselect();
    cy.nodes().filter((node) => node.data("label") === selected).select();
  }, [selected, body]);
  return html`<div class="graph" id="entity-graph" ref=${container} data-testid="entity-graph"></div>`;
}

function EntityPanel({ name }) {
  const detail = useLoad(() => get(`/entities/${encodeURIComponent(name)}`), [name]);
  const linked = useLoad(() => get(`/entities/${encodeURIComponent(name)}/memories`, { limit: 50 }), [name]);
  return html`<${Card} title=${name} testid="entity-panel">
    <${Loaded} state=${detail}>${(entity) => html`
      <p><${Badge} kind=${pick(entity, "entity_type", "type")}>${pick(entity, "entity_type", "type")}<//>
        <span class="muted"> ${number(entity.mention_count)} mentions · first ${when(entity.first_seen)}
        · last ${when(entity.last_seen)}</span></p>
      ${(entity.aliases || []).length ? html`<p class="muted">also: ${entity.aliases.join(", ")}</p>` : null}
      ${(entity.related || []).length ? html`<p class="muted">named with: ${entity.related
        .map((edge) => `${pick(edge, "canonical_name", "name")} (${edge.strength})`).join(", ")}</p>` : null}`}
    <//>
    <${Loaded} state=${linked}>${(body) => {
      const memories = body.memories || [];
      const links = body.memory_links || [];
      if (memories.length) {
        return html`<${Table} testid="entity-memories" rows=${memories} columns=${[
          { label: "memory", value: (row) => html`<${MemoryLink} id=${row.id} />` },
          { label: "type", value: (row) => row.type },
          { label: "content", value: (row) => pick(row, "content", "text") },
          { label: "when", value: (row) => when(row.created_at) },
        ]} />`;
      }
      return html`<${Table} testid="entity-memories" rows=${links} empty="No memories name it." columns=${[
        { label: "memory", value: (row) => html`<${MemoryLink} id=${row.memory_id} />` },
        { label: "role", value: (row) => row.role || "—" },
        { label: "when", value: (row) => when(row.created_at) },
      ]} />`;
    }}<//>
  <//>`;
}
