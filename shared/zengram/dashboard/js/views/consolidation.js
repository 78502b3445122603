// Consolidation: the engine's status (GET /consolidate/status), the last run and runs started from here (jobs are
// admin-only: a job's result names every tenant it touched), and a button to start one (POST /consolidate).
import { useEffect, useRef, useState } from "preact/hooks";
import { get, post } from "../api.js";
import { Badge, Card, ErrorBox, Fields, Loaded, html, useLoad, when } from "../ui.js";

const STARTED = "zengram.jobs"; // ids of runs started in this tab (session storage, like the key)

function startedJobs() {
  try {
    return JSON.parse(sessionStorage.getItem(STARTED) || "[]");
  } catch (_) {
    return [];
  }
}

export function Consolidation() {
  const status = useLoad(() => get("/consolidate/status"), []);
  const [jobs, setJobs] = useState(startedJobs());
  const [error, setError] = useState(null);
  const [lookup, setLookup] = useState("");
  const [startedNow, setStartedNow] = useState(null); // the run this page started: the status follows it

  async function start() {
    setError(null);
    try {
      const started = await post("/consolidate");
      const ids = [started.job_id, ...jobs.filter((id) => id !== started.job_id)].slice(0, 20);
      sessionStorage.setItem(STARTED, JSON.stringify(ids));
      setJobs(ids);
      setStartedNow(started.job_id);
    } catch (failure) {
      setError(failure);
    }
  }

  return html`<div>
    <${Loaded} state=${status}>${(body) => html`<div class="columns">
      <${Card} title="Status" testid="consolidation-status">
        <p>${body.is_running ? html`<${Badge} kind="warn">running<//>` : html`<${Badge} kind="good">idle<//>`}
          ${body.enabled ? html` <${Badge} kind="plain">scheduled every ${body.interval}<//>` : html` <${Badge} kind="plain">not scheduled<//>`}</p>
        <${Fields} object=${{ last_run_at: when(body.last_run_at), llm_provider: body.llm && body.llm.provider,
                              llm_model: body.llm && body.llm.model, last_job_id: body.last_job_id }} />
        <button onClick=${start} data-testid="consolidate-now">Consolidate now</button>
        <${ErrorBox} error=${error} />
      <//>
      ${body.last_job_id ? html`<${Job} id=${body.last_job_id} title="Last finished run" />` : null}
    </div>`}<//>
    <${Card} title="Runs started here" testid="started-runs">
      ${jobs.length ? jobs.map((id) => html`<${Job} key=${id} id=${id} title=${`Run ${id}`}
        onFinished=${id === startedNow ? status.reload : null} />`)
        : html`<p class="muted">None yet in this session.</p>`}
      <form class="filters" onSubmit=${(event) => { event.preventDefault(); if (lookup) setJobs([lookup, ...jobs]); }}>
        <label>job id<input name="job" value=${lookup} onInput=${(event) => setLookup(event.target.value.trim())} /></label>
        <button type="submit">Look up</button>
      </form>
    <//>
  </div>`;
}

// A job's card polls it while it runs; `onFinished` (given for a run just started) hears once when it has ended.
function Job({ id, title, onFinished }) {
  const job = useLoad(() => get(`/consolidate/job/${encodeURIComponent(id)}`), [id]);
  const running = job.data && ["queued", "running"].includes(job.data.status);
  const told = useRef(false);
  useEffect(() => {
    if (job.data && !running && onFinished && !told.current) {
      told.current = true;
      onFinished();
    }
    if (!running) return undefined;
    const timer = setTimeout(job.reload, 1000);
    return () => clearTimeout(timer);
  }, [running, job.data]);
  return html`<${Card} title=${title} testid="job">
    <${Loaded} state=${job}>${(body) => html`
      <p><${Badge} kind=${body.status === "succeeded" ? "good" : body.status === "failed" ? "bad" : "warn"}>${body.status}<//>
        <span class="muted"> ${body.trigger} · created ${when(body.created_at)} · finished ${when(body.finished_at)}</span></p>
      ${body.error ? html`<p class="error">${body.error}</p>` : null}
      <${Fields} object=${body.result || {}} />`}
    <//>
  <//>`;
}
