"""Cross-agent attempts and prompt privacy, counted for ``memdir bench reliability``.

``run_cross_agent``: a live server with agents alice and bob, each with a token of its own,
and bob's notes and fact holding a marker word. With alice's token, every way of reaching
bob or of acting as the global workspace the red-team run tried (``?agent=bob``, an
``agent:bob:`` path, ``scope=all``, ``/memory/global/...``, ``all_agents=true``, a tool call
naming bob's file, a session continued for bob, a write of USER.md that every prompt
carries) is made over REST and MCP; each must be refused (or, for USER.md, kept as a
proposal) and no answer may carry bob's word. (Reading the global workspace's notes is
every agent's right: an agent's search covers them.) The global session's ``scope=all``
without ``search.cross_agent`` must be refused too.

``run_prompt_privacy``: a home whose daily note holds a saved fact and a line marked private,
with MEMORY.md, USER.md, learnings and a skill each holding a private word; the prompt of
each session kind is built; a private word in a group or shared prompt, or missing from the
private one, is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from memdir.access import AccessTokens
from memdir.bench.rest_server import start_rest_server
from memdir.embeddings.base import HashEmbedder
from memdir.errors import InvalidInputError
from memdir.memory import Memory

BOB_WORD = "zanzibarbob"
GLOBAL_WORD = "quetzalglobal"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
PROTOCOL = "2025-06-18"


@dataclass
class CrossAgentReport:
    """Attempts made with alice's token, and those that reached further than alice."""

    attempts: int = 0
    refused: int = 0
    proposals: int = 0  # shared-file writes kept for a person
    leaks: list[str] = field(default_factory=list)  # answers carrying bob's or global words
    allowed: list[str] = field(default_factory=list)  # attempts that were not refused

    @property
    def wrong(self) -> int:
        return len(self.leaks) + len(self.allowed)


def _seed(home: Path) -> tuple[str, str]:
    with Memory.open(home, "bob", embedder=HashEmbedder()) as bob:
        bob.init()
        bob.write_file("memory/plan.md", f"# Plan\n\n- {BOB_WORD} keeps the secret plan\n")
        bob.save(f"Bob's locker code word is {BOB_WORD}")
    with Memory.open(home, embedder=HashEmbedder()) as shared:
        shared.init()
        shared.write_file("memory/global-notes.md", f"# Notes\n\n- {GLOBAL_WORD} lives here\n")
        shared.sync(all_agents=True)
    tokens = AccessTokens(home)
    return tokens.create("alice", "bench")[0], tokens.create("bob", "bench")[0]


REST_ATTEMPTS: list[tuple[str, str, dict[str, str], Any]] = [
    ("GET", "/api/v1/files", {"agent": "bob"}, None),
    ("GET", "/api/v1/files/memory/plan.md", {"agent": "bob"}, None),
    ("GET", "/api/v1/files/agent:bob:memory/plan.md", {}, None),
    ("GET", "/api/v1/search", {"query": "secret plan", "scope": "all"}, None),
    ("GET", "/api/v1/search", {"query": "secret plan", "agent": "bob"}, None),
    ("GET", "/api/v1/facts/recall", {"query": "locker code word", "agent": "bob"}, None),
    ("GET", "/api/v1/facts", {"agent": "bob"}, None),
    ("GET", "/api/v1/prompt", {"agent": "bob"}, None),
    ("GET", "/api/v1/memory/global/emergence", {}, None),
    ("POST", "/api/v1/index/sync", {"all_agents": "true"}, None),
    ("PUT", "/api/v1/files/memory/x.md", {"agent": "bob"}, {"content": "# x\n"}),
    ("POST", "/api/v1/facts", {"agent": "bob"}, {"content": "Bob likes alice"}),
    ("POST", "/api/v1/tools/memory_read_file", {}, {"path": "agent:bob:memory/plan.md"}),
    ("POST", "/api/v1/tools/memory_search", {}, {"query": "secret plan", "scope": "all"}),
    ("PUT", "/api/v1/files/USER.md", {}, {"content": "# USER.md\n\n- alice rewrote you\n"}),
]
MCP_ATTEMPTS: list[tuple[str, dict[str, Any]]] = [
    ("memory_read_file", {"path": "agent:bob:memory/plan.md"}),
    ("memory_search", {"query": "secret plan", "scope": "all"}),
    ("memory_write_file", {"path": "USER.md", "content": "# USER.md\n\n- alice via mcp\n"}),
]


def _judge(report: CrossAgentReport, name: str, status: int, text: str) -> None:
    report.attempts += 1
    if BOB_WORD in text:
        report.leaks.append(name)
    if "proposal p-" in text:
        report.proposals += 1
        report.refused += 1
    elif status >= 400:
        report.refused += 1
    else:
        report.allowed.append(f"{name}: {status} {text[:160]}")


def _mcp(http: httpx.Client, report: CrossAgentReport) -> None:
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "memdir-bench", "version": "1"}}}  # fmt: skip
    opened = http.post("/mcp", json=hello, headers=MCP_HEADERS)
    session = {**MCP_HEADERS, "Mcp-Session-Id": opened.headers.get("mcp-session-id", ""),
               "Mcp-Protocol-Version": PROTOCOL}  # fmt: skip
    http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
              headers=session)  # fmt: skip
    for number, (tool, arguments) in enumerate(MCP_ATTEMPTS, start=2):
        call = {"jsonrpc": "2.0", "id": number, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}}  # fmt: skip
        answer = http.post("/mcp", json=call, headers=session)
        refused = '"isError":true' in answer.text.replace(" ", "")
        _judge(report, f"mcp {tool}", 403 if refused else answer.status_code, answer.text)
    for agent in ("bob", ""):  # the session continued for bob, or for the global workspace
        params = {"agent": agent} if agent else {}
        call = {"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                "params": {"name": "memory_list_files", "arguments": {}}}  # fmt: skip
        answer = http.post("/mcp", json=call, headers=session, params=params)
        if agent:
            _judge(report, "mcp session continued for bob", answer.status_code, answer.text)
    http.delete("/mcp", headers=session)


def run_cross_agent(workdir: Path) -> CrossAgentReport:
    """Every attempt with alice's token against a live server on a fresh home."""
    home = workdir / "home"
    alice, _bob = _seed(home)
    report = CrossAgentReport()
    server = start_rest_server(home)
    try:
        headers = {"Authorization": f"Bearer {alice}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=60) as http:
            for method, path, params, body in REST_ATTEMPTS:
                answer = http.request(method, path, params=params, json=body)
                _judge(report, f"{method} {path} {params}", answer.status_code, answer.text)
            _mcp(http, report)
    finally:
        server.stop()
    with Memory.open(home, embedder=HashEmbedder()) as shared:  # the global session
        report.attempts += 1
        try:
            hits = shared.search("secret plan", scope="all").hits
        except InvalidInputError:
            report.refused += 1
        else:
            report.allowed.append(f"global scope=all without cross_agent: {len(hits)} hits")
    return report


PRIVATE_WORDS = {
    "saved fact (recent notes)": "marmalade-bank",
    "private note line": "therapist-tuesday",
    "MEMORY.md": "pin-hint-cat",
    "USER.md private part": "home-address-quay",
    "learnings private part": "divorce-lawyer",
    "skill private part": "diary-keeper",
}


@dataclass
class PrivacyReport:
    """Private words per session kind: where they must not be, and where they must."""

    sections: list[str] = field(default_factory=lambda: list(PRIVATE_WORDS))
    leaked: list[str] = field(default_factory=list)  # "group: MEMORY.md"
    missing_in_private: list[str] = field(default_factory=list)

    @property
    def wrong(self) -> int:
        return len(self.leaked) + len(self.missing_in_private)


def run_prompt_privacy(workdir: Path) -> PrivacyReport:
    """Build the prompt of every session kind over a home with something private in each
    section; count the private words in the wrong prompts."""
    report = PrivacyReport()
    with Memory.open(workdir / "home", embedder=HashEmbedder()) as memory:
        memory.init()
        memory.save(f"My bank is {PRIVATE_WORDS['saved fact (recent notes)']}", importance=9)
        memory.append_daily(f"{PRIVATE_WORDS['private note line']} <!-- private -->")
        memory.write_file("MEMORY.md", f"# Memory\n\n- {PRIVATE_WORDS['MEMORY.md']}\n")
        user = memory.read_file("USER.md")
        memory.write_file(
            "USER.md", f"{user}\n- {PRIVATE_WORDS['USER.md private part']} <!-- private -->\n"
        )
        memory.write_file(
            "learnings/corrections.md",
            "# Corrections\n\n## 2026-01-02T10:00:00+00:00 · correction\n"
            f"- **Correction**: {PRIVATE_WORDS['learnings private part']} <!-- private -->\n",
        )
        memory.write_file(
            "skills/diary/SKILL.md",
            f"---\nname: diary\ndescription: {PRIVATE_WORDS['skill private part']} "
            "<!-- private -->\n---\n# Diary\n",
        )
        for kind in ("private", "group", "shared"):
            prompt = memory.system_prompt(session_kind=kind)
            for section, word in PRIVATE_WORDS.items():
                if kind == "private" and word not in prompt:
                    report.missing_in_private.append(section)
                elif kind != "private" and word in prompt:
                    report.leaked.append(f"{kind}: {section}")
    return report
