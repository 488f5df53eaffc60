// "New agent" (admin token only): a dialog beside the agent picker that creates an
// agent's workspace (POST /agents) and then switches the page to it. The dialog is built
// when opened and removed when closed, so the page's labels stay as they were meanwhile.

import { sendJson } from "./api.js";
import { fill, h, sayError } from "./dom.js";

const byId = (id) => document.getElementById(id);

function buildDialog(switchTo) {
  const status = h("p", { id: "new-agent-status", class: "status", role: "status", "aria-live": "polite" });
  const idBox = h("input", {
    id: "new-agent-id", type: "text", spellcheck: "false", autocomplete: "off", required: true,
    maxlength: "64", placeholder: "lower-case letters, digits, - or _, e.g. coder",
  });
  const nameBox = h("input", {
    id: "new-agent-name", type: "text", autocomplete: "off", maxlength: "100", placeholder: "e.g. Coder",
  });
  const dialog = h("dialog", { id: "new-agent", class: "quick-open", "aria-labelledby": "new-agent-title" },
    h("form", {
      id: "new-agent-form",
      onsubmit: async (event) => {
        event.preventDefault();
        const agent = idBox.value.trim();
        if (!agent) return;
        fill(status, "Creating…");
        try {
          await sendJson("POST", "/agents", { agent, name: nameBox.value.trim() || null }, {}, "");
        } catch (error) {
          fill(status, error.status === 409
            ? `There is already an agent called ${agent}: choose another id, or pick it in the Agent list.`
            : sayError(error, `The agent id ${agent}`));
          idBox.focus();
          return;
        }
        dialog.close();
        await switchTo(agent);
      },
    },
    h("h2", { id: "new-agent-title" }, "New agent"),
    h("p", { class: "muted" }, "An agent gets a workspace of its own (SOUL.md, MEMORY.md, daily " +
      "notes), as ", h("code", {}, "memdir --agent ID init"), " makes it."),
    h("label", { for: "new-agent-id" }, "Agent id"), idBox,
    h("label", { for: "new-agent-name" }, "Display name (optional)"), nameBox,
    h("div", { class: "row" },
      h("button", { type: "submit" }, "Create agent"),
      h("button", { type: "button", class: "secondary", onclick: () => dialog.close() }, "Cancel")),
    status));
  dialog.addEventListener("close", () => {
    dialog.remove();
    if (document.activeElement === document.body) byId("new-agent-button").focus();
  });
  return dialog;
}

export function initNewAgent(switchTo) {
  byId("new-agent-button").addEventListener("click", () => {
    const dialog = buildDialog(switchTo);
    document.body.append(dialog);
    dialog.showModal();
    byId("new-agent-id").focus();
  });
}

// Only the admin token may create agents: the button shows for it alone.
export function showNewAgent(isAdmin) {
  byId("new-agent-button").hidden = !isAdmin;
}
