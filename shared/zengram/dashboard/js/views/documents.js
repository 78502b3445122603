// The document knowledge base (/kb, docs/documents.md): its status, indexed folders, indexing jobs, and a query.
// The tab appears only where the API serves /kb.
import { useState } from "preact/hooks";
import { get, post } from "../api.js";
import { Card, ErrorBox, Fields, Loaded, Loading, Table, html, number, pick, useLoad, when } from "../ui.js";

const MODES = ["hybrid", "vector", "bm25", "graph", "multi"];

export function Documents() {
  const status = useLoad(() => get("/kb/health/status"), []);
  const folders = useLoad(() => get("/kb/index/folders"), []);
  const jobs = useLoad(() => get("/kb/index/jobs", { limit: 20 }), []);
  return html`<div>
    <div class="columns">
      <${Card} title="Status" testid="kb-status">
        <${Loaded} state=${status}>${(body) => html`<${Fields} object=${body} only=${["total_documents", "total_chunks",
          "indexing_in_progress", "current_job_id", "progress_percent", "last_indexed_at", "graph_index"]} />`}<//>
      <//>
      <${Card} title="Folders" testid="kb-folders-card">
        <${Loaded} state=${folders}>${(body) => html`<${Table} testid="kb-folders" empty="No folder indexed yet." rows=${pick(body, "folders") || (Array.isArray(body) ? body : [])}
          columns=${[
            { label: "folder", value: (row) => pick(row, "folder_path", "path") },
            { label: "files", value: (row) => number(pick(row, "file_count", "files")) },
            { label: "chunks", value: (row) => number(pick(row, "chunk_count", "chunks")) },
            { label: "indexed", value: (row) => when(pick(row, "last_indexed", "last_indexed_at", "indexed_at")) },
          ]} />`}<//>
      <//>
    </div>
    <${Card} title="Indexing jobs" testid="kb-jobs-card">
      <${Loaded} state=${jobs}>${(body) => html`<${Table} testid="kb-jobs" empty="No indexing jobs yet." rows=${pick(body, "jobs", "items") || []} columns=${[
        { label: "job", value: (row) => pick(row, "job_id", "id") },
        { label: "status", value: (row) => row.status },
        { label: "folder", value: (row) => pick(row, "folder_path", "folder") },
        { label: "progress", value: (row) => `${number(pick(row.progress || {}, "percent_complete") ?? pick(row, "progress_percent"), 0)}%` },
        { label: "created", value: (row) => when(pick(row, "created_at", "enqueued_at")) },
      ]} />`}<//>
    <//>
    <${Query} />
  </div>`;
}

function Query() {
  const [form, setForm] = useState({ query: "", mode: "hybrid", top_k: "5" });
  const [result, setResult] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  async function submit(event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setResult(await post("/kb/query", { query: form.query, mode: form.mode, top_k: Number(form.top_k),
                                           similarity_threshold: 0 }));
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }
  return html`<${Card} title="Query the documents" testid="kb-query">
    <form class="filters" onSubmit=${submit}>
      <label class="wide">query<input name="query" required value=${form.query}
        onInput=${(event) => setForm({ ...form, query: event.target.value })} /></label>
      <label>mode<select name="mode" value=${form.mode} onChange=${(event) => setForm({ ...form, mode: event.target.value })}>
        ${MODES.map((mode) => html`<option value=${mode}>${mode}</option>`)}</select></label>
      <label>top_k<input type="number" name="top_k" value=${form.top_k}
        onInput=${(event) => setForm({ ...form, top_k: event.target.value })} /></label>
      <button type="submit" disabled=${busy}>Query</button>
    </form>
    <${ErrorBox} error=${error} />
    ${busy ? html`<${Loading} />` : null}
    ${result ? html`<${Table} testid="kb-results" empty="No passage matches." rows=${result.results || []} columns=${[
      { label: "source", value: (row) => row.source },
      { label: "score", value: (row) => number(row.score, 4) },
      { label: "vector / bm25 / graph", value: (row) => [row.vector_score, row.bm25_score, row.graph_score]
        .map((score) => number(score, 3)).join(" / ") },
      { label: "text", value: (row) => html`<pre class="snippet">${(row.text || "").slice(0, 400)}</pre>` },
    ]} />` : null}
  <//>`;
}
