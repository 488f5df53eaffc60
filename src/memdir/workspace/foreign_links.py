"""Relative Markdown links between imported files, pointed at where the files landed.

An import moves files (Claude Code's ``memory/MEMORY.md`` becomes ``MEMORY.md``, its
topic files stay in ``memory/``), so a link ``[Debugging](debugging.md)`` in the index
would point nowhere. Each inline link or image (``[text](path)``, ``![alt](path)``) and
each reference definition (``[id]: path``) whose target is a relative path to another
imported file is rewritten relative to the file's new place; the ``#anchor`` is kept.
Links to the web (any ``scheme:``), anchors within the file, absolute paths and links
inside code (fenced blocks, inline code spans) are left as they are; a relative link to
a file that was not imported (outside the folder, not Markdown, missing) is left as it
is and reported.

Hand-written rather than through a Markdown parser: a parser would re-render the whole
file, and the import must change nothing but the link targets, byte for byte.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, unquote

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_INLINE = re.compile(r"(!?\[(?:[^\[\]\\]|\\.)*\]\(\s*)(<[^<>\n]*>|[^\s()<>]+)")
_REFERENCE = re.compile(r"^( {0,3}\[(?:[^\[\]\\]|\\.)+\]:[ \t]*)(<[^<>\n]*>|\S+)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass
class LinkReport:
    """What the rewrite did to one file's links."""

    rewritten: int = 0
    outside: list[str] = field(default_factory=list)  # targets left alone, as written


def rewrite_links(
    text: str, source: str, moved: Mapping[str, str], target: str
) -> tuple[str, LinkReport]:
    """``text`` of the file ``source`` (a path in the other tool's folder), now at
    ``target`` in the workspace, with its links to files of ``moved`` (source -> target)
    pointed at their new places."""
    report = LinkReport()
    out: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        opening = _FENCE.match(line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            out.append(line)
            continue
        if opening:
            fence = opening.group(1)
            out.append(line)
            continue
        out.append(_rewrite_line(line, source, moved, target, report))
    return "".join(out), report


def _rewrite_line(
    line: str, source: str, moved: Mapping[str, str], target: str, report: LinkReport
) -> str:
    code = [m.span() for m in _CODE_SPAN.finditer(line)]

    def replace(match: re.Match[str]) -> str:
        if any(start <= match.start() < end for start, end in code):
            return match.group(0)
        new = _new_target(match.group(2), source, moved, target, report)
        return match.group(1) + new

    line = _REFERENCE.sub(replace, line)
    return _INLINE.sub(replace, line)


def _new_target(
    written: str, source: str, moved: Mapping[str, str], target: str, report: LinkReport
) -> str:
    angled = written.startswith("<") and written.endswith(">")
    raw = written[1:-1] if angled else written
    path, hash_, anchor = raw.partition("#")
    if not path or _SCHEME.match(path) or path.startswith(("/", "~", "?")):
        return written  # an anchor here, the web, an absolute path: not the import's
    path = path.partition("?")[0]
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(source), unquote(path)))
    landed = moved.get(resolved)
    if landed is None:
        report.outside.append(raw)
        return written
    here = posixpath.dirname(target)
    if posixpath.normpath(posixpath.join(here, unquote(path))) == landed:
        return written  # it still reaches the file: as it was written
    relative = posixpath.relpath(landed, here or ".")
    if not angled and ("%" in path or " " in relative):
        relative = quote(relative, safe="/-._~")
    new = relative + hash_ + anchor
    report.rewritten += 1
    return f"<{new}>" if angled else new
