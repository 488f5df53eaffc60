"""``memdir proposals [accept|reject ID]``: agents' changes to shared files, for a person.

An agent's own token may not change a file every agent reads (USER.md); its change is kept
as a proposal (``memory.proposals``), which a person lists, accepts or rejects here.
"""

from __future__ import annotations

from typing import Annotated

import typer

from memdir.interfaces.cli._app import JsonOption, MemdirGroup, print_json, state

app = typer.Typer(
    cls=MemdirGroup,
    help="Changes waiting for a person: agents' changes to shared files (USER.md) and "
    "curation's rewrites under review (curate.review); list, show, accept or reject one.",
    invoke_without_command=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
ProposalId = Annotated[str, typer.Argument(help="The proposal's id (p-...).")]


@app.callback()
def proposals(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Changes agents proposed to shared files (USER.md), oldest first; accept one with
    `memdir proposals accept ID` (it replaces the file), drop one with `reject ID`."""
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
        who = f"agent {proposal.agent}" if proposal.agent else "global workspace"
        made = f"  {proposal.tool}" if proposal.tool else ""
        typer.echo(f"{proposal.id}  {proposal.created}  {who}{made}  "
                   f"{proposal.path} ({lines} lines)")  # fmt: skip


@app.command("show")
def show(ctx: typer.Context, proposal_id: ProposalId) -> None:
    """Print what a proposal would change, as a unified diff from the file as it is now."""
    from memdir.config import resolve_home
    from memdir.memory.curation_review import proposal_diff

    proposal, diff = proposal_diff(resolve_home(state(ctx).home), proposal_id)
    typer.echo(diff or f"{proposal.id} would change nothing in {proposal.path}", nl=not diff)


@app.command("accept")
def accept(ctx: typer.Context, proposal_id: ProposalId) -> None:
    """Write the proposed text to the shared file (refused if the file changed since)."""
    from memdir.config import resolve_home
    from memdir.memory.curation_review import CURATION, accept_curation
    from memdir.memory.proposals import accept as accept_proposal
    from memdir.memory.proposals import load

    proposal = load(resolve_home(state(ctx).home), proposal_id)
    if proposal.kind == CURATION:  # written in the workspace it was made for
        with state(ctx).open_memory(proposal.agent or None) as memory:
            accept_curation(memory, proposal)
        typer.echo(f"accepted {proposal.id}: {proposal.path} now holds {proposal.tool}'s text")
        return
    with state(ctx).open_memory(None) as memory:
        proposal = accept_proposal(memory, proposal_id)
    typer.echo(f"accepted {proposal.id}: {proposal.path} now holds agent {proposal.agent}'s text")


@app.command("reject")
def reject(ctx: typer.Context, proposal_id: ProposalId) -> None:
    """Drop a proposal; the shared file stays as it is."""
    from memdir.config import resolve_home
    from memdir.memory.proposals import reject as reject_proposal

    proposal = reject_proposal(resolve_home(state(ctx).home), proposal_id)
    typer.echo(f"rejected {proposal.id} ({proposal.path} of agent {proposal.agent})")
