// /admin/keys (admin keys only; the tab appears when the API lets this key list them): list, create, revoke.
import { useState } from "preact/hooks";
import { call, get, post } from "../api.js";
import { Badge, Card, ErrorBox, Loaded, Table, html, useLoad, when } from "../ui.js";

export function Keys() {
  const keys = useLoad(() => get("/admin/keys"), []);
  const [form, setForm] = useState({ name: "", role: "read", clients: "" });
  const [minted, setMinted] = useState(null);
  const [error, setError] = useState(null);
  const set = (name) => (event) => setForm({ ...form, [name]: event.target.value });

  async function create(event) {
    event.preventDefault();
    setError(null);
    const clients = form.clients.trim() === "" || form.clients.trim() === "all" ? "all"
      : form.clients.split(",").map((client) => client.trim()).filter(Boolean);
    try {
      setMinted(await post("/admin/keys", { name: form.name, role: form.role, clients }));
      keys.reload();
    } catch (failure) {
      setError(failure);
    }
  }

  async function revoke(id) {
    setError(null);
    try {
      await call("DELETE", `/admin/keys/${encodeURIComponent(id)}`);
      keys.reload();
    } catch (failure) {
      setError(failure);
    }
  }

  return html`<div>
    <${Card} title="API keys" testid="keys">
      <${Loaded} state=${keys}>${(body) => html`<${Table} testid="keys-table" rows=${body.keys || []}
        empty="No scoped keys yet: the bootstrap key (BRAIN_API_KEY) is not listed." columns=${[
          { label: "id", value: (row) => html`<code>${row.id}</code>` },
          { label: "name", value: (row) => row.name },
          { label: "role", value: (row) => html`<${Badge} kind=${row.role}>${row.role}<//>` },
          { label: "clients", value: (row) => (Array.isArray(row.clients) ? row.clients.join(", ") : row.clients) },
          { label: "created", value: (row) => when(row.created_at) },
          { label: "revoked", value: (row) => (row.revoked_at ? when(row.revoked_at)
            : html`<button class="link" onClick=${() => revoke(row.id)}>revoke</button>`) },
        ]} />`}<//>
    <//>
    <${Card} title="New key">
      <form class="filters" onSubmit=${create}>
        <label>name<input name="name" required value=${form.name} onInput=${set("name")} /></label>
        <label>role<select name="role" value=${form.role} onChange=${set("role")}>
          ${["read", "write", "admin"].map((role) => html`<option value=${role}>${role}</option>`)}</select></label>
        <label>clients<input name="clients" value=${form.clients} onInput=${set("clients")}
          placeholder="all, or acme-corp, globex" /></label>
        <button type="submit">Create</button>
      </form>
      ${minted ? html`<p class="notice">Shown once, copy it now: <code data-testid="minted-key">${minted.key}</code></p>` : null}
      <${ErrorBox} error=${error} />
    <//>
  </div>`;
}
