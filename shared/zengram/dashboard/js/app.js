// The dashboard's shell: the key prompt, the tabs, and a hash router (#/view/argument).
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { answers, call, configuredBase, session } from "./api.js";
import { ErrorBox, html } from "./ui.js";
import { Overview } from "./views/overview.js";
import { Search } from "./views/search.js";
import { Briefing } from "./views/briefing.js";
import { Entities } from "./views/entities.js";
import { MemoryHistory } from "./views/memory.js";
import { Consolidation } from "./views/consolidation.js";
import { Clients } from "./views/clients.js";
import { Keys } from "./views/keys.js";
import { Documents } from "./views/documents.js";
import { Chat } from "./views/chat.js";

// Tabs in order; `needs` names a capability probed after sign-in (a tab appears only when the API answers).
const TABS = [
  { id: "overview", label: "Overview", view: Overview },
  { id: "search", label: "Search", view: Search },
  { id: "briefing", label: "Briefing", view: Briefing },
  { id: "entities", label: "Entities", view: Entities },
  { id: "consolidation", label: "Consolidation", view: Consolidation },
  { id: "clients", label: "Clients", view: Clients },
  { id: "keys", label: "Keys", view: Keys, needs: "admin" },
  { id: "documents", label: "Documents", view: Documents, needs: "documents" },
  { id: "chat", label: "Chat", view: Chat, needs: "chat" },
];

// What each capability's probe asks: admin routes refuse other roles; the documents base (/kb) and the chat
// layer (/api/v1) answer only where they are deployed.
const PROBES = {
  admin: () => answers("/admin/keys"),
  documents: () => answers("/kb/health/status"),
  chat: () => answers("/api/v1/prompts"),
};

function currentRoute() {
  const [path, query] = window.location.hash.replace(/^#\/?/, "").split("?");
  const [view, ...rest] = path.split("/");
  return { view: view || "overview", argument: rest.map(decodeURIComponent).join("/"),
           params: new URLSearchParams(query || "") };
}

function useRoute() {
  const [route, setRoute] = useState(currentRoute());
  useEffect(() => {
    const follow = () => setRoute(currentRoute());
    window.addEventListener("hashchange", follow);
    return () => window.removeEventListener("hashchange", follow);
  }, []);
  return route;
}

function SignIn({ onSignedIn }) {
  const [key, setKey] = useState("");
  const [base, setBase] = useState(session.base); // where the page is, until config.json says otherwise
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => { configuredBase().then(setBase); }, []);

  async function submit(event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    const apiBase = base.trim().replace(/\/+$/, "");
    try {
      session.open(key.trim(), apiBase);
      await call("GET", "/stats");
      onSignedIn();
    } catch (failure) {
      session.close();
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return html`<main class="signin">
    <h1>Zengram</h1>
    <p class="muted">The key stays in this browser tab only (session storage) and is sent to the API alone.</p>
    <form onSubmit=${submit} data-testid="signin">
      <label>API key<input type="password" name="key" autocomplete="off" required value=${key}
        onInput=${(event) => setKey(event.target.value)} /></label>
      <label>API address<input type="url" name="base" required value=${base}
        onInput=${(event) => setBase(event.target.value)} /></label>
      <button type="submit" disabled=${busy}>Sign in</button>
    </form>
    <${ErrorBox} error=${error} />
  </main>`;
}

function Shell({ onSignOut }) {
  const route = useRoute();
  const [can, setCan] = useState({});
  useEffect(() => {
    let current = true;
    for (const [name, probe] of Object.entries(PROBES)) {
      probe().then((yes) => current && setCan((known) => ({ ...known, [name]: yes })));
    }
    return () => { current = false; };
  }, []);

  const tabs = TABS.filter((tab) => !tab.needs || can[tab.needs]);
  const tab = TABS.find((candidate) => candidate.id === route.view);
  let body;
  if (route.view === "memory" && route.argument) {
    body = html`<${MemoryHistory} id=${route.argument} />`;
  } else if (tab && (!tab.needs || can[tab.needs])) {
    body = html`<${tab.view} argument=${route.argument} params=${route.params} />`;
  } else if (tab && can[tab.needs] === undefined) {
    body = html`<p class="muted">Checking whether this API has ${tab.label.toLowerCase()}…</p>`;
  } else {
    body = html`<p class="error">No such view here.</p>`;
  }
  return html`<div class="shell">
    <header>
      <span class="brand">Zengram</span>
      <nav>${tabs.map((item) => html`<a href=${`#/${item.id}`} data-tab=${item.id}
        class=${item.id === route.view ? "active" : ""}>${item.label}</a>`)}</nav>
      <span class="where" title="API address">${session.base}</span>
      <button class="link" onClick=${onSignOut} data-testid="signout">Sign out</button>
    </header>
    <main data-view=${route.view}>${body}</main>
  </div>`;
}

function App() {
  const [signedIn, setSignedIn] = useState(Boolean(session.key));
  if (!signedIn) return html`<${SignIn} onSignedIn=${() => setSignedIn(true)} />`;
  return html`<${Shell} onSignOut=${() => { session.close(); setSignedIn(false); }} />`;
}

render(html`<${App} />`, document.getElementById("app"));
