"""``memdir mcp-config HOST``: the MCP configuration of one host, exact for this machine.

Eight hosts, four dialects of the same thing: ``mcpServers`` (Claude Desktop, Claude Code,
Cursor, Windsurf with ``serverUrl``, Gemini CLI with ``httpUrl``), VS Code's ``servers``
with a ``type``, Zed's ``context_servers`` and Codex CLI's TOML ``[mcp_servers.*]``. The
snippet names this installation's ``memdir`` script and this home (``--home`` or
``$MEMDIR_HOME``), so a host that starts the server with an environment of its own still
finds the same memory; over HTTP the token comes from the environment (``MEMDIR_TOKEN``)
where the host can read it there. ``--check`` starts or reaches the server exactly as the
snippet says and runs a search through it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from memdir.errors import InvalidInputError, MemdirError
from memdir.interfaces.cli._app import state

TOKEN_ENV = "MEMDIR_TOKEN"
TOKEN_FILE = "api-token"  # memdir.interfaces.http.auth.TOKEN_FILE, which imports the server
SERVER = "memdir"


@dataclass(frozen=True)
class HostInfo:
    """Where a host keeps its MCP servers, and in which format."""

    name: str
    where: str
    toml: bool = False


HOSTS: dict[str, HostInfo] = {
    "claude-desktop": HostInfo("Claude Desktop", "claude_desktop_config.json"),
    "claude-code": HostInfo(
        "Claude Code",
        '.mcp.json in a project, or: claude mcp add-json memdir "$(memdir mcp-config '
        'claude-code --entry)"',
    ),
    "cursor": HostInfo("Cursor", "~/.cursor/mcp.json, or .cursor/mcp.json in a project"),
    "vscode": HostInfo(
        "VS Code", ".vscode/mcp.json, or the user mcp.json (MCP: Open User Configuration)"
    ),
    "windsurf": HostInfo("Windsurf", "~/.codeium/windsurf/mcp_config.json"),
    "zed": HostInfo("Zed", "Zed's settings.json (zed: open settings)"),
    "codex": HostInfo("Codex CLI", "~/.codex/config.toml ($CODEX_HOME/config.toml)", toml=True),
    "gemini": HostInfo("Gemini CLI", "~/.gemini/settings.json, or .gemini/settings.json"),
}

Transport = Literal["stdio", "http"]


def memdir_command() -> str:
    """This installation's ``memdir`` script: beside the running Python, else on PATH."""
    beside = Path(sys.executable).parent / "memdir"
    if beside.is_file():
        return str(beside)
    return shutil.which("memdir") or "memdir"


def _stdio(command: str, home: Path, agent: str | None) -> dict[str, Any]:
    args = ["mcp", *(["--agent", agent] if agent else [])]
    return {"command": command, "args": args, "env": {"MEMDIR_HOME": str(home)}}


def host_config(
    host: str,
    transport: Transport,
    *,
    command: str,
    home: Path,
    agent: str | None,
    url: str,
    token: str | None = None,
    token_file: Path | None = None,
) -> dict[str, Any]:
    """The configuration document ``host`` reads (parsed form), with memdir as its server."""
    if host not in HOSTS:
        raise InvalidInputError(f"unknown host {host!r}; choose one of {', '.join(HOSTS)}")
    stdio = _stdio(command, home, agent)
    if transport == "stdio":
        entries: dict[str, dict[str, Any]] = {
            "claude-code": {"type": "stdio", **stdio},
            "vscode": {"type": "stdio", **stdio},
        }
        entry = entries.get(host, stdio)
    elif host == "claude-desktop":
        raise InvalidInputError(
            "Claude Desktop starts local servers only from its config file; use "
            "--transport stdio (the default)"
        )
    elif host == "zed":
        if token is None:
            raise InvalidInputError(
                "Zed's config holds the token itself, and this home has none yet: start "
                "`memdir serve` once (it writes the token), or use --transport stdio"
            )
        entry = {"url": url, "headers": {"Authorization": f"Bearer {token}"}}
    else:
        entry = _http_entry(host, url)
    if host == "vscode":
        document: dict[str, Any] = {"servers": {SERVER: entry}}
        if transport == "http":
            document["inputs"] = [{
                "type": "promptString", "id": "memdir-token", "password": True,
                "description": f"memdir token (the contents of {token_file or home / TOKEN_FILE})",
            }]  # fmt: skip
        return document
    if host == "zed":
        return {"context_servers": {SERVER: entry}}
    if host == "codex":
        return {"mcp_servers": {SERVER: entry}}
    return {"mcpServers": {SERVER: entry}}


def _http_entry(host: str, url: str) -> dict[str, Any]:
    """memdir's entry for ``host`` over HTTP, the token taken from where the host looks."""
    env_bearer = f"Bearer ${{{TOKEN_ENV}}}"  # Claude Code, Gemini CLI: ${VAR}
    editor_bearer = f"Bearer ${{env:{TOKEN_ENV}}}"  # Cursor, Windsurf: ${env:VAR}
    entries: dict[str, dict[str, Any]] = {
        "claude-code": {"type": "http", "url": url, "headers": {"Authorization": env_bearer}},
        "cursor": {"url": url, "headers": {"Authorization": editor_bearer}},
        "windsurf": {"serverUrl": url, "headers": {"Authorization": editor_bearer}},
        "vscode": {
            "type": "http",
            "url": url,
            "headers": {"Authorization": "Bearer ${input:memdir-token}"},
        },
        "codex": {"url": url, "bearer_token_env_var": TOKEN_ENV},
        "gemini": {"httpUrl": url, "headers": {"Authorization": env_bearer}},
    }
    return entries[host]


def server_entry(host: str, document: dict[str, Any]) -> dict[str, Any]:
    """The memdir entry of a host's configuration document."""
    key = {"vscode": "servers", "zed": "context_servers", "codex": "mcp_servers"}
    entry: dict[str, Any] = document[key.get(host, "mcpServers")][SERVER]
    return entry


def render(host: str, document: dict[str, Any]) -> str:
    """The document as the host's file spells it: TOML for Codex, JSON for the others."""
    if HOSTS[host].toml:
        import tomlkit

        entry = server_entry(host, document)
        table = tomlkit.table()
        for key, value in entry.items():
            if isinstance(value, dict):  # env = { MEMDIR_HOME = "..." }, as Codex's docs write it
                inline = tomlkit.inline_table()
                inline.update(value)
                table.add(key, inline)
            else:
                table.add(key, value)
        servers = tomlkit.table(is_super_table=True)
        servers.add(SERVER, table)
        out = tomlkit.document()
        out.add("mcp_servers", servers)
        return tomlkit.dumps(out)
    return json.dumps(document, indent=2) + "\n"


def mcp_config(
    ctx: typer.Context,
    host: Annotated[str, typer.Argument(help=f"The MCP host: {', '.join(HOSTS)}.")],
    transport: Annotated[
        str,
        typer.Option(help="stdio: the host starts `memdir mcp`; http: it reaches `memdir serve`."),
    ] = "stdio",
    entry_only: Annotated[
        bool,
        typer.Option("--entry", help="Print only memdir's entry (for `claude mcp add-json`)."),
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Start or reach the server as the snippet says and search through it."
        ),
    ] = False,
) -> None:
    """Print the MCP configuration of HOST for this machine: this memdir, this home
    ($MEMDIR_HOME), --agent when given. Where the host keeps it goes to stderr."""
    if transport not in ("stdio", "http"):
        raise InvalidInputError(f"--transport is stdio or http, not {transport!r}")
    if host not in HOSTS:
        raise InvalidInputError(f"unknown host {host!r}; choose one of {', '.join(HOSTS)}")
    app_state = state(ctx)
    loaded = app_state.settings()
    home = loaded.home
    bind = loaded.settings.server.host
    reach = "127.0.0.1" if bind in ("0.0.0.0", "::") else bind
    url = f"http://{reach}:{loaded.settings.server.port}/mcp"
    if app_state.agent:
        url += f"?agent={app_state.agent}"
    token_file = home / TOKEN_FILE
    token = token_file.read_text("utf-8").strip() if token_file.is_file() else None
    document = host_config(
        host,
        "http" if transport == "http" else "stdio",
        command=memdir_command(),
        home=home,
        agent=app_state.agent,
        url=url,
        token=token if host == "zed" else None,
        token_file=token_file,
    )
    if check:
        _check(host, document, token)
        return
    if entry_only and HOSTS[host].toml:
        raise InvalidInputError("--entry prints a JSON entry; Codex reads TOML: leave it out")
    shown = server_entry(host, document) if entry_only else document
    sys.stdout.write(json.dumps(shown) + "\n" if entry_only else render(host, shown))
    typer.echo(f"{HOSTS[host].name}: {HOSTS[host].where}", err=True)
    if transport == "http" and host not in ("zed", "vscode"):
        typer.echo(
            f'before starting {HOSTS[host].name}: export {TOKEN_ENV}="$(cat '
            f'{shlex.quote(str(token_file))})"   (`memdir serve` writes it on its first run)',
            err=True,
        )


def _check(host: str, document: dict[str, Any], token: str | None) -> None:
    """Reach memdir as ``document`` tells ``host`` to, list its tools and search once."""
    entry = server_entry(host, document)
    import anyio

    url = entry.get("url") or entry.get("serverUrl") or entry.get("httpUrl")
    if url is not None and token is None:
        raise InvalidInputError("no token yet: start `memdir serve` (its first run writes it)")
    try:
        tools, answer = anyio.run(_reach, entry, url, token)
    except MemdirError:
        raise
    except Exception as exc:
        raise InvalidInputError(
            f"{HOSTS[host].name}'s memdir server did not answer: {exc}"
        ) from exc
    typer.echo(f"ok: {len(tools)} tools; memory_search answered: {answer[:80]!r}")


async def _reach(
    entry: dict[str, Any], url: str | None, token: str | None
) -> tuple[list[str], str]:
    try:
        from mcp import Client
    except ImportError:
        raise InvalidInputError(
            "--check needs the server extra: pip install 'memdir[server]'"
        ) from None
    if url is None:
        from mcp.client.stdio import StdioServerParameters

        env = {**os.environ, **entry.get("env", {})}
        target: Any = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
        return await _list_and_search(Client(target, read_timeout_seconds=60))
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        return await _list_and_search(Client(streamable_http_client(url, http_client=http)))


async def _list_and_search(client: Any) -> tuple[list[str], str]:
    async with client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool("memory_search", {"query": "memdir mcp-config check"})
        text = "".join(getattr(part, "text", "") for part in result.content)
        if result.is_error:
            raise InvalidInputError(f"memory_search failed: {text}")
        return tools, text
