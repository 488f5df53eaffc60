// The view in the address bar: ?tab=&q=&scope=&agent=&file=&lines= (the token stays out).
// Reloading or sharing the address opens the same view; back and forward move between views.

const KEYS = ["tab", "q", "scope", "agent", "file", "lines"];

export function readState() {
  const params = new URLSearchParams(window.location.search);
  return Object.fromEntries(KEYS.map((key) => [key, params.get(key) || ""]));
}

// Merge `changes` into the address; `push` adds a history entry (a new view), else the
// current entry is replaced (a detail of the same view).
export function writeState(changes, push = false) {
  const params = new URLSearchParams(window.location.search);
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined || value === null || value === "") params.delete(key);
    else params.set(key, String(value));
  }
  const query = params.toString();
  const address = window.location.pathname + (query ? `?${query}` : "");
  if (address === window.location.pathname + window.location.search) return;
  if (push) history.pushState(null, "", address);
  else history.replaceState(null, "", address);
}
