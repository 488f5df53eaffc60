"""``memdir bench roundtrip`` with SQLite scoring every vector exactly.

Run: .venv/bin/python benchmarks/roundtrip_exact.py --data ../shared/bench/locomo-dev.json \\
     --conversations 0,1,2,3,4 --min-chunks 10000

Above ``RESCORE_MIN`` vectors of a kind (800 for a search's 40 candidates), SQLite's vector
search ranks by sign bits first and rescores the nearest exactly; PostgreSQL's exact scan
reads every vector. This process raises the rescoring budget past any home's size, so both
backends score every vector, and the round trip's "questions with other hits" then counts
what the archive changed alone (docs/benchmarks.md, "An archive through PostgreSQL and
back"). A measurement aid, not a setting: the arguments are those of the command.
"""

from __future__ import annotations

import sys

import memdir.store.sqlite.vectors.matrix as matrix
import memdir.store.sqlite.vectors.search as search
from memdir.interfaces.cli import main

if __name__ == "__main__":
    matrix.RESCORE_MIN = search.RESCORE_MIN = 10**9
    sys.argv = ["memdir", "bench", "roundtrip", *sys.argv[1:]]
    main()
