"""The blocks right before and after a candidate block, found through the store.

A conversation note answers a question in the block *after* the one that asks
it, and a list item often only makes sense with the one before. Search widens
its pool with the direct neighbours of its best blocks, so a block that matched
nothing on its own can still be reached through the block next to it.

The store writes the blocks of one file in order, so the neighbours of block
``id`` are usually ``id - 1`` and ``id + 1``. That is only a guess about the
store: every guess is checked (same file, both blocks, at most ``MAX_GAP`` lines
apart, the right side) and dropped when it fails, so a store that numbers units
differently simply yields fewer neighbours.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from memdir.store.base import IndexStore, Unit

MAX_GAP = 2
"""Most lines from the end of one block to the start of the next (one blank line
between them); a heading in between ends the run."""


@dataclass(frozen=True)
class Adjacency:
    """The verified neighbours of a block: the unit ids before and after it."""

    before: int | None
    after: int | None


def is_adjacent(first: Unit, second: Unit) -> bool:
    """True when ``second`` is the block right after ``first`` in the same file."""
    return (
        first.kind == "block"
        and second.kind == "block"
        and first.source == second.source
        and first.path == second.path
        and 0 < second.start_line - first.end_line <= MAX_GAP
    )


def find_neighbours(
    store: IndexStore, units: dict[int, Unit], seeds: Iterable[int]
) -> dict[int, Adjacency]:
    """Neighbours of the ``seeds`` (block ids in ``units``); fetched units join ``units``."""
    blocks = [i for i in seeds if i in units and units[i].kind == "block"]
    wanted = {j for i in blocks for j in (i - 1, i + 1) if j > 0 and j not in units}
    if wanted:
        units.update(store.get_units(wanted))
    return {i: adjacency_of(i, units) for i in blocks}


def adjacency_of(unit_id: int, units: Mapping[int, Unit]) -> Adjacency:
    unit = units[unit_id]
    before = units.get(unit_id - 1)
    after = units.get(unit_id + 1)
    return Adjacency(
        before=unit_id - 1 if before is not None and is_adjacent(before, unit) else None,
        after=unit_id + 1 if after is not None and is_adjacent(unit, after) else None,
    )
