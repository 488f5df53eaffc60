"""Seeding workspaces from the Markdown templates shipped with memdir.

Seeding writes only what is missing, so it is safe to run on every start: an
edited file is never overwritten. ``BOOTSTRAP.md`` (the first-run ritual) is
written only into a brand-new workspace, one with none of AGENTS.md, SOUL.md,
IDENTITY.md and USER.md; once the agent has finished the ritual and deleted
it, it never comes back. The example skill, ``skills/memory-review/SKILL.md``,
is written only into a global workspace that has no ``skills/`` folder yet, so
a person who deleted it (and kept the folder) does not get it back.
"""

from __future__ import annotations

import functools
import logging
import unicodedata
from importlib import resources
from pathlib import Path
from string import Template

from memdir.errors import InvalidAgentIdError, InvalidInputError
from memdir.home import GLOBAL_AGENT
from memdir.workspace.atomic import create_exclusive
from memdir.workspace.daily import MEMORY_DIR

logger = logging.getLogger(__name__)

IDENTITY_FILES = ("AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md")
GLOBAL_TEMPLATES = (*IDENTITY_FILES, "TOOLS.md", "HEARTBEAT.md")
BOOTSTRAP_FILE = "BOOTSTRAP.md"
AGENT_SOUL_TEMPLATE = "agent-SOUL.md"
AGENT_BOOTSTRAP_TEMPLATE = "agent-BOOTSTRAP.md"
AGENT_MEMORY_TEMPLATE = "agent-MEMORY.md"
AGENT_IDENTITY_FILES = ("SOUL.md", "IDENTITY.md")
EXAMPLE_SKILL = "skills/memory-review/SKILL.md"
EXAMPLE_SKILL_TEMPLATE = "skill-memory-review.md"
MAX_AGENT_NAME_CHARS = 100
MAX_AGENT_DESCRIPTION_CHARS = 2000
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def load_template(name: str) -> str:
    """Return the text of a template shipped in ``memdir/workspace/templates``."""
    resource = resources.files("memdir.workspace").joinpath("templates", name)
    return resource.read_text(encoding="utf-8")


SEEDED_KNOWLEDGE_FILES: dict[str, tuple[str, ...]] = {
    "USER.md": ("USER.md",),
    "TOOLS.md": ("TOOLS.md",),
    "SOUL.md": ("SOUL.md", AGENT_SOUL_TEMPLATE),
    "IDENTITY.md": ("IDENTITY.md",),
    "MEMORY.md": (AGENT_MEMORY_TEMPLATE,),
}
"""Files search indexes that memdir seeds from templates, and the templates they come from."""


@functools.cache
def seeded_lines(name: str) -> frozenset[str]:
    """The lines memdir's templates seed a top-level file ``name`` with (stripped; headings
    and blank lines aside): guidance for the agent, not what it learned."""
    lines: set[str] = set()
    for template in SEEDED_KNOWLEDGE_FILES.get(name, ()):
        for line in load_template(template).splitlines():
            stripped = line.strip()
            if stripped and not stripped.startswith("#"):
                lines.add(stripped)
    return frozenset(lines)


def blank_seeded_lines(path: str, text: str) -> str:
    """``text`` of the workspace file ``path`` with the lines its template seeded blanked
    (line numbers kept), so that search finds what was written there, not the template."""
    seeded = seeded_lines(path)
    if not seeded:
        return text  # the same object: nothing was blanked
    lines = text.split("\n")
    if not any(line.strip() in seeded for line in lines):
        return text  # the same object: nothing was blanked
    return "\n".join("" if line.strip() in seeded else line for line in lines)


def _seed_file(root: Path, name: str, text: str, created: list[str]) -> None:
    if create_exclusive(root / name, text):
        created.append(name)


def _seed_memory_dir(root: Path, created: list[str]) -> None:
    memory = root / MEMORY_DIR
    if not memory.is_dir():
        memory.mkdir(parents=True, exist_ok=True)
        created.append(f"{MEMORY_DIR}/")


def is_brand_new(root: Path) -> bool:
    """True when none of AGENTS.md, SOUL.md, IDENTITY.md and USER.md exists in ``root``."""
    return not any((root / name).exists() or (root / name).is_symlink() for name in IDENTITY_FILES)


def seed_global(root: Path) -> list[str]:
    """Write the missing files of the global workspace; return what was created.

    Creates AGENTS.md, SOUL.md, IDENTITY.md, USER.md, TOOLS.md, HEARTBEAT.md and
    ``memory/``, plus BOOTSTRAP.md when the workspace is brand-new and the example
    skill when it has no ``skills/`` folder. Returned names are relative POSIX paths;
    a created folder ends in '/'.
    """
    root.mkdir(parents=True, exist_ok=True)
    brand_new = is_brand_new(root)
    created: list[str] = []
    for name in GLOBAL_TEMPLATES:
        _seed_file(root, name, load_template(name), created)
    if brand_new:
        _seed_file(root, BOOTSTRAP_FILE, load_template(BOOTSTRAP_FILE), created)
    _seed_memory_dir(root, created)
    skill = root / EXAMPLE_SKILL
    if not skill.parents[1].exists():
        skill.parent.mkdir(parents=True, exist_ok=True)
        _seed_file(root, EXAMPLE_SKILL, load_template(EXAMPLE_SKILL_TEMPLATE), created)
    if created:
        logger.info("seeded global workspace %s: %s", root, ", ".join(created))
    return created


def _clean_agent_name(name: str) -> str:
    clean_name = " ".join(name.split())
    if (
        not clean_name or len(clean_name) > MAX_AGENT_NAME_CHARS
        or any(_invisible(c) for c in clean_name)
    ):  # fmt: skip
        raise InvalidInputError(
            f"agent name {name!r} must be 1-{MAX_AGENT_NAME_CHARS} characters of visible text; "
            "pass a short display name such as 'Coder'"
        )
    return clean_name


def _invisible(char: str) -> bool:
    """A control, surrogate or unassigned character, or one that reorders text (a bidi
    control): nothing a display name written into SOUL.md may hold."""
    return unicodedata.category(char) in {"Cc", "Cs", "Co", "Cn"} or char in BIDI_CONTROLS


def render_agent_template(template: str, name: str) -> str:
    """An agent template (BOOTSTRAP.md, MEMORY.md) with the agent's name filled in."""
    return Template(load_template(template)).safe_substitute(name=_clean_agent_name(name))


def render_agent_soul(name: str, description: str) -> str:
    """Fill the agent SOUL.md template with the agent's name and description."""
    clean_name = _clean_agent_name(name)
    clean_description = description.strip()
    if len(clean_description) > MAX_AGENT_DESCRIPTION_CHARS:
        raise InvalidInputError(
            f"agent description is {len(clean_description)} characters, over the limit of "
            f"{MAX_AGENT_DESCRIPTION_CHARS}; shorten it to a few sentences"
        )
    if not clean_description:
        clean_description = (
            "Your role is not written down yet: work it out with your human and record it here."
        )
    template = Template(load_template(AGENT_SOUL_TEMPLATE))
    return template.substitute(name=clean_name, description=clean_description)


def seed_agent(root: Path, name: str, description: str = "") -> list[str]:
    """Write the missing files of an agent workspace; return what was created.

    Creates SOUL.md (personalised with ``name`` and ``description``, ending with a
    continuity note), TOOLS.md, MEMORY.md (a heading and a comment saying what belongs
    there) and ``memory/``, plus the agent's own BOOTSTRAP.md when the workspace is
    brand-new (no SOUL.md or IDENTITY.md of its own yet). Other files fall back to the
    global ones.
    """
    if root.name == GLOBAL_AGENT and not root.exists():
        raise InvalidAgentIdError(
            f"{GLOBAL_AGENT!r} names the global workspace (its sessions, its routes); "
            "choose another id for the agent, for example 'assistant'"
        )
    soul = render_agent_soul(name, description)
    brand_new = not any(
        (root / file).exists() or (root / file).is_symlink() for file in AGENT_IDENTITY_FILES
    )
    root.mkdir(parents=True, exist_ok=True)
    created: list[str] = []
    _seed_file(root, "SOUL.md", soul, created)
    _seed_file(root, "TOOLS.md", load_template("TOOLS.md"), created)
    _seed_file(root, "MEMORY.md", render_agent_template(AGENT_MEMORY_TEMPLATE, name), created)
    if brand_new:
        ritual = render_agent_template(AGENT_BOOTSTRAP_TEMPLATE, name)
        _seed_file(root, BOOTSTRAP_FILE, ritual, created)
    _seed_memory_dir(root, created)
    if created:
        logger.info("seeded agent workspace %s: %s", root, ", ".join(created))
    return created
