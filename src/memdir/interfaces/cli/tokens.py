"""``memdir token create|list|revoke``: the access tokens of a home (stored hashed)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from memdir.errors import InvalidInputError
from memdir.interfaces.cli._app import JsonOption, console, make_app, print_json, state

app = make_app(
    "Manage access tokens: an agent's token acts on that agent's workspace only; an admin "
    "token (like $MEMDIR_HOME/api-token) on every agent and the global workspace."
)


def _tokens(ctx: typer.Context) -> Any:
    from memdir.access import AccessTokens
    from memdir.config import resolve_home

    return AccessTokens(resolve_home(state(ctx).home))


def _row(record: Any) -> dict[str, str]:
    return {"id": record.id, "scope": record.scope, "name": record.name, "created": record.created}


@app.command("create")
def create(
    ctx: typer.Context,
    agent: Annotated[
        str | None,
        typer.Option("--agent", "-a", help="The agent the token may act as (and only it)."),
    ] = None,
    admin: Annotated[
        bool, typer.Option("--admin", help="An admin token: every agent, the global workspace.")
    ] = False,
    name: Annotated[str, typer.Option(help="A note to tell tokens apart (who, where).")] = "",
    as_json: JsonOption = False,
) -> None:
    """Create a token and print it once (memdir keeps only its SHA-256). Send it as
    'Authorization: Bearer <token>' to `memdir serve`; a running server accepts it at once."""
    agent = agent or state(ctx).agent
    if admin == (agent is not None):
        raise InvalidInputError(
            "pass --agent ID for a token of one agent, or --admin for an admin token (not both)"
        )
    token, record = _tokens(ctx).create(agent, name)
    if as_json:
        print_json({"token": token, **_row(record), "agent": record.agent})
        return
    typer.echo(token)
    whom = "an admin token" if agent is None else f"a token for agent {agent!r}"
    typer.echo(
        f"Created {whom} (id {record.id}). It is shown only now: memdir keeps its hash. "
        f"Revoke it with `memdir token revoke {record.id}`.",
        err=True,
    )


@app.command("list")
def list_tokens(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """List the tokens of the home: id, scope (admin or agent:ID), name, creation time."""
    tokens = _tokens(ctx)
    rows = [
        {"id": r.id, "scope": r.scope, "name": r.name, "created": r.created} for r in tokens.list()
    ]
    if tokens.api_token_path.exists():
        rows.insert(0, {"id": "api-token", "scope": "admin",
                        "name": str(tokens.api_token_path), "created": ""})  # fmt: skip
    if as_json:
        print_json(rows)
        return
    table = Table("id", "scope", "name", "created", title=f"access tokens ({tokens.home})")
    for row in rows:
        table.add_row(row["id"], row["scope"], row["name"], row["created"])
    console.print(table)


@app.command("revoke")
def revoke(
    ctx: typer.Context,
    token_id: Annotated[
        str, typer.Argument(metavar="ID", help="The id `memdir token list` shows.")
    ],
) -> None:
    """Revoke a token: a running server refuses it from its next request on."""
    record = _tokens(ctx).revoke(token_id)
    typer.echo(f"Revoked token {record.id} ({record.scope}).")


@app.command("path")
def path(ctx: typer.Context) -> None:
    """Print where the admin token of this home is kept ($MEMDIR_HOME/api-token; `memdir
    serve` writes it on its first run)."""
    from memdir.config import resolve_home

    typer.echo(resolve_home(state(ctx).home) / "api-token")
