// Building DOM nodes from data. Memory is untrusted: every string goes in as a
// text node or an attribute value set through the DOM, never parsed as HTML.

export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "style") {
      for (const [name, v] of Object.entries(value)) el.style.setProperty(name, v);
    } else if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else el.setAttribute(key, value === true ? "" : String(value));
  }
  el.append(...nodes(children));
  return el;
}

function nodes(children) {
  const out = [];
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    out.push(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return out;
}

// Replace the children of `el` with `children` (nodes or strings).
export function fill(el, ...children) {
  el.replaceChildren(...nodes(children));
}

export function formatNumber(n) {
  return Number(n).toLocaleString("en-US");
}

export function formatScore(n) {
  const value = Number(n);
  if (!Number.isFinite(value)) return String(n);
  return Math.abs(value) >= 100 ? value.toFixed(1) : value.toPrecision(3);
}

// "2024-05-02 14:03" in the browser's time zone, or the raw string if it is not a date.
export function formatTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

export function timeEl(iso) {
  return h("time", { datetime: iso }, formatTime(iso));
}

// `text` as nodes with every occurrence of the query's words wrapped in <mark>. The
// text stays text: matches are cut out of it and put in elements, nothing is parsed.
export function highlighted(text, query) {
  const words = [...new Set(String(query).toLowerCase().match(/[\p{L}\p{N}_]{2,}/gu) || [])]
    .filter((word) => !STOPWORDS.has(word))
    .sort((a, b) => b.length - a.length);
  if (!words.length) return [text];
  const escaped = words.map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const pattern = new RegExp(`(${escaped.join("|")})`, "giu");
  return String(text).split(pattern).map((part, i) => (i % 2 ? h("mark", {}, part) : part));
}

const STOPWORDS = new Set(["a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does",
  "for", "from", "how", "in", "is", "it", "of", "on", "or", "the", "to", "was", "we", "what",
  "when", "where", "which", "who", "why", "with", "about"]);

// An error from the API (or the network) as one line for a status area.
export function describeError(error) {
  if (error && error.status) return `${error.title} (${error.status}): ${error.detail}`;
  return `Could not reach the memdir server: ${error && error.message ? error.message : error}`;
}

// The sentences of an API error's detail that speak to a person: those naming routes,
// request bodies or query parameters are for programs and are left out.
function plainDetail(detail) {
  const sentences = String(detail || "").split(/(?<=[.;:])\s+|\s+\(|\)$/);
  const plain = sentences.filter((s) => s.trim() &&
    !/\/api\/v1|\b(GET|PUT|PATCH|POST|DELETE)\b|send "|"\w+":|\?\w+=|expected_sha256|query parameter/.test(s));
  return plain.join(" ").trim().replace(/[.;:,]+$/, "");
}

// An error as one sentence for a person using the page (no routes, no request bodies).
export function sayError(error, what = "That") {
  if (!error || !error.status) {
    return "The memdir server did not answer: is `memdir serve` still running?";
  }
  const detail = plainDetail(error.detail);
  switch (error.status) {
    case 401:
    case 403:
      return "This token may not do that: sign in with the token in $MEMDIR_HOME/api-token.";
    case 404:
      return `${what} is not there any more: it may have been renamed or deleted.`;
    case 409:
      return detail ? `${what} was not saved: ${detail}.` : `${what} was not saved: it changed meanwhile.`;
    case 413:
      return `${what} is too long to save.`;
    case 422:
    case 400:
      return detail ? `${what} was not accepted: ${detail}.` : `${what} was not accepted.`;
    case 507:
      return "The disk is full: nothing was written. Free some space and try again.";
    default:
      return detail ? `Something went wrong: ${detail}.` : "Something went wrong on the server.";
  }
}
