"""Fact commands: ``save``, ``recall``, ``forget`` and ``facts list``."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import typer

from memdir.interfaces.cli._app import JsonOption, make_app, print_json, state
from memdir.interfaces.cli.terminal import for_terminal

facts_app = make_app("Inspect structured facts.")

AsOf = Annotated[
    datetime | None,
    typer.Option("--as-of", help="What was true at this date/time (ISO 8601)."),
]
Category = Annotated[
    str | None, typer.Option(help="preference, decision, fact, context, or your own.")
]


def register(app: typer.Typer) -> None:
    app.command("save")(save)
    app.command("recall")(recall)
    app.command("forget")(forget)
    app.add_typer(facts_app, name="facts")


def save(
    ctx: typer.Context,
    content: Annotated[str, typer.Argument(help="One short, self-contained statement.")],
    category: Category = None,
    importance: Annotated[
        int | None, typer.Option(min=1, max=10, help="1 (trivial) to 10 (critical).")
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            help="When it stops being true (ISO date or datetime; a date: the end of that "
            "day); then it is history, as if superseded.",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Save a fact to today's daily note and the facts store (the memory_save tool)."""
    from memdir.tools import iso_moment, render_save

    try:
        valid_until = None if until is None else datetime.fromisoformat(str(iso_moment(until)))
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--until") from exc
    with state(ctx).open_memory() as memory:
        outcome = memory.save(
            content, category=category, importance=importance, valid_until=valid_until
        )
    if as_json:
        print_json(outcome)
    else:
        typer.echo(render_save(outcome))


def recall(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What you want to know.")],
    category: Category = None,
    as_of: AsOf = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="How many facts.")] = 5,
    as_json: JsonOption = False,
) -> None:
    """Recall the facts that answer a question (the memory_recall tool)."""
    from memdir.memory.reads import best_effort
    from memdir.tools import render_recall

    with state(ctx).open_memory() as memory:
        best_effort("bringing the index up to date", lambda: memory.sync(optimize=False), None)
        facts = memory.recall(query, category=category, as_of=as_of, limit=limit)
    if as_json:
        print_json(facts)
    else:
        typer.echo(for_terminal(render_recall(query, facts)))


def forget(
    ctx: typer.Context,
    reason: Annotated[str, typer.Option(help="Why the fact is retired (kept for audit).")],
    fact_id: Annotated[str | None, typer.Option("--id", help="The fact's id.")] = None,
    query: Annotated[str | None, typer.Option(help="Text matching the fact.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Hide a fact from recall; the reason is written to the daily note (memory_forget)."""
    from memdir.tools import render_fact

    if (fact_id is None) == (query is None):
        raise typer.BadParameter("give exactly one of --id or --query")
    with state(ctx).open_memory() as memory:
        fact = memory.forget(fact_id=fact_id, query=query, reason=reason)
    if as_json:
        print_json(fact)
    else:
        typer.echo(f"Retired: {render_fact(fact)}")


@facts_app.command("list")
def facts_list(
    ctx: typer.Context,
    category: Category = None,
    as_of: AsOf = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Include superseded and forgotten facts.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """List facts valid now (or --as-of), oldest first; --all shows their history too."""
    from memdir.memory.reads import best_effort
    from memdir.tools import render_fact

    with state(ctx).open_memory() as memory:
        best_effort("bringing the index up to date", lambda: memory.sync(optimize=False), None)
        facts = memory.list_facts(category, as_of, include_superseded=all_, include_forgotten=all_)
    if as_json:
        print_json(facts)
        return
    if not facts:
        typer.echo("no facts")
    for fact in facts:
        typer.echo(for_terminal(render_fact(fact)))


FactIdArg = Annotated[str, typer.Argument(help="The fact's id, e.g. f-ab12cd34ef.")]


@facts_app.command("get")
def facts_get(ctx: typer.Context, fact_id: FactIdArg, as_json: JsonOption = False) -> None:
    """Show one fact by id, whatever its state: validity, what it supersedes and what
    superseded it."""
    from memdir.tools.fact_outputs import FactOutput
    from memdir.tools.fact_render import render_fact_version

    with state(ctx).open_memory() as memory:
        version = memory.get_fact(fact_id)
    if as_json:
        print_json(FactOutput.of_version(version).model_dump(mode="json"))
    else:
        typer.echo(render_fact_version(version))


@facts_app.command("update")
def facts_update(
    ctx: typer.Context,
    fact_id: FactIdArg,
    content: Annotated[str, typer.Argument(help="The new statement.")],
    category: Category = None,
    as_json: JsonOption = False,
) -> None:
    """Update a fact as a supersession: the new text gets a new id that supersedes the old
    one, which ends and stays readable (memory_update_fact)."""
    from memdir.tools import render_save
    from memdir.tools.fact_outputs import SaveResult

    with state(ctx).open_memory() as memory:
        outcome = memory.update_fact(fact_id, content, category=category)
    if as_json:
        print_json(SaveResult.of(outcome).model_dump(mode="json"))
    else:
        typer.echo(render_save(outcome))


@facts_app.command("history")
def facts_history(ctx: typer.Context, fact_id: FactIdArg, as_json: JsonOption = False) -> None:
    """Every version of a fact, oldest first (any version's id gives the same chain)."""
    from memdir.tools.fact_outputs import FactHistoryResult
    from memdir.tools.fact_render import render_fact_history

    with state(ctx).open_memory() as memory:
        chain = memory.fact_history(fact_id)
    if as_json:
        print_json(FactHistoryResult.of(fact_id, chain).model_dump(mode="json"))
    else:
        typer.echo(for_terminal(render_fact_history(chain)))
