// GET /memory/search with every filter, the `retrieval` block and each hit's scores.
import { useState } from "preact/hooks";
import { get } from "../api.js";
import { Badge, Card, ErrorBox, Fields, Loading, MemoryLink, html, number, pick, when } from "../ui.js";

const TYPES = ["", "event", "fact", "decision", "status"];
const CATEGORIES = ["", "semantic", "episodic", "procedural"];
const KNOWLEDGE = ["", "brand", "strategy", "meeting", "content", "technical", "relationship", "general"];
const FORMATS = ["full", "compact", "index"];
// Fields shown as the score breakdown when a hit has them (upstream names some only in some versions).
const SCORES = ["score", "effective_score", "relevance_score", "rerank_score", "vector_score", "keyword_score",
                "graph_score", "temporal_boost", "confidence", "access_count", "importance"];

const EMPTY = { q: "", type: "", source_agent: "", client_id: "", category: "", knowledge_category: "", entity: "",
                limit: "10", format: "full", include_superseded: false, at_time: "", date_from: "", date_to: "",
                reference_date: "", count_access: false };

function requestOf(form) {
  const params = { ...form };
  delete params.count_access;
  params.include_superseded = form.include_superseded ? "true" : "";
  for (const name of ["at_time", "date_from", "date_to", "reference_date"]) {
    params[name] = form[name] ? new Date(form[name]).toISOString() : "";
  }
  // The dashboard looks without reinforcing what it sees, unless asked to (upstream's read_only).
  params.read_only = form.count_access ? "" : "true";
  return params;
}

export function Search({ params }) {
  const [form, setForm] = useState({ ...EMPTY, q: params.get("q") || "", entity: params.get("entity") || "" });
  const [result, setResult] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const set = (name) => (event) => setForm({ ...form, [name]: event.target.type === "checkbox"
    ? event.target.checked : event.target.value });

  async function submit(event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setResult(await get("/memory/search", requestOf(form)));
    } catch (failure) {
      setResult(null);
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  const choice = (name, options) => html`<label>${name}<select name=${name} value=${form[name]} onChange=${set(name)}>
    ${options.map((option) => html`<option value=${option}>${option || "any"}</option>`)}</select></label>`;
  const text = (name, type = "text") => html`<label>${name}<input type=${type} name=${name} value=${form[name]}
    onInput=${set(name)} /></label>`;

  return html`<div>
    <form class="filters" onSubmit=${submit} data-testid="search-form">
      <label class="wide">query<input name="q" required value=${form.q} onInput=${set("q")}
        placeholder="what do you want to find?" /></label>
      ${choice("type", TYPES)} ${text("source_agent")} ${text("client_id")} ${choice("category", CATEGORIES)}
      ${choice("knowledge_category", KNOWLEDGE)} ${text("entity")} ${text("limit", "number")} ${choice("format", FORMATS)}
      ${text("at_time", "datetime-local")} ${text("date_from", "datetime-local")} ${text("date_to", "datetime-local")}
      ${text("reference_date", "datetime-local")}
      <label class="check"><input type="checkbox" name="include_superseded" checked=${form.include_superseded}
        onChange=${set("include_superseded")} /> include superseded</label>
      <label class="check"><input type="checkbox" name="count_access" checked=${form.count_access}
        onChange=${set("count_access")} /> count hits as accesses</label>
      <button type="submit" disabled=${busy}>Search</button>
    </form>
    <${ErrorBox} error=${error} />
    ${busy ? html`<${Loading} />` : null}
    ${result ? html`<${Results} result=${result} />` : null}
  </div>`;
}

function Results({ result }) {
  const hits = pick(result, "results") || [];
  const retrieval = { ...(result.retrieval || {}) };
  if (result.expanded_query) retrieval.expanded_query = result.expanded_query;
  if (result.retry) retrieval.retry = result.retry;
  return html`<div>
    <p class="muted" data-testid="search-count">${number(pick(result, "count") ?? hits.length)} results for
      “${result.query}”</p>
    ${Object.keys(retrieval).length ? html`<${Card} title="Retrieval" testid="retrieval">
      <${Fields} object=${retrieval} /><//>` : null}
    <p class="muted" data-testid="bar-scale">Bars share one scale: full width is ${number(scaleOf(hits), 4)} (1, or the
      largest score of these results when one exceeds 1), so hits compare by length.</p>
    <ol class="hits" data-testid="hits">${hits.map((hit) => html`<${Hit} hit=${hit} scale=${scaleOf(hits)} />`)}</ol>
  </div>`;
}

const BARRED = ["score", "effective_score"];

// One absolute scale for every bar of a result list (issue 37: scaled per hit, 0.45 and 0.96 were both full width).
// Scores are 0-1 before the boosts; access, speaker and time boosts can lift effective_score past 1.
export function scaleOf(hits) {
  const scores = hits.flatMap((hit) => BARRED.map((name) => hit[name]).filter((value) => typeof value === "number"));
  return Math.max(1, ...scores);
}

function Hit({ hit, scale }) {
  const text = pick(hit, "content", "text", "preview", "summary") || "";
  const top = scale || 1;
  const scores = SCORES.filter((name) => hit[name] !== undefined);
  return html`<li class="hit" data-testid="hit">
    <div class="hit-head">
      <${MemoryLink} id=${hit.id} />
      ${hit.type ? html`<${Badge} kind=${hit.type}>${hit.type}<//>` : null}
      ${hit.active === false ? html`<${Badge} kind="warn">superseded<//>` : null}
      <span class="muted">${[hit.source_agent, hit.client_id, when(hit.created_at)].filter(Boolean).join(" · ")}</span>
    </div>
    <p class="hit-text">${text}</p>
    <div class="bars">
      ${BARRED.filter((name) => typeof hit[name] === "number").map((name) => html`
        <div class="bar-row"><span>${name}</span><span class="bar"><span class=${`fill fill-${name}`}
          style=${{ width: `${Math.max(0, Math.min(100, Math.round((100 * hit[name]) / top)))}%` }}></span></span>
          <b>${number(hit[name], 4)}</b></div>`)}
    </div>
    <table class="breakdown"><tr>${scores.map((name) => html`<th>${name}</th>`)}
      ${hit.retrieval_sources ? html`<th>sources</th>` : null}</tr>
      <tr>${scores.map((name) => html`<td>${number(hit[name], 4)}</td>`)}
      ${hit.retrieval_sources ? html`<td>${hit.retrieval_sources.join(", ")}</td>` : null}</tr></table>
  </li>`;
}
