"""Benchmark: PostgreSQL + pgvector beside SQLite at scale, with two concurrent writers.

A thin wrapper over ``memdir bench scale --backend ...`` (``memdir.bench.backends``):

    .venv/bin/python benchmarks/scale_pg.py --backend both --units 100000 [--dsn DSN] [--hnsw]

Prints the figures as JSON; see docs/benchmarks.md ("PostgreSQL beside SQLite").
"""

from memdir.bench.backends import main

if __name__ == "__main__":
    main()
