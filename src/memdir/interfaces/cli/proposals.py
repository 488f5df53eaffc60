"""``memdir proposals [show|accept|reject ID]``: changes waiting for a person.

An agent's own token may not change a file every agent reads (USER.md); its change is kept
as a proposal (``memory.proposals``), as are curation's rewrites and appends under
``curate.review`` (``memory.curation_review``); a person lists, accepts or rejects them here.
"""

from __future__ import annotations

from typing import Annotated

import typer

from memdir.interfaces.cli._app import JsonOption, MemdirGroup, print_json, state

app = typer.Typer(
    cls=MemdirGroup,
    help="Changes waiting for a person: agents' changes to shared files (USER.md) and "
    "curation's rewrites, facts and notes under review (curate.review); list, show, accept "
    "or reject one.",
    invoke_without_command=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
ProposalId = Annotated[str, typer.Argument(help="The proposal's id (p-...).")]


@app.callback()
def proposals(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Changes waiting for a person (agents' changes to USER.md, curation under review),
    oldest first; accept one with `memdir proposals accept ID`, drop one with `reject ID`."""
    if ctx.invoked_subcommand is not None:
        return
    from memdir.config import resolve_home
    from memdir.memory.proposals import list_proposals

    found = list_proposals(resolve_home(state(ctx).home))
    if as_json:
        print_json(found)
        return
    if not found:
        typer.echo("no proposals")
    for proposal in found:
        lines = proposal.content.count("\n") + 1
        size = f"{lines} lines"
        if proposal.kind == "append":  # what it adds: entry lines and facts
            size = f"+{lines if proposal.content else 0} lines, {len(proposal.facts)} facts"
        who = f"agent {proposal.agent}" if proposal.agent else "global workspace"
        made = f"  {proposal.tool}" if proposal.tool else ""
        typer.echo(f"{proposal.id}  {proposal.created}  {who}{made}  "
                   f"{proposal.path} ({size})")  # fmt: skip


@app.command("show")
def show(ctx: typer.Context, proposal_id: ProposalId) -> None:
    """Print what a proposal would change, as a unified diff from the file as it is now."""
    from memdir.config import resolve_home
    from memdir.memory.curation_review import proposal_diff

    proposal, diff = proposal_diff(resolve_home(state(ctx).home), proposal_id)
    typer.echo(diff or f"{proposal.id} would change nothing in {proposal.path}", nl=not diff)


@app.command("accept")
def accept(ctx: typer.Context, proposal_id: ProposalId) -> None:
    """Apply a proposal: write its text (refused if the file changed since), or for an
    append, save its facts and append its entry (a repeat adds nothing)."""
    from memdir.config import resolve_home
    from memdir.history import attributed
    from memdir.memory.curation_review import (
        APPEND,
        CURATION,
        accept_append,
        accept_curation,
        accepted_reason,
    )
    from memdir.memory.proposals import accept as accept_proposal
    from memdir.memory.proposals import load

    proposal = load(resolve_home(state(ctx).home), proposal_id)
    accepter = _person()
    if proposal.kind == APPEND:  # saved and appended in the workspace it was made for
        with state(ctx).open_memory(proposal.agent or None) as memory:
            added = accept_append(memory, proposal, accepter)
        typer.echo(f"accepted {proposal.id}: {added} of {len(proposal.facts)} facts new, "
                   f"the entry is in {proposal.path}")  # fmt: skip
        return
    if proposal.kind == CURATION:  # written in the workspace it was made for
        with state(ctx).open_memory(proposal.agent or None) as memory:
            accept_curation(memory, proposal, accepter)
        typer.echo(f"accepted {proposal.id}: {proposal.path} now holds {proposal.tool}'s text")
        return
    why = attributed(tool=proposal.tool or None, reason=accepted_reason(proposal, accepter))
    with state(ctx).open_memory(None) as memory, why:
        proposal = accept_proposal(memory, proposal_id)
    typer.echo(f"accepted {proposal.id}: {proposal.path} now holds agent {proposal.agent}'s text")


@app.command("reject")
def reject(ctx: typer.Context, proposal_id: ProposalId) -> None:
    """Drop a proposal; the shared file stays as it is."""
    from memdir.config import resolve_home
    from memdir.memory.proposals import reject as reject_proposal

    proposal = reject_proposal(resolve_home(state(ctx).home), proposal_id)
    typer.echo(f"rejected {proposal.id} ({proposal.path} of agent {proposal.agent})")


def _person() -> str:
    """Who accepts on the command line: the user running it, as the system names them."""
    import getpass

    try:
        return f"{getpass.getuser()} (memdir proposals accept)"
    except (KeyError, OSError):  # no name for this uid
        return "memdir proposals accept"
