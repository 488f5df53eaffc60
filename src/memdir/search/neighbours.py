"""The blocks around a candidate block, found through the store.

A conversation note answers a question in the block *after* the one that asks
it, and in a two-party conversation a speaker's next turn is two blocks on; a
list item often only makes sense with the ones before it. Search widens its pool
with the blocks up to ``NEIGHBOUR_REACH`` away from its best blocks, so a block
that matched nothing on its own can still be reached through the blocks near it.

The store names the blocks around a block by their lines in its file
(``IndexReader.blocks_around``): unit ids follow the order units were written
in, which is line order only for a file written in one go (a note written append
by append gets a block, then the chunk rewritten after it, ...), and guessing
neighbours as ``id - 1``, ``id + 1`` left a note indexed write by write with
fewer neighbours than the same note rebuilt. The ids next to a candidate's are
still fetched with the candidates (``neighbour_guesses``): in a file written in
one go they are its neighbours, fetched in the same round trip. Every step is
checked (same file, a chain of blocks each at most ``MAX_GAP`` lines after the
previous one) and the walk stops where a check fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from memdir.store.contracts import Around, IndexReader, Unit

MAX_GAP = 2
"""Most lines from the end of one block to the start of the next (one blank line
between them); a heading in between ends the run."""

NEIGHBOUR_REACH = 2
"""How many blocks on each side of a candidate count as its neighbours."""


@dataclass(frozen=True)
class Adjacency:
    """The verified neighbours of a block: unit ids before and after it, nearest first."""

    before: tuple[int, ...] = ()
    after: tuple[int, ...] = ()


def is_adjacent(first: Unit, second: Unit) -> bool:
    """True when ``second`` is the block right after ``first`` in the same file."""
    return (
        first.kind == "block"
        and second.kind == "block"
        and first.source == second.source
        and first.path == second.path
        and 0 < second.start_line - first.end_line <= MAX_GAP
    )


def neighbour_guesses(seeds: Iterable[int], reach: int = NEIGHBOUR_REACH) -> set[int]:
    """The unit ids that may be the neighbours of the ``seeds`` (checked once fetched).

    Search asks the store for these together with its candidates: one fetch, not two.
    """
    return {j for i in seeds for step in range(1, reach + 1) for j in (i - step, i + step) if j > 0}


def find_neighbours(
    store: IndexReader, units: dict[int, Unit], seeds: Iterable[int], reach: int = NEIGHBOUR_REACH
) -> dict[int, Adjacency]:
    """Neighbours of the ``seeds`` (block ids in ``units``); fetched units join ``units``.

    Guesses already in ``units`` (see ``neighbour_guesses``) are not fetched again.
    """
    blocks = [i for i in seeds if i in units and units[i].kind == "block"]
    around = store.blocks_around(blocks, reach) if blocks else {}
    wanted = {i for near in around.values() for side in near for i in side} - units.keys()
    if wanted:
        units.update(store.get_units(wanted))
    return {i: adjacency_of(i, units, reach, around.get(i, ((), ()))) for i in blocks}


def adjacency_of(
    unit_id: int,
    units: Mapping[int, Unit],
    reach: int = NEIGHBOUR_REACH,
    around: Around | None = None,
) -> Adjacency:
    """Walk up to ``reach`` blocks each way while every step is a verified neighbour:
    the blocks ``around`` names (``IndexReader.blocks_around``), or else the next ids."""
    before, after = around or (
        tuple(unit_id - d for d in range(1, reach + 1)),
        tuple(unit_id + d for d in range(1, reach + 1)),
    )
    return Adjacency(
        before=_walk(unit_id, units, before[:reach], -1),
        after=_walk(unit_id, units, after[:reach], +1),
    )


def _walk(
    unit_id: int, units: Mapping[int, Unit], others: tuple[int, ...], step: int
) -> tuple[int, ...]:
    found: list[int] = []
    current = units[unit_id]
    for other_id in others:
        other = units.get(other_id)
        if other is None:
            break
        first, second = (current, other) if step > 0 else (other, current)
        if not is_adjacent(first, second):
            break
        found.append(other_id)
        current = other
    return tuple(found)
