"""memdir.curate layer."""
