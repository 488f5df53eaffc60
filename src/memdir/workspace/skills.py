"""Skills: ``skills/<name>/SKILL.md`` files that teach an agent one task each.

A skill is a folder under ``skills/`` holding ``SKILL.md``, optionally opened by front
matter that names and describes it::

    ---
    name: release-notes
    description: Write release notes from the merged pull requests of a milestone.
    ---
    # Release notes
    ...

Without front matter the name is the folder's and the description the first line of
text. An agent workspace sees its own skills and the global ones; its own wins when
both have a folder of the same name. The system prompt lists them (name, description,
path) and the agent reads a skill with ``memory_read_file`` when a task calls for it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memdir.workspace.atomic import read_markdown

logger = logging.getLogger(__name__)

SKILLS_DIR = "skills"
SKILL_FILE = "SKILL.md"
MAX_DESCRIPTION_CHARS = 300
SKILL_PATH = re.compile(r"skills/[^/]+/SKILL\.md")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)
_FIELD = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")


@dataclass(frozen=True)
class Skill:
    """A skill found in a workspace: its name, what it is for, and its workspace path."""

    name: str
    description: str
    path: str
    origin: Literal["agent", "global"]


def parse_skill(text: str, folder: str) -> tuple[str, str]:
    """(name, description) of a SKILL.md: its front matter, else the folder and first line."""
    fields: dict[str, str] = {}
    body = text
    match = _FRONT_MATTER.match(text)
    if match:
        body = text[match.end() :]
        for line in match.group(1).splitlines():
            found = _FIELD.match(line.strip())
            if found:
                fields[found.group(1).lower()] = found.group(2).strip().strip("\"'")
    name = " ".join(fields.get("name", "").split()) or folder
    description = " ".join(fields.get("description", "").split())
    if not description:
        first = next((line for line in body.splitlines() if line.strip()), "")
        description = first.strip().lstrip("#").strip()
    if len(description) > MAX_DESCRIPTION_CHARS:
        description = description[: MAX_DESCRIPTION_CHARS - 3].rstrip() + "..."
    return name, description


def _skills_in(root: Path, origin: Literal["agent", "global"]) -> dict[str, Skill]:
    folder = root / SKILLS_DIR
    if not folder.is_dir():
        return {}
    found: dict[str, Skill] = {}
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        skill_file = entry / SKILL_FILE
        if entry.name.startswith(".") or not skill_file.is_file():
            continue
        if not skill_file.resolve().is_relative_to(root.resolve()):
            logger.warning("skipping skill %s: it points outside the workspace", skill_file)
            continue
        try:
            text = read_markdown(skill_file, strict=False)
        except OSError as exc:
            logger.warning("skipping skill %s: %s", skill_file, exc)
            continue
        name, description = parse_skill(text, entry.name)
        found[entry.name] = Skill(
            name, description, f"{SKILLS_DIR}/{entry.name}/{SKILL_FILE}", origin
        )
    return found


def discover_skills(global_root: Path, agent_root: Path | None = None) -> list[Skill]:
    """The skills of a workspace (an agent's own over the global ones), sorted by name."""
    skills = _skills_in(global_root, "global")
    if agent_root is not None:
        skills.update(_skills_in(agent_root, "agent"))
    return sorted(skills.values(), key=lambda skill: (skill.name.lower(), skill.path))


def is_denied(skill: Skill, deny: frozenset[str]) -> bool:
    """Whether ``deny`` names the skill (by name or by folder, case-insensitively)."""
    folder = skill.path.split("/")[1]
    return skill.name.lower() in deny or folder.lower() in deny
