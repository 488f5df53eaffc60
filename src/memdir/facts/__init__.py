"""memdir.facts layer."""
