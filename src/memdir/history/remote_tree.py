"""What a fetched history may check out into a home: workspace files, nothing else.

A merge checks out the other side's files, and git overwrites the files it ignores
without asking: a remote whose history held ``tokens.json``, ``api-token``,
``config.toml`` or ``index/memdir.db`` would replace this home's access tokens, its
admin token (with one the remote's owner knows), its configuration (an embeddings URL
of theirs) or its index. A folder where this home has a file (``USER.md/x.md``) makes git
move the file aside as ``USER.md~HEAD``, out of the prompt and the index. A symlink would
point a workspace file outside the home; a ``.gitattributes`` below the root could
re-encode every note on checkout (``working-tree-encoding``); a name with a line break
becomes lines of a version's reason. So before a merge, every entry of the fetched tree
must be a plain file under ``workspace/`` or ``agents/<id>/`` (without git's own control
files), named as memdir names files, that is not a folder here (nor a folder there where
this home has a file), or the root ``.gitignore``/``.gitattributes`` exactly as memdir
writes them or as this home has them; anything else refuses the sync before a file
changes.
"""

from __future__ import annotations

from memdir.errors import InvalidInputError, InvalidPathError
from memdir.history.repo import GITATTRIBUTES, GITIGNORE, HomeHistory
from memdir.home import is_agent_id
from memdir.workspace.paths import validate_prefix

_FILE_MODES = frozenset({"100644", "100755"})
_CONTROL_NAMES = frozenset({".gitattributes", ".gitignore", ".gitmodules", ".git"})
_SHOWN = 5


SYNC_FIX = (
    "A memdir remote holds the workspaces only (workspace/, agents/<id>/): remove or rename "
    "those paths on its branch 'memdir', or sync with a remote only memdir homes push to"
)


def tree_refusals(history: HomeHistory, ref: str) -> list[str] | None:
    """What ``ref``'s tree holds that no home may check out (see the module), each entry
    with why; None when ``ref`` has no tree to list."""
    listing = history.run("ls-tree", "-r", "-z", "--full-tree", ref)
    if listing.returncode != 0:
        return None
    refused: list[str] = []
    theirs = _paths(listing.stdout)
    for entry in listing.stdout.decode("utf-8", "replace").split("\0"):
        if not entry:
            continue
        info, _, path = entry.partition("\t")
        mode, _, rest = info.partition(" ")
        blob = rest.rpartition(" ")[2]
        why = _refusal(history, path, mode, blob)
        if why:
            refused.append(f"{path!r} ({why})")
    here = history.run("ls-tree", "-r", "-z", "--name-only", "--full-tree", "HEAD")
    ours = _paths(here.stdout, names_only=True) if here.returncode == 0 else set()
    refused += [f"{p!r} (a file here, a folder there)" for p in sorted(ours & _folders(theirs))]
    refused += [f"{p!r} (a folder here, a file there)" for p in sorted(theirs & _folders(ours))]
    return refused


def shown(refused: list[str]) -> str:
    """The first few refusals, and how many more."""
    more = f" and {len(refused) - _SHOWN} more" if len(refused) > _SHOWN else ""
    return "; ".join(refused[:_SHOWN]) + more


def check_fetched_tree(history: HomeHistory, ref: str, source: str) -> None:
    """Refuse (``InvalidInputError``, naming ``source`` and the fix) when ``ref``'s tree holds
    anything a merge must not check out into the home (see the module)."""
    refused = tree_refusals(history, ref)
    if refused:  # None: nothing fetched to check, so the merge has nothing to check out
        raise InvalidInputError(
            f"the history of {source} holds what a sync never brings into a home: "
            f"{shown(refused)}. Nothing here changed. {SYNC_FIX}"
        )


def _paths(listing: bytes, names_only: bool = False) -> set[str]:
    entries = listing.decode("utf-8", "replace").split("\0")
    return {e if names_only else e.partition("\t")[2] for e in entries if e}


def _folders(paths: set[str]) -> set[str]:
    """Every folder the files ``paths`` lie in (``a/b/c.md``: ``a`` and ``a/b``)."""
    parts = (path.split("/") for path in paths)
    return {"/".join(p[:n]) for p in parts for n in range(1, len(p))}


def _refusal(history: HomeHistory, path: str, mode: str, blob: str) -> str:
    parts = path.split("/")
    if len(parts) == 1 and path in (".gitignore", ".gitattributes"):
        return "" if _known_control_file(history, path, blob) else "changed from memdir's own"
    if parts[0] == "agents":
        if len(parts) < 3 or not is_agent_id(parts[1]):
            return "not inside an agent's workspace agents/<id>/"
    elif parts[0] != "workspace" or len(parts) < 2:
        return "outside workspace/ and agents/"
    if any(part in _CONTROL_NAMES for part in parts):
        return "a git control file"
    try:
        validate_prefix("/".join(parts[1:]))
    except InvalidPathError:
        return "a name memdir refuses: a control or invisible character, ':' or '\\'"
    if mode == "120000":
        return "a symlink"
    if mode not in _FILE_MODES:
        return "not a plain file"
    return ""


def _known_control_file(history: HomeHistory, path: str, blob: str) -> bool:
    own = GITIGNORE if path == ".gitignore" else GITATTRIBUTES
    theirs = history.run("cat-file", "blob", blob)
    if theirs.returncode == 0 and theirs.stdout == own.encode("utf-8"):
        return True
    here = history.run("rev-parse", "-q", "--verify", f"HEAD:{path}")
    return here.returncode == 0 and here.stdout.decode().strip() == blob
