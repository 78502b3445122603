// Small building blocks every view uses: loading state, error boxes, tables, and defensive field reads.
import { h } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import htm from "htm";

export const html = htm.bind(h);

// The first of these fields the object has: the API is moving to upstream Zengram's names (issue 17 §1), so a
// view reads the new name and the old one (`canonical_name` or `name`, `memories` or `data`, …).
export function pick(object, ...names) {
  if (!object) return undefined;
  for (const name of names) {
    if (object[name] !== undefined && object[name] !== null) return object[name];
  }
  return undefined;
}

export function useLoad(load, deps) {
  const [state, setState] = useState({ loading: true, data: null, error: null });
  const run = useCallback(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true, error: null }));
    load().then(
      (data) => current && setState({ loading: false, data, error: null }),
      (error) => current && setState({ loading: false, data: null, error }),
    );
    return () => { current = false; };
  }, deps);
  useEffect(run, [run]);
  return { ...state, reload: run };
}

export function Loading() {
  return html`<p class="muted loading">Loading…</p>`;
}

export function ErrorBox({ error }) {
  if (!error) return null;
  const status = error.status ? `${error.status}: ` : "";
  return html`<p class="error" role="alert">${status}${error.message || String(error)}</p>`;
}

export function Loaded({ state, children }) {
  if (state.error) return html`<${ErrorBox} error=${state.error} />`;
  if (state.loading && !state.data) return html`<${Loading} />`;
  return children(state.data);
}

export function when(moment) {
  if (!moment) return "—";
  const date = new Date(moment);
  return Number.isNaN(date.getTime()) ? String(moment) : date.toISOString().replace("T", " ").slice(0, 19) + "Z";
}

export function number(value, digits = 3) {
  if (typeof value !== "number") return value === undefined || value === null ? "—" : String(value);
  return Number.isInteger(value) ? value.toLocaleString("en") : value.toFixed(digits);
}

export function MemoryLink({ id, children }) {
  return html`<a class="memory-link" href=${`#/memory/${encodeURIComponent(id)}`}>${children || id.slice(0, 8)}</a>`;
}

export function Badge({ kind, children }) {
  return html`<span class=${`badge badge-${kind || "plain"}`}>${children}</span>`;
}

// A two-column table of an object's fields (nested objects as JSON).
export function Fields({ object, only }) {
  const names = only || Object.keys(object || {});
  return html`<table class="fields"><tbody>
    ${names.filter((name) => object && object[name] !== undefined).map((name) => html`
      <tr><th>${name}</th><td>${show(object[name])}</td></tr>`)}
  </tbody></table>`;
}

function show(value) {
  if (value === null || value === undefined) return "—";
  if (typeof value === "object") return html`<code>${JSON.stringify(value)}</code>`;
  if (typeof value === "number") return number(value, 4);
  return String(value);
}

// rows: objects; columns: [{label, value: row => content}]
export function Table({ columns, rows, empty, testid }) {
  if (!rows || rows.length === 0) return html`<p class="muted">${empty || "Nothing here yet."}</p>`;
  return html`<table class="grid" data-testid=${testid}>
    <thead><tr>${columns.map((column) => html`<th>${column.label}</th>`)}</tr></thead>
    <tbody>${rows.map((row) => html`<tr>${columns.map((column) => html`<td>${column.value(row)}</td>`)}</tr>`)}</tbody>
  </table>`;
}

export function Card({ title, children, testid }) {
  return html`<section class="card" data-testid=${testid}><h2>${title}</h2>${children}</section>`;
}

export function Stat({ label, value, testid }) {
  return html`<div class="stat" data-testid=${testid}><div class="stat-value">${number(value)}</div>
    <div class="stat-label">${label}</div></div>`;
}
