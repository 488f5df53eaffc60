"""Which workspace a request acts on: the one its token allows, never another.

An admin token acts on any agent (``?agent=ID``) or, without one, on the
server's default agent or the global workspace; it may create an agent by
writing to it. An agent token acts on its own agent only: a request without
``?agent=`` is bound to it, one that names another agent (or the global
workspace) is refused, and so are admin-only switches such as ``all_agents``.
"""

from __future__ import annotations

from collections.abc import Iterable

from memdir.access.tokens import Principal
from memdir.errors import AccessDeniedError, InvalidInputError

GLOBAL = "global"  # the global workspace in a route's path: /memory/global/...


def bind_agent(
    principal: Principal, requested: Iterable[str], default_agent: str | None = None
) -> str | None:
    """The agent a request of ``principal`` acts as (``None``: the global workspace).

    ``requested`` are the agent ids the request names (every ``?agent=`` value;
    empty ones name none).
    """
    named = sorted({agent for agent in requested if agent})
    if principal.is_admin:
        if len(named) > 1:
            raise InvalidInputError(
                f"the request names several agents ({', '.join(named)}); pass one ?agent="
            )
        return named[0] if named else default_agent
    others = [agent for agent in named if agent != principal.agent]
    if others:
        raise AccessDeniedError(
            f"this token belongs to agent {principal.agent!r} and cannot act as agent "
            f"{others[0]!r}; leave out ?agent= (or pass ?agent={principal.agent}), or use a "
            "token of that agent"
        )
    return principal.agent


def bind_path_agent(principal: Principal, agent: str) -> str | None:
    """The agent of a route's ``{agent}`` part (``global``: the global workspace)."""
    if principal.is_admin:
        return None if agent == GLOBAL else agent
    if agent != principal.agent:
        what = "the global workspace" if agent == GLOBAL else f"agent {agent!r}"
        raise AccessDeniedError(
            f"this token belongs to agent {principal.agent!r} and cannot act for {what}; "
            f"use /memory/{principal.agent}/... or a token of {what}"
        )
    return agent


def require_admin(principal: Principal, what: str) -> None:
    """Refuse ``what`` (an admin-only switch) to an agent token."""
    if not principal.is_admin:
        raise AccessDeniedError(
            f"{what} needs the admin token; this token belongs to agent {principal.agent!r} "
            "and acts on its own workspace only"
        )
