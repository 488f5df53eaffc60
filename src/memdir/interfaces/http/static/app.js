// The memory browser: sign-in, the agent selector, tabs, and the views they show. The
// view (tab, query, agent, open file) lives in the address (state.js), so a reload, a
// bookmark or back and forward show it again.

import { forgetToken, getJson, readToken, saveToken, session, takeTokenFromFragment } from "./api.js";
import { refreshActivity, initActivity } from "./activity.js";
import { initNewAgent, showNewAgent } from "./agents.js";
import { refreshContext } from "./context.js";
import { describeError, fill, formatNumber } from "./dom.js";
import { initFacts, refreshFacts } from "./facts.js";
import { closeFile, initFiles, refreshFiles, showFile } from "./files.js";
import { initQuickOpen } from "./quickopen.js";
import { initSearch, refreshSearch, restoreSearch } from "./search.js";
import { readState, writeState } from "./state.js";
import { initTrace, refreshTrace } from "./trace.js";

const TABS = ["search", "files", "facts", "context", "activity", "trace"];
const byId = (id) => document.getElementById(id);

let activeTab = "search";
const stale = new Set(TABS);
let pendingFile = null; // { path, start, end } named by the address, opened with the tab

const ctx = {
  // Open `path` in the file view with lines start..end highlighted.
  async openFile(path, start, end, agent = session.agent) {
    history.pushState(null, "", window.location.href); // Back returns to where it was opened
    showTab("files", false);
    if (stale.has("files")) {
      stale.delete("files");
      await refreshFiles(ctx);
    }
    await showFile(path, start, end, agent);
  },
  indexChanged() {
    stale.add("trace"); // a search was traced: Why recalled loads again when shown
    loadIndexStatus();
  },
};

const REFRESH = {
  search: () => refreshSearch(ctx),
  files: () => refreshFiles(ctx),
  facts: () => refreshFacts(ctx),
  context: () => refreshContext(ctx),
  activity: () => refreshActivity(ctx),
  trace: () => refreshTrace(ctx),
};

function showTab(name, load = true) {
  activeTab = name;
  writeState({ tab: name === "search" ? "" : name }, false);
  for (const tab of TABS) {
    const selected = tab === name;
    const button = byId(`tab-${tab}`);
    button.setAttribute("aria-selected", String(selected));
    button.tabIndex = selected ? 0 : -1;
    byId(`panel-${tab}`).hidden = !selected;
  }
  if (load && stale.has(name)) {
    stale.delete(name);
    const refreshed = REFRESH[name]();
    if (name === "files" && pendingFile) {
      const { path, start, end } = pendingFile;
      pendingFile = null;
      Promise.resolve(refreshed).then(() => showFile(path, start, end, session.agent));
    }
  }
}

function initTabs() {
  const tablist = byId("tabs");
  for (const tab of TABS) {
    byId(`tab-${tab}`).addEventListener("click", () => {
      if (tab !== activeTab) history.pushState(null, "", window.location.href);
      showTab(tab);
    });
  }
  tablist.addEventListener("keydown", (event) => {
    const index = TABS.indexOf(activeTab);
    const moves = {
      ArrowRight: (index + 1) % TABS.length,
      ArrowLeft: (index + TABS.length - 1) % TABS.length,
      Home: 0,
      End: TABS.length - 1,
    };
    if (!(event.key in moves)) return;
    event.preventDefault();
    const next = TABS[moves[event.key]];
    showTab(next);
    byId(`tab-${next}`).focus();
  });
}

async function loadIndexStatus() {
  try {
    const stats = await getJson("/index/status");
    const embedder = stats.identity
      ? `${stats.identity.provider} ${stats.identity.model} (${stats.identity.dimensions} dims)`
      : stats.files ? "keyword only" : "not built yet (a search syncs it)";
    fill(byId("index-status"), `Index: ${formatNumber(stats.files)} files, ` +
      `${formatNumber(stats.chunks)} chunks, ${formatNumber(stats.vectors)} vectors · ${embedder}`);
  } catch (error) {
    fill(byId("index-status"), describeError(error));
  }
}

// An agent's token acts on its own workspace only: the selector offers just that one.
function fillAgents(agents, tokenAgent) {
  const select = byId("agent");
  if (tokenAgent) {
    select.replaceChildren(new Option(`${tokenAgent} (this token's agent)`, tokenAgent));
    select.value = tokenAgent;
    session.agent = tokenAgent;
    return;
  }
  const options = [new Option("Default workspace", "")];
  for (const agent of agents) options.push(new Option(agent, agent));
  select.replaceChildren(...options);
  select.value = agents.includes(session.agent) ? session.agent : "";
  session.agent = select.value;
}

const REFUSED = "That token was refused: paste the one in $MEMDIR_HOME/api-token, or an " +
  "agent's token from `memdir token create`.";

function showLogin(message) {
  byId("workspace").hidden = true;
  byId("session-tools").hidden = true;
  byId("login").hidden = false;
  fill(byId("login-error"), message || "");
  byId("token").focus();
}

async function connect() {
  let agents;
  let access;
  try {
    access = await getJson("/access", {}, "");
    agents = (await getJson("/agents", {}, "")).agents;
  } catch (error) {
    showLogin(error.status === 401 ? REFUSED : describeError(error));
    return;
  }
  fillAgents(agents, access.agent);
  showNewAgent(access.admin);
  byId("login").hidden = true;
  byId("workspace").hidden = false;
  byId("session-tools").hidden = false;
  for (const tab of TABS) stale.add(tab);
  showTab(activeTab);
  loadIndexStatus();
}

function switchAgent(agent) {
  session.agent = agent;
  writeState({ agent: session.agent }, true);
  closeFile(); // the open file belonged to the other workspace
  for (const tab of TABS) stale.add(tab);
  showTab(activeTab);
  loadIndexStatus();
}

// After "New agent": list the agents again, pick the new one and show its workspace.
async function switchToNewAgent(agent) {
  session.agent = agent;
  fillAgents((await getJson("/agents", {}, "")).agents, null);
  switchAgent(byId("agent").value);
  byId("agent").focus();
}

function initSession() {
  byId("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = byId("token").value.trim();
    if (!token) return;
    saveToken(token);
    byId("token").value = "";
    connect();
  });
  byId("sign-out").addEventListener("click", () => {
    forgetToken();
    showLogin("The token was removed from this browser.");
  });
  byId("agent").addEventListener("change", (event) => switchAgent(event.target.value));
  window.addEventListener("popstate", () => {
    applyState();
    if (readToken()) connect();
  });
  // Opening the `#token=` link in a tab that already shows the page signs in at once.
  window.addEventListener("hashchange", () => {
    if (takeTokenFromFragment()) connect();
  });
  window.addEventListener("memdir:unauthorized", () => {
    showLogin(REFUSED);
  });
}

// Take the view from the address: tab, query and scope, agent, open file and lines.
function applyState() {
  const state = readState();
  activeTab = TABS.includes(state.tab) ? state.tab : "search";
  session.agent = state.agent;
  restoreSearch(state.q, state.scope);
  const [start, end] = (state.lines || "").split("-").map((n) => Number.parseInt(n, 10) || null);
  pendingFile = state.file ? { path: state.file, start, end: end || start } : null;
  if (state.file && !state.tab) activeTab = "files";
}

function start() {
  initTabs();
  initSession();
  initSearch(ctx);
  initFiles(ctx);
  initFacts(ctx);
  initActivity(ctx);
  initTrace(ctx);
  initNewAgent(switchToNewAgent);
  initQuickOpen((path) => ctx.openFile(path, null, null));
  takeTokenFromFragment();
  applyState();
  if (readToken()) connect();
  else showLogin();
}

start();
