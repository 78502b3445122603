// Every call the dashboard makes goes through here: the public API, with the key from this browser session.
// The key lives in sessionStorage only: it is gone when the tab closes, and never written anywhere else.

const KEY = "zengram.key";
const BASE = "zengram.web";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// Served by the embedded server at <api>/dashboard/, the API is the page's own origin and path prefix. Hosted
// elsewhere (an S3 bucket), config.json names it: {"api_base": "https://….execute-api….amazonaws.com"}.
function baseBeside(page) {
  const at = page.pathname.indexOf("/dashboard");
  return page.origin + (at > 0 ? page.pathname.slice(0, at) : "");
}

export async function configuredBase() {
  try {
    const response = await fetch("config.json", { cache: "no-store" });
    const config = response.ok ? await response.json() : {};
    if (config.api_base) return String(config.api_base).replace(/\/+$/, "");
  } catch (_) {
    // no config: the API is where the page is
  }
  return baseBeside(window.location);
}

export const session = {
  get key() { return sessionStorage.getItem(KEY); },
  get base() { return sessionStorage.getItem(BASE) || baseBeside(window.location); },
  open(key, base) {
    sessionStorage.setItem(KEY, key);
    sessionStorage.setItem(BASE, base.replace(/\/+$/, ""));
  },
  close() {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(BASE);
  },
};

function urlOf(path, params) {
  const url = new URL(session.base + path);
  for (const [name, value] of Object.entries(params || {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, String(value));
  }
  return url;
}

export async function call(method, path, { params, body, key } = {}) {
  const headers = { "x-api-key": key || session.key || "" };
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(urlOf(path, params), {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (_) {
    data = { error: text.slice(0, 200) };
  }
  if (!response.ok) {
    const message = (data && (data.error || data.detail || data.message)) || response.statusText;
    throw new ApiError(response.status, typeof message === "string" ? message : JSON.stringify(message));
  }
  return data;
}

export const get = (path, params) => call("GET", path, { params });

// A long-lived GET (server-sent events) with this session's key, which EventSource cannot send: the open Response,
// whose body the caller reads; a refusal throws ApiError as `call` does. `signal` ends it.
export async function openStream(path, params, { signal, lastEventId } = {}) {
  const headers = { "x-api-key": session.key || "", accept: "text/event-stream" };
  if (lastEventId) headers["last-event-id"] = lastEventId;
  const response = await fetch(urlOf(path, params), { headers, signal, cache: "no-store" });
  if (!response.ok) {
    let message = response.statusText;
    try {
      const data = await response.json();
      message = (data && (data.error || data.message)) || message;
    } catch (_) {
      // not JSON: the status text says enough
    }
    throw new ApiError(response.status, typeof message === "string" ? message : JSON.stringify(message));
  }
  return response;
}
export const post = (path, body, params) => call("POST", path, { body, params });

// Does this optional part of the API answer (the documents base, the chat layer, admin routes)? A refusal or a
// missing route is a plain "no"; the browser still logs the failed request, which is expected for a probe.
export async function answers(path, params) {
  try {
    await get(path, params);
    return true;
  } catch (_) {
    return false;
  }
}
