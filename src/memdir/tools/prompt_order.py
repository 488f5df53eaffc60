"""Which workspace files the system prompt carries, for the file tools to say so.

``memory_list_files`` lists the prompt's files first, in the order the prompt carries
them (``prompt.toml``'s ``sort_order``), then every other file in path order; each file
says whether the prompt carries it (``enabled``) and where (``sort_order``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memdir.tools.host import ToolHost
from memdir.workspace import PromptFile


def prompt_settings(memory: ToolHost) -> dict[str, PromptFile]:
    """The prompt's files by path, in prompt order."""
    return {setting.path: setting for setting in memory.prompt_files()}


def in_prompt_order(paths: Sequence[str], prompt: Mapping[str, PromptFile]) -> list[str]:
    """``paths`` with the prompt's files first (in prompt order), the rest as given."""
    rank = {path: n for n, path in enumerate(prompt)}
    first = sorted((p for p in paths if p in rank), key=rank.__getitem__)
    return [*first, *(p for p in paths if p not in rank)]
