// GET /memory/{id}/history: the record, its supersede chain, corroborations, accesses, and its confidence over
// time (uPlot): decay while unused, reset by the last access, projected ahead of now.
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import { get } from "../api.js";
import { Badge, Card, Fields, Loaded, MemoryLink, Table, html, number, pick, useLoad, when } from "../ui.js";

const RECORD_FIELDS = ["type", "client_id", "source_agent", "importance", "category", "knowledge_category", "key",
                       "subject", "status_value", "active", "confidence", "valid_from", "valid_to", "created_at",
                       "updated_at", "revision", "consolidated"];

export function MemoryHistory({ id }) {
  const history = useLoad(() => get(`/memory/${encodeURIComponent(id)}/history`), [id]);
  return html`<${Loaded} state=${history}>${(body) => {
    const memory = body.memory || {};
    return html`<div class="memory" data-testid="memory-history">
      <${Card} title=${`Memory ${id}`} testid="memory-record">
        <p class="memory-text">${pick(memory, "content", "text")}</p>
        ${(memory.entities || []).length ? html`<p>${memory.entities.map((ref) => html`
          <a href=${`#/entities/${encodeURIComponent(ref.name)}`}><${Badge} kind=${ref.type}>${ref.name}<//></a> `)}</p>` : null}
        <${Fields} object=${memory} only=${RECORD_FIELDS} />
      <//>
      <div class="columns">
        <${Card} title=${`Supersede chain (${body.chain.length})`} testid="chain">
          <ol class="chain">${body.chain.map((link) => html`<li class=${link.id === body.id ? "current" : ""}>
            ${link.id === body.id ? html`<b>this memory</b>` : html`<${MemoryLink} id=${link.id} />`}
            ${link.active ? html`<${Badge} kind="good">active<//>` : html`<${Badge} kind="warn">${link.deleted_at ? "deleted" : "superseded"}<//>`}
            <span class="muted"> ${when(link.created_at)} · ${link.source_agent}</span>
            <div>${link.content}</div></li>`)}</ol>
        <//>
        <${Card} title="Corroboration and access" testid="corroboration">
          <${Fields} object=${{ stored_by: body.corroboration.source_agent,
                                observed_by: body.corroboration.observed_by.join(", "),
                                observation_count: body.corroboration.observation_count,
                                last_observed_at: when(body.corroboration.last_observed_at),
                                access_count: body.access.access_count,
                                last_accessed_at: when(body.access.last_accessed_at) }} />
        <//>
      </div>
      <${Card} title="Confidence over time" testid="decay">
        <p class="muted">${body.decay.decays
          ? `Decays by ×${body.decay.factor} a day since the last access; effective now ${number(body.decay.effective_confidence, 4)}. `
          : `A ${memory.type} does not decay: confidence stays ${number(body.decay.confidence, 4)}. `}
          The dashed part is projected: what happens if nobody uses it.</p>
        <${DecayChart} curve=${body.decay.curve} />
      <//>
      <${Card} title="Timeline" testid="timeline">
        <${Table} rows=${body.events} columns=${[
          { label: "when", value: (row) => when(row.at) },
          { label: "what", value: (row) => html`<${Badge} kind=${row.kind}>${row.kind}<//>` },
          { label: "version", value: (row) => (row.memory_id === body.id ? "this" : html`<${MemoryLink} id=${row.memory_id} />`) },
          { label: "detail", value: (row) => row.detail },
        ]} />
      <//>
    </div>`;
  }}<//>`;
}

function DecayChart({ curve }) {
  const container = useRef(null);
  useEffect(() => {
    const times = curve.map((point) => Date.parse(point.at) / 1000);
    const seen = curve.map((point) => (point.projected ? null : point.confidence));
    const ahead = curve.map((point, index) => (point.projected || (curve[index + 1] && curve[index + 1].projected)
      ? point.confidence : null));
    const width = Math.max(320, container.current.clientWidth - 8);
    const plot = new uPlot({
      width, height: 220,
      scales: { y: { range: [0, 1.05] } },
      series: [
        {},
        { label: "confidence", stroke: "#1971c2", width: 2, points: { show: false } },
        { label: "projected", stroke: "#1971c2", dash: [6, 4], width: 2, points: { show: false } },
      ],
      axes: [{}, { label: "confidence" }],
      legend: { show: true },
    }, [times, seen, ahead], container.current);
    return () => plot.destroy();
  }, [curve]);
  return html`<div class="chart" ref=${container} data-testid="decay-chart"></div>`;
}
