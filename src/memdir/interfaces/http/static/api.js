// The REST client of the page: the bearer token, the selected agent, problem JSON errors.

const TOKEN_KEY = "memdir.token";

export const session = { agent: "" };

export class ApiError extends Error {
  constructor(status, title, detail) {
    super(`${title}: ${detail}`);
    this.status = status;
    this.title = title;
    this.detail = detail;
  }
}

export function readToken() {
  return localStorage.getItem(TOKEN_KEY) || "";
}

export function saveToken(token) {
  localStorage.setItem(TOKEN_KEY, token.trim());
}

export function forgetToken() {
  localStorage.removeItem(TOKEN_KEY);
}

// Take `#token=...` from the address (as `memdir serve` prints it), keep it, and
// drop it from the address bar and history.
export function takeTokenFromFragment() {
  const params = new URLSearchParams(window.location.hash.slice(1));
  const token = params.get("token");
  if (!token) return false;
  saveToken(token);
  history.replaceState(null, "", window.location.pathname + window.location.search);
  return true;
}

// A workspace path as a URL path: each segment encoded, the slashes kept.
export function encodePath(path) {
  return path.split("/").map(encodeURIComponent).join("/");
}

// GET /api/v1<path> as JSON. `agent` defaults to the selected one; pass "" for none.
export function getJson(path, params = {}, agent = session.agent) {
  return requestJson("GET", path, params, undefined, agent);
}

// PUT, PATCH, POST or DELETE /api/v1<path> with a JSON body (or none); the answer as JSON.
export function sendJson(method, path, body, params = {}, agent = session.agent) {
  return requestJson(method, path, params, body, agent);
}

async function requestJson(method, path, params, body, agent) {
  const url = new URL(`/api/v1${path}`, window.location.origin);
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(key, value);
  }
  if (agent) url.searchParams.set("agent", agent);
  const headers = { Authorization: `Bearer ${readToken()}`, Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  let answer = null;
  try {
    answer = await response.json();
  } catch {
    answer = null;
  }
  if (!response.ok) {
    const title = (answer && answer.title) || response.statusText || "Error";
    const detail = (answer && answer.detail) || `HTTP ${response.status}`;
    if (response.status === 401) window.dispatchEvent(new CustomEvent("memdir:unauthorized"));
    throw new ApiError(response.status, title, detail);
  }
  return answer;
}
