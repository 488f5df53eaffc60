"""memdir.search layer."""
